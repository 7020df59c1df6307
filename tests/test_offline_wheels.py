"""ci/offline_wheels.sh: its refusals, which come before any download (tests reach no registry)."""

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "ci" / "offline_wheels.sh"


def _run(*args, cwd=ROOT):
    return subprocess.run(["bash", str(SCRIPT), *args], cwd=cwd, capture_output=True, text=True, timeout=60)


def test_a_python_version_that_is_not_one_is_refused(tmp_path):
    proc = _run(str(tmp_path / "w"), "12")
    assert proc.returncode == 2
    assert "PYTHON_VERSION must look like 3.12, got '12'" in proc.stderr
    assert not (tmp_path / "w").exists()


def test_a_folder_that_holds_wheels_is_left_as_it_is(tmp_path):
    kept = tmp_path / "w" / "asv-0.6.5-py3-none-any.whl"
    kept.parent.mkdir()
    kept.write_bytes(b"not touched")
    proc = _run(str(kept.parent))
    assert proc.returncode == 2
    assert f"{kept.parent} already holds wheels; remove them first" in proc.stderr
    assert [p.name for p in kept.parent.iterdir()] == [kept.name] and kept.read_bytes() == b"not touched"


def test_the_call_scripts_say_what_to_run_when_the_wheels_are_missing(tmp_path):
    box = ROOT / "docs" / "results" / "2026-12-03g-h200-flush" / "box.sh"
    proc = subprocess.run(["bash", str(box)], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "no wheels in .whl: run 'bash ci/offline_wheels.sh'" in proc.stderr
