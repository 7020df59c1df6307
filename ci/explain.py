"""`gemmwatch explain`: the launch-level facts behind each cell below the native library.

For every fp16/bf16/fp8 cell of a run whose speedup over native is below `--below` (default 1.00),
one row setting our launch beside the native library's: our config, its output tiles and the
rounds of them one program per SM makes; the native kernel (recorded by a run with
GEMMWATCH_NATIVE_KERNELS=1), its tile and thread-block cluster as its name gives them (cuBLAS's
`nvjet_sm90_<types>_<M>x<N>_<K>x<stages>_<cx>x<cy>_...`), the CTAs it launched, and its tiles and
rounds. cuBLAS sees torch's row-major product transposed, so its tile's first side lies along our
N (checked against the launched grid where the kernel is not persistent).

The last column names the differences that the H200 measurements so far tie to lost time
(docs/BENCHMARKS.md, 2026-12-02 seventh and eighth sessions, 2026-12-03, 2026-12-04 fourth
session): clusters of CTAs sharing operand tiles by TMA multicast, which our kernels cannot
(Triton 3.6); fewer rounds of tiles; and fewer operand bytes read from L2 in all (the tiles' A rows
and B columns, a tile multicast to a cluster's CTAs counted once), which the times of the Gluon
kernel's configs on the fp8 128-row cells follow on the H200; and, a fact of the cell, operand rows
that are not 128-byte multiples apart (1000 wide in 16 bits: the pitch probe of 2026-12-06 timed
fp16 1000^3 at 10.7 us on such rows, 6.9 us on rows 2048 bytes apart). They are facts of the launches,
not a profile: a cell's profile is `python3 -m ci.ncu_probe`'s.

    gemmwatch explain RESULT.json [--context DIR] [--below 1.0] [--sms 132]

The context (our configs, the native kernels) is what `gemmwatch run` writes beside the results
(<results>/../context/<machine>/<commit8>-<stamp>/); `--context` names such a directory where the
results were moved (e.g. unpacked from ci/gpu_evidence.sh's archive).
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass

from ci.asv_results import ResultsError, load
from ci.ncu_probe import short_kernel_name
from ci.table import GOAL_DTYPES, cell_rows
from targets.configs import PAD_ROW_BYTES, dtype_bytes

# cuBLAS's Hopper kernels: nvjet_sm90_<types>_<tile M>x<tile N>_<tile K>x<stages>_<cluster>_...
_NVJET = re.compile(r"nvjet_sm\d+_[a-z0-9]+_(\d+)x(\d+)_(\d+)x(\d+)_(\d+)x(\d+)_")
# CUTLASS-named kernels: ..._<M>x<N>x<K>_..._<cx>x<cy>x<cz>_..., or cuBLAS's older ones
# ..._gemm_<types>_<M>x<N>_<layouts>_... (no cluster)
_CUTLASS = re.compile(r"_(\d+)x(\d+)x(\d+)_(?:.*?_)?(\d+)x(\d+)x1(?:_|$)")
_OLDER = re.compile(r"gemm_[a-z0-9]+_(\d+)x(\d+)_(?:nn|nt|tn|tt)_")


@dataclass(frozen=True)
class NativeTile:
    """A native kernel's output tile and cluster as its name states them (its own orientation)."""

    m: int
    n: int
    cluster: tuple[int, int]

    @property
    def cluster_size(self) -> int:
        return self.cluster[0] * self.cluster[1]


def native_tile(name: str) -> NativeTile | None:
    """The tile and cluster in a cuBLAS/CUTLASS kernel name, None where the name does not state them."""
    if match := _NVJET.search(name):
        m, n, _, _, cx, cy = map(int, match.groups())
        return NativeTile(m, n, (cx, cy))
    if match := _CUTLASS.search(name):
        m, n, _, cx, cy = map(int, match.groups())
        return NativeTile(m, n, (cx, cy))
    if match := _OLDER.search(name):
        m, n = map(int, match.groups())
        return NativeTile(m, n, (1, 1))
    return None


def _grid_ctas(launch: dict) -> int | None:
    grid = launch.get("grid")
    return math.prod(grid) if isinstance(grid, list) and grid else None


def main_kernel(kernels: list[str], launches: list[dict]) -> tuple[str | None, dict | None]:
    """The native call's GEMM kernel: of its launches (or, unrecorded, its kernels' names) the
    largest grid among those whose name states a tile, else the first that is not a memset or a
    split-K reduction."""
    named = [(launch.get("name", ""), launch) for launch in launches] or [(k, None) for k in kernels]
    tiled = [(n, launch) for n, launch in named if native_tile(n)]
    if tiled:
        return max(tiled, key=lambda item: _grid_ctas(item[1]) or 0 if item[1] else 0)
    for n, launch in named:
        if "Memset" not in n and "splitKreduce" not in n:
            return n, launch
    return named[0] if named else (None, None)


def _l2_reads(tiles: int, rows: int, cols: int, rows_shared_by: int, cols_shared_by: int) -> float:
    """Operand elements `tiles` tiles of `rows` x `cols` read from L2 per K step (their A rows and B
    columns), a tile of A that `rows_shared_by` CTAs of a cluster share (multicast) counted once for
    them, as one of B shared by `cols_shared_by`."""
    return tiles * (rows / rows_shared_by + cols / cols_shared_by)


# The fact of a cell whose operand rows are not PAD_ROW_BYTES multiples apart (and what counts it).
_OFF_LINES = f"not {PAD_ROW_BYTES}-byte multiples"


def unaligned_rows(c) -> str | None:
    """Which of the cell's operands (as the suites lay them out: A row-major, B row-major, fp8's
    column-major) have rows that are not PAD_ROW_BYTES multiples apart, e.g. 'A, B 2000 / 10000
    bytes'; None where both are."""
    from ci.tune import operand_dtype

    nbytes = dtype_bytes(operand_dtype(c.dtype))
    pitches = {"A": c.K * nbytes, "B": (c.K if c.is_fp8 else c.N) * nbytes}
    off = {name: pitch for name, pitch in pitches.items() if pitch % PAD_ROW_BYTES}
    if not off:
        return None
    return f"{', '.join(off)} {' / '.join(str(p) for p in off.values())} bytes"


def explain_cell(cell: str, speedup: float, entry: dict, sms: int) -> dict:
    """One row: our launch and the native library's for `cell` (its context `entry`)."""
    from benchmarks.matrix import parse_cell
    from targets.configs import config_from_name

    _, c = parse_cell(cell)
    row: dict = {"cell": cell, "speedup": speedup, "config": entry.get("config") or "?"}
    facts: list[str] = []
    ours_load = None  # outputs of the busiest SM: rounds of tiles x the tile's outputs
    try:
        cfg = config_from_name(row["config"])
    except ValueError:
        cfg = None
    if cfg is not None:
        ours_tiles = math.ceil(c.M / cfg.block_m) * math.ceil(c.N / cfg.tile_n)
        rows, cols = min(cfg.block_m, c.M), min(cfg.tile_n, c.N)  # (a tile wider than the matrix: what is there)
        ours_load = math.ceil(ours_tiles / sms) * rows * cols
        cluster = f", cluster {cfg.cluster_m}x{cfg.cluster_n}" if cfg.clustered else ""
        row["ours"] = f"{cfg.block_m}x{cfg.tile_n}{cluster}: {ours_tiles} tiles, {ours_tiles / sms:.2f} waves"
        # (a cluster along M shares B's tile, one along N A's)
        ours_reads = _l2_reads(ours_tiles, rows, cols, cfg.cluster_n, cfg.cluster_m)
    name, main = main_kernel(entry.get("native_kernels") or [], entry.get("native_launches") or [])
    row["native_kernel"] = short_kernel_name(name, 60) if name else "not recorded"
    tile = native_tile(name) if name else None
    if tile is None:
        row["native"] = "-"
    else:
        # (cuBLAS's column-major view of torch's row-major product: its M is our N)
        tiles = math.ceil(c.N / tile.m) * math.ceil(c.M / tile.n)
        ctas = _grid_ctas(main) if main else None
        persistent = ctas is not None and ctas < tiles
        row.update(native_tiles=tiles, native_ctas=ctas, native_cluster=tile.cluster_size)
        row["native"] = (
            f"{tile.m}x{tile.n}, cluster {tile.cluster[0]}x{tile.cluster[1]}: {tiles} tiles, {tiles / sms:.2f} waves"
            + (f", {ctas} CTAs" + (" (persistent)" if persistent else "") if ctas else "")
        )
        ours_cluster = cfg.cluster_m * cfg.cluster_n if cfg is not None else 1
        if tile.cluster_size > ours_cluster:  # (ours: clusters of 2 with Triton 3.9's Gluon, none before)
            facts.append(
                f"native clusters of {tile.cluster_size} (operand tiles multicast)"
                + (f", ours of {ours_cluster}" if ours_cluster > 1 else "")
            )
        rows, cols = min(tile.n, c.M), min(tile.m, c.N)
        native_load = math.ceil(tiles / sms) * rows * cols
        if ours_load is not None and ours_load > 1.05 * native_load:
            facts.append(
                f"our busiest SM computes {ours_load / native_load:.2f}x the outputs of native's (rounds of tiles)"
            )
        if cfg is not None:
            # (its cluster's first side along our N: CTAs there share A's rows, along our M B's columns)
            ratio = ours_reads / _l2_reads(tiles, rows, cols, tile.cluster[0], tile.cluster[1])
            if ratio > 1.05:
                facts.append(f"{ratio:.2f}x native's operand reads from L2 (a multicast tile once per cluster)")
    names = (
        [launch.get("name", "") for launch in entry.get("native_launches") or []] or entry.get("native_kernels") or []
    )
    row["native_splits_k"] = any("splitK" in n for n in names) or bool(main and (main.get("grid") or [1])[-1] > 1)
    if row["native_splits_k"]:
        facts.append("native splits K")
    if cfg is not None and (cfg.split_k > 1 or cfg.stream_k or cfg.tail_halves):
        facts.append("ours splits K or its last wave")
    if (rows_off := unaligned_rows(c)) is not None:
        # (the pitch probe of 2026-12-06: fp16 1000^3 on one config 10.7 us, on rows 2048 bytes apart 6.9)
        what = "each tile row crosses one more line"
        if cfg is not None and cfg.pad:
            what = "copied onto aligned rows"
        elif cfg is not None and cfg.copied_alone:
            what = f"{cfg.copied_alone} copied onto aligned rows, the other's tile rows cross one more line"
            if cfg.phase_a:
                what = "B copied onto aligned rows, A read in tiles of one line offset from it"
        elif cfg is not None and cfg.phase_a:
            what = "A read in tiles of one line offset from it, B's tile rows cross one more line"
        facts.append(f"rows of {rows_off} apart, {_OFF_LINES} ({what})")
    row["facts"] = "; ".join(facts) or "-"
    return row


def explain(result_path, context: dict[str, dict], below: float, sms: int) -> list[dict]:
    """The rows of the goal-dtype cells below `below`, slowest first."""
    rows = []
    for cell, measured in cell_rows(result_path).items():
        speedup = measured["speedup"]
        if speedup is None or speedup >= below or cell.split()[0] not in GOAL_DTYPES or len(cell.split()) != 2:
            continue  # (fused epilogues: their GEMM's row says it)
        rows.append(explain_cell(cell, speedup, context.get(cell, {}), sms))
    return sorted(rows, key=lambda r: r["speedup"])


def render(rows: list[dict], sms: int) -> str:
    lines = [
        f"| cell | speedup | our config | ours (tiles on {sms} SMs) | native kernel | native | differences |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['cell']} | {r['speedup']:.3f}x | `{r['config']}` | {r.get('ours', '-')} | "
            f"`{r['native_kernel']}` | {r['native']} | {r['facts']} |"
        )
    clustered = sum("native clusters" in r["facts"] for r in rows)
    rounds = sum("rounds of tiles" in r["facts"] for r in rows)
    reads = sum("reads from L2" in r["facts"] for r in rows)
    unknown = sum(r["native"] == "-" for r in rows)
    pitch = sum(_OFF_LINES in r["facts"] for r in rows)
    lines.append("")
    lines.append(
        f"{len(rows)} cells below; the native kernel runs clusters (larger than ours) in {clustered}; our busiest "
        f"SM has more outputs to compute in {rounds}; ours reads more operand bytes from L2 in {reads}; the native "
        f"tile not known from the kernel's name in {unknown}; operand rows off the {PAD_ROW_BYTES}-byte lines in {pitch}."
    )
    return "\n".join(lines)


def main(args) -> int:
    from ci.noise import context_cells
    from ci.run import named_context_cells

    if not args.below > 0:
        print(f"gemmwatch explain: --below must be a speedup > 0 (e.g. 1.0), got {args.below}", file=sys.stderr)
        return 2
    if args.sms is not None and args.sms < 1:
        print(f"gemmwatch explain: --sms must be a positive count of SMs, got {args.sms}", file=sys.stderr)
        return 2
    try:
        result = load(args.file)
    except ResultsError as err:
        print(f"gemmwatch explain: {err}", file=sys.stderr)
        return 2
    if args.context is not None:
        try:
            context = named_context_cells(args.context)
        except ResultsError as err:
            print(f"gemmwatch explain: {err}", file=sys.stderr)
            return 2
    else:
        context = context_cells(result)
        if not context:
            print(
                f"gemmwatch explain: no context beside {args.file} (<results>/../context/<machine>/"
                f"{result.commit[:8]}-*/); name the run's context directory with --context",
                file=sys.stderr,
            )
            return 2
    sms = args.sms
    if sms is None:
        from targets import CATALOGUE

        machine = str(result.machine_params.get("machine", ""))
        spec = CATALOGUE.get(machine)
        if spec is None:
            print(
                f"gemmwatch explain: machine {machine!r} of {args.file} is not a known target "
                f"({', '.join(sorted(CATALOGUE))}); give its SM count with --sms",
                file=sys.stderr,
            )
            return 2
        sms = spec.sm_count
    rows = explain(args.file, context, args.below, sms)
    print(render(rows, sms))
    return 0
