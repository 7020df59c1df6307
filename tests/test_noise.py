"""`gemmwatch noise`: A/A variation per cell, and the clock state each noisy cell was measured in."""

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from asv_fixtures import write_results

ROOT = Path(__file__).resolve().parent.parent


def _run(tmp_path, name, commit, quiet_ratio, noisy_ratio, clocks=None, choice=None, card=None, launches=None,
         compile_s=None, cool_start_s=None, native=None):  # fmt: skip
    rng = np.random.default_rng(len(name))
    cells = {
        ("Matmul", "4096x4096x4096", "fp16"): {"ratio": [quiet_ratio] * 10, "triton": [1e-3] * 10},
        ("Matmul", "16x4096x4096", "fp16"): {"ratio": list(rng.normal(noisy_ratio, 1e-4, 10)), "triton": [2e-5] * 10},
    }
    if native is not None:  # (the noisy cell's native time; the quiet one's fixed)
        cells[("Matmul", "4096x4096x4096", "fp16")]["native"] = [1e-3 / quiet_ratio] * 10
        cells[("Matmul", "16x4096x4096", "fp16")]["native"] = [native] * 10
    machine = {"machine": "h200", "triton": "3.6.0", **({"card": card} if card else {})}
    result = write_results(tmp_path / name / "results" / "h200" / f"{commit[:8]}-existing-py.json", commit, cells,
                           machine=machine)  # fmt: skip
    if clocks is not None:
        context = tmp_path / name / "context" / "h200" / f"{commit[:8]}-20261129T120000"
        context.mkdir(parents=True)
        before, after, power, throttle = clocks
        cell_states = {"fp16 16x4096x4096": {
            "state_before": {"sm_clock_mhz": before}, "state_after": {"sm_clock_mhz": after, "power_w": power, "temperature_c": 61,
                                                                      "throttle_names": throttle}}}  # fmt: skip
        if compile_s is not None:
            cell_states["fp16 16x4096x4096"]["tune_seconds"] = compile_s
        if cool_start_s is not None:
            cell_states["fp16 16x4096x4096"]["cool_start_s"] = cool_start_s
        if choice is not None:  # (Triton config, native kernels[, timing method, calls per replay])
            cell_states["fp16 16x4096x4096"].update(config=choice[0], native_kernels=choice[1])
            if len(choice) > 2:
                cell_states["fp16 16x4096x4096"].update(method=choice[2], inner=choice[3])
            if launches is not None:  # (grid, block) per native kernel
                cell_states["fp16 16x4096x4096"]["native_launches"] = [
                    {"name": name, "grid": grid, "block": block} for name, (grid, block) in zip(choice[1], launches)
                ]
        (context / "Matmul.json").write_text(json.dumps({"suite": "Matmul", "cells": cell_states}))
    return result


def noise(*args):
    return subprocess.run([sys.executable, "-m", "ci.cli", "noise", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def test_noisy_cells_are_reported_with_their_clock_state_per_run(tmp_path):
    a = _run(tmp_path, "a", "aaaaaaaa11", 0.95, 1.00, clocks=(1980, 1755, 690.5, ["sw_power_cap"]), compile_s=0.617)
    b = _run(tmp_path, "b", "aaaaaaaa11", 0.95, 1.04, clocks=(1980, 1980, 402.0, []), compile_s=0.0021)
    proc = noise(a, b, "--clocks")
    assert proc.returncode == 0, proc.stderr
    table = {line.split()[1]: line for line in proc.stdout.splitlines() if line.startswith("fp16 ")}
    assert table["16x4096x4096"].split()[2] == "2.77%"  # CV of 1.00 and 1.04
    assert table["4096x4096x4096"].split()[2] == "0.00%"
    assert "2 cells over 2 runs" in proc.stdout and "1 cells above the 0.5% goal" in proc.stdout
    assert (
        "goal (ratio or Triton time): 0 by their Triton time, 1 by the ratio alone (the native time moved)"
        in proc.stdout
    )
    clocks = next(line for line in proc.stdout.splitlines() if "fp16 16x4096x4096" in line and "MHz" in line)
    assert "1980->1755 MHz 690.5 W 61 C sw_power_cap | 1980->1980 MHz 402.0 W 61 C none" in clocks
    assert clocks.endswith("; compiling first 0.62 / 0.00 s"), clocks  # the cold run's idle gap before the rounds
    c = _run(
        tmp_path, "c", "aaaaaaaa11", 0.95, 1.04, clocks=(1980, 1980, 402.0, []), compile_s=0.0021, cool_start_s=0.84
    )
    proc = noise(a, c, "--clocks")
    clocks = next(line for line in proc.stdout.splitlines() if "fp16 16x4096x4096" in line and "MHz" in line)
    assert clocks.endswith("; compiling first 0.62 / 0.00 s; idled for a cool start - / 0.84 s"), clocks


def test_clocks_read_the_context_directories_named_where_the_files_no_longer_lie_beside_them(tmp_path):
    # An evidence pack keeps each run's result file apart from its context: --context names them.
    import shutil

    a = _run(tmp_path, "a", "dddddddd44", 0.95, 1.00, clocks=(1980, 1755, 690.5, ["sw_power_cap"]))
    b = _run(tmp_path, "b", "dddddddd44", 0.95, 1.04, clocks=(1980, 1980, 402.0, []))
    moved = []
    for run in ("a", "b"):
        moved.append(tmp_path / f"{run}-context")
        shutil.move(tmp_path / run / "context" / "h200" / "dddddddd-20261129T120000", moved[-1])
    proc = noise(a, b, "--clocks")
    assert proc.returncode == 0 and "no per-cell clock states" in proc.stdout
    proc = noise(a, b, "--clocks", "--context", *moved)
    assert proc.returncode == 0, proc.stderr
    assert "1980->1755 MHz 690.5 W 61 C sw_power_cap | 1980->1980 MHz 402.0 W 61 C none" in proc.stdout
    # bad input: one directory per file, each a run's context, and only with --clocks
    proc = noise(a, b, "--clocks", "--context", moved[0])
    assert proc.returncode == 2 and "--context names 1 directories for 2 result files" in proc.stderr
    proc = noise(a, b, "--clocks", "--context", moved[0], tmp_path)
    assert proc.returncode == 2 and f"--context {tmp_path}: no suite context files" in proc.stderr
    proc = noise(a, b, "--context", *moved)
    assert proc.returncode == 2 and "--context is read by --clocks" in proc.stderr


def test_clocks_also_cover_cells_over_the_goal_by_their_native_time_alone(tmp_path):
    # the goal is on the absolute times too: a cell whose native time alone moved gets its clocks
    a = _run(tmp_path, "a", "eeeeeeee55", 0.95, 1.00, clocks=(1980, 1755, 690.5, ["sw_power_cap"]), native=2.0e-5)
    b = _run(tmp_path, "b", "eeeeeeee55", 0.95, 1.00, clocks=(1980, 1980, 402.0, []), native=2.04e-5)
    proc = noise(a, b, "--clocks")
    assert proc.returncode == 0, proc.stderr
    assert "0 cells above the 0.5% goal" in proc.stdout
    assert "1 above it by their native time alone (ratio and Triton time within): fp16 16x4096x4096" in proc.stdout
    clocks = next(line for line in proc.stdout.splitlines() if "fp16 16x4096x4096" in line and "MHz" in line)
    assert "1980->1755 MHz 690.5 W 61 C sw_power_cap | 1980->1980 MHz 402.0 W 61 C none" in clocks


def test_runs_without_recorded_clock_states_say_so(tmp_path):
    a = _run(tmp_path, "a", "bbbbbbbb22", 0.95, 1.00)
    b = _run(tmp_path, "b", "bbbbbbbb22", 0.95, 1.04)
    proc = noise(a, b, "--clocks")
    assert proc.returncode == 0 and "no per-cell clock states" in proc.stdout


def test_noise_needs_two_files(tmp_path):
    a = _run(tmp_path, "a", "cccccccc33", 0.95, 1.00)
    proc = noise(a)
    assert proc.returncode == 2 and "at least two result files" in proc.stderr


def test_a_noisy_cell_whose_runs_chose_different_kernels_is_told(tmp_path):
    clocks = (1980, 1980, 400.0, [])
    a = _run(
        tmp_path, "a", "dddddddd44", 0.95, 1.00, clocks, ("BM16-BN64-BK64-w4-s4-g8", ["gemv2T_kernel", "splitKreduce"])
    )
    b = _run(tmp_path, "b", "dddddddd44", 0.95, 1.04, clocks, ("BM16-BN64-BK64-w4-s4-g8", ["gemvx_kernel"]))
    proc = noise(a, b, "--clocks")
    assert proc.returncode == 0, proc.stderr
    assert "native kernels differ: gemv2T_kernel, splitKreduce | gemvx_kernel" in proc.stdout
    assert "Triton config differs" not in proc.stdout
    assert "native kernels recorded in every run for 1 of 1 noisy cells; the same in all runs for 0" in proc.stdout
    c = _run(
        tmp_path, "c", "dddddddd44", 0.95, 1.04, clocks, ("BM16-BN128-BK64-w4-s4-g8", ["gemv2T_kernel", "splitKreduce"])
    )
    proc = noise(a, c, "--clocks")
    assert "Triton config differs: BM16-BN64-BK64-w4-s4-g8 | BM16-BN128-BK64-w4-s4-g8" in proc.stdout
    assert "the same in all runs for 1" in proc.stdout
    # Runs that did not record native kernels say how to get them.
    proc = noise(
        _run(tmp_path, "e", "eeeeeeee55", 0.95, 1.0, clocks),
        _run(tmp_path, "f", "eeeeeeee55", 0.95, 1.04, clocks),
        "--clocks",
    )
    assert "native kernels recorded in every run for 0 of 1 noisy cells (GEMMWATCH_NATIVE_KERNELS=1" in proc.stdout


def test_a_noisy_cell_whose_native_kernels_ran_over_another_grid_is_told(tmp_path):
    clocks = (1980, 1980, 400.0, [])
    choice = ("BM16-BN64-BK64-w4-s4-g8", ["nvjet_splitK_NNT", "splitKreduce_kernel"])
    four = [([36, 1, 4], [384, 1, 1]), ([72, 1, 1], [128, 1, 1])]
    a = _run(tmp_path, "a", "abababab77", 0.95, 1.00, clocks, choice, launches=four)
    b = _run(tmp_path, "b", "abababab77", 0.95, 1.04, clocks, choice,
             launches=[([36, 1, 2], [384, 1, 1]), ([72, 1, 1], [128, 1, 1])])  # fmt: skip
    proc = noise(a, b, "--clocks")
    assert proc.returncode == 0, proc.stderr
    assert ("native launch geometry differs (same kernels): [36x1x4]x[384x1x1], [72x1x1]x[128x1x1] | "
            "[36x1x2]x[384x1x1], [72x1x1]x[128x1x1]") in proc.stdout  # fmt: skip
    assert "native kernels differ" not in proc.stdout and "the same in all runs for 0" in proc.stdout
    c = _run(tmp_path, "c", "abababab77", 0.95, 1.04, clocks, choice, launches=four)
    proc = noise(a, c, "--clocks")
    assert "the same in all runs for 1, with the same launch geometry for 1" in proc.stdout
    # A run that recorded names only (an older result) is compared by names.
    d = _run(tmp_path, "d", "abababab77", 0.95, 1.04, clocks, choice)
    proc = noise(a, d, "--clocks")
    assert "the same in all runs for 1" in proc.stdout and "launch geometry" not in proc.stdout


def test_a_noisy_cell_timed_with_another_method_or_replay_length_is_told(tmp_path):
    clocks = (1980, 1980, 400.0, [])
    kernels = ["gemvx_kernel"]
    a = _run(tmp_path, "a", "ffffffff66", 0.95, 1.00, clocks, ("BM16", kernels, "cuda-graph+l2-flush", 60))
    b = _run(tmp_path, "b", "ffffffff66", 0.95, 1.04, clocks, ("BM16", kernels, "events+l2-flush+cooldown", 1))
    proc = noise(a, b, "--clocks")
    assert "timing method differs: cuda-graph+l2-flush | events+l2-flush+cooldown" in proc.stdout
    c = _run(tmp_path, "c", "ffffffff66", 0.95, 1.04, clocks, ("BM16", kernels, "cuda-graph+l2-flush", 30))
    assert "calls per replay differ by over 10%: 60 | 30" in noise(a, c, "--clocks").stdout
    # An estimate's jitter (60 vs 64 calls) is not a change of protocol.
    d = _run(tmp_path, "d", "ffffffff66", 0.95, 1.04, clocks, ("BM16", kernels, "cuda-graph+l2-flush", 64))
    proc = noise(a, d, "--clocks")
    assert "differ by over 10%" not in proc.stdout and "timing method differs" not in proc.stdout
    assert "the same Triton config, timing method and about the same calls per replay in every run" in proc.stdout


def test_the_run_that_stands_apart_is_named_with_each_pair_of_runs(tmp_path):
    # Two runs agree, a third (say the cold one) is 2% off in the noisy cell.
    runs = [
        _run(tmp_path, name, "dddddddd44", 0.95, ratio) for name, ratio in (("c", 1.02), ("w", 1.00), ("w2", 1.0005))
    ]
    proc = noise(*runs)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "runs 1 and 2: 1\n  runs 1 and 3: 1\n  runs 2 and 3: 0" in out
    line = next(x for x in out.splitlines() if x.startswith("  fp16 16x4096x4096") and "ratio" in x)
    assert "ratio 1.0200 / 1.0000 / 1.0005" in line and "triton 20.00 / 20.00 / 20.00" in line
    assert "; rounds 10 / 10 / 10" in line  # (the rounds each run took)
    assert re.search(r"<- run 1 stands apart: ratio \+(1\.9\d|2\.0\d)%$", line), line
    # A spread the runs share names no run.
    runs = [_run(tmp_path, name, "eeeeeeee55", 0.95, ratio) for name, ratio in (("a", 1.00), ("b", 1.01), ("c", 1.02))]
    line = next(x for x in noise(*runs).stdout.splitlines() if x.startswith("  fp16 16x4096x4096") and "ratio" in x)
    assert "stands apart" not in line


def test_runs_on_different_cards_are_told(tmp_path):
    # A/A runs that landed on two cards of the same model: their offsets are the cards', not the timing's.
    runs = [_run(tmp_path, name, "ffffffff66", 0.95, ratio, card=card)
            for name, ratio, card in (("a", 1.00, "GPU-aaaa"), ("b", 1.00, "GPU-aaaa"), ("c", 1.03, "GPU-bbbb"))]  # fmt: skip
    out = noise(*runs).stdout
    assert "measured on 2 different cards (run 1: GPU-aaaa, run 2: GPU-aaaa, run 3: GPU-bbbb)" in out
    assert "different cards" not in noise(*runs[:2]).stdout
    # Results from before the card was recorded say nothing.
    older = _run(tmp_path, "d", "ffffffff66", 0.95, 1.03)
    assert "different cards" not in noise(runs[0], older).stdout


def test_a_value_stands_apart_only_when_the_others_agree():
    from ci.noise import apart

    assert apart([1.02, 1.0, 1.0005], 0.005) == (0, pytest.approx(0.0197, abs=1e-4))
    assert apart([1.0, 1.01, 1.02], 0.005) is None  # the spread is shared
    assert apart([1.0, 1.02], 0.005) is None  # two values: either could be the odd one
    assert apart([1.0, 1.004, 1.002], 0.005) is None  # nothing beyond twice the goal


def test_the_summary_tells_cells_over_by_their_triton_time_from_those_over_by_the_ratio_alone(tmp_path):
    files = []
    for i, (triton, ratio) in enumerate([(1.00e-3, 1.00), (1.03e-3, 1.04)]):
        cells = {
            ("Matmul", "4096x4096x4096", "fp16"): {"ratio": [ratio] * 10, "triton": [triton] * 10},  # both moved
            ("Matmul", "16x4096x4096", "fp16"): {"ratio": [ratio] * 10, "triton": [2e-5] * 10},  # native moved
            ("Matmul", "1x4096x4096", "fp16"): {"ratio": [0.9] * 10, "triton": [1e-5] * 10},  # quiet
        }
        files.append(write_results(tmp_path / f"r{i}" / "h200" / "cccccccc99-existing-py.json", "cccccccc99", cells,
                                   machine={"machine": "h200", "triton": "3.6.0"}))  # fmt: skip
    proc = noise(*files)
    assert proc.returncode == 0, proc.stderr
    assert (
        "3 cells over 2 runs; worst CV 2.77%; 2 cells above the 0.5% goal (ratio or Triton time): "
        "1 by their Triton time, 1 by the ratio alone (the native time moved)"
    ) in proc.stdout
    assert "by their native time alone" not in proc.stdout


def test_the_summary_names_cells_over_by_their_native_time_alone(tmp_path):
    # both sides 0.8% slower in the second run: the ratio steady, the Triton time within 0.5% (0.35%),
    # the native time over (0.56%): the goal covers the absolute times as well
    files = []
    for i, (triton, native) in enumerate([(1.000e-3, 1.000e-3), (1.005e-3, 1.008e-3)]):
        cells = {
            ("Matmul", "4096x3584x3584", "bf16"): {
                "ratio": [1.0] * 10,
                "triton": [triton] * 10,
                "native": [native] * 10,
            },
            ("Matmul", "1x4096x4096", "bf16"): {"ratio": [0.9] * 10, "triton": [1e-5] * 10, "native": [9e-6] * 10},
        }
        files.append(write_results(tmp_path / f"r{i}" / "h200" / "dddddddd99-existing-py.json", "dddddddd99", cells,
                                   machine={"machine": "h200", "triton": "3.6.0"}))  # fmt: skip
    proc = noise(*files)
    assert proc.returncode == 0, proc.stderr
    assert "0 cells above the 0.5% goal (ratio or Triton time)" in proc.stdout
    assert (
        "and 1 above it by their native time alone (ratio and Triton time within): bf16 4096x3584x3584 0.56%"
    ) in proc.stdout
