"""The tune's candidate order from the library's rankings of a cell's neighbours (targets.prior)."""

import functools
import json
import math
from pathlib import Path

import pytest

from targets import prior

ROOT = Path(__file__).resolve().parent.parent
H200_36 = ROOT / "targets" / "tuned" / "h200-triton3.6.0.json"


def _entry(cell, ranked, ranked_on=None, tried=None):
    return {"cell": cell, "ranked_ms": ranked, **({"ranked_on": ranked_on} if ranked_on else {}),
            "tried": tried or {}}  # fmt: skip


def test_cell_timings_reads_each_cells_ranking_and_skips_the_older_form():
    entries = {
        "a": _entry(
            "fp16 1x4096x4096", {"c1": 0.01, "c2": 0.02}, ranked_on={"fp16 1x8192x8192": {"c1": 0.03, "c3": 0.02}}
        ),
        "b": _entry("fp16 4096x4096x4096", {"c9": 0.2}, ranked_on={"c9": "fp16 4096x3584x3584"}),
    }
    timings = prior.cell_timings(entries)
    assert timings == {
        "fp16 1x4096x4096": {"c1": 0.01, "c2": 0.02},
        "fp16 1x8192x8192": {"c1": 0.03, "c3": 0.02},
        "fp16 4096x4096x4096": {"c9": 0.2},
    }
    entries["a"]["cells"] = {"fp16 1x8192x8192": {"tried": {"c4": 0.02}}}
    assert prior.timed(entries)["fp16 1x8192x8192"] == {"c1", "c3", "c4"}


def test_neighbours_share_a_dtype_family_and_a_row_regime():
    cell = prior.CellName.parse
    assert prior.distance(cell("fp16 16x4096x4096"), cell("fp16 16x8192x4096")) == pytest.approx(1.0)
    assert prior.distance(cell("fp16 16x4096x4096"), cell("bf16 16x4096x4096")) == pytest.approx(prior.OTHER_DTYPE)
    assert prior.distance(cell("fp16 16x4096x4096"), cell("fp8_e4m3 16x4096x4096")) is None
    assert prior.distance(cell("fp16 1x4096x4096"), cell("fp16 16x4096x4096")) is None  # one row: other kernels
    assert prior.distance(cell("fp16 128x4096x4096"), cell("fp16 4096x4096x4096")) is None
    assert prior.distance(cell("fp32-tf32 4096x4096x4096"), cell("fp32-ieee 4096x4096x4096")) is None
    assert cell("fp16 4096x4096x4096 bias+gelu") is None and cell("fp16 4096x4096") is None


def test_the_nearer_neighbour_weighs_more_and_the_cell_itself_not_at_all():
    timings = {
        "fp16 16x4096x4096": {"x": 1.0, "y": 5.0, "z": 1.0},  # the cell: left out
        "fp16 16x4096x8192": {"x": 1.0, "y": 2.0, "z": 1.5},  # one doubling away
        "fp16 16x4096x65536": {"x": 2.0, "y": 1.0, "z": 1.0},  # four away
        "fp8_e4m3 16x4096x4096": {"x": 9.0, "y": 1.0, "z": 1.0},  # another family: never
    }
    got = prior.predicted(timings, "fp16 16x4096x4096")
    near, far = math.exp(-1 / prior.TAU), math.exp(-4 / prior.TAU)
    assert got["x"] == pytest.approx(math.exp((near * 0 + far * math.log(2)) / (near + far)))
    assert got["y"] == pytest.approx(math.exp((near * math.log(2) + far * 0) / (near + far)))
    assert got["x"] < got["y"]
    # an evaluation can leave other cells out too
    assert prior.predicted(timings, "fp16 16x4096x4096", leave_out=["fp16 16x4096x8192"])["x"] == pytest.approx(2.0)


def test_the_order_alternates_the_neighbours_favourites_with_the_spaces_own_and_keeps_every_config():
    space = list("abcdefgh")
    got = prior.order(space, {"f": 1.0, "h": 1.01, "b": 1.1, "g": 1.9})  # g: past the cap, left where it is
    assert got == ["f", "a", "h", "b", "c", "d", "e", "g"]
    assert sorted(got) == sorted(space)
    assert prior.order(space, {}) == space


def test_on_the_h200_library_the_neighbours_order_finds_a_near_best_config_sooner():
    # The library's own rankings, each cell's left out: the order must beat the target's where a
    # tune cuts it (the first 8 and 24). Under Triton 3.6 on the H200 it was 75 -> 126 of 154 and
    # 116 -> 143 (docs/BENCHMARKS.md, 2026-12-05); another Triton offers another space.
    from ci.tune import space_of
    from targets import get

    data = json.loads(H200_36.read_text())
    result = prior.evaluate(data["entries"], functools.partial(space_of, get(data["target"])), ks=(8, 24))
    assert result["cells"] >= 140
    assert result["library"][8] >= 1.4 * result["space"][8]
    assert result["library"][24] > result["space"][24]


def _run_matmul(tmp_path, env_extra):
    """The config the launcher chooses for fp16 48x80x96 (no library entry) in a fresh interpreter process."""
    import os
    import subprocess
    import sys

    code = (
        "import torch, kernels\nfrom kernels import autotune\n"
        "a = torch.randn(48, 96, dtype=torch.float16); b = torch.randn(96, 80, dtype=torch.float16)\n"
        "out = kernels.matmul(a, b)\n"
        "assert torch.allclose(out.float(), a.float() @ b.float(), rtol=2e-2, atol=2e-2)\n"
        "s = autotune.last(); print(s.method, s.config)\n"
    )
    env = {**os.environ, "TRITON_INTERPRET": "1", "GEMMWATCH_TUNED_DIR": str(tmp_path), **env_extra}
    env.pop("GEMMWATCH_AUTOTUNE_CACHE", None)
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_a_problem_without_an_entry_is_autotuned_in_the_order_its_neighbours_rankings_give(tmp_path):
    # In the interpreter the launcher runs its first candidate untimed: the neighbour's fastest,
    # where the library (of this target and Triton) has ranked a problem of the same kind near it.
    import triton

    from targets import candidate_configs, detect, library

    spec = detect()
    space = [str(c) for c in candidate_configs(spec, "fp16", 48, 80, 96, limit=None)]
    assert len(space) >= 3
    favourite = space[2]
    ranking = {favourite: 0.010, space[0]: 0.020, space[1]: 0.021}
    entries = {
        "matmul|fp16|-|rowrow|64x128x256": {"cell": "fp16 48x80x192", "ranked_ms": ranking},
        "matmul|bf16|-|rowrow|64x128x256": {
            "cell": "bf16 48x80x96",
            "ranked_ms": {space[1]: 0.01, favourite: 0.5, space[0]: 0.5},
        },
    }
    library.Library(spec.name, triton.__version__, {}, entries).save(
        library.library_path(spec.name, triton.__version__, tmp_path)
    )
    assert _run_matmul(tmp_path, {}) == ["ranked", favourite]  # (bf16's rankings: another kind of problem)
    assert _run_matmul(tmp_path, {"GEMMWATCH_TUNED": "0"}) == ["ranked", space[0]]


def test_a_neighbours_extra_column_tile_predicts_this_cells_whatever_their_widths():
    # The extra columns beside a Gluon tile follow each shape's waves: 64 x 72 on fp8 128x4608,
    # 64 x 96 on 128x6144. A neighbour's fastest extra-column tile stands for this cell's.
    timings = {"fp8_e4m3 128x4608x3584": {"T-gluon-ws-xn8": 1.0, "T-gluon-ws": 1.2, "U-sk2-xn8": 1.5}}
    got = prior.predicted(timings, "fp8_e4m3 128x6144x4096")
    assert prior.score(got, "T-gluon-ws-xn32") == pytest.approx(1.0)
    assert prior.score(got, "U-sk2-xn16") == pytest.approx(1.5)
    assert prior.score(got, "V") == math.inf
    assert prior.order(["T-gluon-ws", "V", "T-gluon-ws-xn32"], got) == ["T-gluon-ws-xn32", "T-gluon-ws", "V"]


def test_a_chip_with_no_rankings_borrows_those_of_its_die_and_never_another_dies(tmp_path, monkeypatch):
    # The H100 SXM and the H200 share GH100 (vendor, architecture, SM count); an untuned H100's
    # autotune takes its candidates in the order the H200's rankings give, until its own exist.
    from targets import catalogue, library

    assert [s.name for s in catalogue.siblings(catalogue.get("h100-sxm"))] == ["h200"]
    assert [s.name for s in catalogue.siblings(catalogue.get("h200"))] == ["h100-sxm"]
    assert catalogue.siblings(catalogue.get("a100-80gb")) == ()
    assert catalogue.siblings(catalogue.get("cpu-interpreter")) == ()

    monkeypatch.setenv(library.ENV_DIR, str(tmp_path))
    like = "matmul|fp16|-|rowrow|16x4096x4096"
    h200 = {like: _entry("fp16 16x4096x4096", {"c1": 0.01, "c2": 0.02})}
    library.Library("h200", "9.9.9", {}, h200).save(library.library_path("h200", "9.9.9", tmp_path))
    assert library.coarse_timings("h100-sxm", "9.9.9", like) == {"fp16 16x4096x4096": {"c1": 0.01, "c2": 0.02}}
    assert library.coarse_timings("h100-sxm", "9.9.8", like) == {}  # (another Triton: nobody's)
    assert library.coarse_timings("a100-80gb", "9.9.9", like) == {}  # (another die)
    assert library.coarse_timings("h100-sxm", "9.9.9", "matmul|bf16|-|rowrow|16x4096x4096") == {}

    own = {like: _entry("fp16 16x4096x8192", {"c2": 0.03})}
    library.Library("h100-sxm", "9.9.9", {}, own).save(library.library_path("h100-sxm", "9.9.9", tmp_path))
    assert library.coarse_timings("h100-sxm", "9.9.9", like) == {"fp16 16x4096x8192": {"c2": 0.03}}
    monkeypatch.setenv(library.ENV_USE, "0")
    assert library.coarse_timings("h100-sxm", "9.9.9", like) == {}
