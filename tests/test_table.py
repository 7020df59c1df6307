"""`gemmwatch table`: per-cell TFLOP/s and speedup over native, before vs after, from asv result files."""

import gzip
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from asv_fixtures import write_results

from ci.table import cell_rows, render

ROOT = Path(__file__).resolve().parent.parent
RECORDED = ROOT / "docs" / "results" / "2026-11-29-h200-variants"


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
    assert proc.stdout == (RECORDED / "table.md").read_text()
    assert "| fp16 + bf16 + fp8_e4m3 | 169 | 37 | 0.911x |" in proc.stdout


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
