"""Which per-process state moves a cell: the same cells timed again and again in one process.

Evidence tool for the timing protocol, run on a GPU box:

    python3 -m ci.state_probe --out OUT/fresh.json --reps 8 --phases fresh \\
        --cold-l2 write read write+copies --cells "fp16 16x4096x4096" "fp16 4096x4096x4096"

Whole-matrix runs of one commit put some cells 1-3% apart (docs/BENCHMARKS.md) while short probe
processes, whose history is short and always the same, agreed to 0.1%. Each repetition times
every cell (Triton and native interleaved, `timing.measure`) under one phase:

- "pool": on the next of torch's pooled CUDA streams (torch hands its 32 streams out in turn, so
  in a whole run a cell's stream depends on how many were taken before it);
- "fixed": on one stream and the same operands every time (the within-process baseline);
- "shift": as "fixed", with memory held between the operands and the timing's own buffers (the
  flush buffer, the graphs' pools), 2 MiB more each repetition;
- "fresh": on newly allocated operands, after a small block that moves the small ones too;
- "workspace": as "fixed", with torch's cuBLAS workspaces freed and the allocator's cache emptied
  before each repetition, then memory held 2 MiB more each time, so the next native call allocates
  its workspace (one per stream in torch, used by split-K and stream-K cuBLAS kernels) elsewhere:
  whether a native time follows where that workspace lies;
- "flush": as "fixed", with the process's flush buffers (`timing.process_flush_buffers`) dropped,
  the allocator's cache emptied and memory held 34 MiB more before each repetition, so the L2 flush
  writes elsewhere: whether a time follows where the flush buffer lies (the dirty lines the flush
  leaves in the L2 are written back while the timed kernel runs);

(`--between CELL ...` times those cells once each after every repetition, as a whole run
measures other cells between two of a cell's measurements: in short processes a cell's second
measurement differed from its first alike in every process, docs/BENCHMARKS.md) and one cold-L2
method: the L2 flush that zeroes ("write", the protocol's) or sums ("read") twice the L2, rotating
copies ("rotate"), or a flush over 8 operand copies ("write+copies", "read+copies":
`timing.Placements`; "write+copies16": over 16), or "suite": each cell's sides and protocol
arguments as the suites time it (`measure.timed_sides`, `measure.timing_plan`: placements, calls
per replay, cooldown; "suite+ws32": with 32 issuers, so 32 cuBLAS workspaces, per placed replay,
as GEMMWATCH_WORKSPACES=32 gives the suites; "suite+fb8": 8 flush buffers taken in turn, as
GEMMWATCH_FLUSH_BUFFERS=8; "suite+cg8": each side's replay captured in 8 graphs, as
GEMMWATCH_CAPTURES=8; "suite+arena": the operand copies in the process's arena, the same places
every repetition, whatever GEMMWATCH_ARENA says; "suite" follows it, and the arena is the
protocol's default: GEMMWATCH_ARENA=0 gives fresh clones each repetition). With "workspace" and
several suite methods, whether more workspaces narrow
the spread across reallocations shows in one process. The report prints, per cell, phase and
method, the spread of the Triton and native medians across repetitions and each repetition's figures.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys


def _pool_index(handle: int, seen: dict[int, int]) -> int:
    """The stream's place in the order the process first saw it (torch's pool hands them out in turn)."""
    return seen.setdefault(handle, len(seen))


PHASES = ("pool", "fixed", "shift", "fresh", "workspace", "flush")
COLD_L2 = ("write", "read", "rotate", "write+copies", "read+copies", "suite")


def cold_l2_method(text: str) -> str:
    """One of COLD_L2, or "write+copiesN" / "read+copiesN": the flush over N operand copies, or
    "suite+wsN" / "suite+fbN" / "suite+cgN": as the suites, with N issuers (cuBLAS workspaces) / N
    flush buffers / N graph captures per placed replay, or "suite+arena": the copies in the
    process's operand arena."""
    from benchmarks.timing import MAX_CAPTURES

    match = re.fullmatch(r"rotate|suite(\+(ws|fb|cg)([0-9]+)|\+arena)?|(write|read)(\+copies([0-9]+)?)?", text)
    if match:
        suite_high = MAX_CAPTURES if match[2] == "cg" else 64
        if all(not n or 1 <= int(n) <= high for n, high in ((match[3], suite_high), (match[6], 64))):
            return text
    raise argparse.ArgumentTypeError(f"expected one of {', '.join(COLD_L2)}, suite+arena, suite+cgN (N in 1..16), "
                                     f"write+copiesN / read+copiesN, suite+wsN or suite+fbN (N in 1..64), got {text!r}")  # fmt: skip


def _sides(prep, cold_l2: str, l2_bytes: int):
    """timing.measure's (Triton, native) sides and its flush arguments for one cold-L2 method."""
    from benchmarks.measure import PLACEMENTS, process_arena, timed_sides, timing_plan
    from benchmarks.timing import Placements, rotating_copies

    if cold_l2.startswith("suite"):
        from targets import detect

        spec = detect()
        calls = [lambda ops: prep.triton(operands=ops), lambda ops: prep.native(operands=ops)]
        plan = timing_plan(prep, spec)
        # "+wsN" / "+fbN" / "+cgN": the issuers (GEMMWATCH_WORKSPACES) / flush buffers
        # (GEMMWATCH_FLUSH_BUFFERS) a placed replay's calls take in turn, the graphs its sides are
        # captured in (GEMMWATCH_CAPTURES)
        match = re.fullmatch(r"suite\+(ws|fb|cg)([0-9]+)", cold_l2)
        if match:
            plan[{"ws": "workspaces", "fb": "flush_buffers", "cg": "captures"}[match[1]]] = int(match[2])
        arena = process_arena() if cold_l2 == "suite+arena" else None
        return tuple(timed_sides(prep, "cuda", spec, calls, arena=arena)), plan
    kind, _, copies = cold_l2.partition("+")
    if kind != "rotate" and not copies:
        return (prep.triton, prep.native), {"flush_kind": kind}
    if copies:  # flushed copies: the calls of a replay read operands at PLACEMENTS places, as the suites'
        count = int(copies.removeprefix("copies") or PLACEMENTS)
        operands, wrap, flush = prep.operand_copies(count), Placements, {"flush_kind": kind}
    else:
        operands, wrap, flush = prep.operand_copies(rotating_copies(prep.footprint_bytes, l2_bytes) or 2), list, {}
    triton = wrap(lambda ops=ops: prep.triton(operands=ops) for ops in operands)
    native = wrap(lambda ops=ops: prep.native(operands=ops) for ops in operands)
    return (triton, native), flush


def run(cells, reps: int, rounds: int, out: str, phases=PHASES, cold_l2s=("write",), between=()) -> int:
    import torch

    from benchmarks.cells import Prepared
    from benchmarks.timing import measure

    if not torch.cuda.is_available():
        print("state_probe: needs a CUDA GPU (it times GPU streams)", file=sys.stderr)
        return 2
    clear_workspaces = getattr(torch._C, "_cuda_clearCublasWorkspaces", None)
    if "workspace" in phases and clear_workspaces is None:
        print(f"state_probe: --phases workspace needs torch._C._cuda_clearCublasWorkspaces, which torch "
              f"{torch.__version__} lacks", file=sys.stderr)  # fmt: skip
        return 2
    l2_bytes = torch.cuda.get_device_properties(0).L2_cache_size
    preps = []
    for cell in cells:
        prep = Prepared(cell, "cuda")
        prep.triton()  # chooses (tuned library) and compiles
        preps.append(prep)
    between_preps = [Prepared(cell, "cuda") for cell in between]
    for prep in between_preps:
        prep.triton()
    torch.cuda.synchronize()
    seen: dict[int, int] = {}
    fixed = torch.cuda.Stream()
    rows = []
    for cold_l2 in cold_l2s:
        for phase in phases:
            for rep in range(reps):
                # "shift": memory held after the operands and before the timing's own buffers (the
                # flush buffer, the graphs' pools), a new 2 MiB more each repetition: those land
                # elsewhere relative to the operands.
                held = torch.empty((10 + 2 * rep) << 20, dtype=torch.uint8, device="cuda") if phase == "shift" else None
                if phase == "workspace":
                    torch.cuda.synchronize()
                    clear_workspaces()
                    torch.cuda.empty_cache()
                    held = torch.empty((2 + 2 * rep) << 20, dtype=torch.uint8, device="cuda")
                if phase == "flush":
                    from benchmarks.timing import drop_flush_buffers

                    torch.cuda.synchronize()
                    drop_flush_buffers()
                    torch.cuda.empty_cache()
                    held = torch.empty((2 + 34 * rep) << 20, dtype=torch.uint8, device="cuda")
                if phase == "fresh":
                    # New operands each repetition, after a small block that moves the small ones
                    # (<= 1 MiB: A, C and the like at M <= 16) within their 2 MiB segments too.
                    held = torch.empty((1 + 97 * rep) << 10, dtype=torch.uint8, device="cuda")
                    preps = [Prepared(cell, "cuda") for cell in cells]
                for cell, prep in zip(cells, preps):
                    stream = torch.cuda.Stream() if phase == "pool" else fixed
                    sides, flush = _sides(prep, cold_l2, l2_bytes)
                    timing = measure(*sides, rounds=rounds, stream=stream, **flush)
                    rows.append(
                        {
                            "phase": f"{cold_l2}-{phase}",
                            "rep": rep,
                            "cell": cell.name,
                            "stream": _pool_index(stream.cuda_stream, seen),
                            "triton_s": timing.median(0),
                            "native_s": timing.median(1),
                            "ratio": timing.ratio_median(0, 1),
                            "method": timing.method,
                        }
                    )
                del held
                for prep in between_preps:  # after each repetition, each timed once as the suites time it
                    sides, plan = _sides(prep, "suite", l2_bytes)
                    measure(*sides, rounds=rounds, stream=fixed, **plan)
                print(f"[state_probe {cold_l2} {phase} {rep + 1}/{reps}]", file=sys.stderr)
    with open(out, "w") as f:
        json.dump({"rounds": rounds, "reps": reps, "between": [c.name for c in between], "rows": rows}, f)
    return report(rows)


def report(rows: list[dict]) -> int:
    cells = list(dict.fromkeys(r["cell"] for r in rows))
    phases = list(dict.fromkeys(r["phase"] for r in rows))
    for cell in cells:
        for phase in phases:
            mine = [r for r in rows if r["cell"] == cell and r["phase"] == phase]
            if not mine:
                continue
            tri = [r["triton_s"] for r in mine]
            nat = [r["native_s"] for r in mine]

            def cv(xs):
                return 100 * statistics.stdev(xs) / statistics.fmean(xs) if len(xs) > 1 else 0.0

            print(
                f"{cell:<24} {phase:<13} reps {len(mine):>3}  Triton CV {cv(tri):.2f}% "
                f"(min {min(tri) * 1e6:.2f} max {max(tri) * 1e6:.2f} us)  native CV {cv(nat):.2f}%"
            )
            print("   stream:Triton us/native us  " + " ".join(
                f"{r['stream']}:{r['triton_s'] * 1e6:.2f}/{r['native_s'] * 1e6:.2f}" for r in mine
            ))  # fmt: skip
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m ci.state_probe", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", nargs="+", required=True, metavar="CELL", help="e.g. 'fp16 16x4096x4096'")
    parser.add_argument("--reps", type=int, default=32, help="repetitions per phase (default 32)")
    parser.add_argument("--rounds", type=int, default=10, help="timing rounds per repetition (default 10)")
    parser.add_argument("--phases", nargs="+", choices=PHASES, default=list(PHASES),
                        help="pool: a new pooled stream per timing; fixed: one stream; shift: one stream, "
                        "the timing's buffers moved by 2 MiB more each repetition; fresh: new operands each repetition; "
                        "workspace: one stream, torch's cuBLAS workspaces allocated anew elsewhere each repetition; "
                        "flush: one stream, the flush buffers allocated anew elsewhere each repetition")  # fmt: skip
    parser.add_argument("--cold-l2", nargs="+", type=cold_l2_method, default=["write"],
                        help="write / read: an L2 flush that zeroes / sums twice the L2; rotate: operand copies; "
                        "+copies: the flush, over the suites' operand copies (benchmarks.measure.PLACEMENTS); "
                        "+copiesN: over N copies; suite: as the suites time the cell (placements, cooldown, calls per replay); "
                        "suite+wsN / suite+fbN / suite+cgN: with N cuBLAS workspaces / N flush buffers / N graphs per placed replay")  # fmt: skip
    parser.add_argument("--between", nargs="+", default=[], metavar="CELL",
                        help="cells timed once each (as the suites time them, figures not kept) after every "
                        "repetition: whether what a whole run measures between a cell's two measurements moves it")  # fmt: skip
    parser.add_argument("--out", help="write the rows as JSON here")
    parser.add_argument("--report", metavar="JSON", help="print the report of an earlier --out file")
    args = parser.parse_args(argv)
    if args.report:
        with open(args.report) as f:
            return report(json.load(f)["rows"])
    if args.reps < 2 or args.rounds < 3:
        parser.error(f"--reps must be >= 2 and --rounds >= 3, got {args.reps} and {args.rounds}")
    if not args.out:
        parser.error("--out is needed to run (where the rows go)")
    from benchmarks.matrix import MatrixError, parse_cell

    try:
        cells = [parse_cell(text)[1] for text in args.cells]
    except MatrixError as err:
        parser.error(f"--cells: {err}")
    try:
        between = [parse_cell(text)[1] for text in args.between]
    except MatrixError as err:
        parser.error(f"--between: {err}")
    return run(cells, args.reps, args.rounds, args.out, args.phases, args.cold_l2, between)


if __name__ == "__main__":
    sys.exit(main())
