"""`gemmwatch simulate`: false-alarm and detection rates of the decision, from real samples.

Each simulated PR run picks two different measured runs of the same commit
(separate processes, so the cross-process variation is real) as base and head
and bootstrap-resamples their rounds. A/A trials count the alerts (regressed
verdicts: false alarms) per run; injected trials multiply the head's samples
of every cell by 1 + slowdown (ratio and Triton time) and count how many cells
are called regressed.
"""

from __future__ import annotations

import copy
import sys

import numpy as np

from ci.asv_results import Entry, ResultFile, ResultsError, load
from ci.decision import Verdict, compare, load_settings

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


def simulate(
    runs: list[ResultFile], *, trials: int, slowdowns: list[float], settings, seed: int = 0, noise=None
) -> dict:
    """`noise`: per-cell run-to-run noise ({(suite, cell): sigma}, see `ci.compare.history_noise`) or None."""
    rng = np.random.default_rng(seed)
    report = {"trials": trials, "aa_alerts": [], "detection": {}}
    pairs = [(i, j) for i in range(len(runs)) for j in range(len(runs)) if i != j]
    for t in range(trials):
        i, j = pairs[t % len(pairs)]
        result = compare(_resampled(runs[i], rng), _resampled(runs[j], rng), settings, noise=noise)
        report["aa_alerts"].append(len(result.by_verdict(Verdict.REGRESSED)))
    for slowdown in slowdowns:
        detected, total, per_cell = 0, 0, {}
        for t in range(trials):
            i, j = pairs[t % len(pairs)]
            result = compare(_resampled(runs[i], rng), _resampled(runs[j], rng, 1.0 + slowdown), settings, noise=noise)
            for c in result.cells:
                if c.verdict in (Verdict.NEW, Verdict.MISSING, Verdict.FAILED, Verdict.NOT_CALLED):
                    continue
                total += 1
                hit = c.verdict == Verdict.REGRESSED
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
    noise = None
    if args.history:
        from ci.compare import history_noise

        try:
            by_machine = history_noise(args.history)
        except ResultsError as err:
            print(f"gemmwatch simulate: {err}", file=sys.stderr)
            return 2
        key = runs[0].machine_key
        noise = by_machine.get(key)
        if noise is None:
            print(f"gemmwatch simulate: no --history run is of {key[0]} with Triton {key[1]}: no noise history used")
    report = simulate(runs, trials=args.trials, slowdowns=args.slowdown, settings=settings, seed=args.seed, noise=noise)
    alerts = report["aa_alerts"]
    print(
        f"A/A: {sum(alerts)} false alarms in {len(alerts)} simulated PR runs "
        f"({100 * sum(alerts) / len(alerts):.1f} per 100 runs; runs with any alarm: {sum(a > 0 for a in alerts)})"
    )
    for slowdown, d in report["detection"].items():
        rates = d["per_cell_rate"]
        least = ", ".join(f"{k} ({rates[k]:.0%})" for k in d["worst"][:5])
        print(
            f"injected +{slowdown:.0%}: detected in {d['rate']:.1%} of cell-trials; "
            f"{d['cells_always_detected']}/{d['cells']} cells detected in every trial; "
            f"least detected: {least}"
        )
    return 0
