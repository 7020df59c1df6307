"""The swap-AB / Gluon split table of docs/BENCHMARKS.md (2026-12-07, second session) from a library
a tune returned: per 128-row cell on which swap-AB tiles were timed, cuBLAS, the fastest config of
the space before, the fastest swap-AB tile and the fastest Gluon split in 3 or 6 (the cells' `tried`
timings).

    python3 docs/results/2026-12-07b-swap128/table.py docs/results/2026-12-07b-swap128/call_1/h100-sxm-triton3.6.0.json.gz
"""

import gzip
import json
import sys


def _swapped(name: str) -> bool:
    return name.endswith("swap")


def _split(name: str) -> bool:
    return name.endswith(("-sk3", "-sk6"))


def _best(tried: dict, keep) -> str:
    timed = sorted((t, n) for n, t in tried.items() if t and keep(n))
    return f"{timed[0][0] * 1e3:.2f} (`{timed[0][1]}`)" if timed else "-"


def main(path: str) -> None:
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        entries = json.load(f)["entries"]
    print(
        "| cell (H100, us) | cuBLAS | fastest config of the space before | fastest swap-AB tile | fastest Gluon split in 3 or 6 |"
    )
    print("|---|---|---|---|---|")
    rows = []
    for key, entry in entries.items():
        if "|128x" not in key:
            continue
        for cell, record in (entry.get("cells") or {entry["cell"]: entry}).items():
            tried = record["tried"]
            if not any(_swapped(n) for n in tried):
                continue
            native = record["time_ms"] * record["speedup_over_native"]
            others = _best(tried, lambda n: not _swapped(n) and not _split(n))
            row = f"| {cell} | {native * 1e3:.2f} | {others} | {_best(tried, _swapped)} | {_best(tried, _split)} |"
            rows.append((cell, row))
    for _, row in sorted(rows):
        print(row)


if __name__ == "__main__":
    main(sys.argv[1])
