"""ci/cold_l2_probe.py: the evidence tool for the two cold-L2 methods (its GPU numbers are in docs/BENCHMARKS.md)."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

RUN_SMALL = """
import sys
import ci.cold_l2_probe as probe
probe.CELLS = (("fp16", 16, 32, 32), ("bf16", 8, 16, 64))  # interpreter-sized
sys.exit(probe.main(sys.argv[1:]))
"""


def test_runs_write_medians_and_the_report_compares_the_methods(tmp_path):
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    for mode, cooldown, label in (
        ("flush", "0", "flush"),
        ("rotate", "0", "rotate"),
        ("flush", "1", "flush+cooldown1"),
    ):
        for i in (1, 2):
            out = tmp_path / f"{label}-{i}.json"
            proc = subprocess.run([sys.executable, "-c", RUN_SMALL, "run", "--mode", mode, "--out", str(out),
                                   "--rounds", "2", "--cooldown", cooldown], cwd=ROOT, capture_output=True, text=True,
                                  env=env, timeout=300)  # fmt: skip
            assert proc.returncode == 0, proc.stderr
            data = json.loads(out.read_text())
            assert data["mode"] == label and set(data["cells"]) == {"fp16 16x32x32", "bf16 8x16x64"}
            assert all(row["ratio"] > 0 and row["triton_s"] > 0 for row in data["cells"].values())
    proc = subprocess.run([sys.executable, "-m", "ci.cold_l2_probe", "report", *map(str, sorted(tmp_path.glob("*.json")))],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    table, between = proc.stdout.split("\n\n")
    rows = [line.split() for line in table.splitlines()[1:]]
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [
        ("fp16", "16x32x32", "flush", "2"), ("fp16", "16x32x32", "flush+cooldown1", "2"),
        ("fp16", "16x32x32", "rotate", "2"),
        ("bf16", "8x16x64", "flush", "2"), ("bf16", "8x16x64", "flush+cooldown1", "2"),
        ("bf16", "8x16x64", "rotate", "2"),
    ]  # fmt: skip
    assert between.startswith("change of the median against 'flush'")
    assert [line.split()[:2] for line in between.splitlines()[1:]] == [["fp16", "16x32x32"], ["bf16", "8x16x64"]]


def test_one_process_per_setting_is_reported_with_the_change_between_settings(tmp_path):
    # What a placement check looks like: one process without --shift-mb, one with it.
    def write(name, mode, triton_s, native_s):
        row = {"ratio": triton_s / native_s, "triton_s": triton_s, "native_s": native_s, "method": "cuda-graph",
               "inner": 10, "native_kernels": None, "sm_clock_mhz": [1980, 1980]}  # fmt: skip
        (tmp_path / name).write_text(json.dumps({"mode": mode, "rounds": 30, "cells": {"fp16 16x4096x4096": row}}))

    write("a.json", "flush", 15.0e-6, 16.0e-6)
    write("b.json", "flush+shift4096MiB", 15.3e-6, 16.0e-6)
    proc = subprocess.run([sys.executable, "-m", "ci.cold_l2_probe", "report", str(tmp_path / "a.json"),
                           str(tmp_path / "b.json")], cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    table, between = proc.stdout.split("\n\n")
    rows = [line.split() for line in table.splitlines()[1:]]
    assert [r[:7] for r in rows] == [
        ["fp16", "16x4096x4096", "flush", "1", "-", "-", "-"],
        ["fp16", "16x4096x4096", "flush+shift4096MiB", "1", "-", "-", "-"],
    ]
    assert between.splitlines()[1] == "fp16 16x4096x4096          flush+shift4096MiB: +2.00% / +0.00% / +2.00%"
    # Placements pooled: the shifted and unshifted processes of each --streams setting as one.
    write("c.json", "flush+4streams", 15.0e-6, 16.0e-6)
    write("d.json", "flush+4streams+shift6MiB", 15.03e-6, 16.0e-6)
    proc = subprocess.run([sys.executable, "-m", "ci.cold_l2_probe", "report", "--pool-shifts",
                           *(str(tmp_path / f"{n}.json") for n in "abcd")], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = [line.split() for line in proc.stdout.split("\n\n")[0].splitlines()[1:]]
    assert [r[:6] for r in rows] == [
        ["fp16", "16x4096x4096", "flush", "2", "1.40%", "1.40%"],
        ["fp16", "16x4096x4096", "flush+4streams", "2", "0.14%", "0.14%"],
    ]


def test_a_shifted_run_is_its_own_setting_and_differing_native_kernels_are_told(tmp_path):
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    for i in (1, 2):
        out = tmp_path / f"shift-{i}.json"
        proc = subprocess.run([sys.executable, "-c", RUN_SMALL, "run", "--mode", "flush", "--out", str(out),
                               "--rounds", "2", "--shift-mb", "8"], cwd=ROOT, capture_output=True, text=True,
                              env=env, timeout=300)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        data = json.loads(out.read_text())
        assert data["mode"] == "flush+shift8MiB"
        assert all(row["native_kernels"] is None for row in data["cells"].values())  # recorded on a GPU only
        # As a GPU run would record them: another cuBLAS kernel in the second process.
        for row in data["cells"].values():
            row["native_kernels"] = ["sm90_gemm_a"] if i == 1 else ["sm90_gemm_b", "splitKreduce"]
        out.write_text(json.dumps(data))
    proc = subprocess.run([sys.executable, "-m", "ci.cold_l2_probe", "report", *map(str, sorted(tmp_path.glob("*.json")))],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "flush+shift8MiB" in proc.stdout
    assert "native kernels differ: sm90_gemm_a | sm90_gemm_b, splitKreduce" in proc.stdout


def test_a_negative_shift_is_refused():
    proc = subprocess.run([sys.executable, "-m", "ci.cold_l2_probe", "run", "--mode", "flush", "--out", "x.json",
                           "--shift-mb", "-1"], cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 2 and "--shift-mb must be >= 0" in proc.stderr


def test_a_stream_count_out_of_range_is_refused():
    proc = subprocess.run([sys.executable, "-m", "ci.cold_l2_probe", "run", "--mode", "flush", "--out", "x.json",
                           "--streams", "0"], cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 2 and "--streams must be in 1..16, got 0" in proc.stderr


def test_an_unknown_cell_is_refused_by_name():
    proc = subprocess.run([sys.executable, "-m", "ci.cold_l2_probe", "run", "--mode", "flush", "--out", "x.json",
                           "--cells", "fp16 16x4096x4096", "fp17 8x8x8"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert proc.returncode == 2 and "'fp17 8x8x8'" in proc.stderr and "unknown dtype" in proc.stderr
    assert not (ROOT / "x.json").exists()


def test_offset_counters_move_only_the_counters_and_keep_serial_split_k_exact(monkeypatch, device):
    import sys

    import torch

    import ci.cold_l2_probe as probe
    import kernels
    from targets import GemmConfig

    matmul_module = sys.modules["kernels.matmul"]
    monkeypatch.setattr(matmul_module, "_tile_counters", matmul_module._tile_counters)  # restored after
    monkeypatch.setattr(matmul_module, "_COUNTERS", {})
    g = torch.Generator(device="cpu").manual_seed(5)
    a = torch.randn((40, 1000), generator=g).to(device, torch.float16)
    b = torch.randn((1000, 72), generator=g).to(device, torch.float16)
    two_pass = GemmConfig(16, 32, 32, 4, 2, variant="splitk", split_k=8)
    serial = GemmConfig(16, 32, 32, 4, 2, variant="splitk_serial", split_k=8)
    expected = kernels.matmul(a, b, config=two_pass).clone()
    probe.offset_counters(32)  # one 128-byte line further
    view = matmul_module._tile_counters(a.device, 6)
    (kept,) = matmul_module._COUNTERS.values()
    assert view.data_ptr() == kept.data_ptr() + 32 * 4 and view.numel() == kept.numel() - 32
    for _ in range(2):  # the counters (at the offset) are found zero again by the second call
        assert torch.equal(kernels.matmul(a, b, config=serial), expected)
    assert not kept.any()
    proc = subprocess.run([sys.executable, "-m", "ci.cold_l2_probe", "run", "--mode", "flush", "--out", "x.json",
                           "--counter-offset", "-4"], cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 2 and "--counter-offset must be >= 0" in proc.stderr


def test_the_placement_script_pools_each_streams_setting_over_its_shifts(tmp_path):
    # The pipeline of ci/gpu_placement_probe.sh in the interpreter (its timings mean nothing here):
    # one process per (streams, shift), then the pooled report, one row per streams setting.
    env = {**os.environ, "TRITON_INTERPRET": "1", "CELLS": "fp16 16x32x32", "SHIFTS": "0 2", "STREAMS": "1 2",
           "ROUNDS": "2", "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}  # fmt: skip
    proc = subprocess.run(["bash", "ci/gpu_placement_probe.sh", str(tmp_path), "600"], cwd=ROOT, capture_output=True,
                          text=True, env=env, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(p.name for p in tmp_path.glob("*.json")) == [
        "s1-shift0.json", "s1-shift2.json", "s2-shift0.json", "s2-shift2.json",
    ]  # fmt: skip
    assert json.loads((tmp_path / "s2-shift2.json").read_text())["mode"] == "flush+shift2MiB+2streams"
    rows = [line.split() for line in (tmp_path / "report.txt").read_text().split("\n\n")[0].splitlines()[1:]]
    assert [r[:4] for r in rows] == [["fp16", "16x32x32", "flush", "2"], ["fp16", "16x32x32", "flush+2streams", "2"]]
    # Past the deadline nothing starts, and that is said.
    late = tmp_path / "late"
    proc = subprocess.run(["bash", "ci/gpu_placement_probe.sh", str(late), "10"], cwd=ROOT, capture_output=True,
                          text=True, env=env, timeout=120)  # fmt: skip
    assert proc.returncode == 0 and not list(late.glob("*.json"))
    assert (late / "steps.txt").read_text().splitlines()[0] == "s1-shift0: skipped, deadline"
