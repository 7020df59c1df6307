"""`gemmwatch simulate`: false-alarm and detection rates of the decision, from real samples.

Each simulated PR run picks two different measured runs of the same commit
(separate processes, so the cross-process variation is real) as base and head
and bootstrap-resamples their rounds. A/A trials count the alerts (regressed
verdicts: false alarms) per run; injected trials multiply the head's samples
of every cell by 1 + slowdown (ratio and Triton time) and count how many cells
are called regressed.

With `--recheck REPORT.json ...` (A/A reports of `gemmwatch recheck`: the same
commit on both sides, per-round samples kept), each simulated run then goes
through the PR workflow's second stage: every cell the comparison flagged
(regressed, improved or noisy, or moved by half its threshold:
`decision.needs_recheck`) is decided again from a bootstrap of one report's
paired rounds (head rounds times 1 + slowdown in injected trials),
and that verdict replaces the comparison's. A flagged cell that no report has
keeps the comparison's verdict (their number per run is printed: an upper
bound then), or with `--only-rechecked` only the cells the reports cover are
counted at all (a figure for that part of the matrix, e.g. from a recheck
that a deadline cut short).
"""

from __future__ import annotations

import collections
import copy
import fnmatch
import json
import os
import sys

import numpy as np

from ci.asv_results import Entry, ResultFile, ResultsError, load
from ci.decision import Verdict, compare, load_settings, needs_recheck

SAMPLED = ("track_ratio", "track_triton_time")


def _resampled(run: ResultFile, rng, factor: float = 1.0) -> ResultFile:
    out = copy.copy(run)
    entries = []
    for e in run.entries:
        if e.samples and e.benchmark.rsplit(".", 1)[-1] in SAMPLED:
            s = np.asarray(e.samples)[rng.integers(0, len(e.samples), len(e.samples))] * factor
            e = Entry(e.benchmark, e.params, float(np.median(s)), tuple(s.tolist()), e.ci_99)
        entries.append(e)
    out.entries = entries
    return out


def _rechecked(result, rechecks: list[dict], rng, settings, factor: float) -> dict[str, Verdict]:
    """Final verdict per cell after the recheck stage (the comparison's where none applies)."""
    from ci.recheck import decide

    final = {}
    for c in result.cells:
        key = c.name
        reports = [r[key] for r in rechecks if r.get(key, {}).get("base_rounds")]
        if not needs_recheck(c) or not reports:
            final[key] = c.verdict
            continue
        entry = reports[int(rng.integers(0, len(reports)))]
        base, head = np.asarray(entry["base_rounds"]), np.asarray(entry["head_rounds"])
        pick = rng.integers(0, len(base), len(base))  # paired rounds resampled together
        final[key] = Verdict(decide(base[pick].tolist(), (head[pick] * factor).tolist(), key, settings)["verdict"])
    return final


def simulate(
    runs: list[ResultFile],
    *,
    trials: int,
    slowdowns: list[float],
    settings,
    seed: int = 0,
    noise=None,
    rechecks: list[dict] | None = None,
    only_rechecked: bool = False,
    patterns: list[str] | None = None,
) -> dict:
    """`noise`: per-cell run-to-run noise ({(suite, cell): sigma}, see `ci.compare.history_noise`) or None.
    `rechecks`: the cells of A/A recheck reports ({"Suite cell": entry}), or None (no recheck stage);
    `only_rechecked`: count only the cells those reports cover; `patterns`: count only the cells
    whose "Suite cell" name matches one of these fnmatch patterns."""
    rng = np.random.default_rng(seed)
    report = {"trials": trials, "aa_alerts": [], "aa_flagged": [], "aa_unrechecked": [], "detection": {},
              "aa_alert_cells": collections.Counter()}  # fmt: skip
    pairs = [(i, j) for i in range(len(runs)) for j in range(len(runs)) if i != j]
    covered = {name for r in rechecks or [] for name in r}

    def counted(result):
        return [
            c
            for c in result.cells
            if (not only_rechecked or c.name in covered)
            and (not patterns or any(fnmatch.fnmatchcase(c.name, p) for p in patterns))
        ]

    def verdicts(result, factor):
        if rechecks is None:
            return {c.name: c.verdict for c in result.cells}
        return _rechecked(result, rechecks, rng, settings, factor)

    for t in range(trials):
        i, j = pairs[t % len(pairs)]
        result = compare(_resampled(runs[i], rng), _resampled(runs[j], rng), settings, noise=noise)
        cells = counted(result)
        final = verdicts(result, 1.0)
        report["aa_flagged"].append(sum(needs_recheck(c) for c in cells))
        report["aa_unrechecked"].append(sum(needs_recheck(c) and c.name not in covered for c in cells))
        alarms = [c.name for c in cells if final[c.name] == Verdict.REGRESSED]
        report["aa_alerts"].append(len(alarms))
        report["aa_alert_cells"].update(alarms)
    for slowdown in slowdowns:
        detected, total, per_cell = 0, 0, {}
        for t in range(trials):
            i, j = pairs[t % len(pairs)]
            result = compare(_resampled(runs[i], rng), _resampled(runs[j], rng, 1.0 + slowdown), settings, noise=noise)
            final = verdicts(result, 1.0 + slowdown)
            for c in counted(result):
                if c.verdict in (Verdict.NEW, Verdict.MISSING, Verdict.FAILED, Verdict.NOT_CALLED):
                    continue
                total += 1
                hit = final[c.name] == Verdict.REGRESSED
                detected += hit
                per_cell.setdefault(c.name, []).append(hit)
        report["detection"][slowdown] = {
            "rate": detected / total if total else float("nan"),
            "cells_always_detected": sum(all(v) for v in per_cell.values()),
            "cells": len(per_cell),
            "worst": sorted(per_cell, key=lambda k: sum(per_cell[k]))[:10],
            "per_cell_rate": {k: sum(v) / len(v) for k, v in per_cell.items()},
        }
    return report


def _configs_differ(configs) -> bool:
    if not isinstance(configs, dict) or not configs.get("base") or not configs.get("head"):
        return False  # older reports do not say
    return configs["base"].get("config") != configs["head"].get("config")


def _recheck_cells(path: str) -> dict:
    """The cells of an A/A recheck report that kept their per-round samples."""
    import json

    try:
        data = json.loads(open(path).read())
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(f"{path}: {err}") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), dict):
        raise ValueError(f"{path}: not a `gemmwatch recheck` report (no 'cells' object)")
    if data.get("base_commit") != data.get("head_commit"):
        raise ValueError(f"{path}: base and head differ: an A/A recheck (the same commit on both sides) is needed")
    cells = {k: v for k, v in data["cells"].items() if isinstance(v, dict) and v.get("base_rounds")}
    # Both sides must have run the same config (reports name them since `recheck` reuses the
    # runs' autotune choices); a cell whose sides chose differently measured two kernels.
    mixed = sorted(k for k, v in cells.items() if _configs_differ(v.get("configs")))
    if mixed:
        print(f"gemmwatch simulate: {path}: {len(mixed)} cell(s) ran different configs on the two sides, "
              f"not used: {', '.join(mixed)}", file=sys.stderr)  # fmt: skip
        cells = {k: v for k, v in cells.items() if k not in mixed}
    if not cells:
        raise ValueError(f"{path}: no cell with per-round samples (base_rounds/head_rounds)")
    return cells


def main(args) -> int:
    if len(args.files) < 2:
        print("gemmwatch simulate: give two or more result files of one commit (separate runs)", file=sys.stderr)
        return 2
    try:
        runs = [load(f) for f in args.files]
        settings = load_settings(args.config)
    except (ResultsError, ValueError) as err:
        print(f"gemmwatch simulate: {err}", file=sys.stderr)
        return 2
    if args.cells:
        names = {f"{suite} {cell}" for suite, cell in runs[0].metric_by_suite("track_triton_time")}
        if not any(fnmatch.fnmatchcase(n, p) for n in names for p in args.cells):
            print(f"gemmwatch simulate: --cells {' '.join(args.cells)}: no cell of {args.files[0]} matches "
                  "(patterns match 'Suite cell' names, e.g. 'Matmul fp16 *' or '* fp8_e4m3 *')", file=sys.stderr)  # fmt: skip
            return 2
    if args.json and not os.path.isdir(os.path.dirname(os.path.abspath(args.json))):
        print(f"gemmwatch simulate: --json {args.json}: no such directory to write it in", file=sys.stderr)
        return 2
    noise = None
    if args.history:
        from ci.compare import history_noise

        try:
            by_machine = history_noise(args.history)
        except ResultsError as err:
            print(f"gemmwatch simulate: {err}", file=sys.stderr)
            return 2
        key = runs[0].noise_key
        noise = by_machine.get(key)
        if noise is None:
            print(
                f"gemmwatch simulate: no --history run is of {key[0]} with Triton {key[1]} and timing protocol "
                f"{key[2] or '(earlier)'}: no noise history used"
            )
    rechecks = None
    if args.recheck:
        try:
            rechecks = [_recheck_cells(path) for path in args.recheck]
        except ValueError as err:
            print(f"gemmwatch simulate: {err}", file=sys.stderr)
            return 2
    if args.only_rechecked and not rechecks:
        print("gemmwatch simulate: --only-rechecked needs --recheck REPORT.json", file=sys.stderr)
        return 2
    report = simulate(
        runs, trials=args.trials, slowdowns=args.slowdown, settings=settings, seed=args.seed, noise=noise,
        rechecks=rechecks, only_rechecked=args.only_rechecked, patterns=args.cells,
    )  # fmt: skip
    alerts = report["aa_alerts"]
    stage = f", after rechecking the flagged cells ({len(rechecks)} A/A recheck report(s))" if rechecks else ""
    if args.only_rechecked:
        stage += f", counting only the {len({n for r in rechecks for n in r})} cells they cover"
    if args.cells:
        stage += f", cells matching {' '.join(args.cells)}"
    uncovered = (
        f"; of those, cells no report covers, per run: {np.mean(report['aa_unrechecked']):.1f}" if rechecks else ""
    )
    print(
        f"A/A: {sum(alerts)} false alarms in {len(alerts)} simulated PR runs{stage} "
        f"({100 * sum(alerts) / len(alerts):.1f} per 100 runs; runs with any alarm: {sum(a > 0 for a in alerts)}; "
        f"cells the comparison sent to the recheck per run: {np.mean(report['aa_flagged']):.1f}{uncovered})"
    )
    if report["aa_alert_cells"]:
        worst = report["aa_alert_cells"].most_common(10)
        print("A/A false alarms by cell: " + ", ".join(f"{name} ({n})" for name, n in worst))
    for slowdown, d in report["detection"].items():
        rates = d["per_cell_rate"]
        least = ", ".join(f"{k} ({rates[k]:.0%})" for k in d["worst"][:5])
        print(
            f"injected +{slowdown * 100:g}%: detected in {d['rate']:.1%} of cell-trials; "
            f"{d['cells_always_detected']}/{d['cells']} cells detected in every trial, "
            f"{sum(r >= 0.95 for r in rates.values())} in >= 95%; least detected: {least}"
        )
    if args.json:
        summary = {
            "trials": report["trials"],
            "runs": list(args.files),
            "history": list(args.history or []),
            "recheck": list(args.recheck or []),
            "aa": {
                "false_alarms": int(sum(alerts)),
                "per_100_runs": 100 * sum(alerts) / len(alerts),
                "by_cell": dict(report["aa_alert_cells"].most_common()),
                "rechecked_per_run": float(np.mean(report["aa_flagged"])),
            },
            "detection": {
                f"{slowdown:g}": {"rate": d["rate"], "per_cell_rate": dict(sorted(d["per_cell_rate"].items()))}
                for slowdown, d in report["detection"].items()
            },
        }
        try:
            with open(args.json, "w") as f:
                json.dump(summary, f, indent=1)
        except OSError as err:
            print(f"gemmwatch simulate: --json {args.json}: {err.strerror}", file=sys.stderr)
            return 2
    return 0
