"""The `gemmwatch` command line. Heavy imports (torch, triton) happen inside commands."""

from __future__ import annotations

import argparse
import os
import sys


def _use_interpreter_without_gpu() -> None:
    """Fall back to Triton's interpreter when there is no GPU (before triton is imported)."""
    if "TRITON_INTERPRET" in os.environ:
        return
    import torch

    if not torch.cuda.is_available():
        os.environ["TRITON_INTERPRET"] = "1"


def _cmd_bench(args) -> int:
    _use_interpreter_without_gpu()
    from ci import bench

    return bench.main(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gemmwatch",
        description="Continuous performance-regression checks for Triton GEMM kernels against the native library.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    bench = sub.add_parser(
        "bench",
        help="table of Triton vs native time, TFLOP/s and speedup for a small shape x dtype set",
        description="Time kernels.matmul / kernels.scaled_matmul against torch (cuBLAS) on a small set of cells. "
        "Without a GPU the kernels run in Triton's interpreter: a correctness and pipeline check, not performance.",
    )
    bench.add_argument(
        "--dtypes", nargs="+", metavar="DTYPE", help="only these dtypes (fp16 bf16 fp8_e4m3 fp32-ieee ...)"
    )
    bench.add_argument(
        "--rounds",
        type=int,
        default=0,
        help="interleaved timing rounds per cell (default: 30 on GPU, 3 in the interpreter)",
    )
    bench.add_argument("--json", metavar="PATH", help="also write the rows and context as JSON")
    bench.set_defaults(func=_cmd_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "rounds", 0) and args.rounds < 0:
        parser.error(f"--rounds must be >= 1, got {args.rounds}")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
