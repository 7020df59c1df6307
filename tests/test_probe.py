"""`gemmwatch probe`: each config of a cell once, in a child process, checked against the reference."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def probe(*args):
    return subprocess.run([sys.executable, "-m", "ci.cli", "probe", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, env={**os.environ, "TRITON_INTERPRET": "1"}, timeout=600)  # fmt: skip


def test_each_config_is_checked_in_a_process_of_its_own_and_refusals_are_not_failures(tmp_path):
    out = tmp_path / "probe.json"
    proc = probe("--cells", "fp16 33x65x127", "--configs", "BM32-BN32-BK32-w4-s2-g8",
                 "BM128-BN128-BK64-w8-s3-g8-gluon-ws", "--jobs", "2", "--json", out)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "| fp16 33x65x127 | 2 | 1 | 1 | 0 | 0 | 0 | 0 |" in proc.stdout
    assert "| fp16 33x65x127 | `BM128-BN128-BK64-w8-s3-g8-gluon-ws` | refused | ValueError: config " in proc.stdout
    verdicts = {v["config"]: v for v in json.loads(out.read_text())}
    right = verdicts["BM32-BN32-BK32-w4-s2-g8"]
    assert right["status"] == "right" and 0 <= right["rel_error"] < 1e-2 and right["cell"] == "fp16 33x65x127"
    assert "gluon_ws configs are for Hopper" in verdicts["BM128-BN128-BK64-w8-s3-g8-gluon-ws"]["reason"]


def test_the_candidates_narrowed_by_match(tmp_path):
    out = tmp_path / "probe.json"
    proc = probe("--cells", "fp16 64x64x64", "--match", "^BM32-BN32-BK64-", "--jobs", "4", "--json", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    verdicts = json.loads(out.read_text())
    assert verdicts and all(v["config"].startswith("BM32-BN32-BK64-") for v in verdicts)
    assert all(v["status"] == "right" for v in verdicts), verdicts


def test_a_child_that_dies_or_runs_too_long_is_its_configs_verdict():
    from ci.probe import run_child

    dead = run_child("fp16 notashape", "BM16-BN16-BK16-w1-s1-g8", 120)  # (the child raises on the cell)
    assert dead["status"] == "faulted" and dead["reason"].startswith("exit 1: "), dead
    assert "notashape" in dead["reason"]
    hung = run_child("fp16 64x64x64", "BM16-BN16-BK16-w1-s1-g8", 0.01)
    assert hung == {"cell": "fp16 64x64x64", "config": "BM16-BN16-BK16-w1-s1-g8", "status": "hung",
                    "reason": "still running after 0.01 s"}  # fmt: skip


def test_bad_input_is_named(tmp_path):
    cases = [
        (("--cells", "fp16 64x64x64", "--jobs", "0"), "--jobs must be >= 1, got 0"),
        (("--cells", "fp16 64x64x64", "--timeout", "0"), "--timeout must be a positive number of seconds, got 0"),
        (("--cells", "fp16 64x64x64", "--match", "("), "--match '(' is not a regular expression"),
        (("--cells", "fp16 64x64x64", "--match", "nothing-matches-this"), "no config to probe"),
        (("--cells", "fp16 64x64x64", "--configs", "BM7-nope"), "gemmwatch probe: "),
        (("--cells", "fp16 64x64x64", "--json", tmp_path / "missing" / "x.json"), "its directory does not exist"),
    ]
    for args, message in cases:
        proc = probe(*args)
        assert proc.returncode == 2 and message in proc.stderr, (args, proc.stderr)
