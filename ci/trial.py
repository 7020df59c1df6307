"""`gemmwatch try`: named configs of a cell timed against the library's choice and the native library.

A kernel engineer's question before a tune: is this config (or a variant the candidate generator
does not make) faster on these cells? Each cell's sides are the native library, the launcher's own
choice (the tuned library's entry, else its autotune) and each named config, checked against the
float64 reference and then timed in one interleaved measurement with the suites' protocol (the same
placements, calls per replay and cooldown as `gemmwatch run` and `gemmwatch tune`). A config that
cannot run the cell, or computes it wrong, is a row of the table with its reason, not an abort.
Without a GPU the kernels run in Triton's interpreter: a correctness check, never performance.
"""

from __future__ import annotations

import json
import os
import sys

INTERPRETER_ROUNDS = 2


class TrialError(ValueError):
    """Bad input (a cell or config name that does not parse); the message says which."""


def parse(cells: list[str], configs: list[str]) -> tuple[list, list]:
    """(Cells, GemmConfigs) of the command line's names."""
    from benchmarks.matrix import MatrixError, parse_cell
    from targets.configs import config_from_name

    parsed_cells = []
    for text in cells:
        try:
            parsed_cells.append(parse_cell(text)[1])
        except MatrixError as err:
            raise TrialError(str(err)) from None
    parsed_configs = []
    for name in configs:
        try:
            parsed_configs.append(config_from_name(name))
        except ValueError as err:
            raise TrialError(f"--configs: {err}") from None
    return parsed_cells, parsed_configs


def trial_cell(cell, configs: list, *, device: str, spec, rounds: int, library: bool = True) -> list[dict]:
    """One row per side of `cell`: {"side", "config", "seconds", "rel_error", "error"}; the timed
    sides' seconds are medians of the interleaved rounds (None where a side did not run).
    `library` False: no side of the launcher's own choice (where the installed Triton has no
    tuned library, that choice is an autotune of the cell)."""
    from benchmarks.cells import TOLERANCE, Prepared, relative_error
    from benchmarks.measure import timed_sides, timing_plan
    from benchmarks.timing import measure
    from kernels import autotune

    prep = Prepared(cell, device)
    ref = prep.reference()
    rows, calls = [], []

    def check(row: dict, run) -> None:
        try:
            out = run()
        except Exception as exc:  # noqa: BLE001 - a config that cannot run is a row of the table
            row["error"] = autotune.failure_reason(exc)
            return
        row["rel_error"] = relative_error(out, ref)
        if row["rel_error"] > TOLERANCE[cell.dtype]:
            row["error"] = f"wrong result: relative error {row['rel_error']:.3g} > {TOLERANCE[cell.dtype]:g}"

    if (reason := prep.native_supported()) is None:
        rows.append({"side": "native", "config": "-"})
        calls.append(lambda ops: prep.native(operands=ops))
    else:
        rows.append({"side": "native", "config": "-", "error": reason})
    if library:
        choice = {"side": "library", "config": "?"}
        check(choice, prep.triton)
        if (chosen := autotune.last()) is not None:
            choice["config"] = str(chosen.config)
        rows.append(choice)
        if "error" not in choice:
            calls.append(lambda ops: prep.triton(operands=ops))
    for cfg in configs:
        row = {"side": "named", "config": str(cfg)}
        check(row, lambda cfg=cfg: prep.triton(config=cfg))
        rows.append(row)
        if "error" not in row:
            calls.append(lambda ops, cfg=cfg: prep.triton(config=cfg, operands=ops))
    timed = [row for row in rows if "error" not in row]
    if calls:
        timing = measure(*timed_sides(prep, device, spec, calls), rounds=rounds, warmup=1, **timing_plan(prep, spec))
        for i, row in enumerate(timed):
            row["seconds"] = timing.median(i)
    for row in rows:
        row.setdefault("seconds", None)
        row.setdefault("rel_error", None)
        row.setdefault("error", None)
    return rows


def render(results: dict[str, list[dict]], *, interpreter: bool) -> str:
    """A markdown table: per cell and side, time, speedup over native and over the library's choice."""
    lines = [
        "| cell | side | config | us | x native | x library | rel err | note |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for cell, rows in results.items():
        native = next((r["seconds"] for r in rows if r["side"] == "native"), None)
        library = next((r["seconds"] for r in rows if r["side"] == "library"), None)
        for r in rows:
            seconds = r["seconds"]

            def over(base, seconds=seconds):
                return "-" if interpreter or not base or not seconds else f"{base / seconds:.3f}x"

            us = "-" if seconds is None else f"{seconds * 1e6:.2f}"
            err = "-" if r["rel_error"] is None else f"{r['rel_error']:.1e}"
            config = r["config"] if r["config"] == "-" else f"`{r['config']}`"
            lines.append(
                f"| {cell} | {r['side']} | {config} | {us} | {over(native)} | {over(library)} | {err} "
                f"| {(r['error'] or '').replace('|', '/')} |"
            )
    return "\n".join(lines)


def main(args) -> int:
    from ci.cli import use_interpreter_without_gpu

    interpreter = use_interpreter_without_gpu()
    try:
        cells, configs = parse(args.cells, args.configs)
        if args.rounds < 0:
            raise TrialError(f"--rounds must be >= 1 (0: the default), got {args.rounds}")
        if args.json and not os.access(os.path.dirname(os.path.abspath(args.json)), os.W_OK):
            raise TrialError(f"--json {args.json}: its directory does not exist or is not writable")
    except TrialError as err:
        print(f"gemmwatch try: {err}", file=sys.stderr)
        return 2
    import torch

    from benchmarks.measure import prepare_process
    from targets import detect

    spec = detect()
    device = "cuda" if torch.cuda.is_available() and not interpreter else "cpu"
    rounds = args.rounds or (INTERPRETER_ROUNDS if interpreter else 30)
    prepare_process(device)
    results = {}
    for i, cell in enumerate(cells, 1):
        print(f"[{i}/{len(cells)}] {cell.name}", file=sys.stderr, flush=True)
        results[cell.name] = trial_cell(
            cell, configs, device=device, spec=spec, rounds=rounds, library=not args.no_library
        )
    if interpreter:
        print("NOTE: no GPU - Triton's CPU interpreter: the times are NOT performance, only the checks count.")
    print(render(results, interpreter=interpreter))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {"target": spec.name, "interpreter": interpreter, "rounds": rounds, "cells": results}, f, indent=1
            )
    failed = [
        f"{cell}: {r['config']}" for cell, rows in results.items() for r in rows if r["side"] == "named" and r["error"]
    ]
    if failed:
        print(
            f"gemmwatch try: {len(failed)} named config(s) failed or computed wrong: {'; '.join(failed)}",
            file=sys.stderr,
        )
        return 1
    return 0
