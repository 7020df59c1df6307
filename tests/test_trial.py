"""`gemmwatch try`: named configs checked and timed beside the library's choice and the native library
(here in Triton's interpreter: the checks are real, the times are not performance)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.cells import TOLERANCE

ROOT = Path(__file__).resolve().parent.parent


def cli(*args):
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    return subprocess.run([sys.executable, "-m", "ci.cli", "try", *args], cwd=ROOT, capture_output=True, text=True,
                          env=env, timeout=600)  # fmt: skip


def test_named_configs_are_checked_and_timed_beside_the_library_and_a_failing_one_is_a_row(tmp_path):
    out = tmp_path / "try.json"
    gemv, tile, hopper_only = (
        "BM1-BN32-BK64-w4-s1-g8-sks2-fma",
        "BM16-BN32-BK32-w4-s2-g8",
        "BM64-BN64-BK64-w4-s3-g8-gluon-ws",
    )
    proc = cli(
        "--cells", "fp16 1x96x136", "fp8_e4m3 1x64x128", "--configs", gemv, tile, hopper_only, "--json", str(out)
    )
    assert proc.returncode == 1, proc.stderr  # (the Hopper-only config cannot run here)
    assert "NOT performance" in proc.stdout
    assert (
        f"2 named config(s) failed or computed wrong: fp16 1x96x136: {hopper_only}; fp8_e4m3 1x64x128:" in proc.stderr
    )
    result = json.loads(out.read_text())
    assert (
        result["interpreter"]
        and result["rounds"] == 2
        and list(result["cells"]) == ["fp16 1x96x136", "fp8_e4m3 1x64x128"]
    )
    for cell, rows in result["cells"].items():
        sides = [(r["side"], r["config"]) for r in rows]
        assert sides[0] == ("native", "-") and sides[1][0] == "library" and sides[1][1] != "?"
        assert sides[2:] == [("named", gemv), ("named", tile), ("named", hopper_only)]
        for row in rows[1:4]:  # the library's choice and the two that run: right, and timed
            assert row["error"] is None and row["rel_error"] <= TOLERANCE[cell.split()[0]] and row["seconds"] > 0
        assert "cannot run this problem" in rows[4]["error"] and rows[4]["seconds"] is None
    # fp8 has no native side off CUDA: said so, not timed; fp16's (torch on the CPU) is timed.
    assert result["cells"]["fp8_e4m3 1x64x128"][0]["error"] == "torch._scaled_mm needs a CUDA device"
    assert result["cells"]["fp16 1x96x136"][0]["seconds"] > 0
    assert f"| fp16 1x96x136 | named | `{gemv}` |" in proc.stdout


def test_all_named_configs_right_exits_zero():
    proc = cli("--cells", "fp16 3x40x72 bias+gelu", "--configs", "BM4-BN32-BK32-w4-s1-g8-fma", "--rounds", "1")
    assert proc.returncode == 0, proc.stderr
    assert "| fp16 3x40x72 bias+gelu | named | `BM4-BN32-BK32-w4-s1-g8-fma` |" in proc.stdout
    assert "| fp16 3x40x72 bias+gelu | library |" in proc.stdout


def test_without_the_library_only_native_and_the_named_configs_are_timed(tmp_path):
    out = tmp_path / "try.json"
    named = ("BM4-BN32-BK32-w4-s1-g8-fma", "BM16-BN32-BK32-w4-s2-g8")
    proc = cli("--cells", "fp16 3x40x72", "--configs", *named, "--rounds", "1", "--no-library", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "| library |" not in proc.stdout
    rows = json.loads(out.read_text())["cells"]["fp16 3x40x72"]
    assert [(r["side"], r["config"]) for r in rows] == [("native", "-"), *(("named", n) for n in named)]
    assert all(r["seconds"] > 0 and r["error"] is None for r in rows)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cells", "fp17 1x64x64", "--configs", "BM16-BN32-BK32-w4-s2-g8"], "cell 'fp17 1x64x64': unknown dtype 'fp17'"),
        (["--cells", "fp16 1x64", "--configs", "BM16-BN32-BK32-w4-s2-g8"], "shape '1x64' is not of the form MxNxK"),
        (["--cells", "fp16 1x64x64", "--configs", "BM16-BN32"], "--configs: not a GEMM config name: 'BM16-BN32'"),
        (["--cells", "fp16 1x64x64", "--configs", "BM16-BN32-BK32-w4-s2-g8", "--rounds", "-1"], "--rounds must be >= 1"),
        (["--cells", "fp16 1x64x64", "--configs", "BM16-BN32-BK32-w4-s2-g8", "--json", "/nonexistent/dir/t.json"],
         "--json /nonexistent/dir/t.json: its directory does not exist or is not writable"),
    ],
)  # fmt: skip
def test_bad_input_is_named_and_nothing_runs(args, message):
    proc = cli(*args)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert proc.stdout == ""


@pytest.mark.gpu
def test_on_the_gpu_every_side_is_timed_and_compared():
    from benchmarks.matrix import parse_cell
    from ci.trial import render, trial_cell
    from targets import detect

    _, cell = parse_cell("fp8_e4m3 1x4096x4096")
    rows = trial_cell(cell, [], device="cuda", spec=detect(), rounds=5)
    assert [r["side"] for r in rows] == ["native", "library"]
    assert all(r["error"] is None and r["seconds"] > 0 for r in rows), rows
    library_row = render({cell.name: rows}, interpreter=False).splitlines()[3].split("|")
    assert library_row[2].strip() == "library" and library_row[5].strip().endswith("x")  # (x native)
