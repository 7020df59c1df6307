"""`gemmwatch bisect` in the interpreter: a wrong result bisected to its commit (deterministic)."""

import json

import pytest
from project_repo import gemmwatch, git, snapshot


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """good, 2 harmless commits, the breaking commit, 2 more: returns (repo, shas, breaking sha)."""
    repo = snapshot(tmp_path_factory.mktemp("bisect") / "repo")
    shas = [git(repo, "rev-parse", "HEAD").strip()]
    for i in range(6):
        if i == 2:
            path = repo / "kernels" / "matmul.py"
            text = path.read_text()
            old = "    c = acc.to(c_ptr.dtype.element_ty)\n"
            path.write_text(text.replace(old, "    if ACTIVATION == 0:\n        acc = acc * 1.5\n" + old, 1))
        else:
            (repo / "docs" / f"note{i}.md").write_text(f"note {i}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"step {i}")
        shas.append(git(repo, "rev-parse", "HEAD").strip())
    return repo, shas, shas[3]


def test_bisect_finds_the_breaking_commit(history, tmp_path):
    repo, shas, breaking = history
    out = tmp_path / "bisect.json"
    proc = gemmwatch(repo, "bisect", "--good", shas[0], "--bad", shas[-1], "--cells", "fp16 64x64x64",
                     "--rounds", "2", "--work-dir", str(tmp_path / "w"), "--output", str(out))  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads(out.read_text())
    assert report["result"] == "found" and report["first_bad"] == breaking
    assert f"first bad commit: {breaking[:10]} step 2" in proc.stdout
    assert len(report["steps"]) <= 4, "a binary search: the bad end, then log2(6) steps"


def test_bisect_range_without_regression_is_reported(history, tmp_path):
    repo, shas, _ = history
    proc = gemmwatch(repo, "bisect", "--good", shas[0], "--bad", shas[2], "--cells", "fp16 64x64x64",
                     "--rounds", "2", "--work-dir", str(tmp_path / "w"))  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "does not regress against" in proc.stdout and "nothing to bisect" in proc.stdout


def test_bisect_bad_input(history, tmp_path):
    repo, shas, _ = history
    proc = gemmwatch(repo, "bisect", "--good", shas[-1], "--bad", shas[0], "--cells", "fp16 64x64x64",
                     "--work-dir", str(tmp_path / "w"))  # fmt: skip
    assert proc.returncode == 2 and "is not an ancestor of bad commit" in proc.stderr
    proc = gemmwatch(repo, "bisect", "--triton", "3.6.0", "--cells", "fp16 64x64x64")
    assert proc.returncode == 2 and "expected VERSION=PYTHON" in proc.stderr
    proc = gemmwatch(repo, "bisect", "--good", shas[0], "--bad", shas[1], "--cells", "fp16 64by64")
    assert (proc.returncode == 2 and "expected 'dtype MxNxK" in proc.stderr) or "MxNxK" in proc.stderr


def test_triton_bisect_without_regression(history, tmp_path):
    """Two 'versions' that are the same environment: no regression, reported clearly (no GPU needed).

    The checkout's HEAD has the broken unfused path, so the cell is a fused one the break does not touch.
    """
    import sys

    repo, _, _ = history
    proc = gemmwatch(repo, "bisect", "--triton", f"a={sys.executable}", f"b={sys.executable}",
                     "--cells", "fp16 33x65x127 bias+gelu", "--work-dir", str(tmp_path / "w"))  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Triton b does not regress against a" in proc.stdout
