"""The gemmwatch command line, run as a user runs it (a subprocess)."""

import json
import os
import subprocess
import sys
import time

import pytest

CLI = [sys.executable, "-m", "ci.cli"]


def _run(*args, env_extra=None, timeout=600):
    env = {**os.environ, **(env_extra or {})}
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, env=env)


def test_help_is_instant_and_imports_no_torch():
    start = time.perf_counter()
    code = "import sys; from ci.cli import main\ntry:\n main(['--help'])\nexcept SystemExit: pass\nprint('torch' in sys.modules, 'triton' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "bench" in proc.stdout
    assert proc.stdout.strip().endswith("False False"), "--help must not import torch or triton"
    assert time.perf_counter() - start < 10


def test_bench_runs_and_is_labelled(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("the GPU bench is exercised by tests/test_gpu.py")
    out = tmp_path / "bench.json"
    proc = _run("bench", "--dtypes", "fp16", "fp8_e4m3", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "NOT performance" in proc.stdout
    assert "target=cpu-interpreter" in proc.stdout
    payload = json.loads(out.read_text())
    assert payload["interpreter"] is True
    cells = payload["cells"].values()
    assert {c["dtype"] for c in cells} == {"fp16", "fp8_e4m3"}
    assert all(c["error"] is None and c["rel_error"] <= c["tolerance"] for c in cells)
    assert all(len(c["triton_s"]) == 3 for c in cells)  # 3 rounds in the interpreter
    assert "[bench 1/3]" in proc.stderr  # progress


def test_bench_rejects_unknown_dtype():
    proc = _run("bench", "--dtypes", "int4")
    assert proc.returncode == 2
    assert "no cell has dtype in ['int4']" in proc.stderr


def test_unknown_command_exits_2():
    proc = _run("frobnicate")
    assert proc.returncode == 2
    assert "invalid choice" in proc.stderr
