"""`gemmwatch run` end to end on the CPU: real asv, real git worktrees, the interpreter.

The project is copied (working tree, as git sees it) into a scratch repository
so that commits can be made there: one measuring the snapshot, one with a
kernel broken on purpose.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import triton
from project_repo import commit_change, gemmwatch, git, snapshot

from ci.asv_results import load


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return snapshot(tmp_path_factory.mktemp("project") / "repo")


def _result_file(results: Path) -> Path:
    (path,) = [p for p in (results / "cpu-interpreter").glob("*.json") if p.name != "machine.json"]
    return path


@pytest.fixture(scope="module")
def first_run(repo, tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    proc = gemmwatch(repo, "run", "--rounds", "3", "--results-dir", str(out / "results"), "--work-dir", str(out / "w"))
    return out, proc


def test_run_writes_asv_results_with_samples_and_versions(first_run):
    out, proc = first_run
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "pipeline check, not performance" in proc.stdout
    assert "[Matmul 1/6]" in proc.stdout  # progress: cell i of n
    result = load(_result_file(out / "results"))
    assert result.machine_params["triton"] == triton.__version__
    assert result.machine_params["machine"] == "cpu-interpreter"
    ratio = result.metric("track_ratio")
    assert ratio["fp16 64x64x64"].samples and len(ratio["fp16 64x64x64"].samples) == 3
    assert ratio["fp16 64x64x64"].ci_99 is not None
    errors = result.metric("track_max_rel_error")
    assert all(e.value < 0.02 for e in errors.values() if not e.skipped)
    # fp8 has no native baseline on the CPU: n/a (skipped), not a failure
    assert result.metric("track_ratio")["fp8_e4m3 64x64x64"].skipped
    assert not any(e.failed for e in result.entries)


def test_run_records_its_context(first_run):
    out, _ = first_run
    (run_json,) = (out / "context" / "cpu-interpreter").glob("*/run.json")
    record = json.loads(run_json.read_text())
    assert set(record["suites"]) == {"Matmul", "ScaledMatmul", "FusedEpilogue"}
    matmul = record["suites"]["Matmul"]
    assert matmul["context"]["triton"] == triton.__version__ and "state_before" in matmul["context"]
    assert matmul["cells"]["fp16 64x64x64"]["config"].startswith("BM")


def test_cells_without_a_tuned_entry_are_named(first_run, tmp_path):
    from ci.run import untuned_cells

    _, proc = first_run
    assert "without a tuned-library entry" not in proc.stdout  # the interpreter ranks, it never times
    context = tmp_path / "context"
    context.mkdir()
    cells = {"fp16 4096x4096x4096": {"selection": "tuned"}, "fp32-ieee 1000x1000x1000": {"selection": "timed"},
             "fp32-ieee 1x1001x4095": {"selection": "stored"}, "fp16 64x64x64": {"selection": None}}  # fmt: skip
    (context / "Matmul.json").write_text(json.dumps({"suite": "Matmul", "cells": cells}))
    (context / "run.json").write_text(json.dumps({"suites": {"Matmul": {"cells": cells}}}))
    assert untuned_cells(context) == ["fp32-ieee 1000x1000x1000", "fp32-ieee 1x1001x4095"]


def test_asv_publish_works_on_what_run_wrote(first_run, repo):
    out, _ = first_run
    conf = out / "w" / "asv.conf.json"
    proc = subprocess.run(
        [sys.executable, "-m", "asv", "publish", "--config", str(conf)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    index = json.loads((out / "html" / "index.json").read_text())
    assert any("track_ratio" in name for name in index["benchmarks"])


def test_rerun_appends_samples_and_keeps_a_backup(first_run, repo):
    out, _ = first_run
    before = _result_file(out / "results").read_text()
    proc = gemmwatch(repo, "run", "--rounds", "3", "--results-dir", str(out / "results"), "--work-dir", str(out / "w"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    samples = load(_result_file(out / "results")).metric("track_triton_time")["bf16 64x64x64"].samples
    assert len(samples) == 6, "a re-run adds samples, it does not replace them"
    backups = list((out / "results-backup" / "cpu-interpreter").glob("*.json"))
    assert backups and backups[0].read_text() == before


def test_a_broken_kernel_fails_its_cells_and_the_run_goes_on(repo, tmp_path):
    # A commit whose bf16 path fails: measured from a worktree, nothing installed.
    marker = "    M, K = a.shape\n"
    broken = commit_change(
        repo, "kernels/matmul.py", marker, marker + '    if dtype == "bf16":\n        raise RuntimeError("broken")\n',
        "break bf16",
    )  # fmt: skip
    proc = gemmwatch(
        repo, "run", broken, "--rounds", "2", "--results-dir", str(tmp_path / "r"), "--work-dir", str(tmp_path / "w")
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "failed" in proc.stdout
    result = load(_result_file(tmp_path / "r"))
    assert result.commit == broken
    times = result.metric("track_triton_time")
    assert times["bf16 64x64x64"].failed and times["bf16 33x65x127 bias+gelu"].failed
    assert not times["fp16 64x64x64"].failed and times["fp16 64x64x64"].samples


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "0123456789abcdef0123"], "commit '0123456789abcdef0123' does not exist"),
        (["run", "--shapes", "huge"], "unknown shape set 'huge'"),
        (["run", "--dtypes", "fp64"], "unknown dtype 'fp64'"),
        (["run", "--matrix", "/nonexistent/m.toml"], "matrix file /nonexistent/m.toml does not exist"),
    ],
)
def test_bad_input_exits_2_with_a_message(repo, tmp_path, args, message):
    proc = gemmwatch(repo, *args, "--results-dir", str(tmp_path / "r"), "--work-dir", str(tmp_path / "w"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr
    assert not (tmp_path / "w").exists(), "nothing is started on bad input"


def test_unwritable_results_dir(repo, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    proc = gemmwatch(repo, "run", "--results-dir", str(blocker / "results"), "--work-dir", str(tmp_path / "w"))
    assert proc.returncode == 2
    assert f"results directory {blocker / 'results'} is not writable" in proc.stderr


def test_the_gpu_evidence_script_runs_its_steps_and_keeps_what_it_finished(repo, tmp_path):
    # The script the GPU box runs (device time is scarce: a broken step wastes it); here the
    # interpreter stands in, and its recheck has no rounds for `simulate` (said in its output).
    out = tmp_path / "evidence"
    env = {**__import__("os").environ, "TRITON_INTERPRET": "1", "RUNS": "cold warm", "RECHECK": "1",
           "INJECT": "fp16 64x64x64=0.03", "INJECT_ARGS": "--shapes 64x64x64 --dtypes fp16", "RECHECK_PARTS": "2",
           "PATH": f"{Path(sys.executable).parent}:{__import__('os').environ['PATH']}",
           "PACK": str(tmp_path / "evidence.tgz")}  # fmt: skip
    proc = subprocess.run(["bash", "ci/gpu_evidence.sh", str(out), "400"], cwd=repo, capture_output=True, text=True,
                          env=env, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = (out / "walltimes.txt").read_text().splitlines()
    steps = ["cold", "warm", "injected", "compare-injected", "recheck-aa-00 (6 cells)", "recheck-aa-01 (6 cells)",
             "simulate --recheck"]  # fmt: skip
    assert [line.split(":")[0] for line in lines] == steps
    assert all("exit 0" in line for line in lines[:-1]), lines
    # The injected run compared with the last clean one (the interpreter's timings call nothing).
    comparison = (out / "compare-injected.md").read_text()
    assert comparison.startswith("## gemmwatch:") and "fp16" in comparison, comparison
    assert "no cell with per-round samples" in (out / "simulate-recheck.txt").read_text()  # (the interpreter's)
    assert (out / "noise.txt").read_text().strip()
    assert (out / "explain.md").read_text().startswith("| cell | speedup |")  # (of the last run, warm)
    # What a GPU box's caller fetches: each run's result file, and its context packed.
    import tarfile

    for name in ("cold", "warm"):
        assert json.loads((out / f"run-{name}.json").read_text())["commit_hash"]
        with tarfile.open(out / f"{name}-context.tgz") as tar:
            assert any(m.name.startswith("context/") and m.name.endswith(".json") for m in tar.getmembers())
    reports = [json.loads((out / f"recheck-aa-0{i}.json").read_text()) for i in range(2)]
    assert sum(len(r["cells"]) for r in reports) == 12
    # PACK: all of it in one archive (a device box returns a few files only).
    with tarfile.open(tmp_path / "evidence.tgz") as tar:
        packed = {Path(m.name).name for m in tar.getmembers()}
    for name in ("run-cold.json", "run-warm.json", "cold-context.tgz", "walltimes.txt", "noise.txt", "explain.md", "cold.log",
                 "recheck-aa-00.json", "recheck-aa-01.json", "simulate-recheck.txt"):  # fmt: skip
        assert name in packed, (name, packed)
    # Resuming from the archive on another machine: what it holds is kept, not measured again.
    resumed = tmp_path / "resumed"
    resumed.mkdir()
    with tarfile.open(tmp_path / "evidence.tgz") as tar:
        tar.extractall(resumed, filter="data")
    # a result file of another call's run, not named in RUNS: not one of this call's runs
    (resumed / "run-warm2.json").write_bytes((resumed / "run-cold.json").read_bytes())
    proc = subprocess.run(["bash", "ci/gpu_evidence.sh", str(resumed), "400"], cwd=repo, capture_output=True,
                          text=True, env={**env, "PACK": ""}, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = (resumed / "walltimes.txt").read_text().splitlines()[len(steps) :]
    kept = ["cold", "warm", "recheck-aa-00", "recheck-aa-01"]
    assert lines[2].startswith("compare-injected: exit 0"), lines  # (again, of the kept injected run)
    assert lines[:2] + lines[3:-1] == [f"{name}: kept from an earlier call" for name in kept]
    assert lines[-1].startswith("simulate --recheck: exit")  # (no rounds from the interpreter: exit 2, as above)
    assert " over 2 runs;" in (resumed / "noise.txt").read_text()
    # the kept runs' contexts unpacked beside their result files, where `noise --clocks` reads them
    from ci.noise import context_cells

    for name in ("cold", "warm"):
        [copy] = (resumed / name / "results").glob("*/run-*.json")
        assert copy.read_bytes() == (resumed / f"run-{name}.json").read_bytes()
        assert context_cells(load(copy)), name
    # A deadline already spent: every step skipped, nothing half-written.
    late = tmp_path / "late"
    proc = subprocess.run(["bash", "ci/gpu_evidence.sh", str(late), "10"], cwd=repo, capture_output=True, text=True,
                          env=env, timeout=600)  # fmt: skip
    assert (late / "walltimes.txt").read_text().splitlines() == ["cold: skipped, deadline", "warm: skipped, deadline"]
    assert not (late / "cold").exists()


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("GEMMWATCH_CELL_ORDER", "sideways", "GEMMWATCH_CELL_ORDER must be 'forward' or 'reverse', got 'sideways'"),
        ("GEMMWATCH_COLD_L2", "hot", "GEMMWATCH_COLD_L2 must be 'rotate' or 'flush', got 'hot'"),
        ("GEMMWATCH_STREAMS", "0", "GEMMWATCH_STREAMS must be an integer in 1..16, got '0'"),
        ("GEMMWATCH_FLUSH", "evict", "GEMMWATCH_FLUSH must be one of 'write', 'read', got 'evict'"),
        ("GEMMWATCH_PLACEMENT_THREADS", "yes", "GEMMWATCH_PLACEMENT_THREADS must be '0' or '1', got 'yes'"),
        ("GEMMWATCH_WORKSPACES", "0", "GEMMWATCH_WORKSPACES must be an integer in 1..64, got '0'"),
        ("GEMMWATCH_EARLY_WORKSPACES", "on", "GEMMWATCH_EARLY_WORKSPACES must be '0' or '1', got 'on'"),
        ("GEMMWATCH_FLUSH_BUFFERS", "all", "GEMMWATCH_FLUSH_BUFFERS must be an integer in 0..64, got 'all'"),
        ("GEMMWATCH_CAPTURES", "0", "GEMMWATCH_CAPTURES must be an integer in 1..16, got '0'"),
        ("GEMMWATCH_SETTLE", "1s", "GEMMWATCH_SETTLE must be a number of seconds in 0..10, got '1s'"),
        ("GEMMWATCH_COOL_START", "-2", "GEMMWATCH_COOL_START must be a number of seconds in 0..10, got '-2'"),
        ("GEMMWATCH_ARENA", "on", "GEMMWATCH_ARENA must be '0' or '1', got 'on'"),
    ],
)
def test_a_bad_measurement_knob_is_refused_before_anything_runs(repo, tmp_path, monkeypatch, name, value, message):
    monkeypatch.setenv(name, value)  # (the helper passes the environment on)
    proc = gemmwatch(repo, "run", "--results-dir", str(tmp_path / "r"), "--work-dir", str(tmp_path / "w"))
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert not (tmp_path / "w").exists()


def test_the_gpu_evidence_script_refuses_code_changes_its_runs_would_not_measure(tmp_path):
    # `gemmwatch run` measures HEAD from a clean worktree: a copied tree with uncommitted kernel
    # changes would be timed as the older commit (it happened on a GPU box given a copied tree).
    repo = snapshot(tmp_path / "repo")
    (repo / "kernels" / "matmul.py").write_text((repo / "kernels" / "matmul.py").read_text() + "\n# changed\n")
    env = {**__import__("os").environ, "TRITON_INTERPRET": "1", "RUNS": " ", "INJECT": "",
           "PATH": f"{Path(sys.executable).parent}:{__import__('os').environ['PATH']}"}  # fmt: skip
    proc = subprocess.run(["bash", "ci/gpu_evidence.sh", str(tmp_path / "out"), "60"], cwd=repo, capture_output=True,
                          text=True, env=env, timeout=120)  # fmt: skip
    assert proc.returncode == 2 and "uncommitted changes" in proc.stderr and "kernels/matmul.py" in proc.stderr
    assert not (tmp_path / "out").exists()
    head = git(repo, "rev-parse", "HEAD")
    proc = subprocess.run(["bash", "ci/gpu_evidence.sh", str(tmp_path / "out"), "60"], cwd=repo, capture_output=True,
                          text=True, env={**env, "EVIDENCE_COMMIT": "1"}, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert git(repo, "rev-parse", "HEAD") != head and not git(repo, "status", "--porcelain", "--", "kernels")
    assert "committed the checkout's changes" in proc.stdout


def test_a_gpu_run_on_a_chip_with_no_tuned_library_says_so_before_it_starts(tmp_path, monkeypatch):
    from ci.run import library_notice

    monkeypatch.setenv("GEMMWATCH_TUNED_DIR", str(tmp_path))
    notice = library_notice("h100-sxm", "3.6.0")
    assert "no tuned library for h100-sxm under Triton 3.6.0" in notice
    assert "first 12 candidates, in the target's own order" in notice
    assert str(tmp_path / "h100-sxm-triton3.6.0.json") in notice
    (tmp_path / "h200-triton3.6.0.json").write_text("{}")
    assert "in the order of h200's rankings (the same die" in library_notice("h100-sxm", "3.6.0", 4)
    assert "first 4 candidates" in library_notice("h100-sxm", "3.6.0", 4)
    assert "h200" not in library_notice("a100-80gb", "3.6.0")  # another die borrows nothing
    assert "h200" not in library_notice("h100-sxm", "3.9.0")  # nor another Triton version
    (tmp_path / "h100-sxm-triton3.6.0.json").write_text("{}")
    assert library_notice("h100-sxm", "3.6.0") is None
