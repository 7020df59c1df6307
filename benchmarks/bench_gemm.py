"""asv suites: our Triton GEMMs against the native library, one class per operation.

Params are (shape, dtype[, epilogue]) from benchmarks/matrix.toml (the selection
`gemmwatch run` passes through the environment). Combinations the matrix does not
contain are skipped. Each class measures all its cells once, in one process, in
`setup_cache` (benchmarks/measure.py: float64 check, then Triton and native
interleaved in CUDA-graph rounds); every track_ benchmark reads one metric of
that measurement. Sampled metrics are returned as {"samples", "number"} so asv
keeps the per-round samples (`--record-samples`) and reports their median with
a 99% confidence interval. asv treats lower as better for every number: the
headline metric is the Triton/native time ratio.

Run on a CPU with TRITON_INTERPRET=1 (the smoke set, in Triton's interpreter):
a pipeline check, never performance.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

from benchmarks import matrix
from benchmarks.matrix import shape_id

ENV_CONTEXT_DIR = "GEMMWATCH_CONTEXT_DIR"
# Compiling and autotuning every cell of a class happens in one setup_cache call.
SUITE_TIMEOUT = 3600


@functools.lru_cache(maxsize=1)
def _selection() -> matrix.Selection:
    return matrix.from_environment()


def _cells(suite: str):
    return _selection().for_suite(suite)


def _param_values(suite: str, with_epilogue: bool = False) -> list[list[str]]:
    cells = _cells(suite)
    shapes = list(dict.fromkeys(shape_id((c.M, c.N, c.K)) for c in cells)) or ["none"]
    dtypes = list(dict.fromkeys(c.dtype for c in cells)) or ["none"]
    if not with_epilogue:
        return [shapes, dtypes]
    epilogues = list(dict.fromkeys(c.epilogue for c in cells)) or ["none"]
    return [shapes, dtypes, epilogues]


def _measure_suite(suite: str) -> dict:
    from benchmarks.measure import measure_cells

    measured = measure_cells(list(_cells(suite)), label=suite)
    cells = {key: res.as_dict() for key, res in measured["cells"].items()}
    context_dir = os.environ.get(ENV_CONTEXT_DIR)
    if context_dir:
        record = {"suite": suite, "context": measured["context"], "cells": {
            key: {k: v for k, v in res.items() if k not in ("triton_s", "native_s", "ratio")}
            for key, res in cells.items()
        }}  # fmt: skip
        Path(context_dir).mkdir(parents=True, exist_ok=True)
        Path(context_dir, f"{suite}.json").write_text(json.dumps(record, indent=1, default=str))
    return {"cells": cells}


# asv records NaN as "n/a" (skipped), None/exceptions as failures. A metric that
# does not exist for a cell (no native fp8 kernel for K % 16 != 0, no TFLOP/s in
# the interpreter) is n/a, not a failure; it can only be decided per metric,
# after `setup`, hence NaN rather than NotImplementedError.
NOT_APPLICABLE = float("nan")


def _samples(values: list[float]) -> dict:
    return {"samples": list(values), "number": 1}


class _GemmSuite:
    """Shared track_ benchmarks; subclasses set `suite`, params and their own setup_cache.

    Each subclass writes its own two-line setup_cache: asv keys a setup_cache by
    the file and line where it is defined, so one shared (or generated) method
    would make all three classes share one measurement.
    """

    suite = ""
    timeout = SUITE_TIMEOUT
    param_names = ["shape", "dtype"]

    def _key(self, shape: str, dtype: str, epilogue: str | None = None) -> str:
        return f"{dtype} {shape}" + (f" {epilogue}" if epilogue else "")

    def setup(self, cache, *params):
        self.result = cache["cells"].get(self._key(*params))
        if self.result is None:
            raise NotImplementedError(f"{params} is not in the matrix for this run")

    def _ok(self) -> dict:
        if self.result["error"]:
            raise RuntimeError(f"cell failed: {self.result['error']}")
        return self.result

    def track_ratio(self, cache, *params):
        """Triton time / native time, per interleaved round (< 1: Triton faster)."""
        res = self._ok()
        if res["ratio"] is None:  # no native baseline (res["native_note"] says why)
            return NOT_APPLICABLE
        return _samples(res["ratio"])

    track_ratio.unit = "triton/native"

    def track_triton_time(self, cache, *params):
        """GPU time of our kernel, seconds per call, cold L2."""
        return _samples(self._ok()["triton_s"])

    track_triton_time.unit = "seconds"

    def track_native_time(self, cache, *params):
        """GPU time of the native library (cuBLAS/cuBLASLt through torch), seconds per call."""
        res = self._ok()
        if res["native_s"] is None:
            return NOT_APPLICABLE
        return _samples(res["native_s"])

    track_native_time.unit = "seconds"

    def track_tflops(self, cache, *params):
        """TFLOP/s of our kernel at its median time (2 MNK / t)."""
        res = self._ok()
        return NOT_APPLICABLE if res["tflops"] is None else res["tflops"]  # None in the interpreter

    track_tflops.unit = "TFLOP/s"

    def track_pct_of_peak(self, cache, *params):
        """Our TFLOP/s as a percentage of the target's datasheet dense peak for the dtype."""
        res = self._ok()
        return NOT_APPLICABLE if res["pct_of_peak"] is None else res["pct_of_peak"]

    track_pct_of_peak.unit = "%"

    def track_max_rel_error(self, cache, *params):
        """max |C - C_ref| / max |C_ref| against a float64 reference (reported even for a failed cell)."""
        if self.result["max_rel_error"] is None:
            raise RuntimeError(f"cell failed before its check: {self.result['error']}")
        return self.result["max_rel_error"]

    track_max_rel_error.unit = "relative"

    def track_tune_seconds(self, cache, *params):
        """Seconds of the first call: config selection (autotuning) and compilation."""
        return self._ok()["tune_seconds"]

    track_tune_seconds.unit = "seconds"


class Matmul(_GemmSuite):
    """kernels.matmul vs torch.matmul: fp16, bf16, fp32 (tf32 and ieee, precision-matched)."""

    suite = "Matmul"
    params = _param_values("Matmul")

    def setup_cache(self):
        return _measure_suite("Matmul")

    setup_cache.timeout = SUITE_TIMEOUT


class ScaledMatmul(_GemmSuite):
    """kernels.scaled_matmul vs torch._scaled_mm: fp8 with tensorwise scales, bf16 out."""

    suite = "ScaledMatmul"
    params = _param_values("ScaledMatmul")

    def setup_cache(self):
        return _measure_suite("ScaledMatmul")

    setup_cache.timeout = SUITE_TIMEOUT


class FusedEpilogue(_GemmSuite):
    """kernels.matmul(bias=, activation=) vs torch's unfused act(a @ b + bias)."""

    suite = "FusedEpilogue"
    param_names = ["shape", "dtype", "epilogue"]
    params = _param_values("FusedEpilogue", with_epilogue=True)

    def setup_cache(self):
        return _measure_suite("FusedEpilogue")

    setup_cache.timeout = SUITE_TIMEOUT
