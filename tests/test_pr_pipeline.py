"""The PR workflow's steps end to end on the CPU: worktrees, run, merge, verdict, comment to a loopback GitHub.

The same commands .github/workflows/pr.yml and pr-comment.yml run, in the same order, with
the interpreter standing in for the GPU (so no timing verdict, but failures are real).
"""

import os
import subprocess
import sys

import pytest
from github_fake import FakeGitHub
from project_repo import commit_change, gemmwatch, git, snapshot

TOKEN = "ghs_pipeline_test_token"


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pipeline")
    repo = snapshot(tmp / "repo")
    base = git(repo, "rev-parse", "HEAD").strip()
    marker = "    M, K = a.shape\n"
    head = commit_change(repo, "kernels/matmul.py", marker,
                         marker + '    if dtype == "bf16":\n        raise RuntimeError("broken in this PR")\n',
                         "PR: break bf16")  # fmt: skip
    # measuring job (one per target runner): base and head into one results dir, uploaded as an artifact
    artifact = tmp / "artifacts" / "results-cpu"
    for sha in (base, head):
        proc = gemmwatch(repo, "run", sha, "--rounds", "2", "--results-dir", str(artifact / "results"),
                         "--work-dir", str(tmp / "work"))  # fmt: skip
        assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    # an empty artifact from a runner that uploaded nothing
    (tmp / "artifacts" / "results-b200").mkdir()
    # commenting job: merge every artifact, decide, comment
    merged = tmp / "merged"
    merge = gemmwatch(repo, "merge", "--into", str(merged), *(str(p) for p in sorted((tmp / "artifacts").iterdir())))
    return repo, base, head, merged, merge


def test_merge_reports_the_empty_artifact(pipeline):
    *_, merge = pipeline
    assert merge.returncode == 0, merge.stderr
    assert "empty or missing source" in merge.stderr and "results-b200" in merge.stderr


def test_comment_is_posted_with_the_failed_cells_and_a_failure_status(pipeline):
    repo, base, head, merged, _ = pipeline
    with FakeGitHub(token=TOKEN) as github:
        github.add_repo("octo", "kernels")
        github.add_pull("octo/kernels", 12, head_sha=head)
        env_args = ["comment", "--repo", "octo/kernels", "--pr", "12", "--base", base, "--head", head,
                    "--results-dir", str(merged), "--api-url", github.base_url]  # fmt: skip
        proc = subprocess.run([sys.executable, "-m", "ci.cli", *env_args], cwd=repo, capture_output=True, text=True,
                              env={**os.environ, "GITHUB_TOKEN": TOKEN, "TRITON_INTERPRET": "1"})  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        (comment,) = github.comments_on("octo/kernels", 12)
        body = comment["body"]
        assert "**Failed cells**" in body and "`Matmul bf16 64x64x64`" in body
        assert "Triton interpreter: timings are not performance" in body
        assert base[:10] in body and head[:10] in body
        (status,) = github.statuses
        assert status["context"] == "gemmwatch/cpu-interpreter" and status["state"] == "failure"
        assert status["sha"] == head


def test_a_healthy_pr_gets_a_success_status(pipeline, tmp_path):
    repo, base, _, merged, _ = pipeline
    with FakeGitHub(token=TOKEN) as github:
        github.add_repo("octo", "kernels")
        github.add_pull("octo/kernels", 13, head_sha=base)
        proc = subprocess.run(
            [sys.executable, "-m", "ci.cli", "comment", "--repo", "octo/kernels", "--pr", "13", "--base", base,
             "--head", base, "--results-dir", str(merged), "--api-url", github.base_url],
            cwd=repo, capture_output=True, text=True, env={**os.environ, "GITHUB_TOKEN": TOKEN},
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        (status,) = github.statuses
        assert status["state"] == "success" and "interpreter" in status["description"]
