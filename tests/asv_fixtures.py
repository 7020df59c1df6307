"""Writing asv 0.6 result files with chosen samples, for decision and rendering tests.

The layout is the one asv itself writes (checked against files from real runs in
tests/test_run.py and docs/results/): results[name] is a row aligned with
result_columns, values and samples are lists over the product of params.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np

COLUMNS = [
    "result", "params", "version", "started_at", "duration", "stats_ci_99_a", "stats_ci_99_b",
    "stats_q_25", "stats_q_75", "stats_number", "stats_repeat", "samples", "profile",
]  # fmt: skip

MACHINE = {
    "machine": "h200",
    "device": "NVIDIA H200",
    "driver": "580.159.04",
    "cuda": "13.0",
    "cublas": "13.1.0",
    "hip": "none",
    "torch": "2.11.0+cu130",
    "triton": "3.6.0",
}


def cell_samples(rng, median: float, n: int = 30, cv: float = 0.003) -> list[float]:
    return list(median * np.exp(rng.normal(0.0, cv, n)))


def write_results(
    path: Path,
    commit: str,
    cells: dict[tuple[str, str, str], dict],
    machine: dict | None = None,
) -> Path:
    """cells: {(suite, shape, dtype): {"ratio": samples|None|"failed", "triton": samples|"failed"[,
    "native": samples]}} (the native time only where some cell gives it)."""
    by_suite: dict[str, dict] = {}
    for (suite, shape, dtype), metrics in cells.items():
        by_suite.setdefault(suite, {})[(shape, dtype)] = metrics
    results = {}
    for suite, entries in by_suite.items():
        shapes = list(dict.fromkeys(s for s, _ in entries))
        dtypes = list(dict.fromkeys(d for _, d in entries))
        params = [[repr(s) for s in shapes], [repr(d) for d in dtypes]]
        metrics = [("ratio", "track_ratio"), ("triton", "track_triton_time")]
        if any("native" in m for m in entries.values()):
            metrics.append(("native", "track_native_time"))
        for metric, name in metrics:
            values, samples, ci_a, ci_b = [], [], [], []
            for shape, dtype in itertools.product(shapes, dtypes):
                data = entries.get((shape, dtype), {}).get(metric, "absent")
                if data == "absent":
                    values.append(math.nan), samples.append(None), ci_a.append(None), ci_b.append(None)
                elif data == "failed":
                    values.append(None), samples.append(None), ci_a.append(None), ci_b.append(None)
                elif data is None:  # n/a, e.g. no native baseline
                    values.append(math.nan), samples.append(None), ci_a.append(None), ci_b.append(None)
                else:
                    values.append(float(np.median(data)))
                    samples.append([float(x) for x in data])
                    ci_a.append(float(np.quantile(data, 0.25)))
                    ci_b.append(float(np.quantile(data, 0.75)))
            n = [len(s) if s else None for s in samples]
            results[f"bench_gemm.{suite}.{name}"] = [
                values, params, "v1", 0, 1.0, ci_a, ci_b, ci_a, ci_b, [1] * len(values), n, samples, None,
            ]  # fmt: skip
    data = {
        "commit_hash": commit,
        "env_name": "existing-py_python3",
        "date": 0,
        "params": {**MACHINE, **(machine or {})},
        "python": "3.12",
        "requirements": {},
        "env_vars": {},
        "result_columns": COLUMNS,
        "results": results,
        "durations": {},
        "version": 2,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path
