"""The per-SM intake model of the fp8 128-row cells, fitted to what the tuned library recorded.

    python3 docs/results/2026-12-04d-h200-per-cell/intake_model.py [targets/tuned/h200-triton3.6.0.json]

For each config the H200's tunes timed on an fp8 cell of 128 rows (the fine pass's `tried`, not
the `earlier` records), the operand bytes one work unit reads, (rows + columns of its tile) x its
K steps' depth, times the rounds of units on 132 SMs; a least-squares line time = bytes / rate +
overhead per kernel path; then the split configs' records, current and `earlier`, against the
Gluon kernel's line (its splits: every tile where they make less than a wave, else the last wave's).
"""

import json
import math
import sys

import numpy as np

from targets.configs import config_from_name

SMS = 132


def unit_bytes_rounds(cfg, M, N, K):
    tiles = math.ceil(M / cfg.block_m) * math.ceil(N / cfg.tile_n)
    split = max(cfg.split_k, 1)
    whole = 0 if tiles < SMS or not cfg.uses_gluon else tiles // SMS * SMS
    units = whole + (tiles - whole) * split
    return (min(cfg.block_m, M) + cfg.tile_n) * K / split, math.ceil(units / SMS)


def main(path):
    entries = json.load(open(path))["entries"]
    rows, splits = [], []
    for key, entry in entries.items():
        if not key.startswith("scaled_matmul|fp8"):
            continue
        cells = dict(entry.get("cells") or {})
        cells.setdefault(entry["cell"], {"tried": entry.get("tried", {})})
        for cell, timed in cells.items():
            M, N, K = map(int, cell.split()[1].split("x"))
            if M != 128:
                continue
            for name, ms in timed["tried"].items():
                cfg = config_from_name(name)
                if cfg.stream_k or cfg.variant == "streamk" or cfg.tail_halves:
                    continue
                nbytes, rounds = unit_bytes_rounds(cfg, M, N, K)
                rows.append((cell, name, cfg.variant, rounds * nbytes / 1e3, ms * 1e3))
                if cfg.uses_gluon and cfg.split_k > 1:
                    splits.append((cell, name, "now", rounds * nbytes / 1e3, ms * 1e3))
        for name, rec in (entry.get("earlier") or {}).items():
            cfg = config_from_name(name)
            M, N, K = map(int, entry["cell"].split()[1].split("x"))
            if M == 128 and cfg.uses_gluon and cfg.split_k > 1:
                nbytes, rounds = unit_bytes_rounds(cfg, M, N, K)
                splits.append((entry["cell"], name, rec["measured"][:10], rounds * nbytes / 1e3, rec["time_ms"] * 1e3))
    lines = {}
    print(f"{'path':14s} {'configs':>7s} {'GB/s per SM':>11s} {'overhead us':>11s} {'R2':>6s}")
    for path_name in ("tile", "tma", "gluon_ws", "gluon_wg"):
        sel = [r for r in rows if r[2] == path_name]
        if len(sel) < 4:
            continue
        X = np.array([[r[3], 1.0] for r in sel])
        y = np.array([r[4] for r in sel])
        (slope, icpt), *_ = np.linalg.lstsq(X, y, rcond=None)
        r2 = 1 - ((y - X @ [slope, icpt]) ** 2).sum() / ((y - y.mean()) ** 2).sum()
        lines[path_name] = (slope, icpt)
        print(f"{path_name:14s} {len(sel):7d} {1 / slope:11.1f} {icpt:11.2f} {r2:6.3f}")
    slope, icpt = lines["gluon_ws"]
    print("\nthe Gluon kernel's splits against gluon_ws's line (us):")
    for cell, name, when, kb, us in sorted(set(splits)):
        print(f"  {cell:26s} {name:48s} {when:10s} measured {us:5.1f}  line {kb * slope + icpt:5.1f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "targets/tuned/h200-triton3.6.0.json")
