"""Why fp16/bf16 1000^3 takes ~10 us where 1024^3 takes ~6.5 us on the same config (2026-12-06).

The 1000-wide operands' rows are 2000 bytes apart: 16-byte aligned (tensor descriptors and vector
loads allowed), not 128-byte aligned. The same 1000^3 product is timed with A, B and C each either
contiguous or a view into a buffer whose rows are 1024 elements (2048 bytes) apart, on the library's
TMA configs and the plain pointer tile, beside cuBLAS on both layouts, 1024^3, and the cost of
copying A and B into the wide buffers (what a copying config would add). One interleaved
measurement per dtype, L2 flushed before each call (benchmarks.timing.measure).

    PYTHONPATH=. python3 docs/results/2026-12-06c-pitch/pitch_probe.py [--rounds 20]
"""

from __future__ import annotations

import argparse

import torch

from benchmarks.timing import side_by_side
from kernels import matmul
from targets.configs import config_from_name

CONFIGS = ("BM128-BN64-BK64-w4-s4-g8-tma", "BM64-BN128-BK128-w4-s4-g8-tma", "BM64-BN128-BK64-w4-s4-g8")


def wide(t: torch.Tensor, pitch: int) -> torch.Tensor:
    """`t`'s values in a view whose rows are `pitch` elements apart."""
    buf = torch.zeros((t.shape[0], pitch), dtype=t.dtype, device=t.device)
    view = buf[:, : t.shape[1]]
    view.copy_(t)
    return view


def sides(dtype: torch.dtype, n: int = 1000, pitch: int = 1024) -> list[tuple[str, object, object]]:
    """(name, call, check): check compares the call's result with the reference (None: no check)."""
    torch.manual_seed(0)
    a = torch.randn(n, n, device="cuda", dtype=dtype)
    b = torch.randn(n, n, device="cuda", dtype=dtype)
    ref = (a.double() @ b.double()).float()
    aw, bw = wide(a, pitch), wide(b, pitch)
    c = torch.empty(n, n, device="cuda", dtype=dtype)
    cw = wide(c, pitch)
    a2 = torch.randn(pitch, pitch, device="cuda", dtype=dtype)
    b2 = torch.randn(pitch, pitch, device="cuda", dtype=dtype)
    out = [
        ("cuBLAS contiguous", lambda: torch.mm(a, b, out=c), c),
        ("cuBLAS wide A,B,C", lambda: torch.mm(aw, bw, out=cw), cw),
        (f"cuBLAS {pitch}^3", lambda: torch.mm(a2, b2), None),
        ("copy A,B into wide", lambda: (aw.copy_(a), bw.copy_(b)), None),
    ]
    for name in CONFIGS:
        cfg = config_from_name(name)
        for label, x, y, o in (
            ("contiguous", a, b, c),
            ("wide A", aw, b, c),
            ("wide B", a, bw, c),
            ("wide C", a, b, cw),
            ("wide A,B", aw, bw, c),
            ("wide A,B,C", aw, bw, cw),
        ):
            out.append((f"{name} {label}", lambda x=x, y=y, o=o, cfg=cfg: matmul(x, y, out=o, config=cfg), o))
        out.append((f"{name} {pitch}^3", lambda cfg=cfg: matmul(a2, b2, config=cfg), None))
    checked = []
    for name, call, result in out:
        call()
        torch.cuda.synchronize()
        if result is not None:
            err = ((result.float() - ref).norm() / ref.norm()).item()
            if err > 2e-2:
                raise SystemExit(f"{name}: relative error {err:.3g}")
        checked.append((name, call))
    return checked


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    print(torch.cuda.get_device_name(), "torch", torch.__version__, "cuda", torch.version.cuda)
    for dtype in (torch.float16, torch.bfloat16):
        named = sides(dtype)
        print(
            f"\n{str(dtype).removeprefix('torch.')} 1000^3 (us, median of {args.rounds} rounds; x = cuBLAS contiguous / side)"
        )
        print("\n".join(side_by_side(named, args.rounds)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
