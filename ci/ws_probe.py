"""Which ingredient of a persistent TMA GEMM keeps Hopper's warp-specialized loop from finishing.

Evidence tool. With Triton 3.6 the H200 never finished `kernels.matmul`'s partitioned `tma_ws`
kernels (docs/BENCHMARKS.md, 2026-12-01 third session), and a minimal kernel with a descriptor
store did not compile. This probe builds a ladder of persistent GEMMs with `warp_specialize=True` on
their unflattened tile loop, from the smallest (row-major tile order, pointer-store epilogue, one
accumulator) towards what the project's kernel does (grouped tile order, a second loop-carried
accumulator as late promotion keeps, a descriptor store, fp8 with K-major B), and runs each in a
process of its own under a timeout, so a hung kernel costs its timeout and not the session (a cut
one says the last stage it reached: compiled, launched, first call finished):

    python3 -m ci.ws_probe --timeout 20             # on a GPU: finished / hung / failed, error, us, TFLOP/s
    python3 -m ci.ws_probe --offline 90             # without one: compiled for sm_90, partitioned or not

Each row: the variant, whether the compiled kernel is partitioned (`setmaxnreg` in its PTX and more
warps than asked), and on a GPU its outcome at 4096^3 (relative error against a float32 product,
time per call by the suites' timing protocol: CUDA-graph replays, each call after an L2 flush; TFLOP/s).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
from dataclasses import asdict, dataclass

import triton
import triton.language as tl


@dataclass(frozen=True)
class Variant:
    dtype: str = "fp16"  # or "fp8" (e4m3, B K-major: its tiles loaded as (N, K) and transposed)
    block_m: int = 128
    block_n: int = 128
    block_k: int = 64
    warps: int = 4
    stages: int = 3
    grouped: bool = False  # grouped tile order (GROUP_M 8) instead of row-major
    extra_acc: bool = False  # a second loop-carried accumulator (as late promotion keeps)
    desc_store: bool = False  # the output tile through a descriptor instead of pointer stores
    warp_specialize: bool = True
    project: bool = False  # kernels.matmul / scaled_matmul's own tma_ws kernel, its Hopper partitions allowed

    @property
    def name(self) -> str:
        parts = [self.dtype, f"BM{self.block_m}-BN{self.block_n}-BK{self.block_k}-w{self.warps}-s{self.stages}"]
        parts += [flag for flag in ("grouped", "extra_acc", "desc_store") if getattr(self, flag)]
        if self.project:
            parts = [
                self.dtype,
                "kernels." + ("scaled_matmul" if self.dtype == "fp8" else "matmul"),
                parts[1],
                "tma_ws",
            ]
        return " ".join(parts + ([] if self.warp_specialize else ["(not specialized)"]))


# The ladder: the minimal form first, then one ingredient of kernels.matmul's tma_ws at a time, then
# all of them; each for fp16 and fp8; an unspecialized control of the first. On the H200 with Triton
# 3.6.0 every specialized rung up to fp8 BM128-BN128 that compiled hung (docs/BENCHMARKS.md,
# 2026-12-02, third session); the launch shapes after them (2 or 4 stages, 64-row tiles, the form
# Triton 3.9 still partitions for sm_90, also 12 warps) vary what the partitioner is given rather
# than what the kernel does. (8 warps are not partitioned at all: a control, not a rung.)
LADDER = [
    Variant(warp_specialize=False),
    Variant(),
    Variant(grouped=True),
    Variant(extra_acc=True),
    Variant(desc_store=True),
    Variant(block_n=256),
    Variant(grouped=True, extra_acc=True, desc_store=True, block_n=256),
    Variant(dtype="fp8", block_k=128, warp_specialize=False),
    Variant(dtype="fp8", block_k=128),
    Variant(dtype="fp8", block_k=128, grouped=True, extra_acc=True),
    Variant(dtype="fp8", block_k=128, block_n=256),
    Variant(stages=2),
    Variant(stages=4),
    Variant(block_m=64),
    Variant(block_m=64, grouped=True, extra_acc=True),
    Variant(dtype="fp8", block_k=128, block_m=64),
    Variant(project=True),
    Variant(dtype="fp8", block_k=128, project=True),
    Variant(block_m=64, project=True),
    Variant(dtype="fp8", block_k=128, block_m=64, project=True),
]


@triton.jit
def _ws_gemm(
    a_desc,
    b_desc,
    c_desc,
    c_ptr,
    M,
    N,
    K,
    PROGRAMS: tl.constexpr,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
    B_KMAJOR: tl.constexpr,
    GROUPED: tl.constexpr,
    EXTRA_ACC: tl.constexpr,
    DESC_STORE: tl.constexpr,
    WS: tl.constexpr,
):
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    for tile in tl.range(tl.program_id(0), tiles_m * tiles_n, PROGRAMS, flatten=False, warp_specialize=WS):
        if GROUPED:
            group = tile // (8 * tiles_n)
            first_m = group * 8
            rows = tl.minimum(tiles_m - first_m, 8)
            pid_m = first_m + (tile % (8 * tiles_n)) % rows
            pid_n = (tile % (8 * tiles_n)) // rows
        else:
            pid_m = tile // tiles_n
            pid_n = tile % tiles_n
        off_m = pid_m * BM
        off_n = pid_n * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        other = tl.zeros((BM, BN), dtype=tl.float32)
        for ki in range(tl.cdiv(K, BK)):
            a = a_desc.load([off_m, ki * BK])
            if B_KMAJOR:
                b = b_desc.load([off_n, ki * BK]).T
            else:
                b = b_desc.load([ki * BK, off_n])
            if EXTRA_ACC:
                other = tl.dot(a, b, other)
                acc += other
                other = tl.zeros((BM, BN), dtype=tl.float32)
            else:
                acc = tl.dot(a, b, acc)
        if DESC_STORE:
            c_desc.store([off_m, off_n], acc.to(c_desc.dtype))
        else:
            offs_m = off_m + tl.arange(0, BM)
            offs_n = off_n + tl.arange(0, BN)
            mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
            tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc.to(c_ptr.dtype.element_ty), mask=mask)


def _operands(v: Variant, size: int, device: str):
    import torch

    a = torch.randn(size, size, device=device, dtype=torch.float16)
    b = torch.randn(size, size, device=device, dtype=torch.float16)
    if v.dtype == "fp8":  # B column-major (K-major), as fp8 wants it
        a, b = a.to(torch.float8_e4m3fn), b.t().contiguous().to(torch.float8_e4m3fn)
    out_dtype = torch.bfloat16 if v.dtype == "fp8" else torch.float16
    c = torch.empty(size, size, device=device, dtype=out_dtype)
    return a, b, c


def _project_launch(v: Variant, a, b, c, compile_only: bool):
    """The project's own kernel with the variant's tile as a forced `tma_ws` config, its Hopper
    partitions allowed (as if the installed Triton were listed in HOPPER_WARP_SPECIALIZING_TRITON)."""
    import importlib

    import torch

    import kernels
    import targets.configs
    from targets import GemmConfig

    module = importlib.import_module("kernels.matmul")

    targets.configs.HOPPER_WARP_SPECIALIZING_TRITON = (triton.__version__,)
    config = GemmConfig(v.block_m, v.block_n, v.block_k, v.warps, v.stages, variant="tma_ws")
    with module.compile_only(132) if compile_only else contextlib.nullcontext([]) as compiled:
        if v.dtype == "fp8":
            one = torch.ones((), device=a.device)
            kernels.scaled_matmul(a, b.t(), one, one, out=c, config=config)
        else:
            kernels.matmul(a, b, out=c, config=config)
    return compiled[-1] if compile_only else None


def _launch(v: Variant, a, b, c, programs: int, compile_only: bool = False):
    from triton.tools.tensor_descriptor import TensorDescriptor

    if v.project:
        return _project_launch(v, a, b, c, compile_only)

    b_block = [v.block_n, v.block_k] if v.dtype == "fp8" else [v.block_k, v.block_n]
    descs = (
        TensorDescriptor.from_tensor(a, [v.block_m, v.block_k]),
        TensorDescriptor.from_tensor(b, b_block),
        TensorDescriptor.from_tensor(c, [v.block_m, v.block_n]),
    )
    size = a.shape[0]
    args = (*descs, c, size, size, size, programs, v.block_m, v.block_n, v.block_k, v.dtype == "fp8", v.grouped,
            v.extra_acc, v.desc_store, v.warp_specialize)  # fmt: skip
    if compile_only:
        return _ws_gemm.warmup(*args, grid=(programs,), num_warps=v.warps, num_stages=v.stages)
    return _ws_gemm[(programs,)](*args, num_warps=v.warps, num_stages=v.stages)


def _partitioned(compiled, v: Variant) -> bool:
    return compiled.asm["ptx"].count("setmaxnreg") > 0 and compiled.metadata.num_warps > v.warps


# What a child process has got through, printed as it goes, so that a variant cut by the timeout
# says where it stopped: still compiling, or launched and never finished.
STAGES = {
    "compiled": "compiled, never launched (cut while compiling or loading)",
    "launched": "its first call never finished",
    "finished": "its first call finished, the timing never did",
}


def _stage(name: str) -> None:
    print(f"stage: {name}", flush=True)


def run_one(v: Variant, size: int = 4096) -> dict:
    """Compile, run, check and time one variant on this GPU (call it in a process of its own)."""
    import torch

    a, b, c = _operands(v, size, "cuda")
    programs = torch.cuda.get_device_properties(0).multi_processor_count
    if not v.project:
        _launch(v, a, b, c, programs, compile_only=True)  # the compile alone, before any launch
        _stage("compiled")
    compiled = _launch(v, a, b, c, programs)
    _stage("launched")
    torch.cuda.synchronize()
    _stage("finished")
    ref = a.float() @ (b.float().t() if v.dtype == "fp8" else b.float())
    error = ((c.float() - ref).norm() / ref.norm()).item()
    from benchmarks.timing import measure

    us = measure(lambda: _launch(v, a, b, c, programs), rounds=5, warmup=1).median(0) * 1e6
    partitioned = None if compiled is None else _partitioned(compiled, v)  # (the project's: not returned)
    return {"outcome": "finished", "partitioned": partitioned, "rel_error": error, "us": us,
            "tflops": 2 * size**3 / us / 1e6}  # fmt: skip


def run_child(cmd: list[str], timeout: float) -> tuple[str, str, int | None]:
    """(stdout, stderr, exit status) of a probe's child process; the status is None when the
    timeout cut it (stdout is then what it printed before)."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as cut:
        out = cut.stdout.decode(errors="replace") if isinstance(cut.stdout, bytes) else (cut.stdout or "")
        return out, "", None
    return proc.stdout, proc.stderr, proc.returncode


def last_error(stderr: str, width: int) -> str:
    """A failed child's last line of stderr (its exception), cut to `width`."""
    return (stderr.strip().splitlines() or ["(no output)"])[-1][:width]


def cut_outcome(partial_stdout, timeout: float) -> dict:
    """A variant's row when its process was cut at the timeout: the last stage it reported."""
    if isinstance(partial_stdout, bytes):
        partial_stdout = partial_stdout.decode(errors="replace")
    stages = [
        line.split(":", 1)[1].strip() for line in (partial_stdout or "").splitlines() if line.startswith("stage:")
    ]
    where = STAGES.get(stages[-1]) if stages else "nothing reported (cut while starting or compiling)"
    return {"outcome": f"hung (cut at {timeout:g} s)", "stage": stages[-1] if stages else None, "error": where}


def compile_offline(v: Variant, capability: int) -> dict:
    """Compile one variant for sm_`capability` without a GPU: partitioned or not, or the error."""
    from triton.runtime import driver

    from ci.resources import _offline_driver

    driver.set_active(_offline_driver(capability))
    try:
        compiled = _launch(v, *_operands(v, 256, "cpu"), programs=132, compile_only=True)
    except Exception as err:  # noqa: BLE001 - the compiler's refusal is the finding
        return {"outcome": "compile error", "error": str(err).strip().splitlines()[0][:200]}
    return {"outcome": "compiled", "partitioned": _partitioned(compiled, v), "warps": compiled.metadata.num_warps}


def _row(v: Variant, result: dict) -> str:
    cells = [v.name, result["outcome"]]
    if result.get("partitioned") is not None:
        cells.append("partitioned" if result["partitioned"] else "not partitioned")
    if "us" in result:
        cells.append(f"rel err {result['rel_error']:.1e}, {result['us']:.1f} us, {result['tflops']:.0f} TFLOP/s")
    if "error" in result:
        cells.append(result["error"])
    return " | ".join(cells)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m ci.ws_probe", description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per variant on the GPU (default 20)")
    parser.add_argument(
        "--offline", type=int, metavar="CAPABILITY", help="compile for this capability (e.g. 90), no GPU"
    )
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a variant as JSON: run it here (the child process)
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(run_one(Variant(**json.loads(args.one)))))
        return 0
    if not args.timeout > 0:
        parser.error(f"--timeout must be a positive number of seconds, got {args.timeout:g}")
    if args.offline is None:
        import torch

        if not torch.cuda.is_available():
            print("ws_probe: no GPU here; --offline CAPABILITY compiles the ladder for a chip instead", file=sys.stderr)
            return 2
    rows = []
    for v in LADDER:
        if args.offline is not None:
            result = compile_offline(v, args.offline)
        else:
            stdout, stderr, status = run_child(
                [sys.executable, "-m", "ci.ws_probe", "--one", json.dumps(asdict(v))], args.timeout
            )
            lines = [line for line in stdout.strip().splitlines() if not line.startswith("stage:")]
            if status is None:
                result = cut_outcome(stdout, args.timeout)
            elif status == 0 and lines:
                result = json.loads(lines[-1])
            else:
                result = {"outcome": "failed", "error": last_error(stderr, 200)}
        rows.append({"variant": asdict(v), "name": v.name, **result})
        print(_row(v, result), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
