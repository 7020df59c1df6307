"""`gemmwatch probe`: each candidate config of a cell, run once in a process of its own.

A kernel that faults (an illegal address, a trap) ends its process's GPU context, and with it a
tune or a `gemmwatch try` of many configs; a config that computes wrong hides among the right
ones. Here each config runs once, in a child process, against the float64 reference: right, wrong
(relative error over the dtype's tolerance), refused by the launcher, failed (another error), or
faulted / hung (the child died or ran past --timeout: only that config's process). Without a GPU
the kernels run in Triton's interpreter (a correctness check).

    gemmwatch probe --cells "fp16 128x4608x3584" --match=-xn --jobs 8
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import subprocess
import sys

from ci.trial import TrialError, parse

# A child's verdicts; those that fail the probe (exit 1).
BAD = ("wrong", "failed", "faulted", "hung")


def configs_of(cell, names: list[str] | None, match: re.Pattern | None) -> list:
    """The configs to probe on `cell`: those named, else the running target's candidates (all of
    them, not only the first MAX_CONFIGS), narrowed by `match` on their names."""
    from ci.tune import space_of
    from targets import detect
    from targets.configs import config_from_name

    if names:
        configs = [config_from_name(name) for name in names]
    else:  # (the operands' dtype, named as the tune names it: "fp32-tf32" -> "fp32")
        configs = space_of(detect(), cell)
    return [c for c in configs if match is None or match.search(str(c))]


def check_one(cell_name: str, config_name: str) -> dict:
    """In the child: run `config_name` once on the cell and check it (the verdict as a dict)."""
    from ci.cli import use_interpreter_without_gpu

    interpreter = use_interpreter_without_gpu()
    import torch

    from benchmarks.cells import TOLERANCE, Prepared, relative_error
    from kernels import autotune

    cells, configs = parse([cell_name], [config_name])
    cell, cfg = cells[0], configs[0]
    prep = Prepared(cell, "cuda" if torch.cuda.is_available() and not interpreter else "cpu")
    ref = prep.reference()
    verdict = {"cell": cell.name, "config": str(cfg)}
    try:
        out = prep.triton(config=cfg)
        if torch.cuda.is_available():
            torch.cuda.synchronize()
    except ValueError as exc:  # (the launcher's refusal: `cannot run this problem: ...`)
        return {**verdict, "status": "refused" if "cannot run" in str(exc) else "failed",
                "reason": autotune.failure_reason(exc)}  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - a config that fails is the probe's finding
        from ci.tune import gpu_context_failed

        status = "faulted" if gpu_context_failed(exc) else "failed"
        return {**verdict, "status": status, "reason": autotune.failure_reason(exc)}
    err = relative_error(out, ref)
    tolerance = TOLERANCE[cell.dtype]
    status = "right" if err <= tolerance else "wrong"
    reason = "" if status == "right" else f"relative error {err:.3g} > {tolerance:g}"
    return {**verdict, "status": status, "rel_error": err, "reason": reason}


def run_child(cell_name: str, config_name: str, timeout: float) -> dict:
    """`check_one` in a child process; a child that dies or runs past `timeout` is the verdict."""
    verdict = {"cell": cell_name, "config": config_name}
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "ci.probe", cell_name, config_name],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=os.getcwd(),
        )
    except subprocess.TimeoutExpired:
        return {**verdict, "status": "hung", "reason": f"still running after {timeout:g} s"}
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode == 0 and lines:
        return json.loads(lines[-1])
    tail = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    return {**verdict, "status": "faulted",
            "reason": f"exit {proc.returncode}: {tail[-1][:200] if tail else 'no message'}"}  # fmt: skip


def main(args) -> int:
    try:
        cells, _ = parse(args.cells, [])
        match = re.compile(args.match) if args.match else None
        if args.jobs < 1:
            raise TrialError(f"--jobs must be >= 1, got {args.jobs}")
        if not args.timeout > 0:
            raise TrialError(f"--timeout must be a positive number of seconds, got {args.timeout:g}")
        if args.json and not os.access(os.path.dirname(os.path.abspath(args.json)), os.W_OK):
            raise TrialError(f"--json {args.json}: its directory does not exist or is not writable")
        work = [(cell, cfg) for cell in cells for cfg in configs_of(cell, args.configs, match)]
    except re.error as err:
        print(f"gemmwatch probe: --match {args.match!r} is not a regular expression: {err}", file=sys.stderr)
        return 2
    except (TrialError, ValueError) as err:
        print(f"gemmwatch probe: {err}", file=sys.stderr)
        return 2
    if not work:
        print("gemmwatch probe: no config to probe (--match finds none of the cells' candidates)", file=sys.stderr)
        return 2
    print(f"gemmwatch probe: {len(work)} configs on {len(cells)} cells, {args.jobs} processes at a time",
          file=sys.stderr, flush=True)  # fmt: skip
    verdicts = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_child, cell.name, str(cfg), args.timeout) for cell, cfg in work]
        for i, future in enumerate(futures, 1):
            verdicts.append(future.result())
            print(f"[{i}/{len(work)}] {verdicts[-1]['cell']} {verdicts[-1]['config']}: {verdicts[-1]['status']}",
                  file=sys.stderr, flush=True)  # fmt: skip
    print(render(verdicts))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(verdicts, f, indent=1)
    bad = [v for v in verdicts if v["status"] in BAD]
    return 1 if bad else 0


def render(verdicts: list[dict]) -> str:
    """Per cell, the count of each verdict, then every config that was not right, with why."""
    lines = [
        "| cell | configs | right | refused | wrong | failed | faulted | hung |",
        "|---|---|---|---|---|---|---|---|",
    ]
    by_cell: dict[str, list[dict]] = {}
    for v in verdicts:
        by_cell.setdefault(v["cell"], []).append(v)
    for cell, rows in by_cell.items():
        counts = [sum(r["status"] == s for r in rows) for s in ("right", "refused", *BAD)]
        lines.append(f"| {cell} | {len(rows)} | " + " | ".join(map(str, counts)) + " |")
    others = [v for v in verdicts if v["status"] != "right"]
    if others:
        lines += ["", "| cell | config | verdict | why |", "|---|---|---|---|"]
        lines += [f"| {v['cell']} | `{v['config']}` | {v['status']} | {v.get('reason', '')} |" for v in others]
    return "\n".join(lines)


if __name__ == "__main__":  # the child: python -m ci.probe CELL CONFIG
    print(json.dumps(check_one(sys.argv[1], sys.argv[2])), flush=True)
