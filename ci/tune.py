"""`gemmwatch tune`: the tuning pipeline that fills the tuned-config library.

detect the target -> generate candidates from its TargetSpec -> compile and
benchmark each (the same timing protocol as the suites, interleaved with the
native library) -> pick the fastest correct one -> write it, with the configs
that lost and the ones that failed, to targets/tuned/<target>-triton<ver>.json.
Per-PR runs then read the library instead of autotuning.
"""

from __future__ import annotations

import datetime
import functools
import sys
import time
from pathlib import Path

# A re-tune replaces a bucket's entry only with a config faster by more than this (same rounds).
REPLACE_MARGIN = 0.01


def tune_cell(cell, *, rounds: int, top_k: int | None, finalists: int, spec, device: str, library=None) -> dict:
    """Rank the candidates of one cell, time the best of each variant; returns its library entry.

    Coarse pass (GPU): the launcher's own search — candidates compiled in
    parallel, each timed with short runs. Fine pass: the `finalists` fastest
    of each kernel variant, checked against the float64 reference and timed
    with the suites' protocol, interleaved with each other and the native
    library. The bucket's entry in `library` (the incumbent) always joins the
    fine pass, so a re-tune replaces it only with a config that beat it side by
    side in the same rounds (by more than REPLACE_MARGIN). In the interpreter nothing is timed meaningfully:
    the first `top_k` candidates all go to the fine pass (a pipeline check).
    """
    from benchmarks.cells import TOLERANCE, Prepared, relative_error
    from benchmarks.measure import cooldown
    from benchmarks.timing import measure
    from kernels import DTYPE_NAMES, autotune
    from targets import candidate_configs

    prep = Prepared(cell, device)
    ref = prep.reference()
    candidates = candidate_configs(spec, DTYPE_NAMES[prep.a.dtype], cell.M, cell.N, cell.K)[:top_k]
    coarse, failed = {}, {}
    if spec.is_interpreter:
        chosen = candidates
    else:
        with autotune.fresh_search(len(candidates)):
            prep.triton()
        search = autotune.last()
        coarse, failed = dict(search.timings_ms), dict(search.failed)
        by_variant: dict[str, list] = {}
        for cfg in sorted((c for c in candidates if str(c) in coarse), key=lambda c: coarse[str(c)]):
            by_variant.setdefault(cfg.variant, []).append(cfg)
        chosen = [cfg for ranked in by_variant.values() for cfg in ranked[:finalists]]
    correct, key = [], None

    def check(cfg) -> None:
        nonlocal key
        try:
            out = prep.triton(config=cfg)
        except Exception as exc:  # noqa: BLE001 - a config that fails is a negative result
            failed[str(cfg)] = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
            return
        key = key or autotune.last().key.library_key()
        err = relative_error(out, ref)
        if err <= TOLERANCE[cell.dtype]:
            correct.append(cfg)
        else:
            failed[str(cfg)] = f"wrong result: relative error {err:.3g}"

    for cfg in chosen:
        check(cfg)
    incumbent = library.config_for(key) if library is not None and key else None
    if incumbent is not None and incumbent not in chosen:
        check(incumbent)
    if not correct:
        return {"key": key, "error": "no candidate compiled and computed the right result", "failed": failed}
    native = prep.native if prep.native_supported() is None else None
    fns = [functools.partial(prep.triton, config=cfg) for cfg in correct] + ([native] if native else [])
    timing = measure(*fns, rounds=rounds, warmup=1, cooldown=cooldown())  # as the suites time them
    times = {cfg: timing.median(i) * 1e3 for i, cfg in enumerate(correct)}
    best = min(times, key=times.get)
    if times.get(incumbent) and times[best] > times[incumbent] * (1 - REPLACE_MARGIN):
        best = incumbent  # within the fine pass's noise: no churn in the library (or the PR gate)
    native_ms = timing.median(len(correct)) * 1e3 if native else None
    return {
        "key": key,
        "cell": cell.name,
        "config": best.as_dict(),
        "time_ms": times[best],
        "native_ms": native_ms,
        "speedup_over_native": native_ms / times[best] if native_ms else None,
        # the entry this one replaces (or keeps), timed in the same rounds
        "incumbent": {"config": str(incumbent), "time_ms": times.get(incumbent)} if incumbent else None,
        "tried": {str(c): round(t, 6) for c, t in sorted(times.items(), key=lambda kv: kv[1])},
        "ranked_ms": coarse,  # the coarse pass's short-run times (do_bench medians), every candidate
        "failed": failed,
    }


def main(args) -> int:
    from benchmarks import matrix
    from ci.cli import use_interpreter_without_gpu

    for name in ("top_k", "finalists", "rounds"):
        value = getattr(args, name)
        if value is not None and value < 1:
            print(
                f"gemmwatch tune: --{name.replace('_', '-')} must be a positive integer, got {value}", file=sys.stderr
            )
            return 2
    interpreter = use_interpreter_without_gpu()
    if interpreter and not args.allow_interpreter:
        print(
            "gemmwatch tune: no GPU: tuning compares timings, and the interpreter's are not performance "
            "(--allow-interpreter runs the pipeline anyway, into a cpu-interpreter library)",
            file=sys.stderr,
        )
        return 2
    try:
        shapes = [s for item in args.shapes or [] for s in item.split(",") if s]
        dtypes = [d for item in args.dtypes or [] for d in item.split(",") if d]
        selection = matrix.select(
            matrix.load(args.matrix), interpreter=interpreter, shapes=shapes or None, dtypes=dtypes or None
        )
    except matrix.MatrixError as err:
        print(f"gemmwatch tune: {err}", file=sys.stderr)
        return 2
    import torch
    import triton

    from benchmarks.context import device_description, software_versions
    from targets import GemmConfig, detect, library, shape_bucket

    spec = detect()
    device = "cuda" if torch.cuda.is_available() and not spec.is_interpreter else "cpu"
    directory = Path(args.dir) if args.dir else library.library_dir()
    path = library.library_path(spec.name, triton.__version__, directory)
    lib = library.load(spec.name, triton.__version__, directory)
    lib.meta = {
        **{k: str(v) for k, v in {**device_description(), **software_versions()}.items()},
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "rounds": args.rounds,
        "interpreter": interpreter,
    }
    cells = [c for c in selection.cells if not c.epilogue]  # epilogues share their GEMM's bucket
    start = time.perf_counter()
    failures = 0
    tuned_buckets: dict[tuple, str] = {}
    already = {entry.get("cell") for entry in lib.entries.values()} if args.resume else set()
    for i, cell in enumerate(cells, 1):
        bucket = (cell.dtype, shape_bucket(cell.M, cell.N, cell.K))
        if cell.name in already:
            tuned_buckets[bucket] = cell.name
            print(f"[{i}/{len(cells)}] {cell.name}: in the library already (--resume), skipped", flush=True)
            continue
        if bucket in tuned_buckets:  # the library keeps one entry per bucket: the first cell's
            print(f"[{i}/{len(cells)}] {cell.name}: same bucket as {tuned_buckets[bucket]}, skipped", flush=True)
            continue
        tuned_buckets[bucket] = cell.name
        entry = tune_cell(
            cell,
            rounds=args.rounds,
            top_k=args.top_k,
            finalists=args.finalists,
            spec=spec,
            device=device,
            library=lib,
        )
        if "error" in entry or entry["key"] is None:
            failures += 1
            print(f"[{i}/{len(cells)}] {cell.name}: {entry.get('error')}", flush=True)
            continue
        key = entry.pop("key")
        entry["measured"] = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        lib.entries[key] = entry
        lib.save(path)  # after every cell: an interrupted tune keeps what it measured
        speed = entry["speedup_over_native"]
        was = entry["incumbent"]
        verdict = ""
        if was:
            verdict = (
                "; kept the incumbent"
                if was["config"] == str(GemmConfig(**entry["config"]))
                else (
                    f"; replaced {was['config']} ({was['time_ms']:.4f} ms)"
                    if was["time_ms"]
                    else f"; replaced {was['config']} (failed)"
                )
            )
        print(
            f"[{i}/{len(cells)}] {cell.name}: {GemmConfig(**entry['config'])} {entry['time_ms']:.4f} ms"
            f"{f' ({speed:.3f}x native)' if speed else ''}; {len(entry['tried'])} tried, {len(entry['failed'])} failed"
            f"{verdict} ({time.perf_counter() - start:.0f}s)",
            flush=True,
        )
    lib.save(path)
    print(f"gemmwatch tune: {len(lib.entries)} entries in {path}")
    return 1 if failures else 0


def library_diff(old: dict, new: dict) -> str:
    """Markdown: per library key, the old and new best config and speedup over native."""

    def speed(entry):
        value = entry.get("speedup_over_native") if entry else None
        return f"{value:.3f}x" if value else "n/a"

    def config(entry):
        from targets import GemmConfig

        return f"`{GemmConfig(**entry['config'])}`" if entry else "-"

    old_entries, new_entries = old.get("entries", {}), new.get("entries", {})
    lines = [
        f"Tuned-config library {new.get('target')} / Triton {new.get('triton')}: "
        f"{len(new_entries)} entries (before: {len(old_entries)}), measured {new.get('meta', {}).get('date', '?')}.",
        "",
        "| bucket | cell | before | before speedup | after | after speedup |",
        "|---|---|---|---|---|---|",
    ]
    changed = 0
    for key in sorted(set(old_entries) | set(new_entries)):
        before, after = old_entries.get(key), new_entries.get(key)
        if before and after and before.get("config") == after.get("config"):
            continue
        changed += 1
        cell = (after or before).get("cell", "")
        bucket = key.replace("|", "\\|")  # a pipe inside a table cell must be escaped, code span or not
        lines.append(f"| `{bucket}` | {cell} | {config(before)} | {speed(before)} | {config(after)} | {speed(after)} |")
    if not changed:
        lines.append("| (no bucket changed its config) | | | | | |")
    return "\n".join(lines) + "\n"


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
