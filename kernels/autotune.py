"""Choosing a launch config per problem, and remembering the choice.

The space comes from `targets.candidate_configs` for the detected chip (never a
hand list), in the order the tuned library's rankings of the nearest problems give
where it has some (`targets.prior`). On a GPU the first `top_k()` candidates are compiled and timed on
the real inputs and the fastest is cached under the problem's key (op, dtype,
precision, layout, power-of-two shape bucket); configs that fail to compile
are recorded as failed. In the interpreter nothing is timed: its timings carry
no signal, so the best-ranked candidate is used.

`selections()` reports every choice made in this process (config, tuning
seconds, what was tried and failed, the compiled kernel's hash), for the
benchmark context.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

# Module-level imports only: `gemmwatch recheck` loads two trees' `kernels` into one process, and an
# import inside a function would find whichever `targets` sys.modules holds then (the runner's), not
# this tree's (its tuned library, its candidate space).
from targets import MAX_CONFIGS, candidate_configs, detect, library, prior, shape_bucket
from targets.configs import GemmConfig

DEFAULT_TOP_K = 12  # candidates timed per shape bucket; ~1 s of compile each


def top_k() -> int:
    if _SEARCH:
        return _SEARCH[0]
    raw = os.environ.get("GEMMWATCH_AUTOTUNE_TOP_K", str(DEFAULT_TOP_K))
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"GEMMWATCH_AUTOTUNE_TOP_K must be a positive integer, got {raw!r}") from None
    if value < 1:
        raise ValueError(f"GEMMWATCH_AUTOTUNE_TOP_K must be a positive integer, got {raw!r}")
    return value


@dataclass(frozen=True)
class ProblemKey:
    op: str
    dtype: str
    precision: str
    layout: str  # "rowrow", "rowcol", ... for A and B
    M: int
    N: int
    K: int
    device: str

    def cache_key(self) -> tuple:
        return (self.op, self.dtype, self.precision, self.layout, self.device, shape_bucket(self.M, self.N, self.K))

    def shape_key(self) -> tuple:
        """The cache key of this exact shape (a tuned library's choice may be per shape)."""
        return (*self.cache_key(), (self.M, self.N, self.K))

    def library_key(self) -> str:
        """The key of this problem's bucket in the tuned-config library."""
        return library.entry_key(self.op, self.dtype, self.precision, self.layout, shape_bucket(self.M, self.N, self.K))

    def cell_name(self) -> str:
        """This problem named as a cell of the matrix (`fp16 4096x4096x4096`, `fp32-tf32 ...`)."""
        dtype = f"{self.dtype}-{self.precision}" if self.dtype == "fp32" else self.dtype
        return f"{dtype} {self.M}x{self.N}x{self.K}"


@dataclass
class Selection:
    """How a config was chosen for one problem bucket."""

    key: ProblemKey
    target: str
    config: GemmConfig
    method: str  # "tuned" (targets/tuned/), "timed", "stored" (an earlier run), "ranked" (interpreter), "forced"
    tune_seconds: float = 0.0
    timings_ms: dict[str, float] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)  # config -> error
    kernel_hash: str | None = None
    # The config chosen for these operands' problem when they could not take it, and another ran
    # (`config`): the bucket's runner-up, or the tile variant (`_runnable`).
    instead_of: str | None = None

    def as_dict(self) -> dict:
        return {
            "op": self.key.op,
            "dtype": self.key.dtype,
            "precision": self.key.precision,
            "layout": self.key.layout,
            "shape": [self.key.M, self.key.N, self.key.K],
            "target": self.target,
            "config": str(self.config),
            "method": self.method,
            "tune_seconds": round(self.tune_seconds, 3),
            "timings_ms": self.timings_ms,
            "failed": self.failed,
            "kernel_hash": self.kernel_hash,
            "instead_of": self.instead_of,
        }


_CACHE: dict[tuple, Selection] = {}
_SEARCH: list = []  # set inside fresh_search(): the number of candidates to time, the timer, the space


@contextlib.contextmanager
def fresh_search(
    candidates: int,
    timer: Callable[[Callable[[], object]], float] | None = None,
    configs: list[GemmConfig] | None = None,
):
    """Within this block every launch times its first `candidates` candidates anew,
    ignoring the process cache, the tuned library and stored choices (`gemmwatch tune`'s
    coarse pass); `last()` then holds every timing and failure. `timer(fn)`, if given,
    returns milliseconds per call of `fn` instead of triton's `do_bench`. `configs`, if
    given, is the space instead of the target's candidates (those the operands can take)."""
    if not isinstance(candidates, int) or candidates < 1:
        raise ValueError(f"fresh_search: candidates must be a positive int, got {candidates!r}")
    _SEARCH[:] = [candidates, timer, configs]
    try:
        yield
    finally:
        _SEARCH.clear()


ENV_CACHE_FILE = "GEMMWATCH_AUTOTUNE_CACHE"
_LAST: list[Selection] = []  # the selection of the most recent launch in this process


def selections() -> list[Selection]:
    return list(_CACHE.values())


def last() -> Selection | None:
    """The selection used by the most recent launch (forced ones included)."""
    return _LAST[0] if _LAST else None


def _remember(selection: Selection) -> Selection:
    _LAST[:] = [selection]
    return selection


def compile_workers() -> int:
    """Processes that compile candidates in parallel (GEMMWATCH_COMPILE_WORKERS; 0 or 1: none)."""
    raw = os.environ.get("GEMMWATCH_COMPILE_WORKERS")
    if raw is None:
        return min(8, max(1, (os.cpu_count() or 2) // 2))
    if not raw.isdigit():
        raise ValueError(f"GEMMWATCH_COMPILE_WORKERS must be a non-negative integer, got {raw!r}")
    return int(raw)


_POOL: list = []


def compile_in_parallel(worker, jobs: list[tuple]) -> None:
    """Run `worker(*job)` for each job in a process pool, to fill Triton's on-disk cache.

    Compiling is most of a cold autotune (about a second per config on the H200
    box's CPU); the workers fill Triton's on-disk cache, so the timing loop then
    loads instead of compiling. Worker processes are spawned once per process.
    A job that fails is left to the caller's own compile, which reports it.
    """
    workers = compile_workers()
    if workers <= 1 or len(jobs) <= 1:
        return
    import concurrent.futures
    import multiprocessing

    if not _POOL:
        import atexit

        _POOL.append(
            concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
        )
        # Shut the workers down before the interpreter tears modules down
        # (otherwise the pool's exit hook fails noisily at shutdown).
        atexit.register(_POOL[0].shutdown, wait=True, cancel_futures=True)
    concurrent.futures.wait([_POOL[0].submit(worker, *job) for job in jobs])


def shutdown_workers() -> None:
    """Stop the compile worker processes (a later compile starts new ones)."""
    while _POOL:
        _POOL.pop().shutdown(wait=True, cancel_futures=True)


def _tuned(key: ProblemKey, target: str) -> GemmConfig | None:
    """The config `gemmwatch tune` measured best for this problem's shape or else its bucket
    (targets/tuned/), if any."""
    import triton

    return library.lookup(target, triton.__version__, key.library_key(), (key.M, key.N, key.K))


def _stored_key(key: ProblemKey, target: str) -> str:
    import triton

    return "|".join([target, f"triton-{triton.__version__}", *map(str, key.cache_key())])


def _load_stored(key: ProblemKey, target: str) -> Selection | None:
    """A choice made by an earlier process, from GEMMWATCH_AUTOTUNE_CACHE (JSON), if set.

    Repeated runs then time the same configs: a config flip between two runs
    would otherwise show up as noise. Entries are per target and Triton version;
    the file should be per kernel source (`gemmwatch run` names it so).
    """
    path = os.environ.get(ENV_CACHE_FILE)
    if not path or not os.path.exists(path):
        return None
    with open(path) as f:
        entry = json.load(f).get(_stored_key(key, target))
    if entry is None:
        return None
    return Selection(key, target, GemmConfig(**entry["config"]), "stored", timings_ms=entry.get("timings_ms", {}))


def _store(selection: Selection) -> None:
    path = os.environ.get(ENV_CACHE_FILE)
    if not path:
        return
    data = {}
    if os.path.exists(path):
        with open(path) as f:
            data = json.load(f)
    data[_stored_key(selection.key, selection.target)] = {
        "config": selection.config.as_dict(),
        "timings_ms": selection.timings_ms,
        "failed": selection.failed,
    }
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    os.replace(tmp, path)  # atomic: concurrent readers never see half a file


def _kernel_hash(compiled) -> str | None:
    """The compiled kernel's hash; a config of two launches (gluon `tail_halves`) gives a list: both,
    joined by "+"."""
    if isinstance(compiled, (list, tuple)):
        hashes = [_kernel_hash(c) for c in compiled]
        return "+".join(hashes) if hashes and all(hashes) else None
    return getattr(compiled, "hash", None)


def run(
    key: ProblemKey,
    launch: Callable[[GemmConfig], object],
    *,
    forced: GemmConfig | None = None,
    precompile: Callable[[list[GemmConfig]], None] | None = None,
    ineligible: Callable[[GemmConfig], str | None] = lambda cfg: None,
) -> Selection:
    """Launch the problem with the cached, forced or newly chosen config.

    `precompile(configs)`, if given, compiles candidates ahead of timing (in
    parallel, into Triton's cache); compile errors then surface in the timing loop.
    `ineligible(config)` says why a config cannot run these operands (e.g. the
    tma variant on unaligned ones) or None: such candidates are not tried, and
    a remembered choice that cannot run falls back to its "tile" variant.
    """
    if forced is not None:
        if not isinstance(forced, GemmConfig):
            raise TypeError(f"config must be a targets.GemmConfig, got {type(forced).__name__}")
        reason = ineligible(forced)
        if reason:
            raise ValueError(f"config {forced} cannot run this problem: {reason}")
        compiled = launch(forced)
        return _remember(Selection(key, detect().name, forced, "forced", kernel_hash=_kernel_hash(compiled)))
    spec = detect()
    if _SEARCH:
        if spec.is_interpreter:
            raise RuntimeError("fresh_search times candidates: the interpreter's timings are not performance")
        _, timer, configs = _SEARCH
        refused: dict[str, str] = {}
        if configs is None:
            candidates = _eligible_candidates(spec, key, ineligible)
        else:  # (the configs these operands refuse are a search's negative results too)
            refused = {str(c): f"refused: {why}" for c in configs if (why := ineligible(c))}
            candidates = [c for c in configs if str(c) not in refused]
        selection = _time_candidates(key, spec.name, candidates[: top_k()], launch, precompile, timer, refused)
        return _remember(selection)
    # (a tuned choice is remembered per shape, the library's may be; any other per bucket)
    cached = _CACHE.get(key.shape_key()) or _CACHE.get(key.cache_key())
    if cached is not None:
        return _launch_chosen(cached, key, launch, ineligible)
    tuned = _tuned(key, spec.name)
    if tuned is not None:
        _CACHE[key.shape_key()] = selection = Selection(key, spec.name, tuned, "tuned")
        return _launch_chosen(selection, key, launch, ineligible)
    stored = _load_stored(key, spec.name)
    if stored is not None:
        _CACHE[key.cache_key()] = stored
        return _launch_chosen(stored, key, launch, ineligible)
    candidates = _eligible_candidates(spec, key, ineligible)
    if spec.is_interpreter:
        selection = Selection(key, spec.name, candidates[0], "ranked")
        selection.kernel_hash = _kernel_hash(launch(selection.config))
    else:
        selection = _time_candidates(key, spec.name, candidates[: top_k()], launch, precompile)
        _store(selection)
    _CACHE[key.cache_key()] = selection
    return _remember(selection)


def _launch_chosen(
    selection: Selection,
    key: ProblemKey,
    launch: Callable[[GemmConfig], object],
    ineligible: Callable[[GemmConfig], str | None],
) -> Selection:
    """Launch a remembered choice, or what runs in its place for these operands (`_runnable`);
    the selection returned names the config that ran."""
    import dataclasses

    config = _runnable(selection.config, ineligible, key, selection.target)
    compiled = launch(config)
    if config == selection.config:
        if selection.kernel_hash is None:
            selection.kernel_hash = _kernel_hash(compiled)
        return _remember(selection)
    ran = dataclasses.replace(
        selection, config=config, kernel_hash=_kernel_hash(compiled), instead_of=str(selection.config)
    )
    return _remember(ran)


def _eligible_candidates(spec, key: ProblemKey, ineligible: Callable[[GemmConfig], str | None]) -> list[GemmConfig]:
    """The target's candidates for this problem, best-ranked first, without those these operands cannot take:
    the first MAX_CONFIGS of them (refused ones do not take places: fp32's `kmajor_b` twins, ineligible for
    ieee precision, are a third of its first candidates). Where the tuned library holds rankings of
    problems of the same kind, the space is taken in the order they give (`targets.prior`): a problem
    the library has no entry for is autotuned over the configs its nearest cells ran fastest, with the
    target's first guesses between them. A chip with no rankings of its own takes those of a chip of
    the same die (`targets.catalogue.siblings`: an untuned H100 SXM the H200's)."""
    import triton

    space = candidate_configs(spec, key.dtype, key.M, key.N, key.K, limit=None)
    timings = library.coarse_timings(spec.name, triton.__version__, key.library_key())
    if timings:
        space = prior.order(space, prior.predicted(timings, key.cell_name()))
    return list(itertools.islice((c for c in space if not ineligible(c)), MAX_CONFIGS))


def _runnable(
    config: GemmConfig, ineligible: Callable[[GemmConfig], str | None], key: ProblemKey, target: str
) -> GemmConfig:
    """`config`, or what runs in its place when these operands cannot take it (the bucket's
    choice was made for other operands: aligned ones, or without the fused epilogue that shares
    its GEMM's bucket): the bucket's runner-up in the tuned library that they can take, else
    `config`'s tile variant."""
    import dataclasses

    import triton

    if not ineligible(config):
        return config
    for other in library.runners_up(target, triton.__version__, key.library_key()):
        if not ineligible(other):
            return other
    # (without what only other variants take: the Gluon kernel's own split, stream-K, tail launch,
    # clusters and extra columns; the TMA kernel's K-major copy of B and tiles of one line offset)
    fallback = dataclasses.replace(
        config, variant="tile", split_k=1, stream_k=False, tail_halves=False, cluster_m=1, cluster_n=1, extra_n=0,
        kmajor_b=False, phase_a=False, half_lines=False,
    )  # fmt: skip
    return fallback if not ineligible(fallback) else dataclasses.replace(fallback, late_promotion=False)


def _do_bench_ms(fn: Callable[[], object]) -> float:
    """Short runs of `fn` (triton's do_bench median, ms): this ranks configs; the benchmarks measure properly."""
    from triton.testing import do_bench

    return do_bench(fn, warmup=5, rep=20, return_mode="median")


def failure_reason(err: Exception) -> str:
    """A failed candidate's record: the error's type and the first line of its message."""
    text = str(err).strip()
    return f"{type(err).__name__}: {text.splitlines()[0] if text else ''}"


class NoCandidateRan(RuntimeError):
    """No candidate config of a search ran: `failed` holds why, per config name."""

    def __init__(self, message: str, failed: dict[str, str]):
        super().__init__(message)
        self.failed = failed


def _time_candidates(key, target, candidates, launch, precompile, timer=None, refused=None) -> Selection:
    import triton

    start = time.perf_counter()
    timings: dict[GemmConfig, float] = {}
    failed: dict[str, str] = dict(refused or {})
    if precompile is not None and len(candidates) > 1:
        precompile(list(candidates))
    for cfg in candidates:
        try:
            launch(cfg)  # compile
        except (triton.runtime.errors.OutOfResources, triton.compiler.errors.CompilationError) as err:
            failed[str(cfg)] = failure_reason(err)
            continue
        try:
            timings[cfg] = (timer or _do_bench_ms)(lambda cfg=cfg: launch(cfg))
        except (triton.runtime.errors.OutOfResources, triton.compiler.errors.CompilationError) as err:
            failed[str(cfg)] = failure_reason(err)
        except RuntimeError as err:  # a caller's timer (CUDA-graph capture) that this config defeats
            if timer is None:
                raise
            failed[str(cfg)] = f"timing: {failure_reason(err)}"
    if not timings:
        raise NoCandidateRan(
            f"no candidate config ran for {key}: "
            + ("; ".join(f"{c}: {e}" for c, e in failed.items()) or "there were none"),
            failed,
        )
    best = min(timings, key=timings.get)
    compiled = launch(best)  # leave the chosen config's result in the output
    return Selection(
        key,
        target,
        best,
        "timed",
        tune_seconds=time.perf_counter() - start,
        timings_ms={str(c): round(t, 5) for c, t in timings.items()},
        failed=failed,
        kernel_hash=_kernel_hash(compiled),
    )
