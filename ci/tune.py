"""`gemmwatch tune`: the tuning pipeline that fills the tuned-config library.

detect the target -> generate candidates from its TargetSpec -> compile and
benchmark each (the same timing protocol as the suites, interleaved with the
native library) on every cell of the matrix in a shape bucket -> pick the
correct one fastest over them -> write it, with the configs that lost and the
ones that failed, to targets/tuned/<target>-triton<ver>.json.
Per-PR runs then read the library instead of autotuning.
"""

from __future__ import annotations

import datetime
import json
import math
import re
import statistics
import sys
import time
from pathlib import Path

# A re-tune replaces a bucket's entry only with a config faster by more than this (same rounds).
REPLACE_MARGIN = 0.01
# Rounds of the coarse pass's graph timing per candidate (the fine pass takes --rounds).
COARSE_ROUNDS = 5
# A seeded tune calls the seed's config regressed where it runs this much slower under this Triton
# than the seed library recorded under its own (far above card-to-card differences, 1-3% on the H200).
SEED_REGRESSION = 1.25


def coarse_ms(fn) -> float:
    """The coarse pass's timer: milliseconds per call from a few rounds of CUDA-graph replays
    with the L2 flushed (the suites' protocol, short). Per-launch events (`do_bench`) time the
    host's launch overhead instead for 10-20 us kernels: on the H200 they gave decode configs
    0.048-0.13 ms where the graph replays gave 0.013-0.025 ms, in a different order."""
    from benchmarks.timing import measure

    return measure(fn, rounds=COARSE_ROUNDS, warmup=1).median(0) * 1e3


def bucket_candidates(
    spec,
    dtype: str,
    cells: list,
    top_k: int | None,
    match: re.Pattern | None = None,
    each_path: int = 0,
    timings: dict | None = None,
):
    """What a bucket's coarse pass times: (the first cell's space, its candidates, [(another cell,
    its candidates)]). Each cell's space is the target's whole for its shape (`match`: the configs
    in it whose names it finds); its candidates, the `top_k` first of it (without `match`, of its
    MAX_CONFIGS first). Every cell ranks its own: ranked on the first cell alone, six second cells
    on the H200 ran configs 1.6-2.5% slower than their own best (fp8 4096 x 3584 x 3584 beside
    4096^3: 0.902 -> 0.935x native in the tune), and some configs are offered to one cell alone
    (the Gluon kernel's split of the last, partial wave of tiles follows each cell's tile count:
    fp8 4096 x 3584 is offered splits, 4096^3 none). With `each_path` N, each cell's candidates also
    take the first N of every kernel path of its space that they hold fewer of (`with_each_path`;
    not with `top_k` 0). With `timings` (a library's coarse rankings, `targets.prior.cell_timings`),
    each cell's space is first reordered by what its nearest cells' rankings predict
    (`targets.prior.order`)."""
    from targets import MAX_CONFIGS, candidate_configs, prior

    def offered(cell) -> tuple[list, list]:  # (the space, the part of it to time)
        space = candidate_configs(spec, dtype, cell.M, cell.N, cell.K, limit=None)
        if match is not None:
            space = [c for c in space if match.search(str(c))]
        if timings:
            space = prior.order(space, prior.predicted(timings, cell.name))
        return space, space if match is not None else space[:MAX_CONFIGS]

    def candidates(space, to_time) -> list:
        chosen = to_time[:top_k]
        return with_each_path(chosen, space, each_path) if top_k != 0 else chosen

    space, to_time = offered(cells[0])
    theirs = []
    for cell in cells[1:]:
        own = candidates(*offered(cell))
        if own:
            theirs.append((cell, own))
    return space, candidates(space, to_time), theirs


def with_each_path(chosen: list, space: list, each_path: int) -> list:
    """`chosen` and, after them, the first configs (in `space`'s order) of each kernel path
    (`kernel_path`) of `space` of which `chosen` holds fewer than `each_path`. The space lists its
    configs best guess first, so a short coarse pass can leave whole paths out: on the H200 the first
    24 of fp16 1x4608x3584 hold none of the one-row FMA configs (the first is the 29th), which won
    three one-row cells past native once the first 128 were ranked (docs/BENCHMARKS.md, 2026-12-04
    fifth session)."""
    held: dict[tuple, int] = {}
    for cfg in chosen:
        held[kernel_path(cfg)] = held.get(kernel_path(cfg), 0) + 1
    out, names = list(chosen), {str(c) for c in chosen}
    for cfg in space:
        path = kernel_path(cfg)
        if held.get(path, 0) < each_path and str(cfg) not in names:
            held[path] = held.get(path, 0) + 1
            out.append(cfg)
            names.add(str(cfg))
    return out


def operand_dtype(dtype: str) -> str:
    """A matrix dtype's operands as the kernels and the candidate space name them ("fp32-tf32" and
    "fp32-ieee" -> "fp32", "fp8_e4m3-fastacc" -> "fp8_e4m3")."""
    import torch

    from benchmarks.cells import DTYPES
    from kernels import DTYPE_NAMES

    return DTYPE_NAMES[getattr(torch, DTYPES[dtype][0])]


def space_of(spec, cell) -> list:
    """The target's whole candidate space for a cell (anything with dtype, M, N and K: a matrix
    `Cell`, a `targets.prior.CellName`)."""
    from targets import candidate_configs

    return candidate_configs(spec, operand_dtype(cell.dtype), cell.M, cell.N, cell.K, limit=None)


def coarse_rank(prep, configs: list) -> tuple[dict[str, float], dict[str, str]]:
    """The coarse pass on one cell: each of `configs` (in their order) compiled in parallel and
    timed with a few graph replays (`coarse_ms`): ({config: ms}, {config: why it failed, or why
    these operands refuse it})."""
    from kernels import autotune

    try:
        with autotune.fresh_search(len(configs), timer=coarse_ms, configs=configs):
            prep.triton()
    except autotune.NoCandidateRan as exc:  # (the incumbent is still timed in the fine pass)
        return {}, dict(exc.failed)
    search = autotune.last()
    return dict(search.timings_ms), dict(search.failed)


def kernel_path(cfg) -> tuple:
    """The code path a config runs (variant, late promotion, fma, swap-AB, the Gluon kernel's split
    of K, its clusters): the fine pass takes the fastest few of each."""
    return cfg.variant, cfg.late_promotion, cfg.fma, cfg.swap_ab, cfg.uses_gluon and cfg.split_k > 1, cfg.clustered


def finalists_of(ranked: dict, configs: list, finalists: int) -> list:
    """The `finalists` fastest of each kernel path among `configs` by their coarse times `ranked`
    ({name: ms}; configs without a time left out), fastest path first."""
    by_path: dict[tuple, list] = {}
    for cfg in sorted((c for c in configs if str(c) in ranked), key=lambda c: ranked[str(c)]):
        by_path.setdefault(kernel_path(cfg), []).append(cfg)
    return [cfg for fastest in by_path.values() for cfg in fastest[:finalists]]


def tune_bucket(
    cells,
    *,
    rounds: int,
    top_k: int | None,
    finalists: int,
    spec,
    device: str,
    library=None,
    refine: int = 0,
    match: re.Pattern | None = None,
    each_path: int = 0,
    timings: dict | None = None,
    rank=None,
    extra: list | None = None,
) -> dict:
    """Rank the candidates on each cell of a bucket, time the best of each kernel path on all of
    the bucket's cells; returns the bucket's library entry.

    Coarse pass (GPU, `rank`: `coarse_rank`): the first cell's candidates (`bucket_candidates`)
    compiled in parallel, each timed with a few graph replays (`coarse_ms`); then,
    with `refine` N, the other K steps, stage counts and splits of the N fastest
    output tiles (`targets.configs.siblings`), timed the same way; then each other
    cell's own candidates, on that cell (the entry's `ranked_on`). With `timings` (the
    library's coarse rankings), each cell's candidates are taken from its space as the
    rankings of its nearest cells order it (`targets.prior`). (Until 2026-12-05 the first
    cell's pass timed the launcher's own first candidates, as many as `bucket_candidates`
    took: the configs `--each-path` added there were not the ones timed.)
    Fine pass: the `finalists` fastest of each kernel path (`finalists_of`) on each
    cell, checked against the float64 reference and timed with the suites' protocol,
    interleaved with each other and the native library, on every cell of the matrix
    in the bucket (each cell the configs right on it): the library holds one config
    per bucket, and a config chosen on one cell alone was measured 7-14% slower on its bucket's other cells on the
    H200 (1000^3 beside 1024^3). The config with the best geometric mean of its
    time relative to each cell's fastest wins (a cell on which another of them was
    faster by over `library.SHAPE_MARGIN` runs that one: `Library.shape_configs`). The bucket's entry in `library`
    (the incumbent) always joins the fine pass, and is replaced only by a
    config better by more than REPLACE_MARGIN in the same rounds. In the
    interpreter nothing is timed meaningfully: the first `top_k` candidates all
    go to the fine pass (a pipeline check).

    `extra` (`--also`: the configs another library runs on these cells) joins the fine pass as the
    incumbent does.
    `match` narrows the space to the configs whose names it finds (searched in the whole
    space, not only its MAX_CONFIGS first), e.g. one kernel path; the incumbent, and the configs
    of its cells that run their own (`Library.shape_configs`), still join the fine pass, so a
    narrowed tune replaces an entry, or a cell's own config, only with a faster one.
    """
    from benchmarks.cells import TOLERANCE, Prepared, relative_error
    from benchmarks.measure import timed_sides, timing_plan
    from benchmarks.timing import measure
    from kernels import DTYPE_NAMES, autotune
    from targets.configs import siblings

    first = cells[0]
    prep = Prepared(first, device)
    space, candidates, theirs = bucket_candidates(
        spec, DTYPE_NAMES[prep.a.dtype], cells, top_k, match, each_path, timings
    )
    if not candidates and not theirs and top_k != 0:  # (--top-k 0: the library's entry alone, below)
        return {"key": None, "skipped": f"no candidate config matches {match.pattern!r}" if match else "no candidate"}
    coarse, failed = {}, {}  # (coarse: the first cell's ranking; each other cell's in ranked_on)
    ranked_on: dict[str, dict[str, float]] = {}
    if rank is None and not spec.is_interpreter:
        rank = coarse_rank
    if rank is None:  # (the interpreter: nothing to rank by, every candidate to the fine pass)
        chosen = list(dict.fromkeys([*candidates, *(c for _, own in theirs for c in own)]))
    else:
        if candidates:  # (what bucket_candidates took, in its order: not the launcher's own first ones)
            coarse, failed = rank(prep, candidates)
        if refine:
            fastest = sorted((c for c in candidates if str(c) in coarse), key=lambda c: coarse[str(c)])
            more = [c for c in siblings(fastest, [c for c in space if str(c) not in failed], refine)
                    if str(c) not in coarse]  # fmt: skip
            if more:
                ran, refused = rank(prep, more)
                coarse.update(ran)
                failed.update(refused)
                candidates += [c for c in more if str(c) in ran]
        chosen = finalists_of(coarse, candidates, finalists)
        for cell, own in theirs:  # each other cell ranks its own candidates, its finalists join
            ran, refused = rank(Prepared(cell, device), own)
            ranked_on[cell.name] = dict(ran)
            for cfg, why in refused.items():
                failed.setdefault(cfg, f"{cell.name}: {why}")
            chosen += [cfg for cfg in finalists_of(ran, own, finalists) if cfg not in chosen]
    key, incumbent = None, None
    if top_k == 0:  # (no candidate runs to tell the bucket's key: the library's entry for its cells)
        key = library.key_of_cells([cell.name for cell in cells]) if library is not None else None
        if key is None:
            return {"key": None, "skipped": "no library entry for its cells to time again (--top-k 0: no candidates)"}
    times: dict[str, dict] = {}  # cell -> {config: ms}, the configs right on that cell
    native_ms: dict[str, float | None] = {}

    def correct_on(cell, prep, ref, cfg) -> bool:
        nonlocal key
        try:
            out = prep.triton(config=cfg)
        except Exception as exc:  # noqa: BLE001 - a config that fails is a negative result
            failed[str(cfg)] = f"{cell.name}: {autotune.failure_reason(exc)}"
            return False
        actual = autotune.last().key.library_key()
        if key is not None and key != actual:  # (a key taken from the library's cell names: --top-k 0)
            failed[str(cfg)] = f"{cell.name}: runs as {actual}, not the library's {key}"
            return False
        key = actual
        err = relative_error(out, ref)
        if err > TOLERANCE[cell.dtype]:
            failed[str(cfg)] = f"{cell.name}: wrong result: relative error {err:.3g}"
        return err <= TOLERANCE[cell.dtype]

    for n, cell in enumerate(cells):
        prep = prep if n == 0 else Prepared(cell, device)
        ref = prep.reference()
        # Each cell times the configs right on it: one wrong or failing on another cell of the
        # bucket cannot be the bucket's, but may still be this cell's own (`Library.shape_configs`).
        right = [cfg for cfg in chosen if correct_on(cell, prep, ref, cfg)]
        if n == 0:
            incumbent = library.config_for(key) if library is not None and key else None
            # The entry's configs of its own cells too (`Library.shape_configs`): a narrowed re-tune
            # (`match`) that did not time them would drop them from the cells' `tried`, and with
            # them the shapes' own configs (on the H200, 1000^3's TMA tile beside 1024^3's).
            own = list(library.shape_configs(key).values()) if incumbent is not None else []
            for cfg in dict.fromkeys([incumbent, *own, *(extra or [])]):
                if cfg is not None and cfg not in chosen:
                    chosen.append(cfg)
                    if correct_on(cell, prep, ref, cfg):
                        right.append(cfg)
        del ref
        if not right:
            return {"key": key, "error": f"no candidate compiled and computed the right result on {cell.name}",
                    "failed": failed}  # fmt: skip
        native = prep.native_supported() is None
        calls = [lambda ops, cfg=cfg, prep=prep: prep.triton(config=cfg, operands=ops) for cfg in right]
        if native:
            calls.append(lambda ops, prep=prep: prep.native(operands=ops))
        # As the suites time them: the same placements, calls per replay and cooldown.
        sides = timed_sides(prep, device, spec, calls)
        timing = measure(*sides, rounds=rounds, warmup=1, **timing_plan(prep, spec))
        times[cell.name] = {cfg: timing.median(i) * 1e3 for i, cfg in enumerate(right)}
        native_ms[cell.name] = timing.median(len(right)) * 1e3 if native else None
        del prep
    # The bucket's config: of those right on every cell, the best geometric mean of its time
    # relative to each cell's fastest of them.
    common = [cfg for cfg in chosen if all(cfg in t for t in times.values())]
    if not common:
        return {"key": key, "error": "no candidate computed the right result on every cell of the bucket",
                "failed": failed}  # fmt: skip
    score = {
        cfg: math.exp(statistics.fmean(math.log(t[cfg] / min(t[c] for c in common)) for t in times.values()))
        for cfg in common
    }
    best = min(common, key=score.get)
    if incumbent in score and score[best] > score[incumbent] * (1 - REPLACE_MARGIN):
        best = incumbent  # within the fine pass's noise: no churn in the library (or the PR gate)
    on_first = times[first.name]
    entry = {
        "key": key,
        "cell": first.name,
        "config": best.as_dict(),
        "time_ms": on_first[best],
        "native_ms": native_ms[first.name],
        "speedup_over_native": native_ms[first.name] / on_first[best] if native_ms[first.name] else None,
        # the entry this one replaces (or keeps), timed in the same rounds
        "incumbent": {"config": str(incumbent), "time_ms": on_first.get(incumbent)} if incumbent else None,
        "tried": {str(c): round(t, 6) for c, t in sorted(on_first.items(), key=lambda kv: kv[1])},
        "ranked_ms": coarse,  # the coarse pass's short-run times (CUDA-graph medians) on the first cell
        **({"ranked_on": ranked_on} if ranked_on else {}),  # {another cell: its own coarse ranking}
        "failed": failed,
    }
    if len(cells) > 1:
        entry["cells"] = {
            name: {
                "time_ms": t[best],
                "speedup_over_native": native_ms[name] / t[best] if native_ms[name] else None,
                "tried": {str(c): round(x, 6) for c, x in sorted(t.items(), key=lambda kv: kv[1])},
            }
            for name, t in times.items()
        }
        entry["bucket_score"] = {str(c): round(x, 4) for c, x in sorted(score.items(), key=lambda kv: kv[1])}
    return entry


def _utc(when: datetime.datetime) -> datetime.datetime:
    return when.replace(tzinfo=datetime.UTC) if when.tzinfo is None else when


def _measured_since(entry: dict, since: datetime.datetime | None) -> bool:
    """Whether a library entry was measured at or after `since` (never, for None or no time recorded)."""
    if since is None or not entry.get("measured"):
        return False
    try:
        return _utc(datetime.datetime.fromisoformat(entry["measured"])) >= since
    except ValueError:
        return False


def past_deadline(elapsed: float, bucket_seconds: list[float], deadline: float | None) -> bool:
    """Whether the next bucket would end past `deadline` seconds: judged by the mean of the buckets
    tuned so far (before the first, only whether the deadline has passed already)."""
    if deadline is None:
        return False
    expected = sum(bucket_seconds) / len(bucket_seconds) if bucket_seconds else 0.0
    return elapsed + expected > deadline


# What a CUDA context that has failed for good says (an illegal address, a kernel's trap): every
# later call in the process fails the same way, so a tune stops at the bucket it was in.
GPU_CONTEXT_FAILURES = (
    "illegal memory access",
    "unspecified launch failure",
    "illegal instruction",
    "misaligned address",
    "an illegal address",
    "device-side assert",
)


def gpu_context_failed(exc: BaseException) -> bool:
    """Whether `exc` says the process's CUDA context has failed (`GPU_CONTEXT_FAILURES`)."""
    text = str(exc).lower()
    return "cuda" in text and any(what in text for what in GPU_CONTEXT_FAILURES)


def main(args) -> int:
    from benchmarks import matrix
    from ci.cli import use_interpreter_without_gpu

    if args.fresh and not args.dir:
        print("gemmwatch tune: --fresh goes with --dir (it would empty the launcher's own library)", file=sys.stderr)
        return 2
    if args.refine < 0:
        print(f"gemmwatch tune: --refine must be a non-negative integer, got {args.refine}", file=sys.stderr)
        return 2
    since = None
    if args.resume_since is not None:
        try:
            since = _utc(datetime.datetime.fromisoformat(args.resume_since))
        except ValueError:
            print(f"gemmwatch tune: --resume-since must be an ISO 8601 time (e.g. 2026-12-02T02:36:52+00:00), "
                  f"got {args.resume_since!r}", file=sys.stderr)  # fmt: skip
            return 2
    if args.deadline is not None and not args.deadline > 0:
        print(
            f"gemmwatch tune: --deadline must be a positive number of seconds, got {args.deadline:g}", file=sys.stderr
        )
        return 2
    for name in ("top_k", "each_path", "finalists", "rounds"):
        value = getattr(args, name)
        zero_ok = name in ("top_k", "each_path")
        if value is not None and value < (0 if zero_ok else 1):
            what = "a non-negative" if zero_ok else "a positive"
            print(f"gemmwatch tune: --{name.replace('_', '-')} must be {what} integer, got {value}", file=sys.stderr)
            return 2
    match = None
    if args.match is not None:
        try:
            match = re.compile(args.match)
        except re.error as err:
            print(f"gemmwatch tune: --match {args.match!r} is not a regular expression: {err}", file=sys.stderr)
            return 2
    if (args.below is None) != (args.run is None):
        print("gemmwatch tune: --below SPEEDUP and --run RESULT.json go together", file=sys.stderr)
        return 2
    slow = measured = None
    if args.below is not None:
        from ci.asv_results import ResultsError
        from ci.table import cell_rows

        if not args.below > 0:
            print(f"gemmwatch tune: --below must be a speedup > 0 (e.g. 0.9), got {args.below}", file=sys.stderr)
            return 2
        try:
            rows = cell_rows(args.run)
        except ResultsError as err:
            print(f"gemmwatch tune: --run: {err}", file=sys.stderr)
            return 2
        speedups = {cell: row["speedup"] for cell, row in rows.items() if row["speedup"] is not None}
        slow = {cell for cell, speedup in speedups.items() if speedup < args.below}
        measured = {cell for cell, row in rows.items() if row["speedup"] is not None}
    if args.target is not None and not args.plan:
        print("gemmwatch tune: --target goes with --plan (a tune times the GPU it runs on)", file=sys.stderr)
        return 2
    interpreter = use_interpreter_without_gpu()
    if args.plan and args.target is not None:
        interpreter = False  # (the target's matrix and space, planned from any machine)
    elif interpreter and not args.allow_interpreter and not args.plan:
        print(
            "gemmwatch tune: no GPU: tuning compares timings, and the interpreter's are not performance "
            "(--allow-interpreter runs the pipeline anyway, into a cpu-interpreter library)",
            file=sys.stderr,
        )
        return 2
    try:
        shapes = [s for item in args.shapes or [] for s in item.split(",") if s]
        dtypes = [d for item in args.dtypes or [] for d in item.split(",") if d]
        loaded = matrix.load(args.matrix)
        selection = matrix.select(loaded, interpreter=interpreter, shapes=shapes or None, dtypes=dtypes or None)
    except matrix.MatrixError as err:
        print(f"gemmwatch tune: {err}", file=sys.stderr)
        return 2
    import torch
    import triton

    from benchmarks.context import device_description, software_versions
    from targets import GemmConfig, detect, library, shape_bucket

    if args.target is not None:
        from targets import get

        try:
            spec = get(args.target)
        except KeyError as err:
            print(f"gemmwatch tune: --target: {err.args[0]}", file=sys.stderr)
            return 2
    else:
        spec = detect()
    device = "cuda" if torch.cuda.is_available() and not spec.is_interpreter else "cpu"
    directory = Path(args.dir) if args.dir else library.library_dir()
    path = library.library_path(spec.name, triton.__version__, directory)
    lib = library.load(spec.name, triton.__version__, directory)
    source = library.library_path(spec.name, triton.__version__, library.library_dir())
    others = {}  # --seed and --also: each another Triton's or a sibling chip's library, or None
    for option in ("seed", "also"):
        given = getattr(args, option)
        try:
            others[option] = load_seed(Path(given), spec.name, triton.__version__) if given else None
        except ValueError as err:
            print(f"gemmwatch tune: --{option} {given}: {err}", file=sys.stderr)
            return 2
    seed, also = others["seed"], others["also"]
    if not path.exists() and not args.fresh and source.exists():
        # A scratch directory (e.g. a scheduled re-tune's, compared with `tuned-diff` afterwards):
        # start from the library the launcher reads, so the buckets' configs are timed beside the
        # candidates and the entries not tuned now are kept.
        lib = library.load(spec.name, triton.__version__, library.library_dir())
        print(f"gemmwatch tune: {directory} has no {path.name}: starting from {source} ({len(lib.entries)} "
              f"entries; --fresh starts an empty one)", flush=True)  # fmt: skip
    incumbents = lib if seed is None else Seeded(lib, seed)

    def timings() -> dict | None:  # this library's coarse rankings as they stand (and the seed's, for its cells alone)
        if args.order != "library":
            return None
        return {**borrowed[1], **prior_rankings(lib, seed)}

    # A chip's first tune (no rankings of its own yet): those of the sibling of the same die order it,
    # its own cells' rankings taking their place as the tune makes them.
    borrowed = (None, {})
    if args.order == "library" and not prior_rankings(lib, seed):
        borrowed = library.sibling_timings(spec.name, triton.__version__, lambda other: prior_rankings(other, None))
        if borrowed[0]:
            print(f"gemmwatch tune: no coarse rankings for {spec.name} yet; the candidates are taken in the order "
                  f"the rankings of {borrowed[0]} (the same die) give", flush=True)  # fmt: skip

    began_at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    lib.meta = {
        **{k: str(v) for k, v in {**device_description(), **software_versions()}.items()},
        "date": began_at,
        "rounds": args.rounds,
        "interpreter": interpreter,
    }
    cells = [c for c in selection.cells if not c.epilogue]  # epilogues share their GEMM's bucket
    buckets: dict[tuple, list] = {}  # the library keeps one entry per bucket: tuned on all its cells
    for cell in cells:
        buckets.setdefault((cell.dtype, shape_bucket(cell.M, cell.N, cell.K)), []).append(cell)
    # An entry serves every cell of its bucket: a bucket is tuned on all the matrix's cells in it,
    # whatever --shapes narrowed (one cell's tune would give its config to the others untimed).
    whole = matrix.select(loaded, interpreter=interpreter, dtypes=dtypes or None).cells
    for cell in whole:
        members = buckets.get((cell.dtype, shape_bucket(cell.M, cell.N, cell.K)))
        if members is not None and not cell.epilogue and cell not in members:
            members.append(cell)
    if slow is not None:
        picked = [c for c in cells if c.name in slow]
        print(f"gemmwatch tune: {len(picked)} of the {len(cells)} selected cells are below {args.below:g}x native "
              f"in {args.run}" + (f": {', '.join(c.name for c in picked)}" if picked else ""), flush=True)  # fmt: skip
        unmeasured = [c for c in cells if c.name not in measured]
        if unmeasured:  # (a run of part of the matrix: its other cells are not known to be slow)
            print(f"gemmwatch tune: {len(unmeasured)} of the {len(cells)} selected cells have no speedup in {args.run}, "
                  f"so none of them is tuned: {', '.join(c.name for c in unmeasured[:8])}"
                  + (", ..." if len(unmeasured) > 8 else ""), flush=True)  # fmt: skip
        # A bucket with a slow cell is tuned on all its cells: its entry serves them all,
        # and a config that helps the slow one must not be picked blind to what it costs the others.
        buckets = {key: members for key, members in buckets.items() if any(c.name in slow for c in members)}
        # The slowest first: a tune stopped by its deadline has spent its time where the most is lost.
        buckets = dict(sorted(buckets.items(), key=lambda kv: min(speedups.get(c.name, math.inf) for c in kv[1])))
    if args.plan:
        print_plan(buckets, spec, args, timings(), lib.entries, also)
        return 0
    start = time.perf_counter()
    failures = 0
    already = {entry.get("cell") for entry in lib.entries.values() if args.resume or _measured_since(entry, since)}
    why = "--resume" if args.resume else "--resume-since"
    bucket_seconds: list[float] = []  # of the buckets tuned (what the deadline judges by)
    not_reached: list = []
    regressed: list = []  # (cells, the seed's config, its ms under the seed's Triton, under this one)
    for i, members in enumerate(buckets.values(), 1):
        cell = members[0]
        others = f" (+ {', '.join(c.name for c in members[1:])})" if len(members) > 1 else ""
        if any(c.name in already for c in members):
            print(f"[{i}/{len(buckets)}] {cell.name}{others}: in the library already ({why}), skipped", flush=True)
            continue
        if not_reached or past_deadline(time.perf_counter() - start, bucket_seconds, args.deadline):
            not_reached += members
            continue
        began = time.perf_counter()
        try:
            entry = tune_bucket(
                members,
                rounds=args.rounds,
                top_k=args.top_k,
                finalists=args.finalists,
                spec=spec,
                device=device,
                library=incumbents,
                refine=args.refine,
                match=match,
                each_path=args.each_path,
                timings=timings(),
                extra=configs_run(also, members) if also is not None else None,
            )
        except Exception as exc:  # (only a failed GPU context is handled here; anything else goes on up)
            if not gpu_context_failed(exc):
                raise
            from kernels import autotune

            print(f"gemmwatch tune: [{i}/{len(buckets)}] {cell.name}{others}: the GPU failed while this bucket's "
                  f"configs ran ({autotune.failure_reason(exc)}); this process cannot use it again. {path} keeps the "
                  f"buckets tuned before it. To find the config that faults, run the bucket's candidates one per "
                  f"process (`gemmwatch probe --cells '{cell.name}'`, with the same --match); the same options with "
                  f"--resume-since {began_at} then go on from this bucket.", file=sys.stderr)  # fmt: skip
            return 3
        if "skipped" in entry:
            print(f"[{i}/{len(buckets)}] {cell.name}{others}: skipped, {entry['skipped']}", flush=True)
            continue
        bucket_seconds.append(time.perf_counter() - began)
        if "error" in entry or entry["key"] is None:
            failures += 1
            print(f"[{i}/{len(buckets)}] {cell.name}{others}: {entry.get('error')}", flush=True)
            continue
        key = entry.pop("key")
        entry["measured"] = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        if entry["incumbent"] and seed is not None and incumbents.from_seed(key):
            entry["incumbent"]["triton"] = seed.triton  # (the seed's config, timed under this Triton)
            if seed.target != spec.name:
                entry["incumbent"]["target"] = seed.target  # (a sibling chip's config, timed on this one)
            before = seed_time_ms(seed.entries.get(key), entry["cell"])
            if before:
                entry["incumbent"]["seed_time_ms"] = before  # (where the seed was measured, as it recorded)
                now = entry["incumbent"]["time_ms"]
                # (a Triton regression is judged on the same chip: another memory system times otherwise)
                if seed.target == spec.name and (now is None or now > before * SEED_REGRESSION):
                    regressed.append((members, entry["incumbent"]["config"], before, now))
                    print(f"[{i}/{len(buckets)}] {cell.name}: the seed's config {entry['incumbent']['config']} "
                          + (f"takes {now:.4f} ms under Triton {triton.__version__}, {now / before:.1f}x its "
                             f"{before:.4f} ms under {seed.triton}" if now is not None
                             else f"fails under Triton {triton.__version__} (it ran under {seed.triton})")
                          + ": a Triton regression", flush=True)  # fmt: skip
        earlier = earlier_results(lib.entries.get(key), entry)
        if earlier:
            entry["earlier"] = earlier
        lib.entries[key] = entry
        lib.save(path)  # after every cell: an interrupted tune keeps what it measured
        speed = entry["speedup_over_native"]
        was = entry["incumbent"]
        verdict = ""
        if was:
            whose = (
                f" ({was['target']}'s, Triton {was['triton']})"
                if was.get("target")
                else (f" (Triton {was['triton']}'s)" if was.get("triton") else "")
            )
            verdict = (
                f"; kept the incumbent{whose}"
                if was["config"] == str(GemmConfig(**entry["config"]))
                else (
                    f"; replaced {was['config']}{whose} ({was['time_ms']:.4f} ms)"
                    if was["time_ms"]
                    else f"; replaced {was['config']}{whose} (failed)"
                )
            )
        if also is not None and (not was or was["config"] != str(GemmConfig(**entry["config"]))):
            if GemmConfig(**entry["config"]) in configs_run(also, members):
                verdict += f"; the config {also.target}'s library (Triton {also.triton}) runs"
        print(
            f"[{i}/{len(buckets)}] {cell.name}{others}: {GemmConfig(**entry['config'])} {entry['time_ms']:.4f} ms"
            f"{f' ({speed:.3f}x native)' if speed else ''}; {len(entry['tried'])} tried, {len(entry['failed'])} failed"
            f"{verdict}{own_configs_note(lib, key)} ({time.perf_counter() - start:.0f}s)",
            flush=True,
        )
    lib.save(path)
    summary = timed_summary({"target": lib.target, "triton": lib.triton, "entries": lib.entries})
    print(f"gemmwatch tune: {len(lib.entries)} entries in {path}; the cells they were tuned on, each on the config "
          f"it runs (fp32 left out): {summary}")  # fmt: skip
    if regressed:
        cells_of = [c for members, *_ in regressed for c in members]
        print(f"gemmwatch tune: {len(regressed)} bucket{'s' * (len(regressed) != 1)} whose config from Triton "
              f"{seed.triton}'s library runs over "
              f"{SEED_REGRESSION:g}x slower (or fails) under Triton {triton.__version__}: "
              + "; ".join(f"{members[0].name} {cfg} ({'failed' if now is None else f'{now / before:.2f}x'})"
                          for members, cfg, before, now in regressed)
              + f". A regression of the compiler to report (`gemmwatch bisect --triton` narrows it); tune those "
              f"buckets with candidates: {selection_options(cells_of)}", flush=True)  # fmt: skip
    if not_reached:
        print(f"gemmwatch tune: --deadline {args.deadline:g} s: {len(not_reached)} cells not reached: "
              f"{', '.join(c.name for c in not_reached)} (the same options with --resume-since {began_at} go on "
              f"with them, or with {selection_options(not_reached)})", file=sys.stderr)  # fmt: skip
    return 1 if failures or not_reached else 0


def print_plan(buckets: dict, spec, args, timings: dict | None, entries: dict, also=None) -> None:
    """`--plan`: what each bucket's coarse pass would time on each of its cells, and which of those
    the library's rankings of its neighbours put there (and of them, those `entries` never timed
    on the cell, the most promising first); with `also` (`--also`), the configs it adds."""
    from targets import prior

    match = re.compile(args.match) if args.match else None
    timed = prior.timed(entries)
    order = "each cell's space ordered by its neighbours' rankings" if timings else "the target's order"
    print(f"gemmwatch tune --plan: target {spec.name}, {len(buckets)} buckets, candidates in {order}", flush=True)
    for i, members in enumerate(buckets.values(), 1):
        _, first, theirs = bucket_candidates(
            spec, operand_dtype(members[0].dtype), members, args.top_k, match, args.each_path, timings
        )
        print(f"[{i}/{len(buckets)}] {' + '.join(c.name for c in members)}")
        for cell, chosen in [(members[0], first), *theirs]:
            known = timed.get(cell.name, set())
            liked = prior.predicted(timings, cell.name) if timings else {}
            picked = [c for c in chosen if prior.score(liked, c) <= prior.CAP]
            new = sorted((c for c in picked if str(c) not in known), key=lambda c: prior.score(liked, c))
            shown = ", ".join(f"{c} ({prior.score(liked, c):.3f})" for c in new[:6]) + (", ..." if len(new) > 6 else "")
            print(f"    {cell.name}: {len(chosen)} candidates, {len(picked)} from its neighbours' rankings, "
                  f"{len(new)} of them never timed on it" + (f": {shown}" if new else ""), flush=True)  # fmt: skip
        if also is not None:
            extra = configs_run(also, members)
            print(f"    --also ({also.target}'s library, Triton {also.triton}): "
                  + (", ".join(map(str, extra)) if extra else "no entry for these cells"), flush=True)  # fmt: skip


def own_configs_note(lib, key: str) -> str:
    """What a tune's line adds for the cells of `key`'s bucket that run a config of their own
    (`Library.own_configs`: faster there than the bucket's), with its speedup over native."""
    return "".join(
        f"; {name} runs its own {cfg}" + (f" ({speed:.3f}x native)" if speed else "")
        for name, (cfg, speed) in lib.own_configs(key).items()
    )


def selection_options(cells) -> str:
    """The `--shapes` and `--dtypes` that select `cells` (and whatever else those shapes x dtypes hold)."""
    shapes = " ".join(dict.fromkeys(f"{c.M}x{c.N}x{c.K}" for c in cells))
    return f"--shapes {shapes} --dtypes {' '.join(dict.fromkeys(c.dtype for c in cells))}"


def seed_time_ms(seed_entry: dict | None, cell: str) -> float | None:
    """What the seed library recorded for its config on `cell` (the entry's first cell, or one of
    its `cells`): None where it recorded nothing for that cell."""
    if not seed_entry:
        return None
    if seed_entry.get("cell") == cell:
        return seed_entry.get("time_ms")
    return ((seed_entry.get("cells") or {}).get(cell) or {}).get("time_ms")


def configs_run(other, cells) -> list:
    """The configs library `other` (`--also`) runs on these cells: its entry's for their bucket and
    those of its cells that run their own (`Library.shape_configs`); none where it has no entry."""
    key = other.key_of_cells([cell.name for cell in cells])
    if key is None:
        return []
    return list(dict.fromkeys([other.config_for(key), *other.shape_configs(key).values()]))


def prior_rankings(lib, seed) -> dict:
    """The coarse rankings (`targets.prior.cell_timings`) of a library and its seed's (None: none)."""
    from targets import prior

    return {**(prior.cell_timings(seed.entries) if seed is not None else {}), **prior.cell_timings(lib.entries)}


def load_seed(path: Path, target: str, triton_version: str):
    """The library `--seed` names: of this target, measured with another Triton version, or of a
    sibling of this target's die (`targets.catalogue.siblings`: the H200's for a first H100 SXM
    library), measured on that chip with any Triton version."""
    from targets import catalogue, library

    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ValueError("no such file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ValueError(f"not a tuned-config library (not JSON: {err})") from None
    if not isinstance(data, dict) or not isinstance(data.get("entries"), dict) or "triton" not in data:
        raise ValueError("not a tuned-config library (no 'triton' and 'entries')")
    sibling_names = (
        [other.name for other in catalogue.siblings(catalogue.get(target))] if target in catalogue.CATALOGUE else []
    )
    if data.get("target") != target and data.get("target") not in sibling_names:
        also = f" or of a chip of its die ({', '.join(sibling_names)})" if sibling_names else ""
        raise ValueError(f"a library of target {data.get('target')!r}; expected one of {target!r}{also}")
    if data.get("target") == target and data["triton"] == triton_version:
        raise ValueError(f"this Triton's own library ({triton_version}): tune with --dir (it starts from it) instead")
    return library.Library(data["target"], data["triton"], data.get("meta", {}), data["entries"])


class Seeded:
    """The incumbents a seeded tune times: this Triton's library entry where it has one, else the
    seed's (another Triton version's, or a sibling chip's) entry, re-timed here, never copied as it is."""

    def __init__(self, lib, seed):
        self.lib, self.seed = lib, seed

    def from_seed(self, key: str) -> bool:
        """Whether `key`'s incumbent is the seed's (this Triton's library has no entry for it)."""
        return key not in self.lib.entries

    def _source(self, key: str):
        return self.seed if self.from_seed(key) else self.lib

    def config_for(self, key: str, shape=None):
        return self._source(key).config_for(key, shape)

    def shape_configs(self, key: str) -> dict:
        return self._source(key).shape_configs(key)

    def key_of_cells(self, cells: list[str]) -> str | None:
        return self.lib.key_of_cells(cells) or self.seed.key_of_cells(cells)


def earlier_results(old: dict | None, new: dict) -> dict:
    """The negative results of the entry a re-tune replaces that the new one does not repeat, so a
    narrower re-tune does not erase what a wider one found: {config: {"time_ms" or "failed", "measured"}},
    the earlier entry's own `earlier` included (a config measured again is dropped: its new figure stands)."""
    if not old:
        return {}
    again = set(new.get("tried", {})) | set(new.get("failed", {}))
    when = old.get("measured")
    kept = {c: r for c, r in (old.get("earlier") or {}).items() if c not in again}
    for cfg, ms in (old.get("tried") or {}).items():
        if cfg not in again:
            kept[cfg] = {"time_ms": ms, "measured": when}
    for cfg, reason in (old.get("failed") or {}).items():
        if cfg not in again:
            kept[cfg] = {"failed": reason, "measured": when}
    return dict(sorted(kept.items()))


def cells_run(data: dict, key: str) -> dict[str, tuple[str, float | None]]:
    """{cell: (the config it runs, its speedup over native in the tune)} for the cells a library's
    entry was tuned on: the bucket's config, or the cell's own where the tune found one faster
    (`Library.shape_configs`; its speedup from the same rounds' native time)."""
    from targets.library import Library

    entry = data.get("entries", {}).get(key)
    if not entry:
        return {}
    own = Library(data.get("target", ""), data.get("triton", ""), entries=data["entries"]).own_configs(key)
    bucket = _bucket_config(entry)
    out = {}
    for name, timed in (entry.get("cells") or {entry.get("cell", ""): entry}).items():
        config, speed = own.get(name, (bucket, timed.get("speedup_over_native")))
        out[name] = (str(config), speed)
    return out


def timed_summary(data: dict) -> str:
    """'N of M at or past native, geomean Gx' over the cells a library's tune timed, each with the
    speedup of the config it runs (`cells_run`), fp32 left out (reported precision-matched, not in
    the speed goal); at or past native when the speedup rounds to 1.000 or more, as tables print it."""
    speedups = [
        speed
        for key in data.get("entries", {})
        for cell, (_, speed) in cells_run(data, key).items()
        if speed and not cell.startswith("fp32")
    ]
    if not speedups:
        return "none timed"
    geomean = math.exp(sum(math.log(x) for x in speedups) / len(speedups))
    at_or_past = sum(round(x, 3) >= 1.0 for x in speedups)
    return f"{at_or_past} of {len(speedups)} at or past native, geomean {geomean:.3f}x"


def library_diff(old: dict, new: dict) -> str:
    """Markdown: a row per cell whose config changed (the one it runs: its bucket's, or its own
    where the tune found one faster), with the old and new config and speedup over native."""

    def shown(run):
        if run is None:
            return ["-", "n/a"]
        return [f"`{run[0]}`", f"{run[1]:.3f}x" if run[1] else "n/a"]

    old_entries, new_entries = old.get("entries", {}), new.get("entries", {})
    lines = [
        f"Tuned-config library {new.get('target')} / Triton {new.get('triton')}: "
        f"{len(new_entries)} entries (before: {len(old_entries)}), measured {new.get('meta', {}).get('date', '?')}.",
        "",
        f"The cells the tune timed, each on the config it runs (fp32 left out): {timed_summary(new)}; "
        f"before: {timed_summary(old)}.",
        "",
        "| bucket | cell | before | before speedup | after | after speedup |",
        "|---|---|---|---|---|---|",
    ]
    changed = 0
    for key in sorted(set(old_entries) | set(new_entries)):
        before, after = cells_run(old, key), cells_run(new, key)
        first = (new_entries.get(key) or old_entries[key]).get("cell")
        bucket = key.replace("|", "\\|")  # a pipe inside a table cell must be escaped, code span or not
        for cell in sorted(set(before) | set(after), key=lambda c: (c != first, c)):
            # (a cell one side's tune did not time ran that side's bucket config, speedup unknown)
            was = before.get(cell) or _bucket_run(old_entries.get(key))
            now = after.get(cell) or _bucket_run(new_entries.get(key))
            if was and now and was[0] == now[0]:
                continue
            changed += 1
            lines.append(f"| `{bucket}` | {cell} | " + " | ".join(shown(was) + shown(now)) + " |")
    if not changed:
        lines.append("| (no cell changed its config) | | | | | |")
    return "\n".join(lines) + "\n"


def _bucket_config(entry: dict) -> str:
    from targets import GemmConfig

    return str(GemmConfig(**entry["config"]))


def _bucket_run(entry: dict | None) -> tuple[str, None] | None:
    """(the bucket's config, no speedup): what a cell its tune did not time runs."""
    return (_bucket_config(entry), None) if entry else None


def main_diff(args) -> int:
    import json

    data = []
    for path, may_be_missing in ((args.old, True), (args.new, False)):
        if may_be_missing and not Path(path).exists():
            data.append({})  # a first tune: everything is new
            continue
        try:
            data.append(json.loads(Path(path).read_text()))
        except (OSError, json.JSONDecodeError) as err:
            print(f"gemmwatch tuned-diff: {path}: {err}", file=sys.stderr)
            return 2
    old, new = data
    if old and (old.get("target"), old.get("triton")) != (new.get("target"), new.get("triton")):
        print(
            f"gemmwatch tuned-diff: {args.old} is {old.get('target')}/Triton {old.get('triton')}, "
            f"{args.new} is {new.get('target')}/Triton {new.get('triton')}: not the same library",
            file=sys.stderr,
        )
        return 2
    sys.stdout.write(library_diff(old, new))
    return 0
