"""`gemmwatch table`: the per-cell speed table (Triton vs native, before vs after) from asv result files.

For every cell of the `after` run (or runs: parts of the matrix measured apart, each cell in one of
them): Triton and native TFLOP/s and the speedup
over native (native time / Triton time, from the per-round ratios); with a
`before` run, its Triton TFLOP/s and speedup beside them. Ends with, per dtype
and for the goal dtypes together, the geometric mean speedup and the number of
cells at >= 1.00x. With a `before` run, the goal cells that crossed 1.00x either way or changed
config follow, each with its config in both runs (from the context `gemmwatch run` writes beside the
results, or the directories given), and whether the runs were measured on different cards: a cell
that crossed on the same config moved with the card or the noise, not with the code. Markdown, for
docs/BENCHMARKS.md and PR descriptions.
"""

from __future__ import annotations

import math
import statistics
import sys

from ci.asv_results import ResultFile, ResultsError, load

GOAL_DTYPES = ("fp16", "bf16", "fp8_e4m3")  # the cells the >= 1.00x goal is about; fp32 is reported


def cell_rows(path) -> dict[str, dict]:
    """{cell: {"triton_s", "native_s", "speedup"}} for the measured cells of one result file (a path,
    or the file already loaded)."""
    result = path if isinstance(path, ResultFile) else load(path)
    triton, native, ratio = (result.metric(m) for m in ("track_triton_time", "track_native_time", "track_ratio"))
    out = {}
    for cell, entry in triton.items():
        if entry.failed or entry.skipped:
            continue
        row = {"triton_s": entry.value, "native_s": None, "speedup": None}
        if cell in native and not (native[cell].failed or native[cell].skipped):
            row["native_s"] = native[cell].value
        if cell in ratio and not (ratio[cell].failed or ratio[cell].skipped) and ratio[cell].value > 0:
            row["speedup"] = 1.0 / ratio[cell].value
        out[cell] = row
    return out


def merged_rows(runs: list[ResultFile]) -> dict[str, dict]:
    """`cell_rows` of several loaded result files (runs of parts of the matrix) as one run's: a cell
    measured in two of them is ambiguous (ResultsError naming it and both files)."""
    out: dict[str, dict] = {}
    source: dict[str, str] = {}
    for run in runs:
        for cell, row in cell_rows(run).items():
            if cell in out:
                raise ResultsError(
                    f"cell {cell!r} is measured in both {source[cell]} and {run.path}; give one run per cell"
                )
            out[cell], source[cell] = row, str(run.path)
    return out


def merged_configs(runs: list[ResultFile], contexts=None, option="--context") -> dict[str, str]:
    """{cell: our config's name} of a run (or its parts) from the context `gemmwatch run` wrote
    beside each loaded result file, or from `contexts`, one directory per file (named by `option`);
    cells without one absent. A named directory that holds no suite context is a ResultsError."""
    from ci.noise import context_cells
    from ci.run import named_context_cells

    if contexts is not None and len(contexts) != len(runs):
        raise ResultsError(f"{len(contexts)} context directories for {len(runs)} result files; give one per file")
    out: dict[str, str] = {}
    for i, run in enumerate(runs):
        cells = context_cells(run) if contexts is None else named_context_cells(contexts[i], option)
        out.update({cell: entry["config"] for cell, entry in cells.items() if entry.get("config")})
    return out


def cards(runs: list[ResultFile]) -> set[str]:
    """The physical cards (the `card` machine parameter) a run's loaded files were measured on."""
    return {str(run.machine_params["card"]) for run in runs if run.machine_params.get("card")}


def moves(after: dict[str, dict], before: dict[str, dict], after_configs=None, before_configs=None) -> list[dict]:
    """The goal-dtype cells of both runs whose speedup crossed 1.00x either way, or (both configs
    known) whose config changed: {"cell", "before", "after", "config_before", "config_after"}, the
    configs None where unknown; those that crossed down first, then by the after speedup."""
    after_configs, before_configs = after_configs or {}, before_configs or {}
    rows = []
    for cell, row in after.items():
        prior = before.get(cell)
        if cell.split()[0] not in GOAL_DTYPES or not prior or not row["speedup"] or not prior["speedup"]:
            continue
        crossed = (row["speedup"] >= 1.0) != (prior["speedup"] >= 1.0)
        old, new = before_configs.get(cell), after_configs.get(cell)
        if crossed or (old and new and old != new):
            rows.append({"cell": cell, "before": prior["speedup"], "after": row["speedup"],
                         "config_before": old, "config_after": new})  # fmt: skip
    return sorted(rows, key=lambda r: (r["after"] >= r["before"], r["after"]))


def render_moves(rows: list[dict], before_cards: set[str] = frozenset(), after_cards: set[str] = frozenset()) -> str:
    """The cells of `moves` as markdown, with a line on how many crossed each way on an unchanged
    config and on which cards the runs were measured where they differ."""

    def config(r):
        old, new = r["config_before"], r["config_after"]
        if old is None or new is None:
            return "not known"
        return f"same: `{new}`" if old == new else f"`{old}` -> `{new}`"

    up = [r for r in rows if r["before"] < 1.0 <= r["after"]]
    down = [r for r in rows if r["after"] < 1.0 <= r["before"]]
    same = [r for r in up + down if r["config_before"] and r["config_before"] == r["config_after"]]
    changed = [r for r in rows if r["config_before"] and r["config_after"] and r["config_before"] != r["config_after"]]
    lines = [
        "",
        f"Cells of {' + '.join(GOAL_DTYPES)} that crossed 1.00x or changed config: {len(up)} crossed up, "
        f"{len(down)} down, {len(same)} of them on the same config; {len(changed)} changed config.",
    ]
    if before_cards and after_cards and before_cards != after_cards:
        lines.append(
            f"The runs were measured on different cards (before: {', '.join(sorted(before_cards))}; after: "
            f"{', '.join(sorted(after_cards))}): a cell that crossed on the same config moved with the card."
        )
    if rows:
        lines += ["", "| cell | before speedup | after speedup | our config |", "|---|---|---|---|"]
        lines += [f"| {r['cell']} | {r['before']:.3f}x | {r['after']:.3f}x | {config(r)} |" for r in rows]
    return "\n".join(lines) + "\n"


def _tflops(cell: str, seconds: float | None) -> float | None:
    from benchmarks.matrix import parse_cell

    if not seconds:
        return None
    _, c = parse_cell(cell)
    return 2.0 * c.M * c.N * c.K / seconds / 1e12


def _geomean(values: list[float]) -> float | None:
    return math.exp(statistics.fmean(math.log(v) for v in values)) if values else None


def _speedups(rows: dict[str, dict]) -> dict[str, list[float]]:
    """Speedups per dtype, and over the goal's dtypes together."""
    groups: dict[str, list[float]] = {}
    for cell, row in rows.items():
        if row["speedup"]:
            groups.setdefault(cell.split()[0], []).append(row["speedup"])
    groups[" + ".join(GOAL_DTYPES)] = [s for d in GOAL_DTYPES for s in groups.get(d, [])]
    return groups


def _summary(values: list[float]) -> list[str]:
    """Cells, cells >= 1.00x and geomean of a group's speedups ("-" for an empty group)."""
    if not values:
        return ["0", "-", "-"]
    return [str(len(values)), str(sum(v >= 1.0 for v in values)), f"{_geomean(values):.3f}x"]


def render(after: dict[str, dict], before: dict[str, dict] | None = None) -> str:
    def num(value, fmt):
        return format(value, fmt) if value is not None else "n/a"

    head = ["cell", "native TFLOP/s", "Triton TFLOP/s", "speedup"]
    if before is not None:
        head = ["cell", "native TFLOP/s", "before TFLOP/s", "before speedup", "after TFLOP/s", "after speedup"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for cell in sorted(after, key=lambda c: (c.split()[0], c)):
        row = after[cell]
        speed = num(row["speedup"], ".3f") + ("x" if row["speedup"] else "")
        cols = [cell, num(_tflops(cell, row["native_s"]), ".1f")]
        if before is not None:
            prior = before.get(cell)
            cols += [
                num(_tflops(cell, prior["triton_s"]) if prior else None, ".1f"),
                num(prior["speedup"] if prior else None, ".3f"),
            ]
        cols += [num(_tflops(cell, row["triton_s"]), ".1f"), speed]
        lines.append("| " + " | ".join(cols) + " |")
    summary = ["dtype", "cells with a native baseline", ">= 1.00x", "geomean speedup"]
    if before is not None:
        summary += ["before: cells", "before: >= 1.00x", "before: geomean"]
    lines += ["", "| " + " | ".join(summary) + " |", "|" + "---|" * len(summary)]
    now, then = _speedups(after), _speedups(before or {})
    goal = " + ".join(GOAL_DTYPES)
    for name in [*sorted(k for k in now if k != goal), goal]:
        if now.get(name):
            cols = [name, *_summary(now[name])]
            if before is not None:
                cols += _summary(then.get(name, []))
            lines.append("| " + " | ".join(cols) + " |")
    return "\n".join(lines) + "\n"


def main(args) -> int:
    if args.before_context and not args.before:
        print("gemmwatch table: --before-context needs --before (the run it is the context of)", file=sys.stderr)
        return 2
    try:
        after_runs = [load(path) for path in args.after]
        before_runs = [load(path) for path in args.before or []]
        after = merged_rows(after_runs)
        before = merged_rows(before_runs) if args.before else None
        if before is not None:
            moved = moves(
                after,
                before,
                merged_configs(after_runs, args.after_context, "--after-context"),
                merged_configs(before_runs, args.before_context, "--before-context"),
            )
            tail = render_moves(moved, cards(before_runs), cards(after_runs))
    except ResultsError as err:
        print(f"gemmwatch table: {err}", file=sys.stderr)
        return 2
    if not after:
        print(f"gemmwatch table: {' '.join(map(str, args.after))} has no measured cell", file=sys.stderr)
        return 2
    sys.stdout.write(render(after, before))
    if before is not None:
        sys.stdout.write(tail)
    return 0
