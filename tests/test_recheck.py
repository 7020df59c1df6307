"""`gemmwatch recheck`: two commits' kernels in one process (interpreter: mechanics, not speed)."""

import json

import numpy as np
import pytest
from asv_fixtures import cell_samples, write_results
from project_repo import commit_change, gemmwatch, git, snapshot

from ci.recheck import paired_change


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return snapshot(tmp_path_factory.mktemp("recheck") / "repo")


def test_each_side_runs_its_own_kernels(repo, tmp_path):
    base = git(repo, "rev-parse", "HEAD").strip()
    old = "    c = acc.to(c_ptr.dtype.element_ty)\n"
    head = commit_change(
        repo,
        "kernels/matmul.py",
        old,
        "    if ACTIVATION == 0:\n        acc = acc * 1.5\n" + old,
        "head: wrong unfused path",
    )
    out = tmp_path / "recheck.json"
    proc = gemmwatch(repo, "recheck", "--base", base, "--head", head, "--rounds", "3", "--work-dir", str(tmp_path / "w"),
                     "--output", str(out), "--cells", "fp16 64x64x64", "bf16 33x65x127 bias+gelu")  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads(out.read_text())
    wrong = report["cells"]["Matmul fp16 64x64x64"]
    assert wrong["verdict"] == "failed" and wrong["rel_error"]["base"] < 1e-3 < 0.4 < wrong["rel_error"]["head"]
    same = report["cells"]["FusedEpilogue bf16 33x65x127 bias+gelu"]
    assert same["rel_error"]["base"] == same["rel_error"]["head"]  # the epilogue path did not change
    assert same["verdict"] == "not-called" and same["rounds"] == 3  # interpreter timings never decide
    assert "not performance" in proc.stderr


def test_recheck_report_overrides_compare_verdicts(tmp_path):
    from ci import compare as compare_mod

    rng = np.random.default_rng(0)
    cells_b = {("Matmul", "16x4096x4096", "fp16"): {"ratio": cell_samples(rng, 1.0), "triton": cell_samples(rng, 1e-4)}}
    cells_h = {
        ("Matmul", "16x4096x4096", "fp16"): {"ratio": cell_samples(rng, 1.05), "triton": cell_samples(rng, 1.05e-4)}
    }
    b = write_results(tmp_path / "b.json", "a" * 40, cells_b)
    h = write_results(tmp_path / "h.json", "b" * 40, cells_h)
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"machine": "h200", "cells": {"Matmul fp16 16x4096x4096": {
        "verdict": "unchanged", "change": 0.001, "interval": [-0.004, 0.006], "p_value": 0.6, "note": "rechecked"}}}))  # fmt: skip

    class Args:
        base_results, head_results, config, history, recheck, axis = str(b), str(h), None, None, None, "commit"

    (comp,) = compare_mod.comparisons_from_args(Args)
    assert comp.cells[0].verdict.value == "regressed"
    Args.recheck = [str(report)]
    (comp,) = compare_mod.comparisons_from_args(Args)
    assert comp.cells[0].verdict.value == "unchanged" and comp.cells[0].note == "rechecked"
    other = tmp_path / "other-target.json"
    other.write_text(report.read_text().replace('"h200"', '"mi300x"'))
    Args.recheck = [str(other)]
    (comp,) = compare_mod.comparisons_from_args(Args)
    assert comp.cells[0].verdict.value == "regressed", "another target's recheck does not apply"
    Args.recheck = [str(tmp_path / "missing.json")]
    with pytest.raises(compare_mod.InputError, match="does not exist"):
        compare_mod.comparisons_from_args(Args)


def test_paired_change_sees_a_shift_that_drift_hides():
    """Both sides drift together by 10% over the rounds; the paired change is still the 3% shift."""
    drift = np.linspace(1.0, 1.1, 30)
    rng = np.random.default_rng(1)
    base = list(1e-4 * drift * np.exp(rng.normal(0, 0.002, 30)))
    head = list(1.03e-4 * drift * np.exp(rng.normal(0, 0.002, 30)))
    change, (low, high), p = paired_change(base, head, 0.95)
    assert change == pytest.approx(0.03, abs=0.003) and low < 0.03 < high and p < 1e-4


def test_each_tree_uses_its_own_tuned_library(repo, tmp_path):
    # A PR that changes targets/tuned/ changes what its kernels launch; recheck must see that.
    import shutil

    import torch
    import triton

    import kernels
    from ci.recheck import load_tree
    from targets import GemmConfig

    tree = tmp_path / "tree"
    shutil.copytree(repo, tree, ignore=shutil.ignore_patterns(".git"))
    chosen = GemmConfig(16, 32, 16, 4, 1, variant="splitk", split_k=2)
    key = "matmul|fp16|-|rowrow|64x64x64"
    library = {"target": "cpu-interpreter", "triton": triton.__version__, "meta": {},
               "entries": {key: {"config": chosen.as_dict()}}}  # fmt: skip
    (tree / "targets" / "tuned").mkdir(exist_ok=True)
    (tree / "targets" / "tuned" / f"cpu-interpreter-triton{triton.__version__}.json").write_text(json.dumps(library))
    theirs = load_tree(tree)
    a, b = torch.randn(50, 60).half(), torch.randn(60, 40).half()
    theirs.matmul(a, b)
    assert (theirs.autotune.last().method, str(theirs.autotune.last().config)) == ("tuned", str(chosen))
    kernels.matmul(a, b)  # this tree has no library for the interpreter
    assert kernels.autotune.last().method != "tuned"


def test_an_a_a_recheck_runs_the_config_the_run_stored_on_both_sides(repo, tmp_path, monkeypatch):
    # A cell without a tuned entry: each side takes its run's stored autotune choice (one file per
    # kernel source) instead of choosing again; two fresh autotunes could pick different configs.
    import kernels
    from benchmarks.cells import Prepared
    from benchmarks.matrix import parse_cell
    from ci.run import autotune_cache_path, ensure_worktree
    from kernels import autotune
    from targets import candidate_configs, detect

    sha = git(repo, "rev-parse", "HEAD").strip()
    work = tmp_path / "w"
    tree = ensure_worktree(repo, sha, work / "worktrees")
    cache = autotune_cache_path(work, detect().name, tree)
    cache.parent.mkdir(parents=True)
    _suite, cell = parse_cell("fp16 64x64x64")
    Prepared(cell, "cpu").triton(kernels)  # this process's choice, for the problem's key
    key = autotune.last().key
    stored = candidate_configs(detect(), key.dtype, key.M, key.N, key.K)[1]  # not what a fresh choice takes
    assert str(stored) != str(autotune.last().config)
    monkeypatch.setenv(autotune.ENV_CACHE_FILE, str(cache))
    autotune._store(autotune.Selection(key, detect().name, stored, "timed"))
    monkeypatch.delenv(autotune.ENV_CACHE_FILE)
    out = tmp_path / "recheck.json"
    proc = gemmwatch(repo, "recheck", "--base", sha, "--head", sha, "--rounds", "3", "--work-dir", str(work),
                     "--output", str(out), "--cells", "fp16 64x64x64")  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    configs = json.loads(out.read_text())["cells"]["Matmul fp16 64x64x64"]["configs"]
    assert configs == {side: {"config": str(stored), "method": "stored"} for side in ("base", "head")}


def test_a_noisy_cell_gets_more_rounds_until_it_can_be_decided():
    from ci.decision import Settings
    from ci.recheck import decide, decided_rounds

    rng = np.random.default_rng(0)
    taken = []

    def measure_rounds(n, spread):  # paired rounds of an unchanged cell whose rounds spread by `spread`
        taken.append(n)
        base = 1e-4 * np.exp(rng.normal(0, spread, n))
        return [list(base), list(base * np.exp(rng.normal(0, spread, n)))]

    def decide_on(samples):
        return decide(samples[0], samples[1], "Matmul fp16 1x57344x8192", Settings())

    # Paired rounds spread by 4%: 30 of them leave an interval wider than the 2% threshold (noisy);
    # 30 more at a time narrow it until it lies within +-2% (unchanged), or the budget ends.
    samples, verdict = decided_rounds(lambda n: measure_rounds(n, 0.04), decide_on, 30, 150)
    first = decide_on([samples[0][:30], samples[1][:30]])
    assert first["verdict"] == "noisy" and verdict["verdict"] == "unchanged", (first, verdict)
    assert len(taken) > 1 and taken == [30] * len(taken) and len(samples[0]) == len(samples[1]) == 30 * len(taken)
    # A quiet cell is decided by its first batch, and the budget is never passed.
    taken.clear()
    samples, verdict = decided_rounds(lambda n: measure_rounds(n, 0.002), decide_on, 30, 150)
    assert verdict["verdict"] == "unchanged" and taken == [30]
    taken.clear()
    samples, verdict = decided_rounds(lambda n: measure_rounds(n, 0.2), decide_on, 30, 90)
    assert verdict["verdict"] == "noisy" and taken == [30, 30, 30] and len(samples[0]) == 90


def test_bad_round_counts_are_refused(repo, tmp_path):
    sha = git(repo, "rev-parse", "HEAD").strip()
    for args, shown in (
        (["--rounds", "2"], "got 2 and 6"),
        (["--rounds", "30", "--max-rounds", "10"], "got 30 and 10"),
    ):
        proc = gemmwatch(repo, "recheck", "--base", sha, "--head", sha, "--cells", "fp16 64x64x64", *args,
                         "--work-dir", str(tmp_path / "w"))  # fmt: skip
        assert proc.returncode == 2 and "--max-rounds >= --rounds" in proc.stderr and shown in proc.stderr


def test_the_cells_rechecked_are_the_flagged_and_the_moved_ones(repo, tmp_path):
    # Without --cells, recheck takes what the comparison of the two result files sends it: the cell
    # called regressed, and the one called unchanged that moved by half the threshold (1.2%); not the
    # quiet one.
    rng = np.random.default_rng(4)
    shapes = {"64x64x64": 1.05, "33x65x127": 1.012, "16x32x32": 1.0}  # fp16 cells and the head's factor
    base = {("Matmul", s, "fp16"): {"ratio": cell_samples(rng, 1.0, 30, 0.001),
                                    "triton": cell_samples(rng, 1e-4, 30, 0.001)} for s in shapes}  # fmt: skip
    head = {("Matmul", s, "fp16"): {"ratio": cell_samples(rng, f, 30, 0.001),
                                    "triton": cell_samples(rng, 1e-4 * f, 30, 0.001)} for s, f in shapes.items()}  # fmt: skip
    b, h = write_results(tmp_path / "b.json", "a" * 40, base), write_results(tmp_path / "h.json", "b" * 40, head)
    sha = git(repo, "rev-parse", "HEAD").strip()
    out = tmp_path / "recheck.json"
    proc = gemmwatch(repo, "recheck", "--base", sha, "--head", sha, "--base-results", str(b), "--head-results", str(h),
                     "--rounds", "3", "--work-dir", str(tmp_path / "w"), "--output", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(json.loads(out.read_text())["cells"]) == ["Matmul fp16 33x65x127", "Matmul fp16 64x64x64"]
    # With main's history (the PR workflow passes the results store), the quiet cell whose runs stand
    # ~0.45% apart goes too: two runs' offsets can differ by half a threshold there.
    history = tmp_path / "history"
    for i, f in enumerate((1.0, 1.0045, 1.0, 1.0045, 1.0)):
        runs = {key: {"ratio": cell_samples(rng, (f if key[1] == "16x32x32" else 1.0), 30, 0.001),
                      "triton": cell_samples(rng, 1e-4, 30, 0.001)} for key in base}  # fmt: skip
        write_results(history / f"h{i}.json", f"{i:040d}", runs)
    proc = gemmwatch(repo, "recheck", "--base", sha, "--head", sha, "--base-results", str(b), "--head-results", str(h),
                     "--history-from", str(history), "--rounds", "3", "--work-dir", str(tmp_path / "w"),
                     "--output", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(json.loads(out.read_text())["cells"]) == [
        f"Matmul fp16 {s}" for s in ("16x32x32", "33x65x127", "64x64x64")
    ]
