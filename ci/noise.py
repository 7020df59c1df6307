"""`gemmwatch noise`: run-to-run variation of the same commit (A/A), per cell.

Given two or more asv result files of one commit measured in separate
processes, reports for every cell the coefficient of variation of the per-run
medians and the largest relative difference between runs, for the
Triton/native ratio and the absolute Triton and native times.
"""

from __future__ import annotations

import statistics
import sys

from ci.asv_results import ResultFile, ResultsError, load

METRICS = (("track_ratio", "ratio"), ("track_triton_time", "triton"), ("track_native_time", "native"))


def spread(values: list[float]) -> tuple[float, float]:
    """(coefficient of variation, (max - min) / mean), both as fractions."""
    mean = statistics.fmean(values)
    if mean == 0:
        return 0.0, 0.0
    return statistics.stdev(values) / mean, (max(values) - min(values)) / mean


def noise_table(runs: list[ResultFile]) -> list[dict]:
    rows: dict[str, dict] = {}
    for metric, label in METRICS:
        per_run = [run.metric(metric) for run in runs]
        cells = set.intersection(*(set(m) for m in per_run)) if per_run else set()
        for cell in sorted(cells):
            entries = [m[cell] for m in per_run]
            if any(e.failed or e.skipped for e in entries):
                continue
            cv, rng = spread([e.value for e in entries])
            rows.setdefault(cell, {"cell": cell})
            rows[cell][f"{label}_cv"] = cv
            rows[cell][f"{label}_range"] = rng
    return list(rows.values())


def main(args) -> int:
    if len(args.files) < 2:
        print("gemmwatch noise: give at least two result files of the same commit", file=sys.stderr)
        return 2
    contexts = None
    if args.context is not None:
        from ci.run import named_context_cells

        if not args.clocks:
            print("gemmwatch noise: --context is read by --clocks; give both", file=sys.stderr)
            return 2
        if len(args.context) != len(args.files):
            print(
                f"gemmwatch noise: --context names {len(args.context)} directories for {len(args.files)} result "
                "files; expected one per file, in the files' order",
                file=sys.stderr,
            )
            return 2
        try:
            contexts = [named_context_cells(directory) for directory in args.context]
        except ResultsError as err:
            print(f"gemmwatch noise: {err}", file=sys.stderr)
            return 2
    try:
        runs = [load(path) for path in args.files]
        rows = noise_table(runs)
    except ResultsError as err:
        print(f"gemmwatch noise: {err}", file=sys.stderr)
        return 2
    if not rows:
        print("gemmwatch noise: the files share no measured cell", file=sys.stderr)
        return 2
    header = f"{'cell':<42} {'ratio CV':>9} {'ratio max-diff':>14} {'triton CV':>9} {'native CV':>9}"
    print(header)
    print("-" * len(header))

    def pct(row, key):
        return f"{100 * row[key]:.2f}%" if key in row else "-"

    for row in sorted(rows, key=lambda r: -r.get("ratio_cv", r.get("triton_cv", 0))):
        print(
            f"{row['cell']:<42} {pct(row, 'ratio_cv'):>9} {pct(row, 'ratio_range'):>14} "
            f"{pct(row, 'triton_cv'):>9} {pct(row, 'native_cv'):>9}"
        )
    worst = max(max(r.get("ratio_cv", 0), r.get("triton_cv", 0), r.get("native_cv", 0)) for r in rows)
    over = cells_over(rows, args.target)
    triton_over = sum(r["cell"] in over and r.get("triton_cv", 0) > args.target for r in rows)
    split = (
        f": {triton_over} by their Triton time, {len(over) - triton_over} by the ratio alone (the native time moved)"
        if over
        else ""
    )
    print(
        f"\n{len(rows)} cells over {len(args.files)} runs; worst CV {100 * worst:.2f}%; "
        f"{len(over)} cells above the {100 * args.target:.1f}% goal (ratio or Triton time){split}"
    )
    native_only = [r for r in rows if r["cell"] not in over and r.get("native_cv", 0) > args.target]
    if native_only:  # (the goal is on the absolute times too; the PR gate reads the ratio)
        named = ", ".join(f"{r['cell']} {100 * r['native_cv']:.2f}%" for r in native_only)
        print(f"and {len(native_only)} above it by their native time alone (ratio and Triton time within): {named}")
    cards = card_report(runs)
    if cards:
        print(cards)
    if over and len(runs) > 2:
        print(pair_report(runs, args.files, args.target))
    if over:
        print(per_run_report(runs, over, args.target))
    noisy = over + [r["cell"] for r in native_only]
    if args.clocks and noisy:
        print(clock_report(runs, noisy, contexts))
        print(choice_report(runs, noisy, contexts))
    return 0


def card_report(runs: list[ResultFile]) -> str:
    """A warning when the runs were measured on different physical cards (the machine parameter
    "card", a GPU UUID): offsets between cards are not the timing's noise. Empty when they share one,
    or when a run does not say (results from before the card was recorded)."""
    cards = [str(run.machine_params.get("card", "")) for run in runs]
    if any(card in ("", "unknown") for card in cards) or len(set(cards)) == 1:
        return ""
    named = ", ".join(f"run {i + 1}: {card}" for i, card in enumerate(cards))
    return (
        f"\nThe runs were measured on {len(set(cards))} different cards ({named}): a difference between "
        "cards is part of these figures, not the noise of one card's timing."
    )


def cells_over(rows: list[dict], target: float) -> list[str]:
    """The cells of `noise_table` rows whose ratio or Triton-time CV is above the goal."""
    return [r["cell"] for r in rows if max(r.get("ratio_cv", 0), r.get("triton_cv", 0)) > target]


def pair_report(runs: list[ResultFile], files: list[str], target: float) -> str:
    """Cells over the goal in each pair of runs: a run that is in every bad pair (e.g. the one on a
    cold Triton cache) stands apart from the others, which agree."""
    lines = ["", f"Cells above the {100 * target:.1f}% goal by pair of runs:"]
    for i in range(len(runs)):
        for j in range(i + 1, len(runs)):
            count = len(cells_over(noise_table([runs[i], runs[j]]), target))
            lines.append(f"  runs {i + 1} and {j + 1}: {count}")
    lines.append("  (" + ", ".join(f"{i + 1} = {path}" for i, path in enumerate(files)) + ")")
    return "\n".join(lines)


def apart(values: list[float], target: float) -> tuple[int, float] | None:
    """(index, relative offset) of the one value that stands apart: the others agree within the
    goal (CV) and it lies farther from their mean than twice the goal; None when no single one does
    (fewer than three values, or the spread is shared)."""
    if len(values) < 3:
        return None
    best = None
    for i, value in enumerate(values):
        rest = values[:i] + values[i + 1 :]
        mean = statistics.fmean(rest)
        if mean and spread(rest)[0] <= target and abs(value / mean - 1) > 2 * target:
            offset = value / mean - 1
            if best is None or abs(offset) > abs(best[1]):
                best = (i, offset)
    return best


def per_run_report(runs: list[ResultFile], cells: list[str], target: float) -> str:
    """Each noisy cell's median per run (ratio; Triton and native times in us), the rounds each run
    took (the timing adds rounds where they are noisy: benchmarks.measure.precise_rounds), and which
    run, on which metric, stands apart from the others where one does."""
    metrics = {label: [run.metric(metric) for run in runs] for metric, label in METRICS}
    lines = ["", "Per-run medians of each noisy cell (ratio; Triton / native us; rounds per run):"]
    for cell in cells:
        parts, odd, rounds = [], [], None
        for label, per_run in metrics.items():
            entries = [m.get(cell) for m in per_run]
            if any(e is None or e.failed or e.skipped for e in entries):
                continue
            values = [e.value for e in entries]
            scale, digits = (1.0, 4) if label == "ratio" else (1e6, 2)
            parts.append(f"{label} " + " / ".join(f"{v * scale:.{digits}f}" for v in values))
            if rounds is None and all(e.samples for e in entries):
                rounds = "rounds " + " / ".join(str(len(e.samples)) for e in entries)
            found = apart(values, target)
            if found:
                odd.append((found[0], f"{label} {100 * found[1]:+.2f}%"))
        runs_apart = sorted({i for i, _ in odd})
        note = "; ".join(
            f"run {i + 1} stands apart: " + ", ".join(text for j, text in odd if j == i) for i in runs_apart
        )
        lines.append(
            f"  {cell:<40} " + "; ".join([*parts, rounds] if rounds else parts) + (f"  <- {note}" if note else "")
        )
    return "\n".join(lines)


def context_cells(result: ResultFile) -> dict[str, dict]:
    """{cell: entry} from the context `gemmwatch run` wrote beside a result file.

    The context lives in <results>/../context/<machine>/<commit8>-<stamp>/<Suite>.json; the newest
    stamp of the file's commit is used (none: {}).
    """
    from ci.run import suite_context_cells

    path = result.path
    context_root = path.parent.parent.parent / "context" / path.parent.name
    runs = sorted(context_root.glob(f"{result.commit[:8]}-*")) if context_root.is_dir() else []
    return suite_context_cells(runs[-1]) if runs else {}


def clock_states(result: ResultFile, context: dict[str, dict] | None = None) -> dict[str, dict]:
    """{cell: {"before": state, "after": state, "compile_s": seconds, "cool_start_s": seconds}}; cells
    measured without NVML (or before per-cell states were recorded) are absent. `compile_s`: the
    seconds the cell's first call took to choose and compile its config right before its rounds (the
    GPU idle meanwhile: a run on a cold Triton cache has such gaps where a warm one has none), None if
    not recorded; `cool_start_s`: the seconds idled before that call for a cool start
    (GEMMWATCH_COOL_START), None where there was none. `context`: the run's context cells where they
    do not lie beside the file (default: `context_cells`)."""
    return {
        cell: {
            "before": entry.get("state_before") or {},
            "after": entry.get("state_after") or {},
            "compile_s": entry.get("tune_seconds"),
            "cool_start_s": entry.get("cool_start_s"),
        }
        for cell, entry in (context_cells(result) if context is None else context).items()
        if entry.get("state_before") or entry.get("state_after")
    }


def _geometry(launches) -> str:
    """One run's native launches as "grid x block" per kernel ("" when not recorded)."""
    if not launches or not all("grid" in launch for launch in launches):
        return ""

    def fmt(dims) -> str:
        return "x".join(map(str, dims)) if isinstance(dims, list) else str(dims)

    return ", ".join(f"[{fmt(launch['grid'])}]x[{fmt(launch.get('block', '?'))}]" for launch in launches)


def choice_report(runs: list[ResultFile], cells: list[str], contexts: list[dict] | None = None) -> str:
    """For the noisy cells: whether each run launched the same Triton config and the same native
    kernels over the same grids (GEMMWATCH_NATIVE_KERNELS=1 runs record those); a choice that differs
    explains the noise."""
    per_run = [context_cells(run) for run in runs] if contexts is None else contexts
    lines, same_native, recorded, geometry_recorded = [], 0, 0, 0
    for cell in cells:
        entries = [ctx.get(cell, {}) for ctx in per_run]
        configs = [e.get("config") for e in entries]
        if all(configs) and len(set(configs)) > 1:
            lines.append(f"  {cell:<40} Triton config differs: " + " | ".join(configs))
        # The timing method and the calls per graph replay are decided per run from an estimate:
        # a switch of method, or a replay of a very different length, is a change of protocol.
        methods = [e.get("method") for e in entries]
        inners = [e.get("inner") for e in entries]
        if all(methods) and len(set(methods)) > 1:
            lines.append(f"  {cell:<40} timing method differs: " + " | ".join(methods))
        elif all(inners) and max(inners) > 1.1 * min(inners):
            lines.append(f"  {cell:<40} calls per replay differ by over 10%: " + " | ".join(map(str, inners)))
        kernels = [tuple(e["native_kernels"]) for e in entries if e.get("native_kernels") is not None]
        if len(kernels) == len(entries):
            recorded += 1
            geometries = [_geometry(e.get("native_launches")) for e in entries]
            if len(set(kernels)) > 1:
                lines.append(f"  {cell:<40} native kernels differ: " + " | ".join(", ".join(k) for k in kernels))
            elif all(geometries) and len(set(geometries)) > 1:
                lines.append(f"  {cell:<40} native launch geometry differs (same kernels): " + " | ".join(geometries))
            else:
                same_native += 1
                geometry_recorded += all(geometries)
    head = ["", "Kernel choices and timing protocol of each noisy cell across the runs:"]
    tail = [
        f"  native kernels recorded in every run for {recorded} of {len(cells)} noisy cells"
        + (f"; the same in all runs for {same_native}" if recorded else " (GEMMWATCH_NATIVE_KERNELS=1 records them)")
        + (f", with the same launch geometry for {geometry_recorded}" if geometry_recorded else "")
    ]
    same = "  the same Triton config, timing method and about the same calls per replay in every run where recorded"
    return "\n".join(head + (lines or [same]) + tail)


def clock_report(runs: list[ResultFile], cells: list[str], contexts: list[dict] | None = None) -> str:
    """Per cell above the goal and per run: SM clock before -> after its rounds, power after, throttling;
    and the seconds each run spent compiling the cell right before its rounds, where recorded.
    `contexts`: each run's context cells (default: read beside each file)."""
    per_run = [clock_states(run, None if contexts is None else contexts[i]) for i, run in enumerate(runs)]
    lines = [
        "",
        "Clock state around each noisy cell's rounds, per run (SM MHz before -> after; W, C and throttle after;",
        "seconds compiling right before the rounds, the GPU idle):",
    ]
    for cell in cells:
        parts = []
        for states in per_run:
            state = states.get(cell)
            if not state:
                parts.append("-")
                continue
            before, after = state["before"], state["after"]
            throttle = ",".join(after.get("throttle_names") or []) or "none"
            parts.append(
                f"{before.get('sm_clock_mhz', '?')}->{after.get('sm_clock_mhz', '?')} MHz "
                f"{after.get('power_w', '?')} W {after.get('temperature_c', '?')} C {throttle}"
            )
        compiled = [(states.get(cell) or {}).get("compile_s") for states in per_run]
        tail = ""
        if all(isinstance(x, (int, float)) for x in compiled):
            tail = "; compiling first " + " / ".join(f"{x:.2f}" for x in compiled) + " s"
        cooled = [(states.get(cell) or {}).get("cool_start_s") for states in per_run]
        if any(isinstance(x, (int, float)) for x in cooled):
            tail += "; idled for a cool start " + " / ".join("-" if x is None else f"{x:.2f}" for x in cooled) + " s"
        lines.append(f"  {cell:<40} " + " | ".join(parts) + tail)
    if all(not states for states in per_run):
        lines.append(
            "  (no per-cell clock states in these runs' context: measured without NVML, or before they were recorded)"
        )
    return "\n".join(lines)
