"""`gemmwatch recheck`: base and head kernels side by side in one process, for the flagged cells.

Separate processes differ by more than their rounds say (clock, power and
thermal state; docs/BENCHMARKS.md), so a cell flagged by `compare` is measured
again with both commits' kernels loaded into this one process from git
worktrees, interleaved base, head, native in every round on the same inputs.
The per-round ratio head/base is paired: clock drift moves both sides of a
round together. A regression is confirmed with the same rule as `compare`
(Wilcoxon signed-rank on the paired log ratios, the interval reaching the
threshold); the output (JSON) feeds `gemmwatch compare/comment --recheck`.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import math
import os
import statistics
import sys
from pathlib import Path

import numpy as np

PACKAGES = ("kernels", "targets")


def load_tree(tree: Path):
    """Import `kernels` (and its `targets`) from `tree` without disturbing the ones already loaded.

    The modules are taken out of sys.modules afterwards; the returned package
    keeps its own module objects alive through its functions' globals, so two
    trees' kernels coexist in one process.
    """
    owned = [k for k in sys.modules if k.split(".")[0] in PACKAGES]
    saved = {k: sys.modules.pop(k) for k in owned}
    sys.path.insert(0, str(tree))
    loaded: list[str] = []
    try:
        module = importlib.import_module("kernels")
        if not Path(module.__file__).resolve().is_relative_to(tree.resolve()):
            raise RuntimeError(f"kernels imported from {module.__file__}, not from {tree}")
    finally:
        sys.path.remove(str(tree))
        loaded = [k for k in sys.modules if k.split(".")[0] in PACKAGES]
        for k in loaded:
            sys.modules.pop(k)
        sys.modules.update(saved)
    return module


def paired_change(base: list[float], head: list[float], confidence: float):
    """(change, (low, high), p) of head vs base from per-round pairs, on the log scale."""
    from scipy.stats import binom, wilcoxon

    logs = np.log(np.asarray(head) / np.asarray(base))
    n = len(logs)
    ordered = np.sort(logs)
    # Distribution-free interval of the median from order statistics (sign-test inversion).
    k = max(int(binom.ppf((1 - confidence) / 2, n, 0.5)) - 1, 0)
    low, high = ordered[k], ordered[n - 1 - k]
    p = float(wilcoxon(logs).pvalue) if np.any(logs != 0) else 1.0
    return math.expm1(float(np.median(logs))), (math.expm1(float(low)), math.expm1(float(high))), p


@contextlib.contextmanager
def _autotune_cache(path: Path | None):
    """GEMMWATCH_AUTOTUNE_CACHE set to `path` (unset for None) while a side chooses its configs."""
    from kernels.autotune import ENV_CACHE_FILE

    saved = os.environ.pop(ENV_CACHE_FILE, None)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.environ[ENV_CACHE_FILE] = str(path)
    try:
        yield
    finally:
        os.environ.pop(ENV_CACHE_FILE, None)
        if saved is not None:
            os.environ[ENV_CACHE_FILE] = saved


def _chosen(kmod) -> dict | None:
    """The config the side's last launch used and how it was chosen (None from a tree without that record)."""
    last = getattr(getattr(kmod, "autotune", None), "last", None)
    selection = last() if last else None
    return {"config": str(selection.config), "method": selection.method} if selection else None


def recheck_cells(
    cells,
    base_tree: Path,
    head_tree: Path,
    *,
    rounds: int,
    settings,
    autotune_caches: dict | None = None,
    max_rounds: int | None = None,
) -> dict:
    """`max_rounds`: a cell still noisy after `rounds` gets more, `rounds` at a time, up to this
    many (default: `rounds`, no more). `autotune_caches`: {"base": path, "head": path} of the
    runs' stored autotune choices; a cell without a tuned entry then runs the config its run chose
    (a fresh choice is stored there), so an A/A recheck times the same configs on both sides
    instead of two independent autotunes."""
    import torch

    from benchmarks.cells import TOLERANCE, Prepared, relative_error
    from benchmarks.measure import cooldown, injected_slowdowns, prepare_process, slowed, timed_sides, timing_plan
    from benchmarks.timing import measure
    from ci.decision import Verdict
    from targets import detect

    base_k, head_k = load_tree(base_tree), load_tree(head_tree)
    inject = injected_slowdowns()  # evidence runs: a calibrated slowdown of the head side (GPU only)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    spec = detect()
    prepare_process(device)  # as the runs' processes start
    out = {}
    for i, (suite, cell) in enumerate(cells, 1):
        print(f"[recheck {i}/{len(cells)}] {suite} {cell.name}", file=sys.stderr, flush=True)
        entry: dict = {"suite": suite}
        out[f"{suite} {cell.name}"] = entry
        try:
            prep = Prepared(cell, device)
            ref = prep.reference()
            errors, configs = {}, {}
            for side, kmod in (("base", base_k), ("head", head_k)):
                with _autotune_cache((autotune_caches or {}).get(side)):  # the first call chooses the config
                    errors[side] = relative_error(prep.triton(kmod), ref)
                configs[side] = _chosen(kmod)
            entry["rel_error"], entry["configs"] = errors, configs
            if not errors["head"] <= TOLERANCE[cell.dtype]:
                entry.update(verdict=Verdict.FAILED.value, note=f"head result over tolerance ({errors['head']:.3g})")
                continue
            calls = [functools.partial(prep.triton, base_k), functools.partial(prep.triton, head_k)]
            calls = [lambda ops, call=call: call(operands=ops) for call in calls]
            if prep.native_supported() is None:
                calls.append(lambda ops, native=prep.native: native(operands=ops))
            sides = timed_sides(prep, device, spec, calls)
            if inject.get(cell.name) and device == "cuda":
                sides[1], expected = slowed(sides[1], inject[cell.name])
                entry["injected_slowdown"] = {"asked": inject[cell.name], "calibrated": expected}
            name = f"{suite} {cell.name}"
            if device == "cuda":
                plan = timing_plan(prep, spec)  # calls per replay and cooldown, as the runs chose them
                samples, verdict = decided_rounds(
                    lambda n, sides=sides, plan=plan: measure(*sides, rounds=n, **plan).samples,
                    lambda s, name=name: decide(s[0], s[1], name, settings), rounds, max_rounds or rounds,
                )  # fmt: skip
            else:
                samples = measure(*sides, rounds=rounds, cooldown=cooldown()).samples
        except Exception as err:  # noqa: BLE001 - one cell's failure is reported, the others go on
            entry.update(verdict=Verdict.FAILED.value, note=f"{type(err).__name__}: {err}")
            continue
        if device == "cpu":  # the interpreter: correctness was checked; its timings must not decide anything
            change = paired_change(samples[0], samples[1], settings.confidence)[0]
            entry.update(verdict=Verdict.NOT_CALLED.value, note="Triton interpreter: timings are not performance",
                         change=change, rounds=rounds)  # fmt: skip
            continue
        taken = len(samples[0])
        entry.update(verdict, rounds=taken)
        entry["base_s"], entry["head_s"] = statistics.median(samples[0]), statistics.median(samples[1])
        entry["base_rounds"], entry["head_rounds"] = samples[0], samples[1]  # for `simulate --recheck`
        entry["note"] = f"rechecked side by side in one process ({taken} paired rounds)" + (
            f"; {rounds} left it noisy, so more were taken" if taken > rounds else ""
        )
    return out


def decided_rounds(measure_rounds, decide_on, rounds: int, max_rounds: int) -> tuple[list[list[float]], dict]:
    """(per-side samples, verdict) of paired rounds taken `rounds` at a time until the verdict is not
    noisy or `max_rounds` are reached. A cell whose rounds spread by about the threshold gets an
    interval as wide as it, which can tell neither 0 from 2% nor 2% from 4%: more rounds narrow it
    (by the square root of their number) where one batch cannot decide.

    `measure_rounds(n)`: n more paired rounds, a list of per-side lists; `decide_on(samples)`: the
    verdict dict of `decide` for them."""
    from ci.decision import Verdict

    samples = [list(side) for side in measure_rounds(rounds)]
    verdict = decide_on(samples)
    while verdict["verdict"] == Verdict.NOISY.value and len(samples[0]) + rounds <= max_rounds:
        for side, more in zip(samples, measure_rounds(rounds)):
            side.extend(more)
        verdict = decide_on(samples)
    return samples, verdict


def decide(base: list[float], head: list[float], name: str, settings) -> dict:
    """The verdict on paired per-round times of base and head: `compare`'s rule on the paired change."""
    from ci.decision import call

    change, interval, p = paired_change(base, head, settings.confidence)
    thr = settings.threshold_for(name)
    verdict = call(change, interval, p < settings.alpha, thr)[0].value
    return {"verdict": verdict, "change": change, "interval": list(interval), "p_value": p, "threshold": thr}


def main(args) -> int:
    from benchmarks.matrix import parse_cell
    from ci.cli import use_interpreter_without_gpu
    from ci.compare import InputError, comparisons_from_args
    from ci.decision import load_settings, needs_recheck
    from ci.run import RunError, autotune_cache_path, ensure_worktree, find_repo, resolve_commit
    from targets import detect

    interpreter = use_interpreter_without_gpu()
    max_rounds = 3 * args.rounds if args.max_rounds is None else args.max_rounds
    if args.rounds < 3 or max_rounds < args.rounds:
        print(f"gemmwatch recheck: --rounds must be >= 3 and --max-rounds >= --rounds (paired rounds per cell), "
              f"got {args.rounds} and {max_rounds}", file=sys.stderr)  # fmt: skip
        return 2
    try:
        repo = find_repo(Path(args.checkout or Path.cwd()))
        base_sha, head_sha = resolve_commit(repo, args.base), resolve_commit(repo, args.head)
        settings = load_settings(args.config)
        if args.cells:
            cells = [parse_cell(text) for text in args.cells]
        else:
            comps = comparisons_from_args(args)
            cells = [parse_cell(c.name) for comp in comps for c in comp.cells if needs_recheck(c)]
        work_dir = Path(args.work_dir or repo / ".asv" / "gemmwatch")
        trees = {side: ensure_worktree(repo, sha, work_dir / "worktrees") for side, sha in
                 (("base", base_sha), ("head", head_sha))}  # fmt: skip
    except (RunError, InputError, ValueError) as err:
        print(f"gemmwatch recheck: {err}", file=sys.stderr)
        return 2
    if not cells:
        print("gemmwatch recheck: no cell to recheck (none flagged or moved by half its threshold)")
        report = {}
    else:
        # Each side's configs come from its own tree (library) or its run's stored choices
        # (per kernel source); compile workers would import the wrong tree.
        os.environ["GEMMWATCH_COMPILE_WORKERS"] = "0"
        caches = {side: autotune_cache_path(work_dir, detect().name, tree) for side, tree in trees.items()}
        report = recheck_cells(
            cells, trees["base"], trees["head"], rounds=args.rounds, settings=settings, autotune_caches=caches,
            max_rounds=max_rounds,
        )  # fmt: skip

    payload = {
        "machine": detect().name,  # gemmwatch run names the asv machine after the target too
        "base_commit": base_sha,
        "head_commit": head_sha,
        "interpreter": interpreter,
        "cells": report,
    }
    text = json.dumps(payload, indent=1)
    if args.output:
        Path(args.output).write_text(text)
    print(text)
    if interpreter:
        print("NOTE: interpreter recheck: a pipeline check, its timings are not performance", file=sys.stderr)
    return 1 if any(v.get("verdict") in ("regressed", "failed") for v in report.values()) else 0
