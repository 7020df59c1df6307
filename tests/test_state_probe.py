"""ci/state_probe.py: the in-process probe of what moves a cell (its GPU numbers are in docs/BENCHMARKS.md)."""

import json
import subprocess
import sys
from pathlib import Path

from ci import state_probe

ROOT = Path(__file__).resolve().parent.parent


def _rows(phase, cell, triton_us, native_us):
    return [
        {
            "phase": phase,
            "rep": i,
            "cell": cell,
            "stream": i,
            "triton_s": t * 1e-6,
            "native_s": n * 1e-6,
            "ratio": t / n,
        }
        for i, (t, n) in enumerate(zip(triton_us, native_us))
    ]


def test_the_report_gives_each_cell_and_phase_its_spread_and_every_repetition(capsys, tmp_path):
    rows = _rows("write-fresh", "fp16 16x4096x4096", [15.0, 15.3, 14.7], [16.0, 16.0, 16.0])
    rows += _rows("write+copies-fresh", "fp16 16x4096x4096", [15.0, 15.0, 15.0], [16.0, 16.1, 15.9])
    assert state_probe.report(rows) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:4] == ["fp16", "16x4096x4096", "write-fresh", "reps"]
    assert "Triton CV 2.00% (min 14.70 max 15.30 us)  native CV 0.00%" in lines[0]
    assert lines[1].split()[-3:] == ["0:15.00/16.00", "1:15.30/16.00", "2:14.70/16.00"]
    assert "write+copies-fresh" in lines[2] and "Triton CV 0.00%" in lines[2] and "native CV 0.63%" in lines[2]
    # --report reads a run's file back.
    path = tmp_path / "rows.json"
    path.write_text(json.dumps({"rounds": 10, "reps": 3, "rows": rows}))
    proc = subprocess.run([sys.executable, "-m", "ci.state_probe", "--cells", "fp16 1x2x3", "--report", str(path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0 and proc.stdout.splitlines() == lines


def test_bad_arguments_and_a_machine_without_a_gpu_are_refused(tmp_path):
    def probe(*args):
        return subprocess.run([sys.executable, "-m", "ci.state_probe", *args], cwd=ROOT, capture_output=True,
                              text=True, timeout=120)  # fmt: skip

    proc = probe("--cells", "fp16 16x32x32", "--reps", "1", "--out", str(tmp_path / "x.json"))
    assert proc.returncode == 2 and "--reps must be >= 2 and --rounds >= 3, got 1 and 10" in proc.stderr
    proc = probe("--cells", "fp16 16x32x32")
    assert proc.returncode == 2 and "--out is needed to run" in proc.stderr
    proc = probe("--cells", "fp64 16x32x32", "--out", str(tmp_path / "x.json"))
    assert proc.returncode == 2 and "--cells:" in proc.stderr and "fp64" in proc.stderr
    proc = probe("--cells", "fp16 16x32x32", "--cold-l2", "evict", "--out", str(tmp_path / "x.json"))
    assert proc.returncode == 2 and "expected one of write, read" in proc.stderr and "got 'evict'" in proc.stderr
    proc = probe("--cells", "fp16 16x32x32", "--cold-l2", "write+copies0", "--out", str(tmp_path / "x.json"))
    assert proc.returncode == 2 and "(N in 1..64), got 'write+copies0'" in proc.stderr
    assert state_probe.cold_l2_method("read+copies16") == "read+copies16"
    assert state_probe.cold_l2_method("suite") == "suite"
    assert state_probe.cold_l2_method("suite+ws32") == "suite+ws32"
    assert state_probe.cold_l2_method("suite+fb8") == "suite+fb8"
    assert state_probe.cold_l2_method("suite+cg16") == "suite+cg16"
    assert state_probe.cold_l2_method("suite+arena") == "suite+arena"
    for bad in ("suite+ws0", "suite+ws65", "write+ws8", "suite+copies8", "suite+fb0", "write+fb8", "suite+fb",
                "suite+cg17", "suite+cg0", "write+arena", "suite+arena8"):  # fmt: skip
        proc = probe("--cells", "fp16 16x32x32", "--cold-l2", bad, "--out", str(tmp_path / "x.json"))
        assert proc.returncode == 2 and f"suite+fbN (N in 1..64), got {bad!r}" in proc.stderr, proc.stderr
    proc = probe("--cells", "fp16 16x32x32", "--phases", "workspace", "flush", "fixed", "--cold-l2", "suite",
                 "--out", str(tmp_path / "x.json"))  # fmt: skip
    assert proc.returncode == 2 and "needs a CUDA GPU" in proc.stderr  # the arguments themselves parse
    proc = probe("--cells", "fp16 16x32x32", "--between", "fp16 0x32x32", "--out", str(tmp_path / "x.json"))
    assert proc.returncode == 2 and "--between:" in proc.stderr, proc.stderr
    proc = probe("--cells", "fp16 16x32x32", "--between", "bf16 16x64x64", "--out", str(tmp_path / "x.json"))
    assert proc.returncode == 2 and "needs a CUDA GPU" in proc.stderr  # the cells between parse
    proc = probe("--cells", "fp16 16x32x32", "--out", str(tmp_path / "x.json"))  # this machine has no GPU
    assert proc.returncode == 2 and "needs a CUDA GPU" in proc.stderr and not (tmp_path / "x.json").exists()
