"""ci/ws_probe.py: the ladder of warp-specialized GEMMs, compiled offline here (its GPU runs: docs/BENCHMARKS.md)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import triton

from ci import ws_probe

ROOT = Path(__file__).resolve().parent.parent


def probe(*args):
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    return subprocess.run([sys.executable, "-m", "ci.ws_probe", *args], cwd=ROOT, capture_output=True, text=True,
                          env=env, timeout=600)  # fmt: skip


def test_the_ladder_starts_from_an_unspecialized_control_and_names_each_ingredient():
    names = [v.name for v in ws_probe.LADDER]
    assert names[0] == "fp16 BM128-BN128-BK64-w4-s3 (not specialized)"
    assert names[1] == "fp16 BM128-BN128-BK64-w4-s3"  # the smallest specialized form
    assert len(set(names)) == len(names)
    assert "fp16 kernels.matmul BM128-BN128-BK64-w4-s3 tma_ws" in names  # the project's own, last
    assert sum(v.dtype == "fp8" for v in ws_probe.LADDER) >= 3


def test_offline_it_compiles_every_rung_for_hopper_and_says_which_are_partitioned(tmp_path):
    proc = probe("--offline", "90", "--json", str(tmp_path / "rows.json"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads((tmp_path / "rows.json").read_text())
    assert [r["name"] for r in rows] == [v.name for v in ws_probe.LADDER]
    assert rows[0]["outcome"] == "compiled" and rows[0]["partitioned"] is False  # the control
    lines = proc.stdout.splitlines()
    assert lines[0] == "fp16 BM128-BN128-BK64-w4-s3 (not specialized) | compiled | not partitioned"
    specialized = {r["name"]: r for r in rows[1:]}
    if triton.__version__.startswith("3.6."):
        # 3.6 partitions the unflattened loop for sm_90 (one producer, two consumer warpgroups),
        # but not with a descriptor store in it (it fails to compile).
        assert specialized["fp16 BM128-BN128-BK64-w4-s3"]["partitioned"] is True
        assert specialized["fp16 BM128-BN128-BK64-w4-s3 desc_store"]["outcome"] == "compile error"
        assert specialized["fp16 kernels.matmul BM128-BN128-BK64-w4-s3 tma_ws"]["partitioned"] is True
    else:  # newer ones refuse the two-consumer Hopper form (as tests/test_resources.py records)
        assert specialized["fp16 BM128-BN128-BK64-w4-s3"]["outcome"] == "compile error"
    # A 64-row tile is partitioned by both (12 warps, as the 128-row ones with 3.6).
    for name in (
        "fp16 BM64-BN128-BK64-w4-s3",
        "fp16 BM64-BN128-BK64-w4-s3 grouped extra_acc",
        "fp8 BM64-BN128-BK128-w4-s3",
    ):
        assert specialized[name]["outcome"] == "compiled" and specialized[name]["partitioned"] is True, name


def test_without_a_gpu_it_refuses_to_run_and_says_what_works_here():
    proc = probe("--timeout", "5")
    assert proc.returncode == 2 and "--offline CAPABILITY" in proc.stderr
    proc = probe("--timeout", "0")
    assert proc.returncode == 2 and "--timeout must be a positive number of seconds, got 0" in proc.stderr


def test_a_rung_cut_by_its_timeout_says_the_last_stage_it_reached():
    # A child that reports two stages and then never finishes, as a hung kernel's process does:
    # the output it printed before the cut is what the row reports.
    child = "import time; print('stage: compiled', flush=True); print('stage: launched', flush=True); time.sleep(60)"
    try:
        subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=3)
    except subprocess.TimeoutExpired as cut:
        row = ws_probe.cut_outcome(cut.stdout, 3)
    else:
        raise AssertionError("the child was not cut")
    assert row == {"outcome": "hung (cut at 3 s)", "stage": "launched", "error": "its first call never finished"}
    assert ws_probe.cut_outcome(b"stage: compiled\n", 3)["error"].startswith("compiled, never launched")
    assert ws_probe.cut_outcome(None, 3) == {"outcome": "hung (cut at 3 s)", "stage": None,
                                             "error": "nothing reported (cut while starting or compiling)"}  # fmt: skip
    assert ws_probe._row(ws_probe.LADDER[1], row) == (
        "fp16 BM128-BN128-BK64-w4-s3 | hung (cut at 3 s) | its first call never finished"
    )
