"""The results store: merging runners' results without overwriting, and pruning.

`gemmwatch merge --into STORE SRC...` joins asv results directories (or
artifact directories holding `results/` and `context/`) cell by cell:

- a result file new to the store is copied;
- a result file of the same machine, commit and environment (the same asv
  file name) that is already there is merged entry by entry: benchmarks and
  parameter combinations the store lacks are added (shards of one run, or a
  runner that measured other cells), and a combination present on both sides
  keeps the store's value (reported as a conflict: two runners for one target);
- files that cannot be read are skipped and reported, never copied;
- every write goes to a temporary file and is renamed into place, so a merge
  that dies leaves the store as it was.

`gemmwatch prune --store STORE` keeps the store small (the pruning policy):
result files of the newest `--keep-full` commits per machine and environment
keep their samples; older ones keep their medians and intervals but drop the
per-round samples (about 4x smaller); files older than `--max-age-days` are
removed. Nothing else is deleted.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

# Columns of an asv 0.6 result row that hold one value per parameter combination.
PER_COMBO = ("result", "stats_ci_99_a", "stats_ci_99_b", "stats_q_25", "stats_q_75", "stats_number",
             "stats_repeat", "samples")  # fmt: skip


@dataclass
class MergeReport:
    copied: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # unreadable or not asv results
    empty_sources: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return self.__dict__.copy()


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _read_json(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _is_result(data: dict | None) -> bool:
    return bool(data) and all(k in data for k in ("commit_hash", "results", "result_columns", "params"))


def _results_root(source: Path) -> Path:
    """An artifact directory holds results/ (and context/); a results directory is itself the root."""
    return source / "results" if (source / "results").is_dir() else source


def _combos(params: list[list[str]]) -> list[tuple]:
    return list(itertools.product(*params)) if params else [()]


def merge_rows(columns: list[str], dest: list, src: list, name: str, report: MergeReport, where: str) -> list:
    """One benchmark's row: the union of both sides' parameter combinations; the store wins a clash."""
    d, s = dict(zip(columns, dest)), dict(zip(columns, src))
    d_params, s_params = d.get("params") or [], s.get("params") or []
    if len(d_params) != len(s_params):
        report.conflicts.append(f"{where}: {name}: parameters differ in number; kept the store's")
        return dest
    params = [list(dict.fromkeys(a + b)) for a, b in zip(d_params, s_params)]

    def cells(row: dict) -> dict[tuple, dict]:
        # asv stores a column as None when it is None for every combination
        return {
            combo: {c: row[c][i] if isinstance(row.get(c), list) else None for c in PER_COMBO}
            for i, combo in enumerate(_combos(row.get("params") or []))
        }

    d_cells, s_cells = cells(d), cells(s)
    not_run = {c: None for c in PER_COMBO} | {"result": math.nan}
    merged = {}
    took_src = False
    for combo in _combos(params):
        dv, sv = d_cells.get(combo), s_cells.get(combo)
        if dv is not None and not _absent(dv["result"]):
            if sv is not None and not _absent(sv["result"]) and sv != dv:
                report.conflicts.append(f"{where}: {name} {list(combo)}: measured twice; kept the store's value")
            merged[combo] = dv
        else:
            merged[combo] = sv if sv is not None else dv or not_run
            took_src |= sv is not None and not _absent(sv["result"])
    row = dict(d)
    row["params"] = params
    for c in PER_COMBO:
        row[c] = [merged[combo][c] for combo in _combos(params)]
    if took_src:  # the benchmark's time now covers both sides' cells
        row["duration"] = (d.get("duration") or 0) + (s.get("duration") or 0)
    return [row.get(c) for c in columns]


def _absent(value) -> bool:
    """NaN means 'not run for this combination' in asv's results; None is a failure (a value to keep)."""
    return isinstance(value, float) and math.isnan(value)


def merge_result_files(dest: dict, src: dict, report: MergeReport, where: str) -> dict:
    if dest["result_columns"] != src["result_columns"]:
        report.skipped.append(f"{where}: result columns differ from the store's (another asv version?)")
        return dest
    columns = dest["result_columns"]
    out = dict(dest)
    results = dict(dest["results"])
    for name, row in src["results"].items():
        results[name] = merge_rows(columns, results[name], row, name, report, where) if name in results else row
    out["results"] = results
    out["durations"] = {**src.get("durations", {}), **dest.get("durations", {})}
    return out


def merge(into: Path, sources: list[Path]) -> MergeReport:
    report = MergeReport()
    store = into.resolve()
    store.mkdir(parents=True, exist_ok=True)
    for source in sources:
        root = _results_root(source)
        files = [p for p in root.rglob("*.json")] if root.is_dir() else []
        if not files:
            report.empty_sources.append(str(source))
            continue
        bench = root / "benchmarks.json"
        if bench.exists():
            data = _read_json(bench)
            if data is None:
                report.skipped.append(f"{bench}: not valid JSON")
            else:
                current = _read_json(store / "benchmarks.json") or {}
                _write_atomic(store / "benchmarks.json", json.dumps({**data, **current}, indent=1))
        for machine_dir in sorted(p for p in root.iterdir() if p.is_dir()):
            machine_json = _read_json(machine_dir / "machine.json")
            if machine_json is None:
                report.skipped.append(f"{machine_dir}: no valid machine.json")
                continue
            target = store / machine_dir.name
            if not (target / "machine.json").exists():
                _write_atomic(target / "machine.json", json.dumps(machine_json, indent=4))
            for path in sorted(machine_dir.glob("*.json")):
                if path.name == "machine.json":
                    continue
                data = _read_json(path)
                if not _is_result(data):
                    report.skipped.append(f"{path}: not an asv result file")
                    continue
                existing = target / path.name
                where = f"{machine_dir.name}/{path.name}"
                if not existing.exists():
                    _write_atomic(existing, json.dumps(data))
                    report.copied.append(where)
                    continue
                current = _read_json(existing)
                if not _is_result(current):
                    report.skipped.append(f"{existing}: the store's file is unreadable; left as it is")
                    continue
                _write_atomic(existing, json.dumps(merge_result_files(current, data, report, where)))
                report.merged.append(where)
        context = source / "context"
        if context.is_dir():
            for path in context.rglob("*"):
                dest = store.parent / "context" / path.relative_to(context)
                if path.is_file() and not dest.exists():
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(path, dest)
    return report


def prune(store: Path, *, keep_full: int, max_age_days: float, now: float | None = None) -> dict:
    """Apply the pruning policy; returns what was done and the store's size before and after."""
    now = now or time.time()
    before = sum(p.stat().st_size for p in store.rglob("*.json"))
    stripped, removed = [], []
    for machine_dir in sorted(p for p in store.iterdir() if p.is_dir()):
        groups: dict[str, list[tuple[float, Path, dict]]] = {}
        for path in machine_dir.glob("*.json"):
            data = _read_json(path) if path.name != "machine.json" else None
            if _is_result(data):
                groups.setdefault(str(data.get("env_name", "")), []).append((float(data.get("date") or 0), path, data))
        for files in groups.values():
            files.sort(key=lambda item: item[0], reverse=True)
            for rank, (date_ms, path, data) in enumerate(files):
                if date_ms and (now - date_ms / 1000.0) > max_age_days * 86400:
                    path.unlink()
                    removed.append(str(path.relative_to(store)))
                elif rank >= keep_full and _strip_samples(data):
                    _write_atomic(path, json.dumps(data))
                    stripped.append(str(path.relative_to(store)))
    after = sum(p.stat().st_size for p in store.rglob("*.json"))
    return {"stripped_samples": stripped, "removed": removed, "bytes_before": before, "bytes_after": after}


def _strip_samples(data: dict) -> bool:
    columns = data["result_columns"]
    if "samples" not in columns:
        return False
    index = columns.index("samples")
    changed = False
    for row in data["results"].values():
        if index < len(row) and row[index] is not None:
            row[index] = None
            changed = True
    return changed


def main_merge(args) -> int:
    sources = [Path(s) for s in args.sources]
    missing = [str(s) for s in sources if not s.exists()]
    report = merge(Path(args.into), [s for s in sources if s.exists()])
    report.empty_sources.extend(f"{m} (does not exist)" for m in missing)
    _write_atomic(Path(args.into) / "merge-report.json", json.dumps(report.as_dict(), indent=1))
    for label, items in (("empty or missing source", report.empty_sources), ("skipped", report.skipped),
                         ("conflict", report.conflicts)):  # fmt: skip
        for item in items:
            print(f"gemmwatch merge: {label}: {item}", file=sys.stderr)
    print(f"gemmwatch merge: {len(report.copied)} files added, {len(report.merged)} merged into {args.into}")
    if not (report.copied or report.merged):
        print("gemmwatch merge: nothing could be merged", file=sys.stderr)
        return 2
    return 0


def main_prune(args) -> int:
    store = Path(args.store)
    if not store.is_dir():
        print(f"gemmwatch prune: results store {store} does not exist", file=sys.stderr)
        return 2
    done = prune(store, keep_full=args.keep_full, max_age_days=args.max_age_days)
    print(
        f"gemmwatch prune: {len(done['stripped_samples'])} files lost their samples, {len(done['removed'])} removed; "
        f"{done['bytes_before'] / 1e6:.1f} MB -> {done['bytes_after'] / 1e6:.1f} MB"
    )
    return 0
