"""The regression decision on asv result files with known samples."""

from pathlib import Path

import numpy as np
import pytest
from asv_fixtures import cell_samples, write_results

from ci.asv_results import load
from ci.decision import Settings, Verdict, between_run_noise, compare, load_settings

SHAPES = ["4096x4096x4096", "16x4096x4096", "128x4096x14336", "1000x1000x1000"]
DTYPES = ["fp16", "bf16"]


def _matrix(rng, *, shift=None, cv=0.003, n=30):
    """Cells with ratio ~1.05 and Triton time ~100 us; `shift` {cell: factor} slows a cell's Triton side."""
    cells = {}
    for shape in SHAPES:
        for dtype in DTYPES:
            factor = (shift or {}).get(f"{dtype} {shape}", 1.0)
            cells[("Matmul", shape, dtype)] = {
                "ratio": cell_samples(rng, 1.05 * factor, n, cv),
                "triton": cell_samples(rng, 100e-6 * factor, n, cv),
            }
    return cells


def _pair(tmp_path, base_cells, head_cells, head_machine=None):
    b = load(write_results(tmp_path / "base.json", "a" * 40, base_cells))
    h = load(write_results(tmp_path / "head.json", "b" * 40, head_cells, head_machine))
    return b, h


def test_aa_is_unchanged(tmp_path):
    rng = np.random.default_rng(0)
    result = compare(*_pair(tmp_path, _matrix(rng), _matrix(rng)))
    assert result.counts()["unchanged"] == len(SHAPES) * len(DTYPES)


@pytest.mark.parametrize("factor", [1.03, 1.05, 1.20])
def test_a_slowdown_above_threshold_is_a_regression(tmp_path, factor):
    rng = np.random.default_rng(1)
    cell = "fp16 4096x4096x4096"
    result = compare(*_pair(tmp_path, _matrix(rng), _matrix(rng, shift={cell: factor})))
    (reg,) = result.by_verdict(Verdict.REGRESSED)
    assert reg.cell == cell and reg.metric == "ratio"
    assert reg.change == pytest.approx(factor - 1, abs=0.005)
    assert reg.interval[0] < reg.change < reg.interval[1]
    assert reg.q_value < 0.05 and reg.triton_change > 0.02
    assert result.counts()["unchanged"] == len(SHAPES) * len(DTYPES) - 1


def test_a_speedup_is_an_improvement(tmp_path):
    rng = np.random.default_rng(2)
    result = compare(*_pair(tmp_path, _matrix(rng), _matrix(rng, shift={"bf16 16x4096x4096": 0.9})))
    (imp,) = result.by_verdict(Verdict.IMPROVED)
    assert imp.cell == "bf16 16x4096x4096" and imp.change == pytest.approx(-0.1, abs=0.005)


def test_small_significant_change_below_threshold_is_unchanged(tmp_path):
    rng = np.random.default_rng(3)
    result = compare(
        *_pair(tmp_path, _matrix(rng, cv=0.001), _matrix(rng, cv=0.001, shift={"fp16 16x4096x4096": 1.01}))
    )
    cell = next(c for c in result.cells if c.cell == "fp16 16x4096x4096")
    assert cell.q_value < 0.05 and cell.verdict == Verdict.UNCHANGED


def test_wide_samples_are_noisy_not_guessed(tmp_path):
    rng = np.random.default_rng(4)
    result = compare(*_pair(tmp_path, _matrix(rng, cv=0.05), _matrix(rng, cv=0.05, shift={"fp16 16x4096x4096": 1.03})))
    cell = next(c for c in result.cells if c.cell == "fp16 16x4096x4096")
    assert cell.verdict == Verdict.NOISY and "does not exclude" in cell.note


def test_ratio_up_with_triton_time_down_is_noisy(tmp_path):
    rng = np.random.default_rng(5)
    base, head = _matrix(rng), _matrix(rng)
    head[("Matmul", SHAPES[0], "fp16")]["ratio"] = cell_samples(rng, 1.05 * 1.05)  # native got faster only
    result = compare(*_pair(tmp_path, base, head))
    cell = next(c for c in result.cells if c.cell == f"fp16 {SHAPES[0]}")
    assert cell.verdict == Verdict.NOISY and "native side moved" in cell.note


def test_insufficient_samples(tmp_path):
    rng = np.random.default_rng(6)
    result = compare(*_pair(tmp_path, _matrix(rng, n=5), _matrix(rng, n=5, shift={"fp16 16x4096x4096": 1.5})))
    assert result.counts()["insufficient"] == len(SHAPES) * len(DTYPES)
    assert "5 and 5 samples; 10 needed" in result.cells[0].note


def test_new_missing_failed(tmp_path):
    rng = np.random.default_rng(7)
    base, head = _matrix(rng), _matrix(rng)
    del base[("Matmul", SHAPES[1], "fp16")]["ratio"], base[("Matmul", SHAPES[1], "fp16")]["triton"]
    del head[("Matmul", SHAPES[2], "bf16")]["ratio"], head[("Matmul", SHAPES[2], "bf16")]["triton"]
    head[("Matmul", SHAPES[3], "fp16")] = {"ratio": "failed", "triton": "failed"}
    verdicts = {c.cell: c.verdict for c in compare(*_pair(tmp_path, base, head)).cells}
    assert verdicts[f"fp16 {SHAPES[1]}"] == Verdict.NEW
    assert verdicts[f"bf16 {SHAPES[2]}"] == Verdict.MISSING
    assert verdicts[f"fp16 {SHAPES[3]}"] == Verdict.FAILED


def test_no_native_baseline_falls_back_to_triton_time(tmp_path):
    rng = np.random.default_rng(8)
    base, head = _matrix(rng), _matrix(rng, shift={"fp16 16x4096x4096": 1.04})
    for cells in (base, head):
        cells[("Matmul", SHAPES[1], "fp16")]["ratio"] = None
    cell = next(c for c in compare(*_pair(tmp_path, base, head)).cells if c.cell == "fp16 16x4096x4096")
    assert cell.metric == "triton_time" and cell.verdict == Verdict.REGRESSED


def test_context_mismatch_is_reported_and_not_called(tmp_path):
    rng = np.random.default_rng(9)
    result = compare(*_pair(tmp_path, _matrix(rng), _matrix(rng), head_machine={"driver": "590.1", "torch": "2.12"}))
    assert result.context_diff == {"driver": ("580.159.04", "590.1"), "torch": ("2.11.0+cu130", "2.12")}
    assert result.counts()["not-called"] == len(result.cells)


def test_results_from_two_cards_are_not_compared(tmp_path):
    rng = np.random.default_rng(12)
    base = load(write_results(tmp_path / "base.json", "a" * 40, _matrix(rng), {"card": "GPU-aaaa"}))
    head = load(write_results(tmp_path / "head.json", "b" * 40, _matrix(rng), {"card": "GPU-bbbb"}))
    result = compare(base, head)
    assert result.context_diff == {"card": ("GPU-aaaa", "GPU-bbbb")}
    assert result.counts()["not-called"] == len(result.cells)
    # One card on both sides, or a side measured before the card was recorded: compared as before.
    same = load(write_results(tmp_path / "same.json", "b" * 40, _matrix(rng), {"card": "GPU-aaaa"}))
    older = load(write_results(tmp_path / "older.json", "b" * 40, _matrix(rng)))
    for other in (same, older):
        assert not compare(base, other).context_diff


def test_results_of_another_timing_protocol_are_not_compared(tmp_path):
    from benchmarks.timing import PROTOCOL

    rng = np.random.default_rng(11)
    # The base stored before the protocol was recorded (no key), the head measured with it.
    pair = _pair(tmp_path, _matrix(rng), _matrix(rng), head_machine={"timing_protocol": PROTOCOL})
    result = compare(*pair)
    assert result.context_diff == {"timing_protocol": ("", PROTOCOL)}
    assert result.counts()["not-called"] == len(result.cells)


def test_triton_axis_exempts_the_triton_version(tmp_path):
    rng = np.random.default_rng(10)
    pair = _pair(
        tmp_path, _matrix(rng), _matrix(rng, shift={"fp16 4096x4096x4096": 1.1}), head_machine={"triton": "3.7.0"}
    )
    assert compare(*pair).counts()["not-called"] == len(SHAPES) * len(DTYPES)
    result = compare(*pair, axis="triton")
    assert not result.context_diff and result.triton == "3.6.0 -> 3.7.0"
    assert [c.cell for c in result.by_verdict(Verdict.REGRESSED)] == ["fp16 4096x4096x4096"]


def test_benjamini_hochberg_controls_false_discoveries_across_the_matrix(tmp_path):
    """Many A/A cells: raw p < 0.05 happens by chance; q < alpha almost never does."""
    rng = np.random.default_rng(11)
    shapes = [f"{m}x4096x4096" for m in range(1, 401)]
    base = {("Matmul", s, "fp16"): {"ratio": cell_samples(rng, 1.0), "triton": cell_samples(rng, 1e-4)} for s in shapes}
    head = {("Matmul", s, "fp16"): {"ratio": cell_samples(rng, 1.0), "triton": cell_samples(rng, 1e-4)} for s in shapes}
    result = compare(*_pair(tmp_path, base, head), Settings(threshold=0.0001))
    raw = sum(c.p_value < 0.05 for c in result.cells)
    assert raw >= 5, "some raw p-values fall under 0.05 by chance"
    assert sum(c.verdict in (Verdict.REGRESSED, Verdict.IMPROVED) for c in result.cells) <= 2


def test_thresholds_from_pyproject_with_overrides(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text(
        "[tool.gemmwatch.compare]\nthreshold = 0.03\nmin_samples = 8\n"
        "overrides = [{pattern = 'Matmul fp16 16x*', threshold = 0.10}]\n"
    )
    settings = load_settings(path)
    assert settings.threshold_for("Matmul bf16 4096x4096x4096") == 0.03
    assert settings.threshold_for("Matmul fp16 16x4096x4096") == 0.10
    rng = np.random.default_rng(12)
    result = compare(*_pair(tmp_path, _matrix(rng), _matrix(rng, shift={"fp16 16x4096x4096": 1.05})), settings)
    assert next(c for c in result.cells if c.cell == "fp16 16x4096x4096").verdict != Verdict.REGRESSED


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[tool.gemmwatch.compare]\nthreshhold = 0.02\n", "unknown keys \\['threshhold'\\]"),
        ("[tool.gemmwatch.compare]\nthreshold = 2\n", "threshold must be a fraction"),
        ("[tool.gemmwatch.compare]\noverrides = [{pattern = 'x'}]\n", "overrides\\[0\\]: expected"),
    ],
)
def test_bad_settings_name_the_file(tmp_path, text, message):
    path = tmp_path / "pyproject.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_settings(path)


def test_h200_aa_files_decide_quickly_and_mostly_unchanged():
    """Real H200 samples (docs/results): two warm A/A runs of one commit."""
    d = Path(__file__).resolve().parent.parent / "docs" / "results" / "2026-11-29-h200-aa"
    result = compare(load(d / "warm.json.gz"), load(d / "warm2.json.gz"))
    counts = result.counts()
    assert counts["regressed"] + counts["improved"] <= 2
    assert counts["unchanged"] >= 150


def test_history_noise_turns_a_cross_run_shift_into_noisy(tmp_path):
    """A cell whose per-run median wanders by ~3% between runs is not called on a 3% change."""
    rng = np.random.default_rng(13)
    cell = "fp16 4096x4096x4096"
    history = []
    for i, factor in enumerate([1.0, 1.03, 0.99, 1.02, 0.97]):
        cells = _matrix(rng, shift={cell: factor})
        history.append(load(write_results(tmp_path / f"h{i}.json", f"{i:040d}", cells)))
    base, head = _pair(tmp_path, _matrix(rng), _matrix(rng, shift={cell: 1.03}))
    plain = compare(base, head)
    assert next(c for c in plain.cells if c.cell == cell).verdict == Verdict.REGRESSED
    noise = between_run_noise(history)
    assert noise[("Matmul", cell)] > 0.01 > noise[("Matmul", "bf16 4096x4096x4096")]
    widened = compare(base, head, noise=noise)
    called = next(c for c in widened.cells if c.cell == cell)
    assert called.verdict == Verdict.NOISY and called.noise == noise[("Matmul", cell)]
    # a change far beyond the cell's noise is still a regression
    big = compare(*_pair(tmp_path / "big", _matrix(rng), _matrix(rng, shift={cell: 1.25})), noise=noise)
    assert next(c for c in big.cells if c.cell == cell).verdict == Verdict.REGRESSED


def test_a_cell_known_to_move_between_runs_is_always_rechecked(tmp_path):
    # Its runs stand ~0.45% apart (history): not enough to call it noisy (its widened interval stays
    # inside +-2%), but two runs' offsets can then differ by over 1%, enough to hide half a
    # threshold; it goes to the side-by-side recheck. Quiet cells only when they moved.
    from ci.decision import between_run_noise, needs_recheck

    rng = np.random.default_rng(4)
    cell = "fp16 16x4096x4096"
    history = []
    for i, factor in enumerate([1.0, 1.0045, 1.0, 1.0045, 1.0]):
        history.append(load(write_results(tmp_path / f"h{i}.json", f"{i:040d}", _matrix(rng, shift={cell: factor}))))
    noise = between_run_noise(history)
    base, head = _pair(tmp_path, _matrix(rng), _matrix(rng))
    cells = {c.cell: c for c in compare(base, head, noise=noise).cells}
    assert cells[cell].verdict == Verdict.UNCHANGED and abs(cells[cell].change) < 0.005, cells[cell].change
    assert needs_recheck(cells[cell])
    assert not [name for name, c in cells.items() if name != cell and needs_recheck(c)]
    without = {c.cell: c for c in compare(base, head).cells}
    assert not needs_recheck(without[cell])


def test_measured_cells_leave_out_skipped_and_failed_ones(tmp_path):
    rng = np.random.default_rng(0)
    path = write_results(tmp_path / "r.json", "a" * 40, {
        ("Matmul", "16x4096x4096", "fp16"): {"ratio": cell_samples(rng, 1.0), "triton": cell_samples(rng, 1e-5)},
        ("Matmul", "4096x4096x4096", "fp16"): {"ratio": "failed", "triton": "failed"},
        ("Matmul", "16x4096x4096", "bf16"): {"ratio": cell_samples(rng, 1.0), "triton": cell_samples(rng, 1e-5)},
    })  # fmt: skip
    # (4096^3 bf16 is absent: asv stores NaN for the parameter combination, as for a skipped cell)
    assert load(path).measured_cells() == ["bf16 16x4096x4096", "fp16 16x4096x4096"]


def test_an_interval_wider_than_the_threshold_is_noisy_not_a_regression():
    from ci.decision import call

    # Quiet rounds: a true 2% change is called at its interval.
    assert call(0.02, (0.017, 0.023), True, 0.02)[0] == Verdict.REGRESSED
    assert call(-0.02, (-0.023, -0.017), True, 0.02)[0] == Verdict.IMPROVED
    # Rounds spread by 2%: a point estimate of 1.2% whose interval runs from 0.1% to 2.4% does
    # not say the cell regressed by the threshold; it says the cell is too noisy to tell.
    assert call(0.012, (0.001, 0.024), True, 0.02)[0] == Verdict.NOISY
    assert call(-0.012, (-0.024, -0.001), True, 0.02)[0] == Verdict.NOISY
    # Wide but clear of half the threshold: still a regression.
    assert call(0.05, (0.015, 0.08), True, 0.02)[0] == Verdict.REGRESSED


def test_cells_moved_by_half_the_threshold_go_to_the_recheck_too(tmp_path):
    from ci.decision import needs_recheck

    rng = np.random.default_rng(11)
    moved = "fp16 4096x4096x4096"
    base, head = _pair(tmp_path, _matrix(rng), _matrix(rng, shift={moved: 1.012}, cv=0.001))
    cells = {c.name: c for c in compare(base, head, Settings()).cells}
    cell = cells[f"Matmul {moved}"]
    assert cell.verdict == Verdict.UNCHANGED and 0.01 <= cell.change < 0.02, (cell.verdict, cell.change)
    assert needs_recheck(cell)  # a 1.2% offset between processes can hide a 3% change as well as fake one
    quiet = [c for name, c in cells.items() if name != f"Matmul {moved}"]
    assert all(c.verdict == Verdict.UNCHANGED and not needs_recheck(c) for c in quiet)


def test_a_cell_whose_triton_time_moved_with_its_native_time_goes_to_the_recheck(tmp_path):
    # A 3% slowdown whose run also put the native side 2.5% slower (another placement of cuBLAS's
    # workspaces): the ratio moved by half a percent only, the Triton time by 3%.
    from ci.decision import needs_recheck

    rng = np.random.default_rng(12)
    cell = "fp16 16x4096x4096"
    head = _matrix(rng, cv=0.001)
    head[("Matmul", "16x4096x4096", "fp16")] = {
        "ratio": cell_samples(rng, 1.05 * 1.03 / 1.025, 30, 0.001),
        "triton": cell_samples(rng, 100e-6 * 1.03, 30, 0.001),
    }
    base, head = _pair(tmp_path, _matrix(rng, cv=0.001), head)
    cells = {c.cell: c for c in compare(base, head).cells}
    moved = cells[cell]
    assert moved.verdict == Verdict.UNCHANGED and abs(moved.change) < 0.01 and moved.triton_change > 0.025
    assert needs_recheck(moved)
    assert not [name for name, c in cells.items() if name != cell and needs_recheck(c)]
