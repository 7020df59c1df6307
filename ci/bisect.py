"""`gemmwatch bisect`: narrow a regression of some cells to one commit or one Triton version.

Commits: between a good and a bad commit (`git rev-list --ancestry-path`), each
step measures the cells with the good commit's and the candidate's kernels side
by side in one process (the recheck machinery), so the cross-process noise that
made the first alarm uncertain does not decide the bisection. A step is bad
when any cell regressed or failed. The endpoints are checked first: a range
whose bad end does not regress against its good end is reported as such.

Triton versions: an ordered list of versions, each with the Python of an
environment that has it (`ci/make_triton_env.sh`); each step runs the cells
with `gemmwatch run --python` and compares to the good version's results
(`--axis triton`). Two Tritons cannot share a process, so these steps carry the
cross-process noise; the report says so.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BAD = ("regressed", "failed")


def _step_commits(repo: Path, good: str, bad: str) -> list[str]:
    from ci.run import RunError, git

    ancestor = subprocess.run(["git", "-C", str(repo), "merge-base", "--is-ancestor", good, bad], capture_output=True)
    if ancestor.returncode != 0:
        raise RunError(f"good commit {good[:10]} is not an ancestor of bad commit {bad[:10]}")
    return git(repo, "rev-list", "--reverse", "--ancestry-path", f"{good}..{bad}").split()


def bisect_commits(repo: Path, good: str, bad: str, cells, *, rounds: int, settings, work: Path, log=print) -> dict:
    from ci.recheck import recheck_cells
    from ci.run import ensure_worktree

    commits = _step_commits(repo, good, bad)
    if not commits:
        return {"result": "empty-range", "message": f"no commits between {good[:10]} and {bad[:10]}"}
    good_tree = ensure_worktree(repo, good, work)
    steps = []

    def is_bad(sha: str) -> bool:
        report = recheck_cells(cells, good_tree, ensure_worktree(repo, sha, work), rounds=rounds, settings=settings)
        verdicts = {name: entry.get("verdict") for name, entry in report.items()}
        bad_cells = sorted(name for name, v in verdicts.items() if v in BAD)
        steps.append({"commit": sha, "verdicts": verdicts})
        log(f"bisect: {sha[:10]} {'BAD' if bad_cells else 'good'} {', '.join(bad_cells)}")
        return bool(bad_cells)

    if not is_bad(commits[-1]):
        return {
            "result": "no-regression",
            "message": f"{bad[:10]} does not regress against {good[:10]} in these cells: nothing to bisect",
            "steps": steps,
        }
    lo, hi = -1, len(commits) - 1  # commits[hi] is bad; lo = -1 stands for the good commit
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if is_bad(commits[mid]):
            hi = mid
        else:
            lo = mid
    first = commits[hi]
    from ci.run import git

    subject = git(repo, "log", "-1", "--format=%s", first)
    return {
        "result": "found",
        "first_bad": first,
        "subject": subject,
        "message": f"first bad commit: {first[:10]} {subject}",
        "steps": steps,
    }


def bisect_triton(versions: list[tuple[str, str]], cells, *, repo: Path, work: Path, settings, log=print) -> dict:
    """versions: [(version, python), ...] in release order; the first is good, the last bad."""
    from ci.asv_results import load
    from ci.decision import Verdict, compare

    shapes = sorted({f"{c.M}x{c.N}x{c.K}" for _, c in cells})
    dtypes = sorted({c.dtype for _, c in cells})
    names = {f"{suite} {c.name}" for suite, c in cells}
    results: dict[str, Path] = {}

    def result_for(version: str, python: str) -> Path:
        if version not in results:
            out = work / "bisect-triton" / version
            cmd = [sys.executable, "-m", "ci.cli", "run", "--python", python, "--results-dir", str(out),
                   "--work-dir", str(work), "--shapes", *shapes, "--dtypes", *dtypes]  # fmt: skip
            proc = subprocess.run(cmd, cwd=repo, capture_output=True, text=True)
            files = [p for p in out.rglob("*-*.json") if p.name != "machine.json"]
            if proc.returncode not in (0, 1) or not files:
                raise RuntimeError(f"Triton {version}: gemmwatch run failed: {proc.stderr.strip()[-500:]}")
            results[version] = max(files, key=lambda p: p.stat().st_mtime)
        return results[version]

    good_version, good_python = versions[0]
    steps = []

    def is_bad(index: int) -> bool:
        version, python = versions[index]
        comp = compare(load(result_for(good_version, good_python)), load(result_for(version, python)), settings,
                       axis="triton")  # fmt: skip
        bad_cells = sorted(c.name for c in comp.cells if c.name in names and c.verdict in (Verdict.REGRESSED,
                                                                                           Verdict.FAILED))  # fmt: skip
        steps.append({"triton": version, "bad_cells": bad_cells})
        log(f"bisect: Triton {version} {'BAD' if bad_cells else 'good'} {', '.join(bad_cells)}")
        return bool(bad_cells)

    if len(versions) < 2:
        return {"result": "empty-range", "message": "give at least two Triton versions (good first, bad last)"}
    if not is_bad(len(versions) - 1):
        return {
            "result": "no-regression",
            "message": f"Triton {versions[-1][0]} does not regress against {good_version} in these cells",
            "steps": steps,
        }
    lo, hi = 0, len(versions) - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if is_bad(mid):
            hi = mid
        else:
            lo = mid
    return {
        "result": "found",
        "first_bad": versions[hi][0],
        "message": f"first bad Triton version: {versions[hi][0]} (last good {versions[lo][0]}); "
        "each step compared separate processes, so confirm with a recheck on the GPU",
        "steps": steps,
    }


def main(args) -> int:
    from benchmarks.matrix import parse_cell
    from ci.cli import use_interpreter_without_gpu
    from ci.decision import load_settings
    from ci.run import RunError, find_repo, resolve_commit

    use_interpreter_without_gpu()
    try:
        repo = find_repo(Path(args.checkout or Path.cwd()))
        settings = load_settings(args.config)
        cells = [parse_cell(text) for text in args.cells]
        work = Path(args.work_dir or repo / ".asv" / "gemmwatch")
        if args.triton:
            versions = []
            for item in args.triton:
                version, sep, python = item.partition("=")
                if not sep or not python:
                    raise ValueError(f"--triton {item!r}: expected VERSION=PYTHON, e.g. 3.6.0=/envs/t360/bin/python")
                versions.append((version, python))
            report = bisect_triton(versions, cells, repo=repo, work=work, settings=settings)
        else:
            if not (args.good and args.bad):
                raise ValueError("give --good and --bad commits, or --triton VERSION=PYTHON ... (good first)")
            good, bad = resolve_commit(repo, args.good), resolve_commit(repo, args.bad)
            report = bisect_commits(repo, good, bad, cells, rounds=args.rounds, settings=settings,
                                    work=work / "worktrees")  # fmt: skip
    except (RunError, ValueError, RuntimeError) as err:
        print(f"gemmwatch bisect: {err}", file=sys.stderr)
        return 2
    print(report["message"])
    if args.output:
        Path(args.output).write_text(json.dumps(report, indent=1))
    return 1 if report["result"] == "found" else 0
