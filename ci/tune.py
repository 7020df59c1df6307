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


def tune_cell(cell, *, rounds: int, top_k: int | None, spec, device: str) -> dict:
    """Time every candidate of one cell; returns the library entry (or an 'error' entry)."""
    from benchmarks.cells import TOLERANCE, Prepared, relative_error
    from benchmarks.timing import measure
    from kernels import DTYPE_NAMES, autotune
    from targets import candidate_configs

    prep = Prepared(cell, device)
    ref = prep.reference()
    candidates = candidate_configs(spec, DTYPE_NAMES[prep.a.dtype], cell.M, cell.N, cell.K)[:top_k]
    tried, failed = {}, {}
    key = None
    native = prep.native if prep.native_supported() is None else None
    for cfg in candidates:
        try:
            out = prep.triton(config=cfg)
            if key is None:
                key = autotune.last().key.library_key()
            err = relative_error(out, ref)
            if not err <= TOLERANCE[cell.dtype]:
                failed[str(cfg)] = f"wrong result: relative error {err:.3g}"
                continue
            fns = [functools.partial(prep.triton, config=cfg)] + ([native] if native else [])
            timing = measure(*fns, rounds=rounds, warmup=1)
            tried[str(cfg)] = {
                "config": cfg.as_dict(),
                "time_ms": timing.median(0) * 1e3,
                "native_ms": timing.median(1) * 1e3 if native else None,
            }
        except Exception as exc:  # noqa: BLE001 - a config that fails to compile is a negative result
            failed[str(cfg)] = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
    if not tried:
        return {"key": key, "error": "no candidate compiled and computed the right result", "failed": failed}
    best = min(tried.values(), key=lambda t: t["time_ms"])
    return {
        "key": key,
        "cell": cell.name,
        "config": best["config"],
        "time_ms": best["time_ms"],
        "native_ms": best["native_ms"],
        "speedup_over_native": best["native_ms"] / best["time_ms"] if best["native_ms"] else None,
        "tried": {name: round(t["time_ms"], 6) for name, t in sorted(tried.items(), key=lambda kv: kv[1]["time_ms"])},
        "failed": failed,
    }


def main(args) -> int:
    from benchmarks import matrix
    from ci.cli import use_interpreter_without_gpu

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
    from targets import GemmConfig, detect, library

    spec = detect()
    device = "cuda" if torch.cuda.is_available() and not spec.is_interpreter else "cpu"
    directory = Path(args.dir) if args.dir else library.library_dir()
    lib = library.load(spec.name, triton.__version__, directory)
    cells = [c for c in selection.cells if not c.epilogue]  # epilogues share their GEMM's bucket
    start = time.perf_counter()
    failures = 0
    for i, cell in enumerate(cells, 1):
        entry = tune_cell(cell, rounds=args.rounds, top_k=args.top_k, spec=spec, device=device)
        if "error" in entry or entry["key"] is None:
            failures += 1
            print(f"[{i}/{len(cells)}] {cell.name}: {entry.get('error')}", flush=True)
            continue
        key = entry.pop("key")
        lib.entries[key] = entry
        speed = entry["speedup_over_native"]
        print(
            f"[{i}/{len(cells)}] {cell.name}: {GemmConfig(**entry['config'])} {entry['time_ms']:.4f} ms"
            f"{f' ({speed:.3f}x native)' if speed else ''}; {len(entry['tried'])} tried, {len(entry['failed'])} failed"
            f" ({time.perf_counter() - start:.0f}s)",
            flush=True,
        )
    lib.meta = {
        **{k: str(v) for k, v in {**device_description(), **software_versions()}.items()},
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "rounds": args.rounds,
        "interpreter": interpreter,
    }
    path = library.library_path(spec.name, triton.__version__, directory)
    lib.save(path)
    print(f"gemmwatch tune: {len(lib.entries)} entries in {path}")
    return 1 if failures else 0
