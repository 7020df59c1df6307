"""`gemmwatch table`: per-cell TFLOP/s and speedup over native, before vs after, from asv result files."""

import gzip
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import numpy as np
import pytest
from asv_fixtures import write_results

from ci.table import cell_rows, moves, render, render_moves

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results"
RECORDED = RESULTS / "2026-11-29-h200-variants"


def _run(tmp_path, commit, ratio, triton_s):
    rng = np.random.default_rng(0)
    cells = {
        ("Matmul", "1024x1024x1024", "fp16"): {"ratio": [ratio] * 9, "triton": [triton_s] * 9},
        ("Matmul", "16x4096x4096", "bf16"): {"ratio": list(rng.normal(1.1, 0.001, 9)), "triton": [2e-5] * 9},
        ("Matmul", "4096x4096x4096", "fp32-ieee"): {"ratio": None, "triton": [3e-3] * 9},  # no baseline
    }
    return write_results(tmp_path / f"{commit}.json", commit, cells)


def test_speedup_is_the_inverse_ratio_and_tflops_come_from_the_shape(tmp_path):
    before = cell_rows(_run(tmp_path, "aaaa", ratio=2.0, triton_s=2e-3))
    after = cell_rows(_run(tmp_path, "bbbb", ratio=0.8, triton_s=1e-3))
    assert after["fp16 1024x1024x1024"]["speedup"] == pytest.approx(1.25)
    text = render(after, before)
    row = next(line for line in text.splitlines() if line.startswith("| fp16 1024x1024x1024"))
    # 2 * 1024^3 flop in 1 ms = 2.147 TFLOP/s (after), 1.074 before; speedup 0.500 -> 1.250x.
    assert row == "| fp16 1024x1024x1024 | n/a | 1.1 | 0.500 | 2.1 | 1.250x |"
    assert "| fp32-ieee 4096x4096x4096 | n/a | 45.8 | n/a | 45.8 | n/a |" in text
    # geomean of 1.25 and ~0.909, one >= 1.00; before: of 0.5 and ~0.909, none
    assert "| fp16 + bf16 + fp8_e4m3 | 2 | 1 | 1.066x | 2 | 0 | 0.674x |" in text
    assert text.count("| fp16 + bf16 + fp8_e4m3 |") == 1
    assert "| dtype | cells with a native baseline | >= 1.00x | geomean speedup |\n" in render(after)  # no before


def test_table_of_the_recorded_h200_runs(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "ci.cli", "table", "--before", str(RECORDED / "before.json.gz"),
         "--after", str(RECORDED / "after.json.gz")],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    table_md = (RECORDED / "table.md").read_text()
    assert proc.stdout[: len(table_md)] == table_md
    moved = proc.stdout[len(table_md) :]
    assert "| fp16 + bf16 + fp8_e4m3 | 169 | 37 | 0.911x |" in proc.stdout
    # (no context beside these files: the cells that crossed 1.00x, configs not known)
    assert moved.startswith("\nCells of fp16 + bf16 + fp8_e4m3 that crossed 1.00x or changed config: ")
    assert "| not known |" in moved and "`" not in moved


def _extracted_context(tmp_path, tgz) -> Path:
    with tarfile.open(tgz) as archive:
        archive.extractall(tmp_path, filter="data")
    (directory,) = (tmp_path / "context").glob("*/*")
    return directory


def test_the_h100_runs_crossed_1x_on_the_same_configs_and_on_other_cards(tmp_path):
    """Two recorded H100 runs of 2026-12-07 on two cards: the swap-AB tiles moved three fp8 128-row
    cells; the fifteen cells that crossed 1.00x all kept their config."""
    after, before = RESULTS / "2026-12-07c-h200/call_1/ev-warm", RESULTS / "2026-12-07a-h100/call_2/ev-warm"
    proc = subprocess.run(
        [sys.executable, "-m", "ci.cli", "table", "--after", str(after / "run-warm.json.gz"),
         "--before", str(before / "run-warm.json.gz"),
         "--after-context", str(_extracted_context(tmp_path / "a", after / "warm-context.tgz")),
         "--before-context", str(_extracted_context(tmp_path / "b", before / "warm-context.tgz"))],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (
        "Cells of fp16 + bf16 + fp8_e4m3 that crossed 1.00x or changed config: 14 crossed up, 1 down, "
        "15 of them on the same config; 4 changed config." in proc.stdout
    )
    assert "The runs were measured on different cards (before: GPU-b54c13db-" in proc.stdout
    assert (
        "| fp8_e4m3 128x4096x4096 | 0.943x | 0.979x | `BM64-BN64-BK128-w4-s8-g8` -> "
        "`BM64-BN64-BK128-w4-s12-g8-swap` |" in proc.stdout
    )
    assert "| bf16 4096x3584x3584 | 1.000x | 0.997x | same: `BM128-BN128-BK64-w8-s5-g8-gluon-wg` |" in proc.stdout


def _context_dir(directory: Path, configs: dict[str, str]) -> Path:
    directory.mkdir(parents=True)
    cells = {cell: {"config": config} for cell, config in configs.items()}
    (directory / "Matmul.json").write_text(json.dumps({"suite": "Matmul", "cells": cells}))
    return directory


def test_moves_name_the_crossings_and_the_config_changes(tmp_path):
    def run(name, ratios, card):
        cells = {("Matmul", shape, "fp16"): {"ratio": [r] * 9, "triton": [1e-3] * 9} for shape, r in ratios.items()}
        return write_results(tmp_path / f"{name}.json", name * 4, cells, machine={"card": card})

    before = run("a", {"1024x1024x1024": 1.01, "2048x2048x2048": 0.99, "4096x4096x4096": 0.8}, "GPU-1")
    after = run("b", {"1024x1024x1024": 0.99, "2048x2048x2048": 0.98, "4096x4096x4096": 0.9}, "GPU-2")
    configs_before = _context_dir(tmp_path / "cb", {"fp16 1024x1024x1024": "X", "fp16 2048x2048x2048": "Y",
                                                    "fp16 4096x4096x4096": "Z"})  # fmt: skip
    configs_after = _context_dir(tmp_path / "ca", {"fp16 1024x1024x1024": "X", "fp16 2048x2048x2048": "W",
                                                   "fp16 4096x4096x4096": "Z"})  # fmt: skip
    rows = moves(cell_rows(after), cell_rows(before), {"fp16 1024x1024x1024": "X", "fp16 2048x2048x2048": "W"},
                 {"fp16 1024x1024x1024": "X", "fp16 2048x2048x2048": "Y"})  # fmt: skip
    # 1024^3: 0.990 -> 1.010x (up, same config); 2048^3: 1.010 -> 1.020x, config Y -> W; 4096^3 past
    # 1.00x in both on one config (1.25 -> 1.11x: not a move)
    assert [(r["cell"], r["config_before"], r["config_after"]) for r in rows] == [
        ("fp16 1024x1024x1024", "X", "X"), ("fp16 2048x2048x2048", "Y", "W")]  # fmt: skip
    text = render_moves(rows, {"GPU-1"}, {"GPU-2"})
    assert "1 crossed up, 0 down, 1 of them on the same config; 1 changed config." in text
    assert "| fp16 1024x1024x1024 | 0.990x | 1.010x | same: `X` |" in text
    assert "| fp16 2048x2048x2048 | 1.010x | 1.020x | `Y` -> `W` |" in text
    assert "different cards (before: GPU-1; after: GPU-2)" in text
    assert "different cards" not in render_moves(rows, {"GPU-1"}, {"GPU-1"})

    def table(*extra):
        return subprocess.run([sys.executable, "-m", "ci.cli", "table", *extra], cwd=ROOT, capture_output=True,
                              text=True, timeout=120)  # fmt: skip

    proc = table("--after", str(after), "--before", str(before), "--after-context", str(configs_after),
                 "--before-context", str(configs_before))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "| fp16 2048x2048x2048 | 1.010x | 1.020x | `Y` -> `W` |" in proc.stdout
    # bad input: a directory without context, a count of directories not the files', a context without --before
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = table("--after", str(after), "--before", str(before), "--after-context", str(empty))
    assert proc.returncode == 2 and f"--after-context {empty}: no suite context files" in proc.stderr
    proc = table("--after", str(after), "--before", str(before), "--after-context", str(configs_after), str(empty))
    assert proc.returncode == 2 and "2 context directories for 1 result files" in proc.stderr
    proc = table("--after", str(after), "--before-context", str(configs_before))
    assert proc.returncode == 2 and "--before-context needs --before" in proc.stderr


def test_bad_input_names_the_file(tmp_path):
    missing = tmp_path / "nope.json"
    proc = subprocess.run([sys.executable, "-m", "ci.cli", "table", "--after", str(missing)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 2 and str(missing) in proc.stderr
    fake = tmp_path / "plain.json.gz"  # (a .gz that is not gzip)
    fake.write_text("{}")
    proc = subprocess.run([sys.executable, "-m", "ci.cli", "table", "--after", str(fake)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 2 and f"result file {fake} is not a gzip file" in proc.stderr


def test_a_gzipped_result_file_reads_as_the_plain_one(tmp_path):
    plain = _run(tmp_path, "aaaa", ratio=0.8, triton_s=1e-3)
    packed = tmp_path / "aaaa.json.gz"
    packed.write_bytes(gzip.compress(Path(plain).read_bytes()))
    assert cell_rows(packed) == cell_rows(plain)


def test_runs_of_parts_of_the_matrix_make_one_table_and_a_cell_in_two_is_refused(tmp_path):
    first = write_results(tmp_path / "a.json", "aaaa", {("Matmul", "1024x1024x1024", "fp16"): {"ratio": [0.8] * 9,
                                                                                             "triton": [1e-3] * 9}})  # fmt: skip
    second = _run(tmp_path, "bbbb", ratio=0.5, triton_s=1e-3)  # (1024^3 fp16 too, and two more cells)
    third = write_results(tmp_path / "c.json", "cccc", {("Matmul", "2048x2048x2048", "fp16"): {"ratio": [0.5] * 9,
                                                                                              "triton": [8e-3] * 9}})  # fmt: skip
    proc = subprocess.run([sys.executable, "-m", "ci.cli", "table", "--after", str(first), str(third)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "| fp16 1024x1024x1024 |" in proc.stdout and "| fp16 2048x2048x2048 |" in proc.stdout
    assert "| fp16 | 2 | 2 | 1.581x |" in proc.stdout  # (1.25 and 2.0)
    proc = subprocess.run([sys.executable, "-m", "ci.cli", "table", "--after", str(first), str(second)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 2
    assert "'fp16 1024x1024x1024' is measured in both" in proc.stderr and str(second) in proc.stderr
