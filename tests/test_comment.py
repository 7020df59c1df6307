"""The PR comment: a pure rendering, checked against a golden file."""

import os
from pathlib import Path

import numpy as np
import pytest
from asv_fixtures import cell_samples, write_results

from ci.asv_results import load
from ci.comment import GITHUB_LIMIT, render, speed_mark
from ci.decision import compare

GOLDEN = Path(__file__).parent / "golden" / "comment.md"


def _comparison(tmp_path, *, machine=None, n_shapes=3, seed=0, head_name="head"):
    rng = np.random.default_rng(seed)
    shapes = [f"{m}x4096x4096" for m in (1, 16, 4096, 128, 1000, 64)][:n_shapes]
    base, head = {}, {}
    for i, shape in enumerate(shapes):
        for dtype, speed in (("fp16", 1.04), ("bf16", 0.95), ("fp8_e4m3", 0.8)):
            suite = "ScaledMatmul" if dtype.startswith("fp8") else "Matmul"
            ratio = 1 / speed
            base[(suite, shape, dtype)] = {"ratio": cell_samples(rng, ratio), "triton": cell_samples(rng, 1e-4)}
            factor = 1.06 if (i, dtype) == (0, "fp16") else (0.9 if (i, dtype) == (1, "bf16") else 1.0)
            head[(suite, shape, dtype)] = {
                "ratio": cell_samples(rng, ratio * factor),
                "triton": cell_samples(rng, 1e-4 * factor),
            }
    head[("Matmul", shapes[-1], "bf16")] = {"ratio": "failed", "triton": "failed"}
    b = load(write_results(tmp_path / "b.json", "1234567890abcdef" * 2 + "12345678", base, machine))
    h = load(write_results(tmp_path / f"{head_name}.json", "fedcba0987654321" * 2 + "87654321", head, machine))
    return compare(b, h)


def test_comment_matches_golden(tmp_path):
    body = render([_comparison(tmp_path)], dashboard_url="https://example.invalid/gemmwatch/")
    if os.environ.get("GEMMWATCH_UPDATE_GOLDEN"):
        GOLDEN.write_text(body)
    assert body == GOLDEN.read_text(), "rendering changed: review, then rerun with GEMMWATCH_UPDATE_GOLDEN=1"


def test_comment_order_regressions_first(tmp_path):
    body = render([_comparison(tmp_path)])
    first = body.splitlines()[0]
    assert first.startswith("## gemmwatch: 1 regression, 1 improvement, 1 failed cell in 9 cells — H200, Triton 3.6.0")
    positions = [body.index(s) for s in ("**Regressions**", "**Failed cells**", "**Improvements**",
                                         "**Speedup over native**", "<details><summary>Unchanged")]  # fmt: skip
    assert positions == sorted(positions)
    assert "`Matmul fp16 1x4096x4096`" in body.split("**Failed cells**")[0]


def test_several_targets_one_section_each(tmp_path):
    one = _comparison(tmp_path / "a")
    two = _comparison(tmp_path / "b", machine={"machine": "mi300x", "device": "AMD Instinct MI300X", "triton": "3.5.1"})
    body = render([one, two])
    assert body.count("\n### ") == 2
    assert "H200, Triton 3.6.0; AMD Instinct MI300X, Triton 3.5.1" in body.splitlines()[0]


@pytest.mark.parametrize(("speedup", "mark"), [(1.0, "🟢"), (1.3, "🟢"), (0.95, "🟡"), (0.9, "🟡"), (0.89, "🔴")])
def test_speed_marks(speedup, mark):
    assert speed_mark(speedup) == mark


def test_oversized_comment_is_truncated_least_important_first(tmp_path):
    comps = [_comparison(tmp_path / str(i), n_shapes=6, seed=i) for i in range(3)]
    full = render(comps)
    assert "Truncated" not in full
    limit = len(full) - 500
    cut = render(comps, limit=limit)
    assert len(cut) <= limit
    assert "Truncated to fit" in cut and "left out the unchanged cells" in cut
    assert cut.count("**Regressions**") == 3, "regressions survive truncation"
    tiny = render(comps, limit=3000)
    assert len(tiny) <= 3000 and "**Regressions**" in tiny


def test_a_realistic_matrix_fits_github(tmp_path):
    d = Path(__file__).resolve().parent.parent / "docs" / "results" / "2026-11-29-h200-aa"
    body = render([compare(load(d / "warm.json.gz"), load(d / "warm2.json.gz"))])
    assert len(body) < GITHUB_LIMIT
