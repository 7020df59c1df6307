"""The `gemmwatch` command line. Heavy imports (torch, triton) happen inside commands."""

from __future__ import annotations

import argparse
import os
import sys


def use_interpreter_without_gpu() -> bool:
    """Fall back to Triton's interpreter when there is no GPU (before triton is imported).

    Returns whether the interpreter is in use.
    """
    if "TRITON_INTERPRET" not in os.environ:
        import torch

        if not torch.cuda.is_available():
            os.environ["TRITON_INTERPRET"] = "1"
    from targets.detect import interpreter_requested

    return interpreter_requested()


def _cmd_bench(args) -> int:
    use_interpreter_without_gpu()
    from ci import bench

    return bench.main(args)


def _cmd_run(args) -> int:
    from ci import run

    return run.main(args)


def _cmd_noise(args) -> int:
    from ci import noise

    return noise.main(args)


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

    run = sub.add_parser(
        "run",
        help="measure a commit with the asv suites into .asv/results (the main job)",
        description="Run the asv suites for one commit (default HEAD) with the fixed Python environment: the commit's "
        "kernels come from a git worktree, nothing is installed. On a GPU the default matrix of benchmarks/matrix.toml "
        "is measured; without one, the smoke set runs in Triton's interpreter as a pipeline check (not performance).",
    )
    run.add_argument("commit", nargs="?", default="HEAD", help="commit, branch or tag to measure (default HEAD)")
    run.add_argument("--shapes", nargs="+", metavar="SET|MxNxK", help="shape sets of the matrix and/or literal shapes")
    run.add_argument(
        "--dtypes", nargs="+", metavar="DTYPE", help="only these dtypes (fp16 bf16 fp8_e4m3 fp32-tf32 ...)"
    )
    run.add_argument("--quick", action="store_true", help="5 timing rounds and 4 autotune candidates: fast, noisier")
    run.add_argument("--rounds", type=int, help="interleaved timing rounds per cell (default 30)")
    run.add_argument("--matrix", metavar="PATH", help="matrix file (default benchmarks/matrix.toml)")
    run.add_argument("--results-dir", metavar="DIR", help="asv results directory (default .asv/results)")
    run.add_argument("--work-dir", metavar="DIR", help="worktrees, logs, generated config (default .asv/gemmwatch)")
    run.add_argument("--machine", help="asv machine name (default: the detected target, e.g. h200)")
    run.add_argument("--python", metavar="PATH", help="Python of the environment to measure with (default: this one)")
    run.add_argument("--repo", metavar="DIR", help="the project checkout (default: the current directory's)")
    run.add_argument(
        "--launch-method", choices=("forkserver", "spawn"), default="forkserver", help="asv's (default forkserver)"
    )
    run.set_defaults(func=_cmd_run)

    noise = sub.add_parser(
        "noise",
        help="A/A report: per-cell run-to-run variation of one commit measured several times",
        description="Coefficient of variation and largest difference of the per-run medians (Triton/native "
        "ratio, Triton time, native time) across asv result files of the same commit from separate processes.",
    )
    noise.add_argument("files", nargs="+", metavar="RESULT.json", help="asv result files (two or more)")
    noise.add_argument("--target", type=float, default=0.005, help="CV goal as a fraction (default 0.005)")
    noise.set_defaults(func=_cmd_noise)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    rounds = getattr(args, "rounds", None)
    if (rounds is not None and rounds < 0) or (args.command == "run" and rounds == 0):
        parser.error(f"--rounds must be >= 1, got {rounds}")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
