"""The GPU call scripts' shared shell helpers (docs/results/*/prologue.sh), run here on their CPU paths."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROLOGUE = ROOT / "docs" / "results" / "2026-12-07a-h100" / "prologue.sh"


def test_the_tune_helper_passes_a_pattern_that_starts_with_a_dash(tmp_path):
    """`tune` hands $tune_match to `gemmwatch tune --match`; '-swap$' must reach it as the pattern,
    not as an option (it once stopped the H200's tune with 'expected one argument')."""
    helper = PROLOGUE.read_text()
    helper = helper[helper.index("tune() {") :]
    script = f"""
begin=$(date +%s) out={tmp_path}/out
mkdir -p "$out"
{helper}
tune_match='-swap$' tune_margin=5
tune fp8 60 --plan --target h200 --dtypes fp8_e4m3 --shapes 128x4608x3584
"""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "TRITON_INTERPRET": "1"}
    proc = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    log = (tmp_path / "out" / "fp8.log").read_text()
    assert "tune fp8: exit 0" in proc.stdout, (proc.stdout, proc.stderr, log)
    assert "gemmwatch tune --plan: target h200, 1 buckets" in log
    assert "fp8_e4m3 128x4608x3584" in log
