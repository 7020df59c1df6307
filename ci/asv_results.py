"""Reading asv result files: per benchmark and parameter combination, the value, stats and samples.

asv 0.6 stores `results[name]` as a row aligned with `result_columns`
(result, params, version, started_at, duration, stats_*, samples, profile),
where `result`, `stats_*` and `samples` are lists over the Cartesian product
of `params`. A `None` result is a failure, NaN a skip.
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path


class ResultsError(ValueError):
    """A result file is missing or not an asv result file; the message names it."""


@dataclass(frozen=True)
class Entry:
    benchmark: str  # e.g. "bench_gemm.Matmul.track_ratio"
    params: tuple[str, ...]  # e.g. ("4096x4096x4096", "fp16")
    value: float | None  # None: failed; NaN: skipped / not applicable
    samples: tuple[float, ...] | None
    ci_99: tuple[float, float] | None

    @property
    def failed(self) -> bool:
        return self.value is None

    @property
    def skipped(self) -> bool:
        return isinstance(self.value, float) and math.isnan(self.value)

    @property
    def cell(self) -> str:
        """The cell id as gemmwatch names it: 'fp16 4096x4096x4096[ bias+gelu]'."""
        shape, dtype, *rest = self.params
        return " ".join([dtype, shape, *rest])


@dataclass
class ResultFile:
    path: Path
    commit: str
    env_name: str
    machine_params: dict
    entries: list[Entry]
    date: int = 0  # asv's "date" of the measured commit (ms since the epoch), 0 if absent

    @property
    def machine_key(self) -> tuple[str, str]:
        """(machine, Triton version): the runs whose noise can be compared with each other."""
        return (str(self.machine_params.get("machine", "?")), str(self.machine_params.get("triton", "?")))

    @property
    def noise_key(self) -> tuple[str, str, str]:
        """(machine, Triton version, timing protocol): the runs whose run-to-run noise tells about
        each other's (a protocol change moves the noise too; results without the key are of earlier
        protocols)."""
        return (*self.machine_key, str(self.machine_params.get("timing_protocol", "")))

    def metric_by_suite(self, name: str) -> dict[tuple[str, str], Entry]:
        """{(suite, cell): entry} for one track_ benchmark, e.g. ('Matmul', 'fp16 4096x4096x4096')."""
        out = {}
        for e in self.entries:
            parts = e.benchmark.split(".")
            if parts[-1] == name:
                out[(parts[-2] if len(parts) >= 2 else "", e.cell)] = e
        return out

    def metric(self, name: str) -> dict[str, Entry]:
        """{cell: entry} for one track_ benchmark (by its method name, e.g. 'track_ratio')."""
        return {e.cell: e for e in self.entries if e.benchmark.rsplit(".", 1)[-1] == name}

    def measured_cells(self) -> list[str]:
        """The cells with a Triton time: not those the run skipped (asv records them as NaN) or
        that failed (None)."""
        return sorted(
            cell
            for cell, e in self.metric("track_triton_time").items()
            if isinstance(e.value, (int, float)) and e.value == e.value
        )


def _unquote(value: str) -> str:
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"" else value


def load(path: str | Path) -> ResultFile:
    """An asv result file, plain or gzipped (`.json.gz`: how docs/results keeps the runs)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
        data = json.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw)
    except FileNotFoundError:
        raise ResultsError(f"result file {path} does not exist") from None
    except (gzip.BadGzipFile, EOFError) as err:
        raise ResultsError(f"result file {path} is not a gzip file: {err}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ResultsError(f"result file {path} is not valid JSON: {err}") from None
    for key in ("commit_hash", "results", "result_columns", "params"):
        if key not in data:
            raise ResultsError(f"result file {path} is not an asv result file: no {key!r}")
    columns = data["result_columns"]
    entries = []
    for name, row in data["results"].items():
        fields = dict(zip(columns, row))
        params = [[_unquote(v) for v in values] for values in fields.get("params") or []]
        combos = list(itertools.product(*params)) if params else [()]
        values = fields.get("result")
        if values is None:
            values = [None] * len(combos)
        samples = fields.get("samples") or [None] * len(combos)
        ci_a = fields.get("stats_ci_99_a") or [None] * len(combos)
        ci_b = fields.get("stats_ci_99_b") or [None] * len(combos)
        for combo, value, sample, a, b in zip(combos, values, samples, ci_a, ci_b):
            entries.append(
                Entry(
                    benchmark=name,
                    params=tuple(combo),
                    value=float(value) if value is not None else None,
                    samples=tuple(sample) if sample else None,
                    ci_99=(a, b) if a is not None and b is not None else None,
                )
            )
    return ResultFile(
        path, data["commit_hash"], data.get("env_name", ""), data["params"], entries, data.get("date") or 0
    )
