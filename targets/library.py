"""The tuned-config library: measured best configs per target and Triton version, stored as data.

One JSON file per (target, Triton version) under targets/tuned/, written by
`gemmwatch tune`: for each problem bucket (operation, dtype, precision, layout,
power-of-two M, N, K) the best config with its measured time and the native
time, every config tried with its time, and the configs that failed to
compile (negative results save the next search), and under `earlier` those of
the entries a re-tune replaced that it did not time again (dated). The launcher reads it before
autotuning, so runs that have an entry time no candidates (stable, fast).
An entry measured with another Triton version is reported, never used.
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from targets.configs import GemmConfig, config_from_name

DEFAULT_DIR = Path(__file__).with_name("tuned")
ENV_DIR = "GEMMWATCH_TUNED_DIR"  # another library directory
ENV_USE = "GEMMWATCH_TUNED"  # "0": ignore the library (autotune instead)
# A cell of a bucket runs the config the tune measured fastest on it, rather than the bucket's,
# where that one was faster by more than this (the tune's own margin for replacing an entry).
SHAPE_MARGIN = 0.01


class TunedVersionWarning(UserWarning):
    """The library has entries for this target, but measured with another Triton version."""


def library_dir() -> Path:
    return Path(os.environ.get(ENV_DIR) or DEFAULT_DIR)


def library_path(target: str, triton_version: str, directory: Path | None = None) -> Path:
    return (directory or library_dir()) / f"{target}-triton{triton_version}.json"


def entry_key(op: str, dtype: str, precision: str, layout: str, bucket: tuple[int, int, int]) -> str:
    return "|".join([op, dtype, precision or "-", layout, "x".join(map(str, bucket))])


@dataclass
class Library:
    target: str
    triton: str
    meta: dict = field(default_factory=dict)  # date, torch, cuda, device of the measurement
    entries: dict[str, dict] = field(default_factory=dict)
    _timings: dict = field(default_factory=dict, repr=False, compare=False)  # (coarse_timings, by kind of key)

    def config_for(self, key: str, shape: tuple[int, int, int] | None = None) -> GemmConfig | None:
        """The bucket's config, or with `shape` (M, N, K), the config this exact shape ran fastest
        with where the tune timed it (`shape_configs`)."""
        entry = self.entries.get(key)
        if not entry:
            return None
        if shape is not None:
            own = self.shape_configs(key).get(tuple(shape))
            if own is not None:
                return own
        return GemmConfig(**entry["config"])

    def shape_configs(self, key: str) -> dict[tuple[int, int, int], GemmConfig]:
        """{(M, N, K): config} for the cells of `key`'s bucket on which another config the tune
        timed beat the bucket's by more than SHAPE_MARGIN (in the same rounds: each cell's
        `tried`). The bucket keeps one config, the best over its cells; a cell whose own best
        differs runs that one (on the H200, 4096^3 beside 4096x3584x3584, 1000^3 beside 1024^3)."""
        entry = self.entries.get(key) or {}
        chosen = str(GemmConfig(**entry["config"])) if entry else None
        out = {}
        for name, cell in (entry.get("cells") or {}).items():
            parts = name.split()
            tried = cell.get("tried") or {}
            if len(parts) != 2 or chosen not in tried:  # (a fused epilogue's cell: no shape of its own)
                continue
            best = min(tried, key=tried.get)
            if tried[best] >= tried[chosen] * (1 - SHAPE_MARGIN):
                continue
            try:
                config = config_from_name(best)
                shape = tuple(int(x) for x in parts[1].split("x"))
            except ValueError:
                continue  # (a config this version of the code no longer names so)
            out[shape] = config
        return out

    def own_configs(self, key: str) -> dict[str, tuple[GemmConfig, float | None]]:
        """{cell name: (its own config, that config's speedup over native in the tune)} for the
        cells of `key`'s bucket that run their own (`shape_configs`). The speedup comes from the
        same rounds' native time: the bucket config's time on the cell times its speedup."""
        entry = self.entries.get(key) or {}
        dtype = str(entry.get("cell")).split()[0]
        out = {}
        for (M, N, K), config in self.shape_configs(key).items():
            name = f"{dtype} {M}x{N}x{K}"
            timed = entry["cells"][name]
            speed, bucket_ms, own_ms = (
                timed.get("speedup_over_native"),
                timed.get("time_ms"),
                timed["tried"][str(config)],
            )
            out[name] = (config, speed * bucket_ms / own_ms if speed and bucket_ms else None)
        return out

    def key_of_cells(self, cells: list[str]) -> str | None:
        """The key of the entry tuned on any of these cells (its first cell or one of its
        `cells`), None where there is none."""
        wanted = set(cells)
        for key, entry in self.entries.items():
            if entry.get("cell") in wanted or wanted & set(entry.get("cells") or ()):
                return key
        return None

    def runners_up(self, key: str) -> list[GemmConfig]:
        """The other configs the tune timed on every cell of `key`'s bucket, best first (by the
        geometric mean of each cell's time relative to its fastest, `bucket_score`): what runs
        operands the entry's config cannot take (a fused epilogue shares its GEMM's bucket)."""
        entry = self.entries.get(key) or {}
        scores = entry.get("bucket_score") or {}
        chosen = self.config_for(key)
        out = []
        for name in sorted(scores, key=scores.get):
            try:
                config = config_from_name(name)
            except ValueError:
                continue  # (a config this version of the code no longer names so)
            if config != chosen:
                out.append(config)
        return out

    def coarse_timings(self, like: str) -> dict[str, dict[str, float]]:
        """The coarse rankings (`targets.prior.cell_timings`) of the entries of the same operation,
        dtype, precision and layout as the key `like`: what orders an autotune's candidates for a
        problem with no entry of its own."""
        from targets import prior

        kind = like.rsplit("|", 1)[0] + "|"
        if kind not in self._timings:  # (computed once per kind: the launcher asks for each new problem)
            self._timings[kind] = prior.cell_timings({k: e for k, e in self.entries.items() if k.startswith(kind)})
        return self._timings[kind]

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        payload = {"target": self.target, "triton": self.triton, "meta": self.meta, "entries": self.entries}
        tmp.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n")
        os.replace(tmp, path)


def load(target: str, triton_version: str, directory: Path | None = None) -> Library:
    """The library for this target and Triton version (empty if none was tuned yet)."""
    path = library_path(target, triton_version, directory)
    if not path.exists():
        return Library(target, triton_version)
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise ValueError(f"tuned-config library {path} is not valid JSON: {err}") from None
    if data.get("target") != target or data.get("triton") != triton_version:
        raise ValueError(
            f"tuned-config library {path} says target {data.get('target')!r}, Triton {data.get('triton')!r}; "
            f"its name says {target!r}, {triton_version!r}"
        )
    return Library(target, triton_version, data.get("meta", {}), data.get("entries", {}))


_REPORTED: set[tuple[str, str]] = set()


def lookup(target: str, triton_version: str, key: str, shape: tuple[int, int, int] | None = None) -> GemmConfig | None:
    """The tuned config for `key` (for `shape`, if given: `Library.config_for`), if the library
    for this Triton version has one.

    When only other Triton versions have been tuned for this target, say so once
    (TunedVersionWarning) and return None: a config chosen under another
    compiler is not silently reused.
    """
    if os.environ.get(ENV_USE, "1") == "0":
        return None
    directory = library_dir()
    config = _cached(target, triton_version, directory).config_for(key, shape)
    if config is None and (target, triton_version) not in _REPORTED:
        others = sorted(p.name for p in directory.glob(f"{target}-triton*.json")) if directory.is_dir() else []
        if others and not library_path(target, triton_version, directory).exists():
            _REPORTED.add((target, triton_version))
            warnings.warn(
                f"tuned configs for {target} exist only for other Triton versions ({', '.join(others)}); "
                f"Triton {triton_version} autotunes instead. Run `gemmwatch tune` to add this version.",
                TunedVersionWarning,
                stacklevel=3,
            )
    return config


def runners_up(target: str, triton_version: str, key: str) -> list[GemmConfig]:
    """`Library.runners_up` of the library `lookup` reads (empty when it has no entry)."""
    if os.environ.get(ENV_USE, "1") == "0":
        return []
    return _cached(target, triton_version, library_dir()).runners_up(key)


def coarse_timings(target: str, triton_version: str, like: str) -> dict[str, dict[str, float]]:
    """`Library.coarse_timings` of the library `lookup` reads; where it has no rankings of that kind,
    those of the first sibling target (`targets.catalogue.siblings`: the same die) whose library for
    this Triton version has some; empty when none has."""
    if os.environ.get(ENV_USE, "1") == "0":
        return {}
    return sibling_timings(target, triton_version, lambda lib: lib.coarse_timings(like))[1]


def sibling_timings(target: str, triton_version: str, rankings) -> tuple[str | None, dict[str, dict[str, float]]]:
    """(whose, `rankings(library)`) of this target's library for this Triton version, else of the
    first of its siblings' (`targets.catalogue.siblings`, by name) that gives any: the order of a
    chip whose own library is empty, taken from the chip of the same die that has been tuned.
    (None, {}) when none gives any."""
    from targets import catalogue

    directory = library_dir()
    found = rankings(_cached(target, triton_version, directory))
    if found:
        return target, found
    if target in catalogue.CATALOGUE:
        for other in catalogue.siblings(catalogue.get(target)):
            found = rankings(_cached(other.name, triton_version, directory))
            if found:
                return other.name, found
    return None, {}


_LOADED: dict[tuple, Library] = {}


def _cached(target: str, triton_version: str, directory: Path) -> Library:
    path = library_path(target, triton_version, directory)
    stamp = path.stat().st_mtime if path.exists() else None
    key = (str(path), stamp)
    if key not in _LOADED:
        _LOADED[key] = load(target, triton_version, directory)
    return _LOADED[key]
