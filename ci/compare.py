"""`gemmwatch compare` and `gemmwatch comment`: find result files, decide, report.

Exit status of compare: 0 no regression, 1 a regression or a failed cell,
2 bad input (missing or malformed files, a commit without results, no common
machine). `comment` posts the rendered comparison (or prints it with
--dry-run) and sets one commit status per target.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

from ci.asv_results import ResultFile, ResultsError, load
from ci.decision import Comparison, Verdict, between_run_noise, compare, load_settings


class InputError(Exception):
    """Bad input for compare/comment: exit status 2."""


def _resolve(commit: str, repo: Path) -> str:
    """A full SHA if git knows the commit, else the text itself (a hex prefix)."""
    proc = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    return proc.stdout.strip() if proc.returncode == 0 and proc.stdout.strip() else commit


def find_results(results_dir: Path, commit: str, machine: str | None) -> dict[tuple[str, str], Path]:
    """{(machine, triton version): result file} of one commit."""
    if not results_dir.is_dir():
        raise InputError(f"results directory {results_dir} does not exist")
    prefix = commit[:8]
    if len(prefix) < 7:
        raise InputError(f"commit {commit!r}: give at least 7 hex digits or a name git knows")
    found: dict[tuple[str, str], Path] = {}
    machines = [results_dir / machine] if machine else sorted(p for p in results_dir.iterdir() if p.is_dir())
    if machine and not (results_dir / machine).is_dir():
        known = ", ".join(sorted(p.name for p in results_dir.iterdir() if p.is_dir())) or "none"
        raise InputError(f"unknown machine {machine!r} in {results_dir}; machines with results: {known}")
    for mdir in machines:
        for path in sorted(mdir.glob(f"{prefix}*-*.json")):
            result = load(path)
            if result.commit.startswith(commit):
                found[(mdir.name, str(result.machine_params.get("triton", "?")))] = path
    if not found:
        raise InputError(
            f"no results for commit {commit} in {results_dir}" + (f" (machine {machine})" if machine else "")
        )
    return found


HISTORY_RUNS = 20  # newest runs per machine and Triton version that a noise estimate uses


def history_noise(paths) -> dict[tuple[str, str, str], dict]:
    """Run-to-run noise per (machine, Triton version, timing protocol) from earlier result files.

    Runs of other machines, Triton versions or timing protocols never mix (a cell's
    spread across two different GPUs is not noise). Per group, the newest
    HISTORY_RUNS runs by asv's commit date, in date order.
    """
    groups: dict[tuple[str, str, str], list] = {}
    for path in paths:
        result = load(path)
        groups.setdefault(result.noise_key, []).append(result)
    return {key: between_run_noise(sorted(runs, key=lambda r: r.date)[-HISTORY_RUNS:]) for key, runs in groups.items()}


def _history_paths(args) -> list[str]:
    paths = list(getattr(args, "history", None) or [])
    directory = getattr(args, "history_from", None)
    if directory:
        if not Path(directory).is_dir():
            raise InputError(f"--history-from {directory}: not a directory")
        paths += sorted(
            str(p) for p in Path(directory).rglob("*.json") if p.name not in ("machine.json", "benchmarks.json")
        )
    return paths


def comparisons_from_args(args) -> list[Comparison]:
    settings = load_settings(args.config)
    axis = getattr(args, "axis", "commit")
    paths = _history_paths(args)
    noise = history_noise(paths) if paths else None
    comparisons = _comparisons(args, settings, axis, noise)
    reports = list(getattr(args, "recheck", None) or [])
    if getattr(args, "recheck_from", None):
        reports += sorted(str(p) for p in Path(args.recheck_from).rglob("recheck.json"))
    if reports:
        apply_recheck(comparisons, reports)
    return comparisons


def _comparisons(args, settings, axis, noise) -> list[Comparison]:
    if args.base_results or args.head_results:
        if not (args.base_results and args.head_results):
            raise InputError("give both --base-results and --head-results")
        base, head = load(args.base_results), load(args.head_results)
        _check_same_benchmarks(base, head)
        return [compare(base, head, settings, axis=axis, noise=_noise_for(noise, base))]
    if not (args.base and args.head):
        raise InputError("give --base and --head commits, or --base-results and --head-results files")
    repo = Path(args.checkout or Path.cwd())
    results_dir = Path(args.results_dir or repo / ".asv" / "results")
    base_files = find_results(results_dir, _resolve(args.base, repo), args.machine)
    head_files = find_results(results_dir, _resolve(args.head, repo), args.machine)
    common = sorted(set(base_files) & set(head_files))
    if not common:
        raise InputError(
            f"base and head have no machine/Triton version in common: base {sorted(base_files)}, head {sorted(head_files)}"
        )
    out = []
    for key in common:
        base, head = load(base_files[key]), load(head_files[key])
        _check_same_benchmarks(base, head)
        out.append(compare(base, head, settings, axis=axis, noise=_noise_for(noise, base)))
    return out


def _noise_for(noise: dict | None, base) -> dict | None:
    """The history noise of the base's machine, Triton version and timing protocol (None: no history for it)."""
    return (noise or {}).get(base.noise_key)


def apply_recheck(comparisons: list[Comparison], paths: list[str]) -> None:
    """Replace the verdicts of cells that `gemmwatch recheck` re-measured side by side (per machine)."""
    for path in paths:
        try:
            data = json.loads(Path(path).read_text())
            report, machine = data["cells"], data.get("machine")
        except FileNotFoundError:
            raise InputError(f"recheck report {path} does not exist") from None
        except (json.JSONDecodeError, KeyError, TypeError) as err:
            raise InputError(f"recheck report {path} is not a gemmwatch recheck JSON: {err}") from None
        for comp in comparisons:
            if machine is not None and comp.machine != machine:
                continue
            for cell in comp.cells:
                entry = report.get(cell.name)
                if entry is None or "verdict" not in entry:
                    continue
                cell.verdict = Verdict(entry["verdict"])
                cell.note = entry.get("note", "rechecked")
                if entry.get("change") is not None and entry.get("interval"):
                    cell.change, cell.interval = entry["change"], tuple(entry["interval"])
                    cell.p_value = entry.get("p_value")
                    cell.q_value = None  # a single confirmatory test, not part of the matrix-wide FDR


def _check_same_benchmarks(base: ResultFile, head: ResultFile) -> None:
    names_b = {e.benchmark for e in base.entries}
    names_h = {e.benchmark for e in head.entries}
    if not (names_b & names_h):
        raise InputError(f"{base.path} and {head.path} share no benchmark: are they gemmwatch results of one suite?")


def to_json(comparisons: list[Comparison]) -> dict:
    """The documented JSON schema (README, "gemmwatch compare --json")."""
    cells = []
    for comp in comparisons:
        for c in comp.cells:
            cells.append(
                {
                    "benchmark": c.suite,
                    "cell": c.cell,
                    "params": list(c.params),
                    "machine": comp.machine,
                    "triton": comp.triton,
                    "metric": c.metric,
                    "base": asdict(c.base) if c.base else None,
                    "head": asdict(c.head) if c.head else None,
                    "ratio": None if c.change is None else 1.0 + c.change,
                    "change": c.change,
                    "interval": list(c.interval) if c.interval else None,
                    "p_value": c.p_value,
                    "q_value": c.q_value,
                    "triton_time_change": c.triton_change,
                    "threshold": c.threshold,
                    "speedup_over_native": c.speedup_head,
                    "verdict": c.verdict.value,
                    "note": c.note,
                }
            )
    return {
        "comparisons": [
            {
                "machine": comp.machine,
                "base_commit": comp.base_commit,
                "head_commit": comp.head_commit,
                "triton": comp.triton,
                "axis": comp.axis,
                "context_diff": {k: list(v) for k, v in comp.context_diff.items()},
                "counts": comp.counts(),
            }
            for comp in comparisons
        ],
        "cells": cells,
    }


def exit_status(comparisons: list[Comparison]) -> int:
    bad = (Verdict.REGRESSED, Verdict.FAILED)
    return 1 if any(c.verdict in bad for comp in comparisons for c in comp.cells) else 0


def _comparisons_or_none(args, command: str) -> list[Comparison] | None:
    """The comparisons, or None after printing why the input is bad (exit status 2)."""
    try:
        return comparisons_from_args(args)
    except (InputError, ResultsError, ValueError) as err:
        print(f"gemmwatch {command}: {err}", file=sys.stderr)
        return None


def main_compare(args) -> int:
    comparisons = _comparisons_or_none(args, "compare")
    if comparisons is None:
        return 2
    if args.json:
        print(json.dumps(to_json(comparisons), indent=1, default=float))
    else:
        from ci.comment import render

        print(render(comparisons))
    return exit_status(comparisons)


def status_for(comp: Comparison):
    from ci.github_post import StatusSpec

    counts = comp.counts()
    context = f"gemmwatch/{comp.machine}"
    if comp.context_diff:
        return StatusSpec(context, "error", "base and head ran in different contexts: not decided")
    if counts["regressed"] or counts["failed"]:
        return StatusSpec(
            context,
            "failure",
            f"{counts['regressed']} regressions, {counts['failed']} failed cells (Triton {comp.triton})",
        )
    called = counts["unchanged"] + counts["improved"]
    if (
        not called
        and comp.cells
        and all("interpreter" in c.note for c in comp.cells if c.verdict == Verdict.NOT_CALLED)
    ):
        return StatusSpec(context, "success", "pipeline check in the Triton interpreter: no performance verdict")
    if not called:
        return StatusSpec(context, "error", "no cell could be decided (noisy or insufficient samples)")
    return StatusSpec(context, "success", f"no regression in {called} cells; {counts['improved']} improvements")


def main_comment(args) -> int:
    from ci.comment import render
    from ci.github_post import PostError, dry_run, post

    comparisons = _comparisons_or_none(args, "comment")
    if comparisons is None:
        return 2
    body = render(comparisons, dashboard_url=args.dashboard_url)
    statuses = [status_for(c) for c in comparisons]
    if args.dry_run:
        print(dry_run(body, statuses))
        return 0
    try:
        result = post(
            repo=args.repo_slug,
            pr=args.pr,
            body=body,
            statuses=statuses,
            token=os.environ.get("GITHUB_TOKEN"),
            api_url=args.api_url,
        )
    except PostError as err:
        print(f"gemmwatch comment: {err}", file=sys.stderr)
        return err.exit_code
    action = "created" if result.created else "updated"
    print(f"gemmwatch comment: {action} {result.comment_url}; statuses: {', '.join(result.statuses)}")
    return 0
