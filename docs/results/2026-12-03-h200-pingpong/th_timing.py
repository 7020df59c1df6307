import os, sys
sys.path.insert(0, os.getcwd())
import torch
from triton.testing import do_bench_cudagraph
import kernels
from targets.configs import config_from_name
W8 = "BM128-BN256-BK128-w8-s3-g8-gluon-wg"
W16 = "BM128-BN256-BK64-w8-s3-g8-gluon-wg"
rows = [
    ("fp8", (4096, 3584, 3584), [W8, W8 + "-th", W8.replace("-wg", "-ws") + "-th", W8.replace("s3", "s4") + "-th"]),
    ("fp8", (4096, 4608, 3584), [W8, W8 + "-th", W8.replace("s3", "s4") + "-th"]),
    ("fp8", (4096, 3584, 18944), ["BM128-BN256-BK128-w8-s4-g8-gluon-wg-stream", W8 + "-th", W8.replace("s3", "s4") + "-th"]),
    ("fp16", (4096, 3584, 3584), ["BM128-BN128-BK64-w8-s6-g8-gluon-wg", W16, W16 + "-th", W16.replace("-wg", "-ws") + "-th"]),
    ("fp16", (4096, 4608, 3584), ["BM128-BN128-BK64-w8-s5-g8-gluon-ws", W16, W16 + "-th", W16.replace("-wg", "-ws") + "-th"]),
    ("bf16", (4096, 4608, 3584), ["BM128-BN128-BK64-w8-s6-g8-gluon-ws", W16 + "-th", W16.replace("-wg", "-ws") + "-th"]),
]
for dt, shape, names in rows:
    M, N, K = shape
    torch.manual_seed(0)
    if dt == "fp8":
        a = torch.randn(M, K, device="cuda").to(torch.float8_e4m3fn); b = torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn).t()
        s = torch.ones((), device="cuda")
        ref = torch._scaled_mm(a, b, s, s, out_dtype=torch.bfloat16)
        nat = lambda: torch._scaled_mm(a, b, s, s, out_dtype=torch.bfloat16)
        fns = [lambda c=config_from_name(n): kernels.scaled_matmul(a, b, s, s, config=c) for n in names]
    else:
        dty = torch.float16 if dt == "fp16" else torch.bfloat16
        a = torch.randn(M, K, device="cuda", dtype=dty); b = torch.randn(K, N, device="cuda", dtype=dty)
        ref = a @ b
        nat = lambda: a @ b
        fns = [lambda c=config_from_name(n): kernels.matmul(a, b, config=c) for n in names]
    tn = do_bench_cudagraph(nat, rep=200) * 1000
    print(f"{dt} {shape} native {tn:.2f} us", flush=True)
    for n, f in zip(names, fns):
        try:
            out = f(); torch.cuda.synchronize()
            err = ((out.float() - ref.float()).norm() / ref.float().norm()).item()
            t = do_bench_cudagraph(f, rep=200) * 1000
            print(f"  {n:48s} {t:8.2f} us  x{tn / t:.3f}  err {err:.2e}", flush=True)
        except Exception as e:
            print(f"  {n:48s} FAILED {type(e).__name__}: {str(e)[:200]}", flush=True)
