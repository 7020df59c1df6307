"""The regression decision: base vs head, per cell, from the samples asv recorded.

Pure code: result files in, verdicts out. For every cell measured on both
sides, on the per-round samples of the Triton/native ratio (and of the Triton
time, which must agree):

- effect: the Hodges-Lehmann shift of log(head) - log(base), as a relative
  change, with its distribution-free (Moses) confidence interval;
- evidence: a two-sided Mann-Whitney U test (scipy), its p-values corrected for
  the whole matrix with Benjamini-Hochberg (scipy's false_discovery_control);
- regressed: q < alpha, the interval reaches the threshold (default 2%;
  per-cell overrides in pyproject.toml) with the point estimate above half of
  it, and the Triton time slower by at least half the threshold too (a ratio
  that moved because only the native side did is not our regression);
  improved: the mirror image; unchanged: the interval lies within +-threshold;
  noisy: anything else (too variable to call, or the two metrics disagree);
- insufficient: fewer than `min_samples` samples on a side (never guessed);
  new / missing: measured on one side only; failed: head failed (an error or a
  wrong result); not-called: base and head ran in different contexts.
"""

from __future__ import annotations

import fnmatch
import math
import tomllib
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

import numpy as np

from ci.asv_results import Entry, ResultFile

# Context fields that must match between base and head for a verdict to mean
# anything; the compared axis (e.g. "triton" when comparing Triton versions) is
# exempt.
CONTEXT_KEYS = ("machine", "device", "driver", "cuda", "cublas", "hip", "torch", "triton", "timing_protocol")
# Compared only where both sides record them: the physical card (its UUID; recorded since
# 2026-12-01). Two cards of one model put the same code's cells 1-6% apart on the H200
# (docs/BENCHMARKS.md), so results from two jobs of a runner pool are not compared cell by cell.
RECORDED_CONTEXT_KEYS = ("card",)


class Verdict(StrEnum):
    REGRESSED = "regressed"
    IMPROVED = "improved"
    UNCHANGED = "unchanged"
    NOISY = "noisy"
    NEW = "new"
    MISSING = "missing"
    FAILED = "failed"
    INSUFFICIENT = "insufficient"
    NOT_CALLED = "not-called"


@dataclass(frozen=True)
class Settings:
    threshold: float = 0.02
    alpha: float = 0.05  # false-discovery rate across the matrix
    confidence: float = 0.95  # of the reported interval
    min_samples: int = 10
    overrides: tuple[tuple[str, float], ...] = ()  # (fnmatch pattern on "Suite cell", threshold)

    def __post_init__(self) -> None:
        if not 0 < self.threshold < 1:
            raise ValueError(f"threshold must be a fraction in (0, 1), got {self.threshold!r}")
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {self.alpha!r}")
        if not 0 < self.confidence < 1:
            raise ValueError(f"confidence must be in (0, 1), got {self.confidence!r}")
        if not isinstance(self.min_samples, int) or self.min_samples < 2:
            raise ValueError(f"min_samples must be an int >= 2, got {self.min_samples!r}")

    def threshold_for(self, name: str) -> float:
        """The last matching override wins; `name` is 'Suite cell', e.g. 'Matmul fp16 4096x4096x4096'."""
        chosen = self.threshold
        for pattern, value in self.overrides:
            if fnmatch.fnmatchcase(name, pattern):
                chosen = value
        return chosen


def load_settings(pyproject: str | Path | None) -> Settings:
    """[tool.gemmwatch.compare] of a pyproject.toml; defaults where absent."""
    if pyproject is None or not Path(pyproject).exists():
        return Settings()
    try:
        data = tomllib.loads(Path(pyproject).read_text())
    except tomllib.TOMLDecodeError as err:
        raise ValueError(f"{pyproject} is not valid TOML: {err}") from None
    raw = data.get("tool", {}).get("gemmwatch", {}).get("compare", {})
    known = {"threshold", "alpha", "confidence", "min_samples", "overrides"}
    unknown = set(raw) - known
    if unknown:
        raise ValueError(
            f"{pyproject} [tool.gemmwatch.compare]: unknown keys {sorted(unknown)}; known: {sorted(known)}"
        )
    overrides = []
    for i, item in enumerate(raw.get("overrides", [])):
        if not isinstance(item, dict) or "pattern" not in item or "threshold" not in item:
            raise ValueError(
                f"{pyproject} [tool.gemmwatch.compare] overrides[{i}]: expected {{pattern = '...', threshold = 0.03}}"
            )
        overrides.append((str(item["pattern"]), float(item["threshold"])))
    kwargs = {k: raw[k] for k in ("threshold", "alpha", "confidence", "min_samples") if k in raw}
    try:
        return Settings(**kwargs, overrides=tuple(overrides))
    except ValueError as err:
        raise ValueError(f"{pyproject} [tool.gemmwatch.compare]: {err}") from None


@dataclass
class Side:
    """One side's summary of a cell's headline metric."""

    median: float
    n: int
    ci_99: tuple[float, float] | None = None


@dataclass
class CellComparison:
    suite: str
    cell: str
    params: tuple[str, ...]
    metric: str  # "ratio" (Triton/native time) or "triton_time" (no native baseline)
    verdict: Verdict
    base: Side | None = None
    head: Side | None = None
    change: float | None = None  # relative change of the metric, head vs base (+: slower)
    interval: tuple[float, float] | None = None  # confidence interval of `change`
    p_value: float | None = None
    q_value: float | None = None
    triton_change: float | None = None  # relative change of the Triton time (when metric is the ratio)
    threshold: float = 0.02
    note: str = ""
    noise: float | None = None  # between-run SD of log(metric), from history
    speedup_base: float | None = None  # native time / Triton time
    speedup_head: float | None = None

    @property
    def name(self) -> str:
        return f"{self.suite} {self.cell}"


@dataclass
class Comparison:
    machine: str
    base_commit: str
    head_commit: str
    base_params: dict
    head_params: dict
    axis: str
    settings: Settings
    context_diff: dict[str, tuple[str, str]] = field(default_factory=dict)
    cells: list[CellComparison] = field(default_factory=list)

    @property
    def triton(self) -> str:
        b, h = self.base_params.get("triton", "?"), self.head_params.get("triton", "?")
        return h if b == h else f"{b} -> {h}"

    def counts(self) -> dict[str, int]:
        out = {v.value: 0 for v in Verdict}
        for cell in self.cells:
            out[cell.verdict.value] += 1
        return out

    def by_verdict(self, verdict: Verdict) -> list[CellComparison]:
        return [c for c in self.cells if c.verdict == verdict]


def is_interpreter(machine_params: dict) -> bool:
    return machine_params.get("target") == "cpu-interpreter" or str(machine_params.get("device", "")).startswith(
        "Triton interpreter"
    )


def _usable(entry: Entry | None) -> bool:
    return entry is not None and not entry.failed and not entry.skipped


def _batch_changes(x: np.ndarray, y: np.ndarray, confidence: float):
    """Per row: (relative change, interval low, interval high, p) of y vs x, on the log scale.

    x (cells, n) and y (cells, m) hold equally many samples per row, so all rows
    are computed at once: the Hodges-Lehmann shift (median of all pairwise
    differences), its Moses interval (order statistics of the differences at
    the normal approximation of U's quantile) and the Mann-Whitney p-value.
    """
    from scipy.stats import mannwhitneyu, norm

    lx, ly = np.log(x), np.log(y)
    n, m = lx.shape[1], ly.shape[1]
    diffs = np.sort((ly[:, :, None] - lx[:, None, :]).reshape(len(lx), n * m), axis=1)
    shift = np.median(diffs, axis=1)
    z = norm.ppf(0.5 + confidence / 2)
    k = math.floor(n * m / 2 - z * math.sqrt(n * m * (n + m + 1) / 12))
    k = min(max(k, 0), n * m - 1)
    low, high = diffs[:, k], diffs[:, n * m - 1 - k]
    p = mannwhitneyu(ly, lx, alternative="two-sided", method="asymptotic", axis=1).pvalue
    return np.expm1(shift), np.expm1(low), np.expm1(high), np.atleast_1d(p)


def between_run_noise(history: list[ResultFile]) -> dict[tuple[str, str], float]:
    """Per cell, the run-to-run standard deviation of log(median ratio) over earlier runs.

    Rounds within one run share the process's clock and power state; runs in
    separate processes differ by more than their rounds suggest (on the H200,
    up to several percent for power-capped fp8 cells: docs/BENCHMARKS.md). The
    spread of successive runs' medians measures that part. The median of
    successive absolute differences keeps a real change in the history from
    inflating it. Cells with fewer than three runs get no estimate; the ratio is
    used where a cell has one, else the Triton time.
    """
    series: dict[tuple[str, str, str], list[float]] = {}
    for run in history:
        for metric in ("track_ratio", "track_triton_time"):
            for key, entry in run.metric_by_suite(metric).items():
                if _usable(entry) and entry.value and entry.value > 0:
                    series.setdefault((metric, *key), []).append(math.log(entry.value))
    noise: dict[tuple[str, str], float] = {}
    for (_metric, suite, cell), logs in sorted(series.items()):  # track_ratio sorts first
        if len(logs) < 3 or (suite, cell) in noise:
            continue
        noise[(suite, cell)] = float(np.median(np.abs(np.diff(logs))) / (0.6745 * math.sqrt(2)))
    return noise


def compare(
    base: ResultFile,
    head: ResultFile,
    settings: Settings | None = None,
    *,
    axis: str = "commit",
    noise: dict[tuple[str, str], float] | None = None,
) -> Comparison:
    """Verdicts for every cell of two asv result files of one machine.

    `noise` (from `between_run_noise`) adds each cell's run-to-run variation to
    the uncertainty of its change; without it only the rounds' spread counts.
    """
    from scipy.stats import false_discovery_control

    settings = settings or Settings()
    result = Comparison(
        machine=str(head.machine_params.get("machine", "?")),
        base_commit=base.commit,
        head_commit=head.commit,
        base_params=base.machine_params,
        head_params=head.machine_params,
        axis=axis,
        settings=settings,
    )
    for key in (*CONTEXT_KEYS, *RECORDED_CONTEXT_KEYS):
        if key == axis:
            continue
        b, h = str(base.machine_params.get(key, "")), str(head.machine_params.get(key, ""))
        if b != h and (key not in RECORDED_CONTEXT_KEYS or (b and h)):
            result.context_diff[key] = (b, h)

    interpreter = is_interpreter(base.machine_params) or is_interpreter(head.machine_params)
    ratio_b, ratio_h = base.metric_by_suite("track_ratio"), head.metric_by_suite("track_ratio")
    time_b, time_h = base.metric_by_suite("track_triton_time"), head.metric_by_suite("track_triton_time")
    keys = list(dict.fromkeys([*time_b, *time_h]))
    tested: list[tuple[CellComparison, np.ndarray, np.ndarray]] = []
    for key in keys:
        suite, cell = key
        tb, th = time_b.get(key), time_h.get(key)
        rb, rh = ratio_b.get(key), ratio_h.get(key)
        params = (th or tb).params
        comp = CellComparison(suite, cell, params, "ratio", Verdict.UNCHANGED)
        comp.threshold = settings.threshold_for(comp.name)
        if _usable(rb) and rb.value:
            comp.speedup_base = 1.0 / rb.value
        if _usable(rh) and rh.value:
            comp.speedup_head = 1.0 / rh.value
        result.cells.append(comp)

        present_b = tb is not None and not tb.skipped
        present_h = th is not None and not th.skipped
        if not present_h and not present_b:
            result.cells.pop()
            continue
        if present_h and th.failed:
            comp.verdict, comp.note = Verdict.FAILED, "head failed (error or result over tolerance)"
            continue
        if not present_b or tb.failed:
            comp.verdict = Verdict.NEW
            comp.note = "base failed" if present_b else "not measured in base"
            continue
        if not present_h:
            comp.verdict, comp.note = Verdict.MISSING, "not measured in head"
            continue
        if result.context_diff:
            comp.verdict = Verdict.NOT_CALLED
            comp.note = "context differs: " + ", ".join(result.context_diff)
            continue
        if interpreter:  # its timings carry no performance signal and must never gate anything
            comp.verdict, comp.note = Verdict.NOT_CALLED, "Triton interpreter: timings are not performance"
            continue

        use_ratio = _usable(rb) and _usable(rh) and rb.samples and rh.samples
        sb, sh = (rb, rh) if use_ratio else (tb, th)
        comp.metric = "ratio" if use_ratio else "triton_time"
        if not (sb.samples and sh.samples) or min(len(sb.samples), len(sh.samples)) < settings.min_samples:
            comp.verdict = Verdict.INSUFFICIENT
            counts = (len(sb.samples or ()), len(sh.samples or ()))
            comp.note = f"{counts[0]} and {counts[1]} samples; {settings.min_samples} needed on each side"
            continue
        x, y = np.asarray(sb.samples, dtype=float), np.asarray(sh.samples, dtype=float)
        if (x <= 0).any() or (y <= 0).any():
            comp.verdict, comp.note = Verdict.INSUFFICIENT, "non-positive samples"
            continue
        comp.noise = (noise or {}).get(key)
        # asv's recorded value is the median of the samples
        comp.base = Side(sb.value, len(x), sb.ci_99)
        comp.head = Side(sh.value, len(y), sh.ci_99)
        if use_ratio and _usable(tb) and _usable(th) and tb.value > 0:
            comp.triton_change = th.value / tb.value - 1.0
        tested.append((comp, x, y))

    groups: dict[tuple[int, int], list[tuple[CellComparison, np.ndarray, np.ndarray]]] = {}
    for item in tested:
        groups.setdefault((len(item[1]), len(item[2])), []).append(item)
    for items in groups.values():
        change, low, high, p = _batch_changes(
            np.stack([x for _, x, _ in items]), np.stack([y for _, _, y in items]), settings.confidence
        )
        for i, (comp, _, _) in enumerate(items):
            comp.change, comp.interval, comp.p_value = float(change[i]), (float(low[i]), float(high[i])), float(p[i])
            if comp.noise:
                _widen(comp, settings.confidence)
    if tested:
        qs = false_discovery_control([comp.p_value for comp, _, _ in tested], method="bh")
        for (comp, _, _), q in zip(tested, qs):
            comp.q_value = float(q)
            comp.verdict, comp.note = _call(comp, settings)
    return result


# How many between-run standard deviations (of the difference of two runs' offsets) a cell's change
# may be away from its true value when `needs_recheck` decides: 2, about 95% of the offsets.
RECHECK_NOISE_Z = 2.0


def needs_recheck(comp: CellComparison) -> bool:
    """Whether the PR workflow measures this cell again side by side before deciding: every cell the
    comparison flagged (regressed, improved, noisy), and an unchanged one whose change is at least
    half its threshold, or could be once its run-to-run noise (`comp.noise`, from history) is
    allowed for. Separate processes can differ by a few percent in one cell (the A/A runs in
    docs/BENCHMARKS.md), which can hide a threshold-sized change as much as fake one; side by side
    in one process that offset is gone, so the comparison picks the candidates and the recheck decides.
    A cell whose runs are known to move by a few percent is therefore always rechecked, and so is
    one whose Triton time moved by half its threshold while its ratio did not: the native time moved
    with it, which is what a process's placement of cuBLAS's workspaces does to the split-K cells
    (6% on the H200: an injected 3% slowdown of fp16 16x4096x4096 showed +7.8% on its Triton time and
    +1.5% on its ratio; docs/BENCHMARKS.md), and side by side the native side's offset is gone."""
    if comp.verdict in (Verdict.REGRESSED, Verdict.IMPROVED, Verdict.NOISY):
        return True
    if comp.verdict != Verdict.UNCHANGED or comp.change is None:
        return False
    if comp.triton_change is not None and abs(comp.triton_change) >= comp.threshold / 2:
        return True
    # Two runs, each with its own offset: their difference has sqrt(2) times one run's spread.
    hidden = RECHECK_NOISE_Z * math.sqrt(2) * math.expm1(comp.noise) if comp.noise else 0.0
    return abs(comp.change) + hidden >= comp.threshold / 2


def _widen(comp: CellComparison, confidence: float) -> None:
    """Fold the between-run noise into the interval and p-value (normal approximation, log scale)."""
    from scipy.stats import norm

    z = norm.ppf(0.5 + confidence / 2)
    shift = math.log1p(comp.change)
    se_rounds = (math.log1p(comp.interval[1]) - math.log1p(comp.interval[0])) / (2 * z)
    se = math.sqrt(se_rounds**2 + 2 * comp.noise**2)  # two runs, each with its own offset
    comp.interval = (math.expm1(shift - z * se), math.expm1(shift + z * se))
    comp.p_value = max(comp.p_value, float(2 * norm.sf(abs(shift) / se)))


def _call(comp: CellComparison, settings: Settings) -> tuple[Verdict, str]:
    return call(comp.change, comp.interval, comp.q_value < settings.alpha, comp.threshold, comp.triton_change)


def call(
    change: float, interval: tuple[float, float], significant: bool, thr: float, triton_change: float | None = None
) -> tuple[Verdict, str]:
    """The verdict rule, shared by compare and recheck.

    Regressed: significant, the interval reaches the threshold and excludes
    changes below half of it (so the point estimate is above half too), and the
    Triton time (when given) moved the same way by half the threshold. Deciding
    at the interval rather than the point estimate is what lets a true change of
    exactly the threshold be flagged reliably where the cell is quiet; asking
    its low end to clear half the threshold is what keeps a cell whose interval
    is wider than the threshold (rounds spread by 2%) from being called on a
    point estimate of 1%: that cell is noisy.
    """
    low, high = interval
    if significant and low >= thr / 2 and high >= thr:
        if triton_change is None or triton_change > thr / 2:
            return Verdict.REGRESSED, ""
        return Verdict.NOISY, f"ratio {change:+.1%} but Triton time {triton_change:+.1%}: the native side moved"
    if significant and high <= -thr / 2 and low <= -thr:
        if triton_change is None or triton_change < -thr / 2:
            return Verdict.IMPROVED, ""
        return Verdict.NOISY, f"ratio {change:+.1%} but Triton time {triton_change:+.1%}: the native side moved"
    if -thr < low and high < thr:
        return Verdict.UNCHANGED, ""
    return Verdict.NOISY, f"interval {low:+.1%}..{high:+.1%} does not exclude a {thr:.0%} change"
