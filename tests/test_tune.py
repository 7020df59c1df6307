"""The tuned-config library: `gemmwatch tune` writes it, the launcher reads it, other Triton versions are reported."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import triton

from targets import library

ROOT = Path(__file__).resolve().parent.parent


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "ci.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "TRITON_INTERPRET": "1", **(env or {})}, timeout=300)  # fmt: skip


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tuned")
    proc = cli("tune", "--allow-interpreter", "--shapes", "64x64x64", "--dtypes", "fp16", "fp8_e4m3", "--top-k", "3",
               "--rounds", "2", "--dir", str(directory))  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return directory


def test_tune_writes_best_losers_and_metadata(tuned):
    path = tuned / f"cpu-interpreter-triton{triton.__version__}.json"
    data = json.loads(path.read_text())
    assert data["target"] == "cpu-interpreter" and data["triton"] == triton.__version__
    assert data["meta"]["interpreter"] is True and data["meta"]["date"]
    entry = data["entries"]["matmul|fp16|-|rowrow|64x64x64"]
    assert len(entry["tried"]) == 3
    assert min(entry["tried"].values()) == pytest.approx(entry["time_ms"], rel=1e-6)
    assert "scaled_matmul|fp8_e4m3|-|rowcol|64x64x64" in data["entries"]


def test_the_launcher_uses_the_library(tuned):
    entry = json.loads((tuned / f"cpu-interpreter-triton{triton.__version__}.json").read_text())["entries"]
    best = entry["matmul|fp16|-|rowrow|64x64x64"]["config"]
    code = (
        "import torch, kernels; a = torch.randn(50, 60).half(); b = torch.randn(60, 40).half(); "
        "kernels.matmul(a, b); s = kernels.autotune.last(); print(s.method, s.config.as_dict())"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "TRITON_INTERPRET": "1", "GEMMWATCH_TUNED_DIR": str(tuned)})  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    method, config = proc.stdout.strip().split(" ", 1)
    assert method == "tuned" and eval(config) == best
    off = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "TRITON_INTERPRET": "1", "GEMMWATCH_TUNED_DIR": str(tuned),
                              "GEMMWATCH_TUNED": "0"})  # fmt: skip
    assert off.stdout.startswith("ranked")


def test_another_triton_version_is_reported_not_used(tmp_path, monkeypatch):
    other = library.Library("cpu-interpreter", "0.0.1", entries={"matmul|fp16|-|rowrow|64x64x64": {
        "config": {"block_m": 16, "block_n": 16, "block_k": 16, "num_warps": 4, "num_stages": 1, "group_m": 8}}})  # fmt: skip
    other.save(library.library_path("cpu-interpreter", "0.0.1", tmp_path))
    monkeypatch.setenv(library.ENV_DIR, str(tmp_path))
    library._REPORTED.clear()
    with pytest.warns(library.TunedVersionWarning, match="exist only for other Triton versions"):
        assert library.lookup("cpu-interpreter", triton.__version__, "matmul|fp16|-|rowrow|64x64x64") is None
    assert library.lookup("cpu-interpreter", "0.0.1", "matmul|fp16|-|rowrow|64x64x64").block_m == 16


def test_a_mislabelled_library_is_an_error(tmp_path):
    path = library.library_path("h200", "3.6.0", tmp_path)
    path.write_text(json.dumps({"target": "h100-sxm", "triton": "3.6.0", "entries": {}}))
    with pytest.raises(ValueError, match="says target 'h100-sxm'"):
        library.load("h200", "3.6.0", tmp_path)


def test_resume_skips_what_the_library_has(tuned):
    path = tuned / f"cpu-interpreter-triton{triton.__version__}.json"
    before = path.read_text()
    proc = cli("tune", "--allow-interpreter", "--shapes", "64x64x64", "--dtypes", "fp16", "--top-k", "2",
               "--rounds", "1", "--dir", str(tuned), "--resume")  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "fp16 64x64x64: in the library already (--resume), skipped" in proc.stdout
    assert json.loads(path.read_text())["entries"] == json.loads(before)["entries"]


@pytest.mark.parametrize("option", ["--top-k", "--finalists", "--rounds"])
def test_tune_rejects_non_positive_counts(option):
    proc = cli("tune", "--allow-interpreter", "--shapes", "64x64x64", option, "0")
    assert proc.returncode == 2 and f"{option} must be a positive integer, got 0" in proc.stderr


def test_tune_refuses_the_interpreter_unless_asked():
    proc = cli("tune", "--shapes", "64x64x64")
    assert proc.returncode == 2 and "interpreter's are not performance" in proc.stderr
