"""Every bad input gets a clear error naming what it got and what was expected."""

import pytest
import torch

import kernels


@pytest.fixture
def ab(device):
    return torch.randn(8, 4).half().to(device), torch.randn(4, 6).half().to(device)


def test_rank(ab):
    a, b = ab
    with pytest.raises(ValueError, match=r"a must be 2-D .* got 3-D with shape \(2, 8, 4\)"):
        kernels.matmul(a.expand(2, 8, 4), b)
    with pytest.raises(ValueError, match=r"b must be 2-D .* got 1-D"):
        kernels.matmul(a, b[:, 0])


def test_inner_dimension_mismatch(ab):
    a, b = ab
    with pytest.raises(ValueError, match=r"inner dimensions differ: a is \(8, 4\) and b is \(6, 4\)"):
        kernels.matmul(a, b.t())


def test_zero_size(device):
    a, b = torch.empty(0, 4, dtype=torch.half, device=device), torch.empty(4, 6, dtype=torch.half, device=device)
    with pytest.raises(ValueError, match=r"zero-size dimension: a is \(0, 4\).*expected M, N, K >= 1"):
        kernels.matmul(a, b)
    with pytest.raises(ValueError, match="zero-size"):
        kernels.matmul(
            torch.empty(3, 0, dtype=torch.half, device=device), torch.empty(0, 2, dtype=torch.half, device=device)
        )


def test_dtype_mismatch_is_not_cast(ab):
    a, b = ab
    with pytest.raises(TypeError, match=r"dtype mismatch: a is torch.float16 and b is torch.float32"):
        kernels.matmul(a, b.float())


@pytest.mark.parametrize("dtype", [torch.float64, torch.int8, torch.int32])
def test_unsupported_dtype(dtype, device):
    a, b = torch.ones(4, 4, dtype=dtype, device=device), torch.ones(4, 4, dtype=dtype, device=device)
    with pytest.raises(TypeError, match=f"unsupported dtype {dtype}; expected one of float16, bfloat16, float32"):
        kernels.matmul(a, b)


def test_fp8_goes_through_scaled_matmul(device):
    a = torch.randn(4, 4).to(torch.float8_e4m3fn).to(device)
    with pytest.raises(TypeError, match="fp8 inputs go through kernels.scaled_matmul"):
        kernels.matmul(a, a)


def test_not_a_tensor(ab):
    with pytest.raises(TypeError, match="a must be a torch.Tensor, got list"):
        kernels.matmul([[1.0]], ab[1])


def test_device_mismatch(ab):
    a = ab[0]
    meta = torch.empty(4, 6, dtype=torch.half, device="meta")
    with pytest.raises(ValueError, match=r"b is on meta but a is on"):
        kernels.matmul(a, meta)


def test_cpu_tensors_without_the_interpreter_are_refused(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    a = torch.randn(4, 4).half()
    with pytest.raises(ValueError, match="set TRITON_INTERPRET=1"):
        kernels.matmul(a, a)


@pytest.mark.parametrize(
    ("bias_shape", "message"),
    [((5,), r"bias must have shape \(6,\) to match N=6, got \(5,\)"), ((1, 6), r"got \(1, 6\)")],
)
def test_bad_bias_shape(ab, bias_shape, message):
    a, b = ab
    with pytest.raises(ValueError, match=message):
        kernels.matmul(a, b, bias=torch.zeros(bias_shape, dtype=torch.half, device=a.device))


def test_bias_dtype(ab):
    a, b = ab
    with pytest.raises(TypeError, match="bias dtype torch.float32 differs from the output dtype torch.float16"):
        kernels.matmul(a, b, bias=torch.zeros(6, device=a.device))


def test_unknown_activation(ab):
    with pytest.raises(ValueError, match="unknown activation 'tanh'; expected None or one of relu, gelu"):
        kernels.matmul(*ab, activation="tanh")


def test_precision_rules(ab, device):
    with pytest.raises(ValueError, match="precision='tf32' applies to float32 inputs only"):
        kernels.matmul(*ab, precision="tf32")
    x = torch.randn(4, 4, device=device)
    with pytest.raises(ValueError, match="precision must be one of .*'ieee', 'tf32'.* got 'fast'"):
        kernels.matmul(x, x, precision="fast")


def test_bad_out_dtype(ab):
    with pytest.raises(TypeError, match="unsupported out_dtype torch.int32"):
        kernels.matmul(*ab, out_dtype=torch.int32)


def test_bad_out(ab):
    a, b = ab
    with pytest.raises(ValueError, match=r"out has shape \(6, 8\); expected \(8, 6\)"):
        kernels.matmul(a, b, out=torch.empty(6, 8, dtype=torch.half, device=a.device))
    with pytest.raises(TypeError, match="out has dtype torch.float32; expected torch.float16"):
        kernels.matmul(a, b, out=torch.empty(8, 6, device=a.device))
    square = torch.randn(6, 6).half().to(a.device)
    with pytest.raises(ValueError, match="out shares memory with a"):
        kernels.matmul(square, square.clone(), out=square)
    buffer = torch.randn(108).half().to(a.device)  # views of one buffer: refused only where they meet
    x, y = buffer[:36].view(6, 6), buffer[36:72].view(6, 6)
    with pytest.raises(ValueError, match="out shares memory with b"):
        kernels.matmul(x, y, out=buffer[60:96].view(6, 6))
    out = buffer[72:108].view(6, 6)
    assert kernels.matmul(x, y, out=out) is out
    torch.testing.assert_close(out.float(), x.float() @ y.float(), rtol=2e-2, atol=2e-2)


def test_bad_forced_config(ab):
    with pytest.raises(TypeError, match="config must be a targets.GemmConfig"):
        kernels.matmul(*ab, config={"BLOCK_M": 64})


def test_scaled_matmul_checks(device):
    a = torch.randn(8, 32).to(torch.float8_e4m3fn).to(device)
    b = torch.randn(32, 16).to(torch.float8_e4m3fn).to(device)
    one = torch.tensor(1.0, device=device)
    with pytest.raises(TypeError, match="scale_a must be float32, got torch.float16"):
        kernels.scaled_matmul(a, b, one.half(), one)
    with pytest.raises(
        ValueError, match=r"neither tensorwise .* nor rowwise \(scale_a \(8, 1\) and scale_b \(1, 16\)\)"
    ):
        kernels.scaled_matmul(a, b, torch.ones(8, device=device), one)
    with pytest.raises(TypeError, match="dtype mismatch"):
        kernels.scaled_matmul(a, b.to(torch.float8_e5m2), one, one)
    with pytest.raises(TypeError, match="unsupported dtype torch.float16; expected one of float8_e4m3fn, float8_e5m2"):
        kernels.scaled_matmul(a.half(), b.half(), one, one)
    with pytest.raises(TypeError, match="scale_b must be a float32 torch.Tensor, got float"):
        kernels.scaled_matmul(a, b, one, 1.0)


def test_scaled_matmul_fast_accum_must_be_bool(device):
    a = torch.randn(8, 32).to(torch.float8_e4m3fn).to(device)
    b = torch.randn(32, 16).to(torch.float8_e4m3fn).to(device)
    one = torch.tensor(1.0, device=device)
    with pytest.raises(TypeError, match="use_fast_accum must be a bool, got 'yes'"):
        kernels.scaled_matmul(a, b, one, one, use_fast_accum="yes")
