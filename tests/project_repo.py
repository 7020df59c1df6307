"""A scratch git repository holding the project's working tree, for tests that make commits."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GIT_ID = ["-c", "user.email=test@gemmwatch.invalid", "-c", "user.name=gemmwatch test"]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *GIT_ID, *args], check=True, capture_output=True, text=True).stdout


def snapshot(dest: Path) -> Path:
    """Copy the working tree as git sees it (tracked and untracked, not ignored) and commit it."""
    files = (
        subprocess.run(
            ["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard", "-z"], check=True, capture_output=True
        )
        .stdout.decode()
        .split("\0")
    )
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file() and not rel.startswith("docs/results/"):
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-qm", "snapshot")
    return dest


def commit_change(repo: Path, path: str, old: str, new: str, message: str) -> str:
    """Commit a one-place edit of `path`, then restore the file in a second commit; return the edit's SHA."""
    target = repo / path
    text = target.read_text()
    assert old in text, f"{old!r} not in {path}"
    target.write_text(text.replace(old, new, 1))
    git(repo, "commit", "-qam", message)
    sha = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "revert", "--no-edit", "HEAD")  # the checkout itself stays healthy
    return sha


def gemmwatch(repo: Path, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    return subprocess.run(
        [sys.executable, "-m", "ci.cli", *args], cwd=repo, env=env, capture_output=True, text=True, timeout=timeout
    )
