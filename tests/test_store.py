"""The results store: shards and runners merged without overwriting; pruning."""

import json
import subprocess
import sys
import time

import numpy as np
import pytest
from asv_fixtures import cell_samples, write_results
from project_repo import ROOT, gemmwatch, snapshot

from ci.asv_results import load
from ci.store import merge, prune

SHA = "c" * 40


def _machine(root, name="h200"):
    (root / name).mkdir(parents=True, exist_ok=True)
    (root / name / "machine.json").write_text(json.dumps({"machine": name, "version": 1}))


def _results(root, cells, sha=SHA, machine=None, name="h200"):
    _machine(root, name)
    return write_results(root / name / f"{sha[:8]}-existing-py.json", sha, cells, machine)


def test_disjoint_cells_are_joined(tmp_path):
    rng = np.random.default_rng(0)
    a = {("Matmul", "16x4096x4096", "fp16"): {"ratio": cell_samples(rng, 1.0), "triton": cell_samples(rng, 1e-4)}}
    b = {("Matmul", "4096x4096x4096", "bf16"): {"ratio": cell_samples(rng, 0.9), "triton": cell_samples(rng, 2e-4)},
         ("ScaledMatmul", "16x4096x4096", "fp8_e4m3"): {"ratio": cell_samples(rng, 1.2), "triton": cell_samples(rng, 1e-5)}}  # fmt: skip
    _results(tmp_path / "a", a)
    _results(tmp_path / "b", b)
    report = merge(tmp_path / "store", [tmp_path / "a", tmp_path / "b"])
    assert report.copied == ["h200/cccccccc-existing-py.json"] and report.merged == ["h200/cccccccc-existing-py.json"]
    merged = load(tmp_path / "store" / "h200" / "cccccccc-existing-py.json")
    ratio = merged.metric("track_ratio")
    assert ratio["fp16 16x4096x4096"].value == pytest.approx(1.0, rel=0.01)
    assert ratio["bf16 4096x4096x4096"].value == pytest.approx(0.9, rel=0.01)
    assert len(ratio["bf16 4096x4096x4096"].samples) == 30
    assert ratio["fp16 4096x4096x4096"].skipped and ratio["bf16 16x4096x4096"].skipped  # not run anywhere
    assert merged.metric("track_triton_time")["fp8_e4m3 16x4096x4096"].value == pytest.approx(1e-5, rel=0.01)
    assert not report.conflicts


def test_two_runners_for_one_target_never_overwrite(tmp_path):
    rng = np.random.default_rng(1)
    cell = ("Matmul", "16x4096x4096", "fp16")
    _results(tmp_path / "store", {cell: {"ratio": cell_samples(rng, 1.0), "triton": cell_samples(rng, 1e-4)}})
    before = (tmp_path / "store" / "h200" / "cccccccc-existing-py.json").read_text()
    _results(tmp_path / "runner2", {cell: {"ratio": cell_samples(rng, 1.5), "triton": cell_samples(rng, 2e-4)}})
    report = merge(tmp_path / "store", [tmp_path / "runner2"])
    assert len(report.conflicts) == 2 and "kept the store's value" in report.conflicts[0]
    after = load(tmp_path / "store" / "h200" / "cccccccc-existing-py.json")
    assert after.metric("track_ratio")["fp16 16x4096x4096"].value == pytest.approx(1.0, rel=0.01)
    assert (
        json.loads(before)["results"]
        == json.loads((tmp_path / "store/h200/cccccccc-existing-py.json").read_text())["results"]
    )


def test_empty_corrupt_and_partial_artifacts_are_reported(tmp_path):
    rng = np.random.default_rng(2)
    (tmp_path / "empty").mkdir()
    _machine(tmp_path / "corrupt" / "results")
    (tmp_path / "corrupt" / "results" / "h200" / "deadbeef-x.json").write_text('{"commit_hash": "dead", "resu')
    _results(tmp_path / "partial" / "results", {("Matmul", "16x4096x4096", "fp16"): {"ratio": cell_samples(rng, 1.0),
             "triton": cell_samples(rng, 1e-4)}})  # fmt: skip
    (tmp_path / "partial" / "results" / "h200" / "notes.json").write_text('{"a": 1}')
    proc_dir = tmp_path / "store"
    report = merge(proc_dir, [tmp_path / "empty", tmp_path / "corrupt", tmp_path / "partial"])
    assert report.empty_sources == [str(tmp_path / "empty")]
    assert any("deadbeef-x.json: not an asv result file" in s for s in report.skipped)
    assert any("notes.json: not an asv result file" in s for s in report.skipped)
    assert report.copied == ["h200/cccccccc-existing-py.json"]
    assert not (proc_dir / "h200" / "deadbeef-x.json").exists()


def test_merge_command_exit_codes(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "ci.cli", "merge", "--into", str(tmp_path / "s"), str(tmp_path / "nothing-here")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "does not exist" in proc.stderr and "nothing could be merged" in proc.stderr
    assert json.loads((tmp_path / "s" / "merge-report.json").read_text())["empty_sources"]


def test_prune_drops_old_samples_then_old_files(tmp_path):
    rng = np.random.default_rng(3)
    cells = {("Matmul", "16x4096x4096", "fp16"): {"ratio": cell_samples(rng, 1.0), "triton": cell_samples(rng, 1e-4)}}
    now = time.time()
    for age_days, sha in ((1, "1" * 40), (10, "2" * 40), (1000, "3" * 40)):
        path = _results(tmp_path, cells, sha=sha)
        data = json.loads(path.read_text())
        data["date"] = (now - age_days * 86400) * 1000
        path.write_text(json.dumps(data))
    done = prune(tmp_path, keep_full=1, max_age_days=365, now=now)
    assert done["removed"] == ["h200/33333333-existing-py.json"]
    assert done["stripped_samples"] == ["h200/22222222-existing-py.json"]
    assert done["bytes_after"] < done["bytes_before"]
    kept = load(tmp_path / "h200" / "22222222-existing-py.json").metric("track_ratio")["fp16 16x4096x4096"]
    assert kept.samples is None and kept.value == pytest.approx(1.0, rel=0.01)
    assert load(tmp_path / "h200" / "11111111-existing-py.json").metric("track_ratio")["fp16 16x4096x4096"].samples


def test_shards_run_one_after_another_merge_into_the_full_matrix(tmp_path_factory):
    repo = snapshot(tmp_path_factory.mktemp("shards") / "repo")
    out = tmp_path_factory.mktemp("shard-out")
    for i in (1, 2):
        proc = gemmwatch(repo, "run", "--shard", f"{i}/2", "--rounds", "2", "--results-dir", str(out / f"s{i}"),
                         "--work-dir", str(out / "w"))  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert f"shard {i}/2" in proc.stdout
    shard_cells = [
        {c for c, e in load(next((out / f"s{i}" / "cpu-interpreter").glob("*-*.json"))).metric("track_triton_time").items()
         if not e.skipped}
        for i in (1, 2)
    ]  # fmt: skip
    assert shard_cells[0] and shard_cells[1] and not shard_cells[0] & shard_cells[1]
    report = merge(out / "merged", [out / "s1", out / "s2"])
    assert not report.conflicts and not report.skipped
    merged = load(next((out / "merged" / "cpu-interpreter").glob("*-*.json")))
    measured = {c for c, e in merged.metric("track_triton_time").items() if not e.skipped and not e.failed}
    assert measured == shard_cells[0] | shard_cells[1]
    assert len(measured) == 12, "the whole smoke matrix"
