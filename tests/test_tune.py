"""The tuned-config library: `gemmwatch tune` writes it, the launcher reads it, other Triton versions are reported."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import triton

from targets import library

ROOT = Path(__file__).resolve().parent.parent


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "ci.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "TRITON_INTERPRET": "1", **(env or {})}, timeout=300)  # fmt: skip


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tuned")
    proc = cli("tune", "--allow-interpreter", "--shapes", "64x64x64", "--dtypes", "fp16", "fp8_e4m3", "--top-k", "3",
               "--rounds", "2", "--dir", str(directory))  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return directory


def test_tune_writes_best_losers_and_metadata(tuned):
    path = tuned / f"cpu-interpreter-triton{triton.__version__}.json"
    data = json.loads(path.read_text())
    assert data["target"] == "cpu-interpreter" and data["triton"] == triton.__version__
    assert data["meta"]["interpreter"] is True and data["meta"]["date"]
    entry = data["entries"]["matmul|fp16|-|rowrow|64x64x64"]
    assert len(entry["tried"]) == 3
    assert min(entry["tried"].values()) == pytest.approx(entry["time_ms"], rel=1e-6)
    assert "scaled_matmul|fp8_e4m3|-|rowcol|64x64x64" in data["entries"]


def test_the_launcher_uses_the_library(tuned):
    entry = json.loads((tuned / f"cpu-interpreter-triton{triton.__version__}.json").read_text())["entries"]
    best = entry["matmul|fp16|-|rowrow|64x64x64"]["config"]
    code = (
        "import torch, kernels; a = torch.randn(50, 60).half(); b = torch.randn(60, 40).half(); "
        "kernels.matmul(a, b); s = kernels.autotune.last(); print(s.method, s.config.as_dict())"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "TRITON_INTERPRET": "1", "GEMMWATCH_TUNED_DIR": str(tuned)})  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    method, config = proc.stdout.strip().split(" ", 1)
    assert method == "tuned" and eval(config) == best
    off = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "TRITON_INTERPRET": "1", "GEMMWATCH_TUNED_DIR": str(tuned),
                              "GEMMWATCH_TUNED": "0"})  # fmt: skip
    assert off.stdout.startswith("ranked")


def test_another_triton_version_is_reported_not_used(tmp_path, monkeypatch):
    other = library.Library("cpu-interpreter", "0.0.1", entries={"matmul|fp16|-|rowrow|64x64x64": {
        "config": {"block_m": 16, "block_n": 16, "block_k": 16, "num_warps": 4, "num_stages": 1, "group_m": 8}}})  # fmt: skip
    other.save(library.library_path("cpu-interpreter", "0.0.1", tmp_path))
    monkeypatch.setenv(library.ENV_DIR, str(tmp_path))
    library._REPORTED.clear()
    with pytest.warns(library.TunedVersionWarning, match="exist only for other Triton versions"):
        assert library.lookup("cpu-interpreter", triton.__version__, "matmul|fp16|-|rowrow|64x64x64") is None
    assert library.lookup("cpu-interpreter", "0.0.1", "matmul|fp16|-|rowrow|64x64x64").block_m == 16


def test_a_mislabelled_library_is_an_error(tmp_path):
    path = library.library_path("h200", "3.6.0", tmp_path)
    path.write_text(json.dumps({"target": "h100-sxm", "triton": "3.6.0", "entries": {}}))
    with pytest.raises(ValueError, match="says target 'h100-sxm'"):
        library.load("h200", "3.6.0", tmp_path)


def test_resume_skips_what_the_library_has(tuned):
    path = tuned / f"cpu-interpreter-triton{triton.__version__}.json"
    before = path.read_text()
    proc = cli("tune", "--allow-interpreter", "--shapes", "64x64x64", "--dtypes", "fp16", "--top-k", "2",
               "--rounds", "1", "--dir", str(tuned), "--resume")  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "fp16 64x64x64: in the library already (--resume), skipped" in proc.stdout
    assert json.loads(path.read_text())["entries"] == json.loads(before)["entries"]


def test_a_deadline_keeps_what_was_tuned_and_names_the_cells_not_reached(tuned):
    from ci.tune import past_deadline

    assert not past_deadline(100.0, [], None)
    assert not past_deadline(0.0, [], 10.0) and past_deadline(10.5, [], 10.0)  # before the first: passed yet?
    assert not past_deadline(5.0, [2.0, 4.0], 8.0) and past_deadline(5.5, [2.0, 4.0], 8.0)  # by the mean bucket
    path = tuned / f"cpu-interpreter-triton{triton.__version__}.json"
    before = path.read_text()
    proc = cli("tune", "--allow-interpreter", "--shapes", "1x64x64", "64x64x64", "--dtypes", "fp16", "--top-k", "2",
               "--rounds", "1", "--dir", str(tuned), "--deadline", "1e-9")  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "--deadline 1e-09 s: 2 cells not reached: fp16 1x64x64, fp16 64x64x64 (the same options with " in proc.stderr
    assert "go on with them, or with --shapes 1x64x64 64x64x64 --dtypes fp16)" in proc.stderr
    began = json.loads(path.read_text())["meta"]["date"]
    assert f"--resume-since {began} go on" in proc.stderr
    assert json.loads(path.read_text())["entries"] == json.loads(before)["entries"]
    proc = cli("tune", "--allow-interpreter", "--shapes", "64x64x64", "--deadline", "0")
    assert proc.returncode == 2 and "--deadline must be a positive number of seconds, got 0" in proc.stderr


def test_a_failed_gpu_context_stops_the_tune_at_its_bucket_keeping_the_ones_before(tmp_path, monkeypatch, capsys):
    import ci.tune
    from ci.cli import main

    assert ci.tune.gpu_context_failed(RuntimeError("CUDA error: an illegal memory access was encountered"))
    assert ci.tune.gpu_context_failed(RuntimeError("Triton Error [CUDA]: unspecified launch failure"))
    assert not ci.tune.gpu_context_failed(RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"))
    assert not ci.tune.gpu_context_failed(ValueError("an illegal memory access, but no GPU word"))
    real, calls = ci.tune.tune_bucket, []

    def second_faults(members, **kw):  # (the first bucket tuned for real, the second's kernel faults)
        calls.append(members[0].name)
        if len(calls) == 2:
            raise RuntimeError("Triton Error [CUDA]: an illegal memory access was encountered")
        return real(members, **kw)

    monkeypatch.setattr(ci.tune, "tune_bucket", second_faults)
    code = main(["tune", "--allow-interpreter", "--shapes", "1x64x64", "64x64x64", "33x65x127", "--dtypes", "fp16",
                 "--top-k", "2", "--rounds", "1", "--dir", str(tmp_path)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 3 and calls == ["fp16 1x64x64", "fp16 64x64x64"], (calls, err)
    assert "[2/3] fp16 64x64x64: the GPU failed while this bucket's configs ran (RuntimeError: Triton Error " in err
    assert "`gemmwatch probe --cells 'fp16 64x64x64'`" in err and "--resume-since " in err
    data = json.loads((tmp_path / f"cpu-interpreter-triton{triton.__version__}.json").read_text())
    assert [e["cell"] for e in data["entries"].values()] == ["fp16 1x64x64"]  # (kept; nothing of the others)
    monkeypatch.setattr(ci.tune, "tune_bucket", lambda members, **kw: (_ for _ in ()).throw(KeyError("other")))
    with pytest.raises(KeyError):  # (any other error is not taken for a failed GPU)
        main(["tune", "--allow-interpreter", "--shapes", "64x64x64", "--dtypes", "fp16", "--dir", str(tmp_path)])


def test_resume_since_skips_the_buckets_measured_since_then(tuned):
    path = tuned / f"cpu-interpreter-triton{triton.__version__}.json"
    before = path.read_text()
    measured = json.loads(before)["entries"]
    (entry,) = [e for e in measured.values() if e["cell"] == "fp16 64x64x64"]
    args = ("tune", "--allow-interpreter", "--shapes", "64x64x64", "--dtypes", "fp16", "--top-k", "2", "--rounds", "1",
            "--dir", str(tuned))  # fmt: skip
    proc = cli(*args, "--resume-since", entry["measured"])  # measured at that time: skipped
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "fp16 64x64x64: in the library already (--resume-since), skipped" in proc.stdout
    assert json.loads(path.read_text())["entries"] == json.loads(before)["entries"]
    proc = cli(*args, "--resume-since", "yesterday")
    assert (
        proc.returncode == 2
        and "--resume-since must be an ISO 8601 time" in proc.stderr
        and "'yesterday'" in proc.stderr
    )


@pytest.mark.parametrize("option", ["--finalists", "--rounds"])
def test_tune_rejects_non_positive_counts(option):
    proc = cli("tune", "--allow-interpreter", "--shapes", "64x64x64", option, "0")
    assert proc.returncode == 2 and f"{option} must be a positive integer, got 0" in proc.stderr
    proc = cli("tune", "--allow-interpreter", "--shapes", "64x64x64", "--top-k", "-1")
    assert proc.returncode == 2 and "--top-k must be a non-negative integer, got -1" in proc.stderr
    proc = cli("tune", "--allow-interpreter", "--shapes", "64x64x64", "--each-path", "-1")
    assert proc.returncode == 2 and "--each-path must be a non-negative integer, got -1" in proc.stderr


def test_match_narrows_the_space_to_one_kernel_path(tmp_path):
    proc = cli("tune", "--allow-interpreter", "--shapes", "1x64x64", "64x64x64", "--dtypes", "fp16", "--top-k", "2",
               "--rounds", "1", "--dir", str(tmp_path), "--match", "fma$")  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "fp16 64x64x64: skipped, no candidate config matches 'fma$'" in proc.stdout
    entries = json.loads((tmp_path / f"cpu-interpreter-triton{triton.__version__}.json").read_text())["entries"]
    (entry,) = entries.values()
    assert entry["cell"] == "fp16 1x64x64" and entry["config"]["fma"] is True
    assert len(entry["tried"]) == 2 and all(name.endswith("-fma") for name in entry["tried"])


def test_tune_rejects_a_match_that_is_no_regular_expression():
    proc = cli("tune", "--allow-interpreter", "--shapes", "64x64x64", "--match", "fma(")
    assert proc.returncode == 2 and "--match 'fma(' is not a regular expression" in proc.stderr


def test_tune_rejects_a_negative_refine():
    proc = cli("tune", "--allow-interpreter", "--shapes", "64x64x64", "--refine", "-1")
    assert proc.returncode == 2 and "--refine must be a non-negative integer, got -1" in proc.stderr


def test_tune_refuses_the_interpreter_unless_asked():
    proc = cli("tune", "--shapes", "64x64x64")
    assert proc.returncode == 2 and "interpreter's are not performance" in proc.stderr


def _library(entries, target="h200", triton_version="3.6.0"):
    return {"target": target, "triton": triton_version, "meta": {"date": "2026-11-29"}, "entries": entries}


def _entry(block_m, speedup, cell="fp16 4096x4096x4096", variant="tile"):
    config = {"block_m": block_m, "block_n": 128, "block_k": 64, "num_warps": 8, "num_stages": 3, "group_m": 8,
              "variant": variant, "split_k": 1}  # fmt: skip
    return {"cell": cell, "config": config, "speedup_over_native": speedup}


def test_tuned_diff_lists_only_the_buckets_whose_config_changed(tmp_path):
    old = _library({"matmul|fp16|-|rowrow|4096x4096x4096": _entry(128, 0.95),
                    "matmul|bf16|-|rowrow|4096x4096x4096": _entry(128, 0.97, "bf16 4096x4096x4096")})  # fmt: skip
    new = _library({"matmul|fp16|-|rowrow|4096x4096x4096": _entry(128, 1.01, variant="tma"),
                    "matmul|bf16|-|rowrow|4096x4096x4096": _entry(128, 0.98, "bf16 4096x4096x4096"),
                    "matmul|fp16|-|rowrow|16x4096x4096": _entry(64, 1.10, "fp16 16x4096x4096")})  # fmt: skip
    (tmp_path / "old.json").write_text(json.dumps(old))
    (tmp_path / "new.json").write_text(json.dumps(new))
    proc = cli("tuned-diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"))
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| `")]
    assert rows == [
        "| `matmul\\|fp16\\|-\\|rowrow\\|16x4096x4096` | fp16 16x4096x4096 | - | n/a "
        "| `BM64-BN128-BK64-w8-s3-g8` | 1.100x |",
        "| `matmul\\|fp16\\|-\\|rowrow\\|4096x4096x4096` | fp16 4096x4096x4096 | `BM128-BN128-BK64-w8-s3-g8` | 0.950x "
        "| `BM128-BN128-BK64-w8-s3-g8-tma` | 1.010x |",
    ]
    assert "3 entries (before: 2)" in proc.stdout
    assert "(fp32 left out): 2 of 3 at or past native, geomean 1.029x; before: 0 of 2 at or past native, " \
           "geomean 0.960x." in proc.stdout  # fmt: skip


def test_tuned_diff_counts_a_cell_at_or_past_native_as_the_tables_round_it_and_leaves_fp32_out(tmp_path):
    # 0.9996 prints as 1.000x in every table, so it is counted at or past native; 0.999
    # is not; fp32 is reported precision-matched, outside the speed goal, so it is not counted.
    new = _library({"matmul|fp16|-|rowrow|4096x4096x4096": _entry(128, 0.9996),
                    "matmul|bf16|-|rowrow|4096x4096x4096": _entry(128, 0.999, "bf16 4096x4096x4096"),
                    "matmul|fp32-ieee|-|rowrow|4096x4096x4096": _entry(128, 0.5, "fp32-ieee 4096x4096x4096")})  # fmt: skip
    (tmp_path / "new.json").write_text(json.dumps(new))
    proc = cli("tuned-diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"))
    assert proc.returncode == 0, proc.stderr
    assert "1 of 2 at or past native, geomean 0.999x; before: none timed." in proc.stdout


def test_tuned_diff_lists_a_cell_whose_own_config_changed_under_an_unchanged_bucket(tmp_path):
    # 4096x3584x3584 runs its own config where the tune timed one faster than the bucket's by more
    # than the library's margin (`Library.shape_configs`): a re-tune that changes only that one
    # changes what the cell runs, and the diff says so, with the speedup of the config it runs.
    key = "matmul|fp16|-|rowrow|4096x4096x4096"
    bucket, mine, theirs = "BM128-BN128-BK64-w8-s3-g8", "BM128-BN256-BK64-w8-s3-g8-tma", "BM64-BN128-BK64-w8-s3-g8"

    def entry(own):
        other = theirs if own == mine else mine
        return {**_entry(128, 1.01), "cells": {
            "fp16 4096x4096x4096": {"time_ms": 0.2, "speedup_over_native": 1.01, "tried": {bucket: 0.2}},
            "fp16 4096x3584x3584": {"time_ms": 0.2, "speedup_over_native": 0.95, "tried": {bucket: 0.2, own: 0.18, other: 0.21}},
        }}  # fmt: skip

    (tmp_path / "old.json").write_text(json.dumps(_library({key: entry(mine)})))
    (tmp_path / "new.json").write_text(json.dumps(_library({key: entry(theirs)})))
    proc = cli("tuned-diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"))
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| `")]
    assert rows == [
        f"| `matmul\\|fp16\\|-\\|rowrow\\|4096x4096x4096` | fp16 4096x3584x3584 | `{mine}` | 1.056x | `{theirs}` | 1.056x |"
    ]
    # the same library twice: nothing changed
    proc = cli("tuned-diff", str(tmp_path / "new.json"), str(tmp_path / "new.json"))
    assert "| (no cell changed its config) |" in proc.stdout


def test_tuned_diff_refuses_libraries_of_different_targets(tmp_path):
    (tmp_path / "old.json").write_text(json.dumps(_library({}, target="mi300x")))
    (tmp_path / "new.json").write_text(json.dumps(_library({})))
    proc = cli("tuned-diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"))
    assert proc.returncode == 2 and "not the same library" in proc.stderr
    proc = cli("tuned-diff", str(tmp_path / "old.json"), str(tmp_path / "missing.json"))
    assert proc.returncode == 2 and "missing.json" in proc.stderr


def test_each_entry_records_when_it_was_measured(tuned):
    data = json.loads((tuned / f"cpu-interpreter-triton{triton.__version__}.json").read_text())
    assert all(entry["measured"].startswith("20") for entry in data["entries"].values())


def test_a_retune_times_the_incumbent_beside_the_new_candidates(tmp_path):
    # The bucket's current entry is a config the search would not rank into its top 1.
    from targets import candidate_configs, detect

    spec = detect()
    ranked = candidate_configs(spec, "fp16", 64, 64, 64)
    incumbent = ranked[-1]
    key = "matmul|fp16|-|rowrow|64x64x64"
    earlier = {  # what a wider tune found before: kept beside the new figures unless measured again
        "config": incumbent.as_dict(),
        "measured": "2026-11-01T00:00:00+00:00",
        "tried": {str(ranked[0]): 0.5, "BM512-BN512-BK64-w8-s3-g8": 0.9},
        "failed": {"BM256-BN256-BK256-w8-s5-g8": "out of shared memory"},
        "earlier": {"BM16-BN16-BK16-w1-s1-g1": {"time_ms": 2.0, "measured": "2026-10-01T00:00:00+00:00"}},
    }
    lib = library.Library("cpu-interpreter", triton.__version__, entries={key: earlier})
    path = library.library_path("cpu-interpreter", triton.__version__, tmp_path)
    lib.save(path)
    proc = cli("tune", "--allow-interpreter", "--shapes", "64x64x64", "--dtypes", "fp16", "--top-k", "1",
               "--rounds", "2", "--dir", str(tmp_path))  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    entry = json.loads(path.read_text())["entries"][key]
    assert set(entry["tried"]) == {str(ranked[0]), str(incumbent)}
    assert entry["incumbent"]["config"] == str(incumbent)
    assert entry["incumbent"]["time_ms"] == pytest.approx(entry["tried"][str(incumbent)], rel=1e-5)
    assert ("kept the incumbent" in proc.stdout) == (entry["config"] == incumbent.as_dict())
    if entry["config"] != incumbent.as_dict():
        assert entry["time_ms"] < entry["incumbent"]["time_ms"] * 0.99  # replaced only by a clear margin
    assert entry["earlier"] == {
        "BM16-BN16-BK16-w1-s1-g1": {"time_ms": 2.0, "measured": "2026-10-01T00:00:00+00:00"},
        "BM256-BN256-BK256-w8-s5-g8": {"failed": "out of shared memory", "measured": "2026-11-01T00:00:00+00:00"},
        "BM512-BN512-BK64-w8-s3-g8": {"time_ms": 0.9, "measured": "2026-11-01T00:00:00+00:00"},
    }  # (ranked[0] was timed again: its new figure is in "tried")


def test_a_tune_into_a_new_directory_starts_from_the_launchers_library(tmp_path):
    # A re-tune into a scratch directory (to compare with `tuned-diff` afterwards) times the
    # launcher's entry beside the candidates and keeps the entries it does not tune; --fresh does not.
    from targets import candidate_configs, detect

    incumbent = candidate_configs(detect(), "fp16", 64, 64, 64)[-1]  # one a top-1 search would not time
    key, other = "matmul|fp16|-|rowrow|64x64x64", "matmul|bf16|-|rowrow|4096x4096x4096"
    entries = {
        key: {"config": incumbent.as_dict(), "measured": "2026-11-01T00:00:00+00:00", "tried": {}, "failed": {}},
        other: {"config": incumbent.as_dict(), "measured": "2026-11-01T00:00:00+00:00", "tried": {}, "failed": {}},
    }
    launchers = tmp_path / "launcher"
    source = library.library_path("cpu-interpreter", triton.__version__, launchers)
    library.Library("cpu-interpreter", triton.__version__, entries=entries).save(source)
    before = source.read_text()
    args = ("tune", "--allow-interpreter", "--shapes", "64x64x64", "--dtypes", "fp16", "--top-k", "1", "--rounds", "1")
    env = {"GEMMWATCH_TUNED_DIR": str(launchers)}

    proc = cli(*args, "--dir", str(tmp_path / "scratch"), env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"has no {source.name}: starting from {source} (2 entries" in proc.stdout
    data = json.loads(library.library_path("cpu-interpreter", triton.__version__, tmp_path / "scratch").read_text())
    assert data["entries"][key]["incumbent"]["config"] == str(incumbent)
    assert str(incumbent) in data["entries"][key]["tried"]
    assert data["entries"][other] == entries[other]  # not tuned now: kept as it was
    assert source.read_text() == before  # the launcher's library is read, never written

    proc = cli(*args, "--dir", str(tmp_path / "empty"), "--fresh", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(library.library_path("cpu-interpreter", triton.__version__, tmp_path / "empty").read_text())
    assert set(data["entries"]) == {key} and data["entries"][key]["incumbent"] is None
    proc = cli(*args, "--fresh", env=env)
    assert proc.returncode == 2 and "--fresh goes with --dir" in proc.stderr
    assert source.read_text() == before


def test_a_bucket_is_tuned_on_all_its_cells_of_the_matrix(tmp_path):
    # 64^3 and 50x60x40 share the 64x64x64 bucket: the library's one config serves both.
    proc = cli("tune", "--allow-interpreter", "--shapes", "64x64x64", "50x60x40", "--dtypes", "fp16", "--top-k", "2",
               "--rounds", "2", "--dir", str(tmp_path))  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[1/1] fp16 64x64x64 (+ fp16 50x60x40): " in proc.stdout
    path = library.library_path("cpu-interpreter", triton.__version__, tmp_path)
    entry = json.loads(path.read_text())["entries"]["matmul|fp16|-|rowrow|64x64x64"]
    assert set(entry["cells"]) == {"fp16 64x64x64", "fp16 50x60x40"}
    tried = {cell: e["tried"] for cell, e in entry["cells"].items()}
    # each cell's 2 first candidates (50x60x40's: its padded configs), timed on both cells
    _, first, theirs = _bucket_candidates(["fp16 64x64x64", "fp16 50x60x40"], 2)
    assert [cell.name for cell, _ in theirs] == ["fp16 50x60x40"]
    expected = {str(c) for c in [*first, *theirs[0][1]]}
    assert all(set(t) == set(entry["tried"]) == expected for t in tried.values())
    assert "ranked_on" not in entry  # (the interpreter ranks nothing: every candidate is timed)
    # The winner: the best geometric mean of each cell's time relative to that cell's fastest.
    score = {
        cfg: (tried["fp16 64x64x64"][cfg] / min(tried["fp16 64x64x64"].values()))
        * (tried["fp16 50x60x40"][cfg] / min(tried["fp16 50x60x40"].values()))
        for cfg in entry["tried"]
    }
    from targets import GemmConfig

    assert str(GemmConfig(**entry["config"])) == min(score, key=score.get)
    assert entry["cells"]["fp16 50x60x40"]["time_ms"] == pytest.approx(
        tried["fp16 50x60x40"][min(score, key=score.get)]
    )


def test_a_narrowed_selection_still_tunes_a_bucket_on_all_its_cells_of_the_matrix(tmp_path):
    # --shapes 50x60x40 alone: the smoke set's 64^3 shares its bucket, whose one entry serves both,
    # so the tune times both (a tune on 50x60x40 alone would hand 64^3 a config never timed on it).
    proc = cli("tune", "--allow-interpreter", "--shapes", "50x60x40", "--dtypes", "fp16", "--top-k", "1",
               "--rounds", "1", "--dir", str(tmp_path))  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[1/1] fp16 50x60x40 (+ fp16 64x64x64): " in proc.stdout
    path = library.library_path("cpu-interpreter", triton.__version__, tmp_path)
    entry = json.loads(path.read_text())["entries"]["matmul|fp16|-|rowrow|64x64x64"]
    assert set(entry["cells"]) == {"fp16 64x64x64", "fp16 50x60x40"} and entry["cell"] == "fp16 50x60x40"


def test_finalists_are_the_fastest_few_of_each_kernel_path():
    from ci.tune import finalists_of, kernel_path
    from targets import GemmConfig

    tile = [GemmConfig(64, 64, 32, 4, s, split_k=1) for s in (2, 3, 4)]
    split = [GemmConfig(64, 64, 32, 4, s, split_k=4, variant="splitk_serial") for s in (2, 3)]
    ranked = {str(tile[0]): 3.0, str(tile[1]): 1.0, str(tile[2]): 2.0, str(split[0]): 0.5}  # split[1]: not ranked
    assert kernel_path(tile[0]) != kernel_path(split[0])
    assert finalists_of(ranked, [*tile, *split], 2) == [split[0], tile[1], tile[2]]
    assert finalists_of(ranked, tile, 1) == [tile[1]] and finalists_of({}, tile, 2) == []


def test_a_retune_times_the_configs_the_buckets_cells_run_of_their_own(tmp_path):
    # 50x60x40 ran its own config (faster there than the bucket's by more than SHAPE_MARGIN): a
    # re-tune that would not rank it times it again, so that the cell keeps it unless beaten.
    from targets import candidate_configs, detect

    ranked = candidate_configs(detect(), "fp16", 64, 64, 64)
    incumbent, own = ranked[-1], ranked[-2]
    cells = {
        "fp16 64x64x64": {str(incumbent): 0.2, str(own): 0.3},
        "fp16 50x60x40": {str(incumbent): 0.5, str(own): 0.1},
    }
    lib, key, path = _saved_library(tmp_path, incumbent, cells)
    assert lib.shape_configs(key) == {(50, 60, 40): own}
    _retune(tmp_path, "64x64x64", "50x60x40")
    entry = json.loads(path.read_text())["entries"][key]
    _, _, theirs = _bucket_candidates(list(cells), 1)
    for cell in cells:
        expected = {str(ranked[0]), str(incumbent), str(own), *(str(c) for _, cfgs in theirs for c in cfgs)}
        assert set(entry["cells"][cell]["tried"]) == expected, cell


def test_a_config_one_cell_refuses_is_still_timed_as_another_cells_own(tmp_path):
    # 64^3 runs a TMA config of its own, which 50x60x40 (rows of 120 bytes: no descriptor) refuses.
    # Tuned with 50x60x40 first, the config is still timed on 64^3 (and may stay its own), never
    # the bucket's: a config is the bucket's only where it ran right on every cell.
    from targets import GemmConfig, candidate_configs, detect
    from targets.configs import config_from_name

    incumbent = candidate_configs(detect(), "fp16", 64, 64, 64)[-1]
    tma = config_from_name("BM64-BN64-BK32-w4-s2-g8-tma")
    cells = {"fp16 64x64x64": {str(incumbent): 0.3, str(tma): 0.1}, "fp16 50x60x40": {str(incumbent): 0.2}}
    lib, key, path = _saved_library(tmp_path, incumbent, cells)
    assert lib.shape_configs(key) == {(64, 64, 64): tma}
    from ci.tune import own_configs_note

    assert own_configs_note(lib, key) == f"; fp16 64x64x64 runs its own {tma}"  # (no speedup recorded)
    lib.entries[key]["cells"]["fp16 64x64x64"].update(time_ms=0.3, speedup_over_native=0.5)
    assert own_configs_note(lib, key) == f"; fp16 64x64x64 runs its own {tma} (1.500x native)"
    proc = _retune(tmp_path, "50x60x40", "64x64x64")
    assert "[1/1] fp16 50x60x40 (+ fp16 64x64x64): " in proc.stdout
    entry = json.loads(path.read_text())["entries"][key]
    # the tune says which cells run a config of their own (the interpreter's times decide which)
    from ci.tune import own_configs_note

    assert own_configs_note(library.load("cpu-interpreter", triton.__version__, tmp_path), key) in proc.stdout
    assert str(tma) in entry["cells"]["fp16 64x64x64"]["tried"]
    assert str(tma) not in entry["cells"]["fp16 50x60x40"]["tried"] and str(tma) not in entry["bucket_score"]
    assert entry["failed"][str(tma)].startswith("fp16 50x60x40: ") and "16 bytes" in entry["failed"][str(tma)]
    assert str(GemmConfig(**entry["config"])) != str(tma)


def _saved_library(tmp_path, incumbent, cells: dict):
    """A library in `tmp_path` whose fp16 64^3 bucket runs `incumbent`, its cells' tune times
    `cells` ({cell: {config: ms}}): (the library, the bucket's key, its file)."""
    key = "matmul|fp16|-|rowrow|64x64x64"
    lib = library.Library("cpu-interpreter", triton.__version__, entries={key: {
        "config": incumbent.as_dict(), "cell": "fp16 64x64x64", "cells": {c: {"tried": t} for c, t in cells.items()},
    }})  # fmt: skip
    path = library.library_path("cpu-interpreter", triton.__version__, tmp_path)
    lib.save(path)
    return lib, key, path


def _retune(tmp_path, *shapes: str):
    """`gemmwatch tune` of these fp16 shapes into `tmp_path`, one candidate per cell, one round."""
    proc = cli("tune", "--allow-interpreter", "--shapes", *shapes, "--dtypes", "fp16", "--top-k", "1", "--rounds",
               "1", "--dir", str(tmp_path))  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def _bucket_candidates(cells: list[str], top_k: int):
    """`ci.tune.bucket_candidates` of these cells (names) on this machine's target."""
    from benchmarks.matrix import parse_cell
    from ci.tune import bucket_candidates
    from targets import detect

    return bucket_candidates(detect(), "fp16", [parse_cell(c)[1] for c in cells], top_k)


def _tune_below(tmp_path, ratios: dict, shapes: list[str], dtypes: list[str]):
    """`tune --below 0.9` over shapes x dtypes after a run whose ratio (Triton / native time) per
    (shape, dtype) is `ratios`: (the command's result, the run's file, the library's entries)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from asv_fixtures import write_results

    run = write_results(tmp_path / "run.json", "a" * 40, {
        ("Matmul", shape, dtype): {"ratio": [ratio] * 9, "triton": [1e-5] * 9}
        for (shape, dtype), ratio in ratios.items()
    })  # fmt: skip
    directory = tmp_path / "lib"
    proc = cli("tune", "--allow-interpreter", "--shapes", *shapes, "--dtypes", *dtypes, "--top-k", "2",
               "--rounds", "1", "--refine", "0", "--dir", str(directory), "--below", "0.9", "--run", str(run))  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc, run, json.loads(next(directory.glob("*.json")).read_text())["entries"]


def test_below_tunes_only_the_cells_a_run_found_slower_than_asked(tmp_path):
    # A run where fp16 64x64x64 was at 0.8x native and bf16 64x64x64 at 1.25x.
    ratios = {("64x64x64", "fp16"): 1.25, ("64x64x64", "bf16"): 0.8}
    proc, run, entries = _tune_below(tmp_path, ratios, ["64x64x64"], ["fp16", "bf16"])
    assert f"1 of the 2 selected cells are below 0.9x native in {run}: fp16 64x64x64" in proc.stdout
    assert [entry["cell"] for entry in entries.values()] == ["fp16 64x64x64"]
    assert "have no speedup" not in proc.stdout


def test_below_says_which_selected_cells_the_run_did_not_measure(tmp_path):
    # A run of part of the matrix (bf16 only, at 0.8x native): the fp16 cell is not known to be slow.
    ratios = {("64x64x64", "bf16"): 1.25}
    proc, run, entries = _tune_below(tmp_path, ratios, ["64x64x64"], ["fp16", "bf16"])
    assert f"1 of the 2 selected cells have no speedup in {run}, so none of them is tuned: fp16 64x64x64" in proc.stdout
    assert [entry["cell"] for entry in entries.values()] == ["bf16 64x64x64"]


def test_below_tunes_a_slow_cells_bucket_on_all_its_cells(tmp_path):
    # 50x60x40 was slow, 64^3 (same bucket) was fast: the bucket's one config serves both, so
    # both are timed, or a config that helps the slow cell could be picked blind to the fast one.
    ratios = {("64x64x64", "fp16"): 0.9, ("50x60x40", "fp16"): 1.25}
    proc, run, entries = _tune_below(tmp_path, ratios, ["64x64x64", "50x60x40"], ["fp16"])
    assert f"1 of the 2 selected cells are below 0.9x native in {run}: fp16 50x60x40" in proc.stdout
    assert "[1/1] fp16 64x64x64 (+ fp16 50x60x40): " in proc.stdout
    assert [set(entry["cells"]) for entry in entries.values()] == [{"fp16 64x64x64", "fp16 50x60x40"}]


def test_below_tunes_the_slowest_bucket_first(tmp_path):
    # A deadline stops a tune in its bucket order: the bucket that loses most comes first.
    ratios = {("64x64x64", "fp16"): 1.15, ("1x64x64", "fp16"): 1.5}
    proc, _, entries = _tune_below(tmp_path, ratios, ["64x64x64", "1x64x64"], ["fp16"])
    assert "[1/2] fp16 1x64x64" in proc.stdout and "[2/2] fp16 64x64x64" in proc.stdout
    assert {entry["cell"] for entry in entries.values()} == {"fp16 1x64x64", "fp16 64x64x64"}


@pytest.mark.parametrize(
    "args, message",
    [
        (["--below", "0.9"], "--below SPEEDUP and --run RESULT.json go together"),
        (["--run", "x.json"], "--below SPEEDUP and --run RESULT.json go together"),
        (["--below", "0", "--run", "x.json"], "--below must be a speedup > 0 (e.g. 0.9), got 0.0"),
        (["--below", "0.9", "--run", "no-such.json"], "--run: result file no-such.json does not exist"),
    ],
)
def test_below_needs_a_run_and_a_positive_speedup(args, message):
    proc = cli("tune", "--allow-interpreter", "--shapes", "64x64x64", *args)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr


def test_each_path_ranks_the_first_config_of_every_kernel_path_the_top_k_leave_out():
    # The H200's space for fp16 1x4608x3584 lists its one-row FMA configs from the 29th on: a coarse
    # pass of the first 24 never timed them there (they win 1x3584x3584 at 1.12x native).
    from benchmarks.matrix import parse_cell
    from ci.tune import bucket_candidates, kernel_path, with_each_path
    from targets import candidate_configs, catalogue

    spec = catalogue.get("h200")
    cells = [parse_cell(f"fp16 {shape}")[1] for shape in ("1x4608x3584", "1x6144x4096")]
    space = candidate_configs(spec, "fp16", 1, 4608, 3584, limit=None)
    _, plain, [(_, plain_own)] = bucket_candidates(spec, "fp16", cells, 24)
    assert plain == space[:24] and not any(c.fma for c in plain)
    _, covered, [(cell, own)] = bucket_candidates(spec, "fp16", cells, 24, each_path=1)
    assert covered[:24] == plain and len({str(c) for c in covered}) == len(covered)
    assert {kernel_path(c) for c in covered} == {kernel_path(c) for c in space}
    assert any(c.fma and c.block_m == 1 for c in covered[24:])
    # each path added once, by its first config in the space (best guess first)
    for cfg in covered[24:]:
        assert cfg == next(c for c in space if kernel_path(c) == kernel_path(cfg))
    # the bucket's other cell covers its own space's paths the same way
    assert cell is cells[1] and own[: len(plain_own)] == plain_own
    assert {kernel_path(c) for c in own} == {
        kernel_path(c) for c in candidate_configs(spec, "fp16", 1, 6144, 4096, limit=None)
    }
    # two of each path: paths already twice in the first 24 get nothing more
    two = with_each_path(plain, space, 2)
    counts = {}
    for cfg in two:
        counts[kernel_path(cfg)] = counts.get(kernel_path(cfg), 0) + 1
    assert all(n >= 2 or n == sum(kernel_path(c) == p for c in space) for p, n in counts.items())
    assert with_each_path(plain, space, 0) == plain
    # --top-k 0 (the library's entries alone) stays empty
    assert bucket_candidates(spec, "fp16", cells, 0, each_path=1)[1:] == ([], [])


def test_a_buckets_other_cells_bring_the_configs_only_they_are_offered():
    # fp8 4096^3 and 4096 x 3584 x 3584 share a bucket; on the H200's 128 x 256 tiles the first
    # makes 3.9 waves (no split of its last wave fits), the second 3.4 (its 0.4 wave split in 2):
    # a tune of the split configs has candidates for the second cell alone, ranked on it.
    from benchmarks.matrix import parse_cell
    from ci.tune import bucket_candidates
    from targets import candidate_configs, catalogue, shape_bucket
    from targets.configs import gluon_available

    if not gluon_available():
        pytest.skip("this Triton has no Gluon Hopper module")
    cells = [parse_cell(f"fp8_e4m3 {shape}")[1] for shape in ("4096x4096x4096", "4096x3584x3584")]
    assert shape_bucket(cells[0].M, cells[0].N, cells[0].K) == shape_bucket(cells[1].M, cells[1].N, cells[1].K)
    spec = catalogue.get("h200")
    space, candidates, theirs = bucket_candidates(spec, "fp8_e4m3", cells, 24, re.compile("gluon-w[sg]-sk[248]$"))
    assert space == candidates == []
    [(cell, own)] = theirs
    assert cell is cells[1] and own and all(cfg.split_k == 2 and cfg.uses_gluon for cfg in own)
    # without a pattern each cell ranks its own first candidates, those offered to the first cell too
    space, candidates, theirs = bucket_candidates(spec, "fp8_e4m3", cells, None)
    [(cell, own)] = theirs
    assert own == candidate_configs(spec, "fp8_e4m3", 4096, 3584, 3584)[: len(own)]
    assert set(candidates) & set(own)
    # one cell: nothing of another's
    assert bucket_candidates(spec, "fp8_e4m3", cells[:1], 24)[2] == []


def test_a_seeded_tune_times_another_triton_versions_configs_and_writes_only_what_it_timed(tmp_path):
    # A new Triton's first library: each bucket's config from the previous version's library, timed
    # under this Triton (--top-k 0: nothing else), recorded as the incumbent with its version.
    from targets import candidate_configs, detect

    seeded = candidate_configs(detect(), "fp16", 64, 64, 64)[-1]  # one a search would not rank first
    key, other = "matmul|fp16|-|rowrow|64x64x64", "matmul|bf16|-|rowrow|4096x4096x4096"
    old = {
        key: {"cell": "fp16 64x64x64", "config": seeded.as_dict(), "measured": "2026-11-01T00:00:00+00:00",
              "tried": {}, "failed": {}},
        other: {"cell": "bf16 4096x4096x4096", "config": seeded.as_dict(), "tried": {}, "failed": {}},
    }  # fmt: skip
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps({"target": "cpu-interpreter", "triton": "0.0.1", "meta": {}, "entries": old}))
    args = ("tune", "--allow-interpreter", "--shapes", "64x64x64", "--dtypes", "fp16", "--rounds", "1")
    proc = cli(*args, "--top-k", "0", "--seed", str(seed), "--dir", str(tmp_path / "new"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(library.library_path("cpu-interpreter", triton.__version__, tmp_path / "new").read_text())
    assert data["triton"] == triton.__version__ and set(data["entries"]) == {key}  # (the bf16 one: not timed here)
    entry = data["entries"][key]
    assert entry["config"] == seeded.as_dict() and set(entry["tried"]) == {str(seeded)}
    assert entry["incumbent"]["config"] == str(seeded) and entry["incumbent"]["triton"] == "0.0.1"
    assert entry["incumbent"]["time_ms"] == pytest.approx(entry["tried"][str(seeded)], rel=1e-5)
    assert "kept the incumbent (Triton 0.0.1's)" in proc.stdout
    # with candidates too, the seed's config is timed beside them
    proc = cli(*args, "--top-k", "1", "--seed", str(seed), "--dir", str(tmp_path / "new2"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(library.library_path("cpu-interpreter", triton.__version__, tmp_path / "new2").read_text())
    assert str(seeded) in data["entries"][key]["tried"] and len(data["entries"][key]["tried"]) == 2
    # --top-k 0 with no library entry for the cells: the bucket is skipped, saying why
    proc = cli(*args, "--top-k", "0", "--dir", str(tmp_path / "none"), "--fresh")
    assert proc.returncode == 0 and "no library entry for its cells to time again" in proc.stdout, proc.stdout


def test_also_times_the_configs_another_library_runs_beside_the_incumbent(tmp_path):
    # A re-tune with --also: the config a sibling chip's (here another Triton's) library runs on the
    # cell is timed on every bucket tuned, though the candidates (--top-k 1) and the incumbent miss it.
    from targets import candidate_configs, detect

    space = candidate_configs(detect(), "fp16", 64, 64, 64)
    mine, theirs = space[0], space[-1]
    key = "matmul|fp16|-|rowrow|64x64x64"

    def entry(cfg):
        return {"cell": "fp16 64x64x64", "config": cfg.as_dict(), "measured": "2026-11-01T00:00:00+00:00",
                "tried": {str(cfg): 1.0}, "failed": {}}  # fmt: skip

    library.Library("cpu-interpreter", triton.__version__, {}, {key: entry(mine)}).save(
        library.library_path("cpu-interpreter", triton.__version__, tmp_path / "lib")
    )
    other = tmp_path / "other.json"
    other.write_text(
        json.dumps({"target": "cpu-interpreter", "triton": "0.0.1", "meta": {}, "entries": {key: entry(theirs)}})
    )
    args = ("tune", "--allow-interpreter", "--shapes", "64x64x64", "--dtypes", "fp16", "--rounds", "1", "--top-k", "1",
            "--refine", "0", "--dir", str(tmp_path / "lib"))  # fmt: skip
    proc = cli(*args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    path = library.library_path("cpu-interpreter", triton.__version__, tmp_path / "lib")
    assert str(theirs) not in json.loads(path.read_text())["entries"][key]["tried"]  # (without --also: not timed)
    proc = cli(*args, "--also", str(other))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    tried = json.loads(path.read_text())["entries"][key]["tried"]
    assert {str(mine), str(theirs)} <= set(tried)
    assert re.search(r"entries in .*; the cells they were tuned on, each on the config it runs \(fp32 left out\): "
                     r"(1 of 1 at or past native|0 of 1 at or past native|none timed)", proc.stdout), proc.stdout  # fmt: skip
    if json.loads(path.read_text())["entries"][key]["config"] == theirs.as_dict():
        assert "the config cpu-interpreter's library (Triton 0.0.1) runs" in proc.stdout
    # --plan says what --also adds to each bucket
    plan = cli("tune", "--plan", "--shapes", "64x64x64", "--dtypes", "fp16", "--also", str(other),
               env={"GEMMWATCH_TUNED_DIR": str(tmp_path / "lib")})  # fmt: skip
    assert f"--also (cpu-interpreter's library, Triton 0.0.1): {theirs}" in plan.stdout, plan.stdout + plan.stderr
    # bad input: a library of another die, or no library at all, is refused, naming the option
    other.write_text(json.dumps({"target": "a100-80gb", "triton": "0.0.1", "meta": {}, "entries": {}}))
    proc = cli(*args, "--also", str(other))
    assert proc.returncode == 2 and f"--also {other}: a library of target 'a100-80gb'" in proc.stderr
    proc = cli(*args, "--also", str(tmp_path / "missing.json"))
    assert proc.returncode == 2 and "missing.json: no such file" in proc.stderr


@pytest.mark.parametrize(("recorded_ms", "regressed"), [(1e-9, True), (1e9, False)])
def test_a_seeded_tune_calls_out_a_seed_config_much_slower_under_this_triton(tmp_path, recorded_ms, regressed):
    # On the H200 a Triton 3.6 config ran 16x slower under Triton 3.9 (it spills there): a seeded tune
    # says so, bucket by bucket and at the end, with the options that tune those buckets properly,
    # and records the seed's own figure beside the one timed now. (In the interpreter the timed
    # figure is some milliseconds: a recorded 1e-9 ms makes it a regression, 1e9 ms not.)
    from targets import candidate_configs, detect

    seeded = candidate_configs(detect(), "fp16", 64, 64, 64)[-1]
    key = "matmul|fp16|-|rowrow|64x64x64"
    old = {
        key: {"cell": "fp16 64x64x64", "config": seeded.as_dict(), "time_ms": recorded_ms, "tried": {}, "failed": {}}
    }
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps({"target": "cpu-interpreter", "triton": "0.0.1", "meta": {}, "entries": old}))
    proc = cli("tune", "--allow-interpreter", "--shapes", "64x64x64", "--dtypes", "fp16", "--rounds", "1",
               "--top-k", "0", "--seed", str(seed), "--dir", str(tmp_path / "new"))  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(library.library_path("cpu-interpreter", triton.__version__, tmp_path / "new").read_text())
    incumbent = data["entries"][key]["incumbent"]
    assert incumbent["triton"] == "0.0.1" and incumbent["seed_time_ms"] == recorded_ms
    said = f"fp16 64x64x64: the seed's config {seeded} takes"
    summary = "whose config from Triton 0.0.1's library runs over 1.25x slower"
    if regressed:
        assert said in proc.stdout and "under 0.0.1: a Triton regression" in proc.stdout, proc.stdout
        assert f"1 bucket {summary}" in proc.stdout and "--shapes 64x64x64 --dtypes fp16" in proc.stdout, proc.stdout
    else:
        assert said not in proc.stdout and summary not in proc.stdout, proc.stdout


def test_the_seeds_figure_is_read_for_the_entrys_first_cell_or_one_of_its_cells():
    from ci.tune import seed_time_ms

    entry = {"cell": "fp16 1000x1000x1000", "time_ms": 0.5, "cells": {"fp16 1024x1024x1024": {"time_ms": 0.6}}}
    assert seed_time_ms(entry, "fp16 1000x1000x1000") == 0.5
    assert seed_time_ms(entry, "fp16 1024x1024x1024") == 0.6
    assert seed_time_ms(entry, "bf16 1024x1024x1024") is None and seed_time_ms(None, "fp16 1000x1000x1000") is None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        ("{", "not a tuned-config library (not JSON"),
        (
            {"target": "h200", "triton": "0.0.1", "entries": {}},
            "a library of target 'h200'; expected one of 'cpu-interpreter'",
        ),
        ({"target": "cpu-interpreter", "triton": triton.__version__, "entries": {}}, "this Triton's own library"),
        ({"target": "cpu-interpreter", "entries": {}}, "not a tuned-config library (no 'triton' and 'entries')"),
    ],
)
def test_a_seed_that_is_no_other_versions_library_of_this_target_is_refused(tmp_path, content, message):
    seed = tmp_path / "seed.json"
    if content is not None:
        seed.write_text(content if isinstance(content, str) else json.dumps(content))
    out = tmp_path / "out"
    proc = cli("tune", "--allow-interpreter", "--shapes", "64x64x64", "--top-k", "0", "--seed", str(seed),
               "--dir", str(out))  # fmt: skip
    assert proc.returncode == 2 and f"--seed {seed}: {message}" in proc.stderr, proc.stderr
    assert not out.exists()


def test_a_chip_of_the_same_die_seeds_a_first_library_and_another_die_does_not(tmp_path):
    # The H100 SXM's first library: the H200's configs timed on the H100 (--top-k 0 --seed), in one
    # call, instead of a tune of every bucket; an A100's library, another die, is refused.
    from ci.tune import load_seed

    def library_file(target, version):
        path = tmp_path / f"{target}-{version}.json"
        path.write_text(json.dumps({"target": target, "triton": version, "meta": {}, "entries": {"k": {}}}))
        return path

    for version in (triton.__version__, "0.0.1"):  # (a sibling's, under this Triton or another)
        seed = load_seed(library_file("h200", version), "h100-sxm", triton.__version__)
        assert (seed.target, seed.triton, list(seed.entries)) == ("h200", version, ["k"])
    with pytest.raises(
        ValueError, match=r"target 'a100-80gb'; expected one of 'h100-sxm' or of a chip of its die \(h200\)"
    ):
        load_seed(library_file("a100-80gb", "0.0.1"), "h100-sxm", triton.__version__)
    with pytest.raises(ValueError, match="this Triton's own library"):
        load_seed(library_file("h100-sxm", triton.__version__), "h100-sxm", triton.__version__)


def test_the_librarys_rankings_of_a_cells_neighbours_order_its_candidates():
    # fp8 1x3584x3584's space starts with tile configs; its neighbours (the other one-row fp8 cells)
    # ranked one-row FMA configs fastest: ordered by them, the coarse pass's first candidates
    # alternate those with the space's own first ones.
    from benchmarks.matrix import parse_cell
    from ci.tune import bucket_candidates
    from targets import candidate_configs, catalogue, prior

    spec = catalogue.get("h200")
    cells = [parse_cell("fp8_e4m3 1x3584x3584")[1]]
    space = candidate_configs(spec, "fp8_e4m3", 1, 3584, 3584, limit=None)
    fma = [c for c in space if c.fma][:2]
    timings = {  # a neighbour (twice the columns), and the cell itself, whose own ranking is not used
        "fp8_e4m3 1x7168x3584": {str(fma[1]): 0.010, str(fma[0]): 0.011, str(space[0]): 0.020},
        "fp8_e4m3 1x3584x3584": {str(space[0]): 0.001, str(fma[0]): 0.5, str(fma[1]): 0.5},
    }
    _, plain, _ = bucket_candidates(spec, "fp8_e4m3", cells, 8, each_path=0)
    _, ordered, _ = bucket_candidates(spec, "fp8_e4m3", cells, 8, each_path=0, timings=timings)
    assert plain == space[:8]
    assert ordered[:4] == [fma[1], space[0], fma[0], space[1]]
    assert ordered == prior.order(space, prior.predicted(timings, cells[0].name))[:8]


def test_plan_prints_each_cells_candidates_without_a_gpu():
    proc = cli("tune", "--plan", "--target", "h200", "--shapes", "1x3584x3584", "--dtypes", "fp8_e4m3",
               "--top-k", "8")  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("gemmwatch tune --plan: target h200, 1 buckets, candidates in each cell's space")
    assert lines[1].startswith("[1/1] fp8_e4m3 1x3584x3584")
    assert any(line.strip().startswith("fp8_e4m3 1x3584x3584:") and "from its neighbours' rankings" in line
               for line in lines)  # fmt: skip
    plain = cli("tune", "--plan", "--target", "h200", "--shapes", "1x3584x3584", "--dtypes", "fp8_e4m3",
                "--top-k", "8", "--order", "space")  # fmt: skip
    assert plain.returncode == 0 and "candidates in the target's order" in plain.stdout
    assert "0 from its neighbours' rankings" in plain.stdout


def test_plan_of_an_untuned_chip_takes_the_order_of_its_sibling_of_the_same_die(tmp_path):
    # No library for the H100 SXM: its first tune's candidates come in the order the H200's rankings
    # give (here a neighbour's, of twice the columns, ranking two one-row FMA configs first).
    from targets import candidate_configs, catalogue

    spec = catalogue.get("h200")
    space = [str(c) for c in candidate_configs(spec, "fp8_e4m3", 1, 3584, 3584, limit=None)]
    fma = [c for c in space if c.endswith("-fma")][:2]
    ranked = {fma[1]: 0.010, fma[0]: 0.011, space[0]: 0.020}  # (the last past prior.CAP: left to the space's order)
    entries = {"matmul|fp8_e4m3|-|rowrow|1x8192x4096": {"cell": "fp8_e4m3 1x7168x3584", "ranked_ms": ranked}}
    library.Library("h200", triton.__version__, {}, entries).save(
        library.library_path("h200", triton.__version__, tmp_path)
    )
    args = ("tune", "--plan", "--shapes", "1x3584x3584", "--dtypes", "fp8_e4m3", "--top-k", "8")
    proc = cli(*args, "--target", "h100-sxm", env={"GEMMWATCH_TUNED_DIR": str(tmp_path)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no coarse rankings for h100-sxm yet; the candidates are taken in the order the rankings of h200" in (
        proc.stdout
    )
    line = next(x for x in proc.stdout.splitlines() if x.strip().startswith("fp8_e4m3 1x3584x3584:"))
    assert line.endswith(
        f"2 from its neighbours' rankings, 2 of them never timed on it: {fma[1]} (1.000), {fma[0]} (1.100)"
    ), line
    other = cli(*args, "--target", "a100-80gb", env={"GEMMWATCH_TUNED_DIR": str(tmp_path)})  # (another die)
    assert other.returncode == 0 and "candidates in the target's order" in other.stdout, other.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--target", "h200"), "--target goes with --plan"),
        (("--plan", "--target", "h900"), "unknown target 'h900'"),
        (("--order", "random"), "invalid choice: 'random'"),
    ],
)
def test_plan_and_order_reject_bad_input(args, message):
    proc = cli("tune", "--shapes", "64x64x64", *args)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr


def test_each_cell_is_ranked_over_the_candidates_bucket_candidates_took_in_their_order():
    # The coarse pass (`rank`, on a GPU `coarse_rank`) gets each cell's candidates as
    # bucket_candidates ordered them, the first cell's too (until 2026-12-05 its pass timed the
    # launcher's own first candidates: --each-path's additions were not the ones timed there).
    # Here `rank` stands in for the GPU's timer; the fine pass runs for real, in the interpreter.
    from benchmarks.matrix import parse_cell
    from ci.tune import bucket_candidates, tune_bucket
    from targets import detect

    spec = detect()
    cells = [parse_cell(name)[1] for name in ("fp16 64x64x64", "fp16 50x60x40")]
    space = bucket_candidates(spec, "fp16", cells[:1], None)[0]
    assert len(space) >= 4
    timings = {"fp16 64x64x128": {str(space[3]): 0.01, str(space[2]): 0.011, str(space[0]): 0.05}}
    _, first, [(_, own)] = bucket_candidates(spec, "fp16", cells, 3, timings=timings)
    assert first[:2] == [space[3], space[0]]  # the neighbour's fastest first, then the space's own first
    asked = []

    def rank(prep, configs):
        asked.append((prep.cell.name, list(configs)))
        return {str(c): 0.01 * (i + 1) for i, c in enumerate(configs)}, {}

    entry = tune_bucket(cells, rounds=1, top_k=3, finalists=1, spec=spec, device="cpu", refine=0, timings=timings,
                        rank=rank)  # fmt: skip
    assert "error" not in entry, entry
    assert asked == [("fp16 64x64x64", first), ("fp16 50x60x40", own)]
    assert entry["ranked_ms"] == {str(c): 0.01 * (i + 1) for i, c in enumerate(first)}
    assert str(first[0]) in entry["tried"]  # the fastest ranked went on to the fine pass
