"""What the tuned-config library's timings say about a cell: the order a tune times candidates in.

Every tune writes each cell's coarse ranking into the library (`ranked_ms` on a bucket's first
cell, `ranked_on` on the others): under Triton 3.6 on the H200, 7,900 timings over 171 cells. The
target's space (`targets.configs.candidate_configs`) lists a cell's 300-2,800 configs by a static
guess, and a tune can time only the head of it: of the library's 136 fp16/bf16/fp8 winners, 49 stood
among their space's first 24, and some past the 1,000th. Cells alike in shape run alike configs, so
the timings of the nearest cells order a cell's space far better. Over the library's 154 cells
with a ranking of at least 8 configs, each cell's own ranking left out, the space's first 8 held a
config within 1% of the fastest the cell's ranking timed in 75 cells, the first 8 of `order` in 127
(116 and 143 of the first 24; with the other dtype of the shape left out too, 112 and 139:
docs/BENCHMARKS.md, 2026-12-05, `evaluate`).

A neighbour is a cell of the same dtype family (fp16 and bf16 are one; fp8 another; each fp32
precision its own) and the same row regime (one row, up to 16, up to 256, more: the space and the
kernels differ between them), weighted by exp(-distance / TAU), the distance being the sum of the
|log2| ratios of M, N and K (and 0.5 between fp16 and bf16). A config's predicted time relative to a
cell's fastest is the weighted geometric mean of its time relative to each neighbour's fastest, over
the neighbours that timed it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import NamedTuple

# How fast a neighbour's weight falls with distance (in log2 units of M, N and K summed): on the
# H200 library (`evaluate`) 0.5, 1 and 2 put a near-best config among the first 8 in 129, 127 and
# 126 of 154 cells (112-116 with the shape's other dtype left out too): 1, the middle.
TAU = 1.0
# Between fp16 and bf16 (one family, other rounding and conversion code).
OTHER_DTYPE = 0.5
# Configs predicted slower than this relative to the fastest are left to the space's own order.
CAP = 1.25
# A neighbour needs this many timed configs for its fastest to mean something.
MIN_TIMED = 3


class CellName(NamedTuple):
    """A cell's name split: `fp16 4096x4096x4096` -> dtype, M, N, K (`parse`: None where it is not one)."""

    dtype: str
    M: int
    N: int
    K: int

    @classmethod
    def parse(cls, name: str) -> CellName | None:
        parts = str(name).split()
        if len(parts) != 2:  # (a fused epilogue's cell: it shares its GEMM's bucket)
            return None
        try:
            M, N, K = (int(x) for x in parts[1].split("x"))
        except ValueError:
            return None
        return cls(parts[0], M, N, K) if min(M, N, K) >= 1 else None

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.M, self.N, self.K


def semantic(config: str) -> str:
    """A config's name with what its cell's shape decides left out: the extra columns beside a
    Gluon tile (`-xn8`, `-xn32`: the width that fills the SMs' waves for that shape), so that a
    neighbour's extra-column tile predicts this cell's (fp8 128x4608x3584's 64 x 72 tile and
    128x6144x4096's 64 x 96 are both `...-gluon-ws-xn`). On the H200 library it adds 0-2 cells to
    each row of `evaluate`."""
    return _EXTRA_N.sub("-xn", config)


_EXTRA_N = re.compile(r"-xn\d+")


def family(dtype: str) -> str:
    return "16-bit" if dtype in ("fp16", "bf16") else dtype


def regime(M: int) -> int:
    return 0 if M == 1 else 1 if M <= 16 else 2 if M <= 256 else 3


def distance(a: CellName, b: CellName) -> float | None:
    """How far apart two cells are for the prior; None where they are not neighbours at all."""
    if family(a.dtype) != family(b.dtype) or regime(a.M) != regime(b.M):
        return None
    shape = sum(abs(math.log2(x / y)) for x, y in zip(a.shape, b.shape, strict=True))
    return shape + (OTHER_DTYPE if a.dtype != b.dtype else 0.0)


def cell_timings(entries: Mapping[str, dict]) -> dict[str, dict[str, float]]:
    """{cell: {config: ms}} of the coarse rankings a library's entries hold (each bucket's first
    cell's `ranked_ms`, and each other cell's `ranked_on` ranking)."""
    out: dict[str, dict[str, float]] = {}
    for entry in entries.values():
        rankings = [(entry.get("cell"), entry.get("ranked_ms"))]
        rankings += list((entry.get("ranked_on") or {}).items())
        for cell, ranking in rankings:
            if not isinstance(ranking, dict):  # (an older form: {config: the cell it was ranked on})
                continue
            times = {c: float(t) for c, t in ranking.items() if isinstance(t, (int, float)) and t > 0}
            if cell and times:
                out.setdefault(str(cell), {}).update(times)
    return out


def timed(entries: Mapping[str, dict]) -> dict[str, set[str]]:
    """{cell: the configs a library's entries timed on it}: its coarse rankings, and each cell's
    fine pass (`tried`)."""
    out = {cell: set(times) for cell, times in cell_timings(entries).items()}
    for entry in entries.values():
        fine = [(entry.get("cell"), entry.get("tried"))]
        fine += [(cell, timing.get("tried")) for cell, timing in (entry.get("cells") or {}).items()]
        for cell, tried in fine:
            if cell and isinstance(tried, dict):
                out.setdefault(str(cell), set()).update(tried)
    return out


def predicted(timings: Mapping[str, Mapping[str, float]], cell: str, *, leave_out: Iterable[str] = ()) -> dict:
    """{config (`semantic` name): predicted time relative to `cell`'s fastest} from the timings of `cell`'s
    neighbours; `cell`'s own timings and those of the cells in `leave_out` are not used (a tune
    re-times its own incumbents anyway; an evaluation leaves out what it tests)."""
    target = CellName.parse(cell)
    if target is None:
        return {}
    skip = {cell, *leave_out}
    weighted: dict[str, float] = {}
    weights: dict[str, float] = {}
    for other, times in timings.items():
        near = CellName.parse(other)
        if other in skip or near is None or len(times) < MIN_TIMED:
            continue
        d = distance(target, near)
        if d is None:
            continue
        w = math.exp(-d / TAU)
        fastest = min(times.values())
        alike: dict[str, float] = {}
        for config, ms in times.items():
            alike[semantic(config)] = min(ms, alike.get(semantic(config), math.inf))
        for config, ms in alike.items():
            weighted[config] = weighted.get(config, 0.0) + w * math.log(ms / fastest)
            weights[config] = weights.get(config, 0.0) + w
    return {c: math.exp(weighted[c] / weights[c]) for c in weighted if weights[c] > 1e-9}


def score(prediction: Mapping[str, float], config) -> float:
    """`config`'s predicted time relative to the fastest (`predicted`; inf where none)."""
    return prediction.get(semantic(str(config)), math.inf)


def order(space: list, prediction: Mapping[str, float], cap: float = CAP) -> list:
    """`space` reordered: the configs the neighbours predict within `cap` of the fastest, fastest
    first, alternating with the space's own order (its best guesses, which also reach the kernel
    paths and configs no neighbour has timed), each config once."""
    liked = sorted((c for c in space if score(prediction, c) <= cap), key=lambda c: score(prediction, c))
    out, seen = [], set()
    for pair in zip(liked + [None] * (len(space) - len(liked)), space, strict=False):
        for cfg in pair:
            if cfg is not None and str(cfg) not in seen:
                seen.add(str(cfg))
                out.append(cfg)
    return out


def evaluate(entries: Mapping[str, dict], space_of, ks: Iterable[int] = (4, 8, 16, 24), *, by_shape: bool = False):
    """How well `order` would have served the library's own cells: each cell with a ranking of at
    least 8 configs, its own ranking left out (with `by_shape`, those of every dtype of its shape
    too), its space (`space_of(cell: CellName)`, the config names) ordered both ways and cut to the
    configs the cell's ranking timed. Returns {"cells": n, "space": {k: hits}, "library": {k: hits}}:
    a hit, a cell whose first k hold a config within 1% of the fastest it timed."""
    timings = cell_timings(entries)
    ks = tuple(ks)
    out = {"cells": 0, "space": dict.fromkeys(ks, 0), "library": dict.fromkeys(ks, 0)}
    for cell, times in sorted(timings.items()):
        name = CellName.parse(cell)
        if name is None or len(times) < 8:
            continue
        space = [str(c) for c in space_of(name)]
        same_shape = [c for c in timings if by_shape and (p := CellName.parse(c)) and p.shape == name.shape]
        orders = {"space": space, "library": order(space, predicted(timings, cell, leave_out=same_shape))}
        fastest = min(times.values())
        out["cells"] += 1
        for how, ordered in orders.items():
            ranked = [c for c in ordered if c in times]
            for k in ks:
                out[how][k] += bool(ranked[:k]) and min(times[c] for c in ranked[:k]) <= fastest * 1.01
    return out
