"""`gemmwatch compare` / `comment --dry-run` as a user runs them."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from asv_fixtures import cell_samples, write_results

ROOT = Path(__file__).resolve().parent.parent
BASE, HEAD = "a" * 40, "b" * 40


def cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "ci.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def _cells(rng, factor=1.0):
    return {
        ("Matmul", s, d): {"ratio": cell_samples(rng, 1.0 * factor), "triton": cell_samples(rng, 1e-4 * factor)}
        for s in ("16x4096x4096", "4096x4096x4096")
        for d in ("fp16", "bf16")
    }


@pytest.fixture
def results(tmp_path):
    """A results directory laid out as asv does: <dir>/<machine>/<sha8>-<env>.json."""
    rng = np.random.default_rng(0)
    root = tmp_path / "results"
    write_results(root / "h200" / f"{BASE[:8]}-existing-py.json", BASE, _cells(rng))
    write_results(root / "h200" / f"{HEAD[:8]}-existing-py.json", HEAD, _cells(rng, 1.05))
    (root / "h200" / "machine.json").write_text(json.dumps({"machine": "h200", "version": 1}))
    return root


def test_regression_exits_1_and_json_follows_the_schema(results):
    proc = cli("compare", "--base", BASE, "--head", HEAD, "--results-dir", str(results), "--json")
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert data["comparisons"][0]["counts"]["regressed"] == 4
    cell = data["cells"][0]
    for key in ("benchmark", "params", "machine", "triton", "base", "head", "ratio", "interval", "p_value", "verdict"):
        assert key in cell
    assert cell["verdict"] == "regressed" and cell["machine"] == "h200" and cell["triton"] == "3.6.0"
    assert cell["ratio"] == pytest.approx(1.05, abs=0.005) and cell["base"]["n"] == 30


def test_no_regression_exits_0(results):
    proc = cli("compare", "--base", BASE, "--head", BASE, "--results-dir", str(results))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("## gemmwatch: 0 regressions, 0 improvements in 4 cells")


def test_explicit_result_files(results):
    files = sorted((results / "h200").glob("*-existing-py.json"))
    proc = cli("compare", "--base-results", str(files[0]), "--head-results", str(files[1]))
    assert proc.returncode == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--base", "c" * 40, "--head", HEAD], f"no results for commit {'c' * 40}"),
        (["--base", BASE, "--head", HEAD, "--machine", "b200"], "unknown machine 'b200'"),
        (["--base", BASE], "give --base and --head commits"),
        (["--base-results", "/nonexistent.json", "--head-results", "/nonexistent.json"], "does not exist"),
    ],
)
def test_bad_input_exits_2(results, args, message):
    proc = cli("compare", *args, "--results-dir", str(results))
    assert proc.returncode == 2
    assert message in proc.stderr


def test_malformed_result_file_exits_2(tmp_path, results):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    proc = cli("compare", "--base-results", str(bad), "--head-results", str(bad))
    assert proc.returncode == 2 and "is not valid JSON" in proc.stderr
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"hello": 1}))
    proc = cli("compare", "--base-results", str(other), "--head-results", str(other))
    assert proc.returncode == 2 and "is not an asv result file" in proc.stderr


def test_results_are_left_as_they_were(results):
    before = {p: p.read_bytes() for p in results.rglob("*.json")}
    cli("compare", "--base", BASE, "--head", HEAD, "--results-dir", str(results))
    assert {p: p.read_bytes() for p in results.rglob("*.json")} == before


def test_comment_dry_run_prints_body_and_statuses(results):
    proc = cli("comment", "--repo", "o/r", "--pr", "7", "--base", BASE, "--head", HEAD, "--results-dir", str(results),
               "--dry-run")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "<!-- gemmwatch:comment -->" in proc.stdout
    assert "gemmwatch/h200" in proc.stdout and "failure" in proc.stdout


def test_comment_posts_then_edits_through_the_cli(results):
    """The whole command against a loopback GitHub: create, then edit in place; the token is never printed."""
    import os

    from github_fake import FakeGitHub

    token = "ghp_test_secret_token_123"
    with FakeGitHub(token=token) as github:
        github.add_repo("octo", "kernels")
        github.add_pull("octo/kernels", 7, head_sha=HEAD)
        args = ["comment", "--repo", "octo/kernels", "--pr", "7", "--base", BASE, "--head", HEAD,
                "--results-dir", str(results), "--api-url", github.base_url]  # fmt: skip
        env = {**os.environ, "GITHUB_TOKEN": token}
        runs = [
            subprocess.run([sys.executable, "-m", "ci.cli", *args], cwd=ROOT, env=env, capture_output=True, text=True)
            for _ in range(2)
        ]
        assert [r.returncode for r in runs] == [0, 0], runs[0].stderr + runs[1].stderr
        assert "created" in runs[0].stdout and "updated" in runs[1].stdout
        (comment,) = github.comments_on("octo/kernels", 7)
        assert comment["body"].startswith("<!-- gemmwatch:comment -->")
        assert "4 regressions" in comment["body"]
        assert {(s["context"], s["state"]) for s in github.statuses} == {("gemmwatch/h200", "failure")}
        assert all(token not in r.stdout + r.stderr for r in runs)
        bad = subprocess.run([sys.executable, "-m", "ci.cli", *args], cwd=ROOT, capture_output=True, text=True,
                             env={**env, "GITHUB_TOKEN": "wrong"})  # fmt: skip
        assert bad.returncode == 3 and "authentication failed" in bad.stderr


def _history(root, machine, factors, rng):
    """Runs of main on one machine, laid out as the results store holds them; `factors` move all cells per run."""
    for i, factor in enumerate(factors):
        commit = f"{i + 1:02d}" * 20
        write_results(root / machine / f"{commit[:8]}-existing-py.json", commit, _cells(rng, factor),
                      machine={"machine": machine})  # fmt: skip


def test_history_from_a_store_is_used_per_machine(tmp_path):
    rng = np.random.default_rng(5)
    results = tmp_path / "results"
    for machine in ("h200", "mi300x"):
        write_results(
            results / machine / f"{BASE[:8]}-existing-py.json", BASE, _cells(rng), machine={"machine": machine}
        )
        write_results(results / machine / f"{HEAD[:8]}-existing-py.json", HEAD, _cells(rng, 1.03),
                      machine={"machine": machine})  # fmt: skip
    store = tmp_path / "store"
    _history(store, "h200", [1.0, 1.04, 0.98, 1.03, 0.97], rng)  # this machine's runs wander by ~3%
    _history(store, "mi300x", [1.0, 1.0, 1.0, 1.0, 1.0], rng)  # this one's do not
    args = ["compare", "--base", BASE, "--head", HEAD, "--results-dir", str(results), "--json"]
    plain = json.loads(cli(*args).stdout)
    assert {c["verdict"] for c in plain["cells"]} == {"regressed"}
    proc = cli(*args, "--history-from", str(store))
    verdicts = {(c["machine"], c["verdict"]) for c in json.loads(proc.stdout)["cells"]}
    # The same 3% shift is within h200's run-to-run noise, and far outside mi300x's.
    assert verdicts == {("h200", "noisy"), ("mi300x", "regressed")}, proc.stderr


def test_history_of_another_timing_protocol_is_not_used(tmp_path):
    from benchmarks.timing import PROTOCOL

    rng = np.random.default_rng(6)
    results, store = tmp_path / "results", tmp_path / "store"
    now = {"machine": "h200", "timing_protocol": PROTOCOL}
    write_results(results / "h200" / f"{BASE[:8]}-existing-py.json", BASE, _cells(rng), machine=now)
    write_results(results / "h200" / f"{HEAD[:8]}-existing-py.json", HEAD, _cells(rng, 1.03), machine=now)
    _history(store, "h200", [1.0, 1.04, 0.98, 1.03, 0.97], rng)  # wandering runs, but of an earlier protocol
    args = ["compare", "--base", BASE, "--head", HEAD, "--results-dir", str(results), "--json"]
    proc = cli(*args, "--history-from", str(store))
    assert {c["verdict"] for c in json.loads(proc.stdout)["cells"]} == {"regressed"}, proc.stderr


def test_history_from_must_be_a_directory(results, tmp_path):
    proc = cli("compare", "--base", BASE, "--head", HEAD, "--results-dir", str(results),
               "--history-from", str(tmp_path / "nope"))  # fmt: skip
    assert proc.returncode == 2 and "--history-from" in proc.stderr and "not a directory" in proc.stderr
