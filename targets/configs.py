"""The GEMM autotune space, derived from a `TargetSpec` — never a hand list per chip.

Rules (the first seed's, made concrete):
- BLOCK_M/N are multiples of the matrix unit's tile, BLOCK_K a multiple of its K
  depth in bytes (16 elements of fp16, 32 of fp8).
- Shared memory `(BM*BK + BK*BN) * bytes * stages` stays within the chip's
  opt-in per-block budget.
- num_stages in 2..4 and never more than the K loop's iterations; 6, 8, 12 and 16 too for
  memory-bound problems where they fit the shared memory (ranked after the others).
- num_warps 4 or 8, and the fp32 accumulator tile must fit the register file
  (at most half of a thread's registers, the rest for addresses and operands).
- Small-M (decode) shapes get small BLOCK_M instead of wasting a 128-row tile.
- Blocks are not larger than the (power-of-two rounded) problem.
- Kernel variants: "tile" (one program per output tile, pointer loads) always;
  "tma" (persistent, one program per SM looping over tiles, operands through
  tensor descriptors) on chips with a TMA and tiles of >= 64 rows; "tma_ws"
  (the same, warp-specialized into producer and consumer partitions) where
  the spec says the compiler applies it; "splitk" (K cut into `split_k`
  slices reduced in a second pass) and "splitk_serial" (the same slices summed
  by the last one of each tile to finish: one launch) when one wave of tiles
  leaves SMs idle and K is long enough to cut; "streamk" (every SM gets an
  equal share of the (tile, K step) iterations) where the last wave is partial.
  The last two synchronise programs through counters in memory. "tma_store"
  (the TMA kernel storing C through a descriptor too) where the output tile
  also fits in shared memory. On Hopper, 32-bit operands' TMA configs also come with `kmajor_b`
  (B copied K-major first, as tf32's warpgroup MMA reads it). Where K or N rows are not 128-byte multiples, each
  config also comes with `pad` (operands copied to aligned rows first), and where both are
  16-byte multiples but neither a 128-byte one, with `pad_a` and `pad_b` (the copy of one).
  Where A's rows are 16-byte but not 128-byte multiples, the TMA configs (and their `pad_b`
  twins) also come with `phase_a` (tiles of rows that share an offset within a line, A read
  from that offset: aligned without a copy), where M is a multiple of the offsets' count.
- "gluon_ws" (kernels/gluon_hopper.py: the persistent TMA GEMM warp-specialized by hand in
  Gluon, a loader warp and one or two MMA warpgroups) on Hopper with 16- and 8-bit operands,
  where Gluon's Hopper module is installed: 128 x 64-256 tiles on 8 warps, 128 x 64 and 64 x
  64-256 on 4, the ring 3-12 slots deep as the shared memory holds beside the output tile
  (GLUON_TILES, GLUON_STAGES). The
  8-warp tiles also come as "gluon_wg": each MMA warpgroup its own partition on half the
  tile's rows, so that the two do not wait for each other at every K step. Where the tiles
  make less than a wave, both also come with K split among 2-8 units (`split_k`, names
  ending in `-sk2` after the variant's).
  Where the installed Triton has Gluon's clusters (3.9) and they have run on a GPU
  (GLUON_CLUSTER_TRITON), the whole-tile configs also come in clusters of two CTAs along M or N
  (`cluster_m` / `cluster_n`, names ending in `-cm2` / `-cn2` after the variant's) that share the
  other operand's tile by TMA multicast, as cuBLAS's kernels do in most of the cells where ours
  lose (docs/BENCHMARKS.md).
- Decode shapes of at most FMA_MAX_M rows with 16- or 8-bit operands also get `fma` configs
  (BLOCK_M the rows rounded up to a power of two, the K step's products summed on the CUDA
  cores instead of a 16-row matrix instruction), and their split-K versions; one row also gets
  the GEMV_TILES (8-32 KiB of B per K step), which on a K-major B take the GEMV form.
- On Hopper, tiles of at most SWAP_MAX_M rows (decode's, and the 128-row cells') with 16- or 8-bit operands also come with
  `swap_ab` (B^T @ A^T: B's columns the warpgroup MMA's 64+ rows), in the one-tile-per-program
  kernel (and its split-K versions) and in the persistent TMA kernel ("tma").
- fp8 configs with K steps <= 128 and <= 64 accumulator values per thread also come with
  `late_promotion` (for precise accumulation: each step's partial sum added while the next
  step's MMAs run).
- At most `MAX_CONFIGS` configs, best-guess first (the interpreter and any
  caller that cannot time takes the first one).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from dataclasses import asdict, dataclass

from targets.spec import TargetSpec

MAX_CONFIGS = 128
# A `pad` config's operand copies have rows a multiple of this many bytes apart (an L2 line): on rows
# 2000 bytes apart, fp16 1000^3 took 10.7 us against 6.9 us on rows 2048 bytes apart, same config
# (an H100 SXM, docs/results/2026-12-06c-pitch): a tile's row of 128 or 256 bytes spans one more line.
PAD_ROW_BYTES = 128


# A `phase_a` tile starts each K step's reads of A's rows on a multiple of a part of an L2 line, so
# that every part lies in one line: whole lines (PAD_ROW_BYTES; 2026-12-07: fp16/bf16 1000^3 on the
# H100 0.79 -> 0.98x cuBLAS in the tune), or, with `half_lines` (names ending in `-hl`), halves of
# them, each K step then read in parts of this many bytes along K (one part where the step is no
# wider). On whole lines fp16 rows 2000 bytes apart start at 8 offsets, up to 56 elements before a
# line, and on K = 1000 in 64-wide steps half the tiles take a 17th step, of zeros; in halves they
# start at 4, at most 24 elements early, and 1000 + 24 = 1024 = 16 steps for every tile, each
# step's two parts' MMAs into two accumulators where they fit (split_accumulator). Measured on an
# H100 SXM, the halves lose more than the zero step costs: fp16 1000^3 on the 128 x 64 tile 8.69 us
# on whole lines, 9.48 on halves (9.66 into one accumulator), and in the tune's ranking of every
# cell of the four buckets, each half-line config ran slower than its whole-line twin (2026-12-07,
# docs/results/2026-12-07f-half-lines). So candidates come on whole lines only; the flag stays for
# the probes (docs/results/2026-12-07e-parts/parts_probe.py) and names such a kernel exactly.
HALF_LINE_BYTES = 64


def line_phases(row_bytes: int, unit: int = PAD_ROW_BYTES) -> int:
    """How many rows apart two rows `row_bytes` apart start at the same offset within a `unit`
    (bytes; an L2 line, PAD_ROW_BYTES, by default): 1 when every row starts where the first does, 8
    for rows 16-byte multiples apart that are no line multiples (fp16 K = 1000), 4 of those within
    a half line."""
    return unit // math.gcd(row_bytes, unit)


# A `phase_a` tile whose K steps come in parts takes its odd parts into a second accumulator where
# both fit in this many fp32 values per thread (the 128 x 64 tile on 4 warps: 64 each; the 128 x
# 256 one on 8 warps would need 256, and spills): with one accumulator Triton waits for a step's
# first part's MMAs before issuing the second's (compiled for sm_90 with Triton 3.6: a full wait in
# every step), with two it keeps both in flight.
PHASE_SPLIT_ACC_MAX_PER_THREAD = 128


def split_accumulator(cfg: GemmConfig, warp_size: int = 32) -> bool:
    """Whether a `phase_a` tile of `cfg` read in parts has room for a second accumulator
    (PHASE_SPLIT_ACC_MAX_PER_THREAD)."""
    return 2 * cfg.block_m * cfg.block_n <= PHASE_SPLIT_ACC_MAX_PER_THREAD * cfg.num_warps * warp_size


def phase_parts(block_k: int, nbytes: int, unit: int) -> int:
    """The parts a `phase_a` tile's K step of `block_k` elements of `nbytes` bytes is read in: one
    per `unit` bytes (the config's `phase_unit`) where the unit is less than a line, at least one; a
    step that starts on a whole line lies in whole lines at any width, so on them it is one part."""
    if unit >= PAD_ROW_BYTES:
        return 1
    return max(1, block_k * nbytes // unit)


STREAMK_WAVE_EFFICIENCY = 0.8
# fp8 late promotion: the K step is the promotion interval (128 elements, as cuBLAS and CUTLASS
# promote), and the step's partial sums take registers beside the accumulator's (x3 in all).
LATE_PROMOTION_MAX_BLOCK_K = 128
LATE_PROMOTION_MAX_ACC_PER_THREAD = 64
VARIANTS = ("tile", "tma", "tma_ws", "tma_store", "splitk", "splitk_serial", "streamk", "gluon_ws", "gluon_wg")
SPLIT_VARIANTS = ("splitk", "splitk_serial")
TMA_VARIANTS = ("tma", "tma_ws", "tma_store")
# (not tma_store: its descriptor over C stores consecutive rows, a phase tile's are PHASES apart)
PHASE_VARIANTS = ("tma", "tma_ws")
SPLITS = (2, 4, 8, 16)
STAGES = (2, 3, 4)
# Memory-bound problems (fewer FLOPs per operand byte than the chip's ridge point; without the
# spec's figures, M <= 128) also get these stage counts: more of the operands' bytes in flight per
# program, as the cuBLAS kernels the H200 ran for them keep (6-16 stages: nvjet_sm90_hsh_128x16_64x11,
# ..._64x64_64x13, ..._64x8_64x16; docs/BENCHMARKS.md). They rank after every config of the usual
# stage counts, so an autotune's first candidates stay what they were; a tune's refinement (the
# fastest tiles' other stage counts) and `--match` reach them. 12 and 16 fit the small decode tiles
# (a 16x64x128 fp8 stage is 10 KiB: 16 of them 151 KiB with the kernel's own, compiled for sm_90
# with Triton 3.6 and 3.9 without spills), where cuBLAS keeps 12-16.
DEEP_STAGES = (6, 8, 12, 16)
MAX_STAGES = max(DEEP_STAGES)  # a config's pipeline depth at most
WARPS = (4, 8)
GROUP_M = 8  # programs along M per group: tutorial 03's L2-reuse ordering
# fma decode configs: rows at most this; the fp32 products of a K step (BM x BK x BN) at most
# this many per thread (registers).
FMA_MAX_M = 4
FMA_MAX_PRODUCTS_PER_THREAD = 64
# One-row problems also get these fma tiles (columns, bytes of K per step, warps): where B is
# K-major (fp8 always: torch._scaled_mm's layout) they take the GEMV form (kernels/matmul.py's
# `_gemv_partial`), each thread's 16-byte loads along K, 8-32 KiB of B per step. On the H200 the
# fp8 decode cells' fastest were among them (16 x 1024, 64 x 256, 32 x 512: docs/BENCHMARKS.md,
# 2026-12-03 third session). One stage: the K step's loads go to registers, not through a
# software pipeline.
GEMV_TILES = ((16, 1024, 4), (32, 512, 4), (64, 256, 4), (64, 128, 4), (16, 1024, 8), (64, 256, 8), (64, 512, 8),
              (128, 256, 8))  # fmt: skip
# The variants of the one-tile-per-program kernel (`_gemm_kernel`), the decode paths' (fma, swap-AB).
TILE_KERNEL_VARIANTS = ("tile", "splitk", "splitk_serial")
# Swap-AB configs: for problems and tiles of at most this many rows; B's columns become a warpgroup
# MMA's rows, of which there are 64 per warpgroup, and A's rows its columns (up to 256). Decode's first
# (32), then the 128-row cells' too, where fp8 lost 7-20% to cuBLAS on the H200 while its 1- and
# 16-row cells, on swapped tiles, beat it (docs/results/2026-12-07b-swap128).
SWAP_MAX_M = 128
SWAP_MIN_BLOCK_N = 64
# ... in the one-tile-per-program kernel, and in the persistent TMA kernel (its operand tiles by
# descriptor through a ring of `num_stages` slots, as cuBLAS's decode kernels stream B).
SWAP_VARIANTS = (*TILE_KERNEL_VARIANTS, "tma")

# Gluon's clusters: CTAs per cluster along M or N (kernels/gluon_hopper.py's are of two).
CLUSTER_SIZES = (1, 2)
# Gluon's extra columns beside a tile's block_n (`GemmConfig.extra_n`), offered where they fill the
# waves of tiles by at least this share of the SMs' slots more (`extra_n_width`).
EXTRA_N_WIDTHS = (8, 16, 32, 64)
EXTRA_N_MIN_GAIN = 0.05
# Extra columns that are EXTRA_N_NARROW_BYTES or fewer along B's rows (8 columns of a 16-bit B
# whose rows run along N: each K step's extra tile 16 bytes wide, unswizzled) in K steps deeper than
# EXTRA_N_NARROW_MAX_BLOCK_K came out wrong on the H200 under Triton 3.6: those columns of every such
# config (16-bit, 128-deep K steps; docs/BENCHMARKS.md, "2026-12-04 (third session)"), where
# 64-deep steps, and 16 or more columns, computed them right. The launcher refuses them.
EXTRA_N_NARROW_BYTES = 16
EXTRA_N_NARROW_MAX_BLOCK_K = 64

# Element sizes for the dtype names gemmwatch uses.
DTYPE_BYTES = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1}


@dataclass(frozen=True, order=True)
class GemmConfig:
    """One point of the autotune space (the launch meta-parameters)."""

    block_m: int
    block_n: int
    block_k: int
    num_warps: int
    num_stages: int
    group_m: int = GROUP_M
    variant: str = "tile"
    split_k: int = 1
    pad: bool = False  # copy operands whose rows are not PAD_ROW_BYTES multiples into aligned buffers first
    # The same copy of one operand only (A's, B's), K kept: half the copy where both operands' rows
    # are off the lines but 16-byte multiples (the pitch probe of 2026-12-06: which operand's rows
    # cost a tile more depends on its shape; the copy of both took ~8 of 63.6 us on 3000x5000x1000).
    pad_a: bool = False
    pad_b: bool = False
    # fp8 with precise accumulation: each K step's partial sum is promoted to fp32 while the next
    # step's MMAs run, instead of right after its own (which serialises the MMAs); K steps <= 128.
    late_promotion: bool = False
    # Decode: the K step's products summed in fp32 on the CUDA cores, no matrix instruction (so
    # BLOCK_M may be below 16); pointer variants only ("tile", "splitk", "splitk_serial").
    fma: bool = False
    # Decode: each K step computes the transposed tile (B^T @ A^T), B's columns on the MMA's rows,
    # so that a tile of 16-32 rows gets Hopper's warpgroup MMA (64 rows); pointer variants only.
    swap_ab: bool = False
    # Gluon (split_k 1): the last, partial wave of tiles shared by every program, each taking an
    # equal run of its K steps (stream-K; kernels/gluon_hopper.py).
    stream_k: bool = False
    # Gluon (split_k 1, no stream_k): the last, partial wave of tiles in a second launch, its rows
    # in tiles of half the width, where `tail_rows` finds such a wave (elsewhere whole tiles).
    tail_halves: bool = False
    # Gluon (split_k 1, no stream_k or tail_halves): tiles in clusters of two CTAs along M
    # (cluster_m 2: the pair shares B's tile) or N (cluster_n 2: A's), the shared tile copied from
    # L2 once into both CTAs (TMA multicast); block_m and block_n stay one CTA's tile.
    cluster_m: int = 1
    cluster_n: int = 1
    # The persistent TMA kernel on a copy of B made K-major first (one transposing copy per call):
    # Hopper's warpgroup MMA reads 32-bit (tf32) and 8-bit operands K-major only, and Triton makes
    # a K step's tile of a row-major B so in shared memory for every step anew otherwise.
    kmajor_b: bool = False
    # Gluon (no stream_k, tail_halves or cluster; split_k as for any tile): each tile extra_n columns wider than
    # block_n (8, 16, 32 or 64, less than block_n), its own B tile, MMA and output tile beside the
    # main ones: tiles of 72, 80, 96, 144 ... columns, the widths the native library picks so that
    # a problem's tiles fill the SMs once (e.g. 128 x 4608 in 64 x 72 tiles: 128 on 132 SMs, where
    # 64 x 64 makes 144 and 64 x 128 72). Triton's blocks are powers of two; two of them are not.
    extra_n: int = 0
    # The persistent TMA kernel ("tma", "tma_ws") on an A whose rows are 16-byte but not L2-line
    # multiples apart (fp16 K = 1000: 8 offsets within a line, one every 8 rows): each tile takes
    # rows of one offset (p, p + 8, ...) and starts its K loop early by it, so A's tile rows start
    # on whole lines without the copy `pad_a` makes (kernels/matmul.py, _gemm_tma_kernel).
    phase_a: bool = False
    # With phase_a: the offsets taken within half lines (HALF_LINE_BYTES), each K step read in parts
    # of half a line, fewer offsets and a K loop started fewer elements early (fp16 K = 1000: 4 and
    # 24, against 8 and 56 on whole lines).
    half_lines: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.fma, bool):
            raise ValueError(f"GemmConfig.fma must be a bool, got {self.fma!r}")
        if not isinstance(self.swap_ab, bool):
            raise ValueError(f"GemmConfig.swap_ab must be a bool, got {self.swap_ab!r}")
        if self.swap_ab and (self.variant not in SWAP_VARIANTS or self.fma or self.block_n < SWAP_MIN_BLOCK_N):
            raise ValueError(
                f"GemmConfig.swap_ab is for the variants {', '.join(SWAP_VARIANTS)}, without fma, with block_n >= "
                f"{SWAP_MIN_BLOCK_N} (the MMA's rows), got {self}"
            )
        for name in ("block_m", "block_n", "block_k"):
            value = getattr(self, name)
            least = 1 if self.fma and name == "block_m" else 16
            if not isinstance(value, int) or value < least or value & (value - 1):
                raise ValueError(f"GemmConfig.{name} must be a power of two >= {least}, got {value!r}")
        if self.num_warps not in (1, 2, 4, 8, 16):
            raise ValueError(f"GemmConfig.num_warps must be 1, 2, 4, 8 or 16, got {self.num_warps!r}")
        if not isinstance(self.num_stages, int) or not 1 <= self.num_stages <= MAX_STAGES:
            raise ValueError(f"GemmConfig.num_stages must be an int in 1..{MAX_STAGES}, got {self.num_stages!r}")
        if not isinstance(self.group_m, int) or self.group_m < 1:
            raise ValueError(f"GemmConfig.group_m must be a positive int, got {self.group_m!r}")
        if self.variant not in VARIANTS:
            raise ValueError(f"GemmConfig.variant must be one of {', '.join(VARIANTS)}, got {self.variant!r}")
        if self.variant in SPLIT_VARIANTS or (self.uses_gluon and self.split_k != 1):
            if not isinstance(self.split_k, int) or isinstance(self.split_k, bool) or not 2 <= self.split_k <= 64:
                raise ValueError(
                    f"GemmConfig.split_k must be an int in 2..64 for variant {self.variant}, got {self.split_k!r}"
                )
        elif self.split_k != 1:
            raise ValueError(f"GemmConfig.split_k must be 1 for variant {self.variant!r}, got {self.split_k!r}")
        if not isinstance(self.stream_k, bool):
            raise ValueError(f"GemmConfig.stream_k must be a bool, got {self.stream_k!r}")
        if self.stream_k and not (self.uses_gluon and self.split_k == 1):
            raise ValueError(f"GemmConfig.stream_k is for the Gluon variants without split_k, got {self}")
        if not isinstance(self.tail_halves, bool):
            raise ValueError(f"GemmConfig.tail_halves must be a bool, got {self.tail_halves!r}")
        if self.tail_halves and not (
            self.uses_gluon and self.split_k == 1 and not self.stream_k and self.block_n >= 128
        ):
            raise ValueError(
                f"GemmConfig.tail_halves is for the Gluon variants without split_k or stream_k, block_n >= 128, got {self}"
            )
        for name in ("cluster_m", "cluster_n"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value not in CLUSTER_SIZES:
                raise ValueError(f"GemmConfig.{name} must be one of {CLUSTER_SIZES}, got {value!r}")
        if self.clustered:
            if self.cluster_m > 1 and self.cluster_n > 1:
                raise ValueError(f"GemmConfig: a cluster is along M or along N, not both; got {self}")
            if not (self.uses_gluon and self.split_k == 1 and not self.stream_k and not self.tail_halves):
                raise ValueError(
                    f"GemmConfig.cluster_m/cluster_n are for the Gluon variants without split_k, stream_k or "
                    f"tail_halves, got {self}"
                )
            if self.variant == "gluon_wg" and self.cluster_m > 1:
                raise ValueError(
                    f"GemmConfig: a cluster along M splits A's rows between its CTAs; gluon_wg (each MMA warpgroup "
                    f"half the rows) clusters along N only, got {self}"
                )
        if isinstance(self.extra_n, bool) or self.extra_n not in (0, *EXTRA_N_WIDTHS):
            raise ValueError(f"GemmConfig.extra_n must be 0 or one of {EXTRA_N_WIDTHS}, got {self.extra_n!r}")
        if self.extra_n and not (
            self.uses_gluon
            and not (self.stream_k or self.tail_halves or self.clustered)
            and self.extra_n < self.block_n
        ):
            raise ValueError(
                f"GemmConfig.extra_n is for the Gluon variants without stream_k, tail_halves or clusters, less than "
                f"block_n, got {self}"
            )
        for name in ("pad", "pad_a", "pad_b"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"GemmConfig.{name} must be a bool, got {getattr(self, name)!r}")
        if self.pad + self.pad_a + self.pad_b > 1 or (self.copied_alone and self.kmajor_b):
            raise ValueError(
                f"GemmConfig: pad (both operands), pad_a and pad_b (one) exclude each other, and kmajor_b excludes "
                f"pad_a and pad_b, got {self}"
            )
        if not isinstance(self.kmajor_b, bool):
            raise ValueError(f"GemmConfig.kmajor_b must be a bool, got {self.kmajor_b!r}")
        if self.kmajor_b and (not self.uses_tma or self.swap_ab):
            raise ValueError(
                f"GemmConfig.kmajor_b is for the persistent TMA kernel's variants ({', '.join(TMA_VARIANTS)}) "
                f"without swap_ab, got {self}"
            )
        if not isinstance(self.phase_a, bool):
            raise ValueError(f"GemmConfig.phase_a must be a bool, got {self.phase_a!r}")
        if self.phase_a and (
            self.variant not in PHASE_VARIANTS or self.swap_ab or self.pad or self.pad_a or self.kmajor_b
        ):
            raise ValueError(
                f"GemmConfig.phase_a is for the variants {', '.join(PHASE_VARIANTS)} on A as it is (without "
                f"swap_ab, pad, pad_a or kmajor_b), got {self}"
            )
        if not isinstance(self.half_lines, bool):
            raise ValueError(f"GemmConfig.half_lines must be a bool, got {self.half_lines!r}")
        if self.half_lines and not self.phase_a:
            raise ValueError(f"GemmConfig.half_lines is for phase_a configs (their offsets' unit), got {self}")
        if not isinstance(self.late_promotion, bool):
            raise ValueError(f"GemmConfig.late_promotion must be a bool, got {self.late_promotion!r}")
        if self.fma and (self.variant not in TILE_KERNEL_VARIANTS or self.late_promotion):
            raise ValueError(
                f"GemmConfig.fma is for the variants {', '.join(TILE_KERNEL_VARIANTS)} without late promotion, "
                f"got {self.variant!r}{' with late_promotion' if self.late_promotion else ''}"
            )
        if self.late_promotion and self.block_k > LATE_PROMOTION_MAX_BLOCK_K:
            raise ValueError(
                f"GemmConfig.late_promotion needs block_k <= {LATE_PROMOTION_MAX_BLOCK_K} (the promotion interval), "
                f"got {self.block_k}"
            )

    @property
    def uses_gluon(self) -> bool:
        """The Gluon kernel (kernels/gluon_hopper.py) runs this config (variants "gluon_ws", "gluon_wg")."""
        return self.variant in ("gluon_ws", "gluon_wg")

    @property
    def clustered(self) -> bool:
        """The tiles run in clusters of CTAs sharing an operand tile (cluster_m or cluster_n > 1)."""
        return self.cluster_m * self.cluster_n > 1

    @property
    def copied_alone(self) -> str | None:
        """The operand a `pad_a` / `pad_b` config copies alone ("A", "B"), or None."""
        return "A" if self.pad_a else "B" if self.pad_b else None

    @property
    def uses_tma(self) -> bool:
        """The persistent TMA kernel runs this config (variants "tma", "tma_ws", "tma_store")."""
        return self.variant in TMA_VARIANTS

    def smem_bytes(self, dtype_bytes: int) -> int:
        """Shared memory of the software pipeline's operand buffers."""
        return (self.block_m * self.block_k + self.block_k * self.tile_n) * dtype_bytes * self.num_stages

    @property
    def phase_unit(self) -> int:
        """The bytes a `phase_a` tile's offsets are taken within: half a line with `half_lines`,
        else a whole one."""
        return HALF_LINE_BYTES if self.half_lines else PAD_ROW_BYTES

    @property
    def tile_n(self) -> int:
        """The output tile's columns: block_n, and extra_n beside them."""
        return self.block_n + self.extra_n

    def as_dict(self) -> dict[str, int]:
        fields = asdict(self)
        for flag in _FLAG_SUFFIXES.values():  # (every bool flag)
            if not fields[flag]:
                del fields[flag]  # entries written before the field existed read back the same
        for name in ("cluster_m", "cluster_n"):
            if fields[name] == 1:
                del fields[name]
        if not fields["extra_n"]:
            del fields["extra_n"]
        return fields

    def __str__(self) -> str:
        base = (
            f"BM{self.block_m}-BN{self.block_n}-BK{self.block_k}-w{self.num_warps}-s{self.num_stages}-g{self.group_m}"
        )
        if self.variant in SPLIT_VARIANTS:
            base = f"{base}-{_SPLIT_SUFFIXES[self.variant]}{self.split_k}"
        elif self.variant != "tile":
            base = f"{base}-{self.variant.replace('_', '-')}"
            if self.split_k > 1:  # (the Gluon kernel's own split of K)
                base = f"{base}-sk{self.split_k}"
        if self.cluster_m > 1:
            base = f"{base}-cm{self.cluster_m}"
        if self.cluster_n > 1:
            base = f"{base}-cn{self.cluster_n}"
        if self.extra_n:
            base = f"{base}-xn{self.extra_n}"
        return base + "".join(suffix for suffix, flag in _FLAG_SUFFIXES.items() if getattr(self, flag))


# Config names (`str(config)`): the split variants' suffixes (before their split), the others' own
# name with dashes, then the flags in this order.
_SPLIT_SUFFIXES = {"splitk": "sk", "splitk_serial": "sks"}
_FLAG_SUFFIXES = {
    "-pad": "pad",
    "-pada": "pad_a",
    "-padb": "pad_b",
    "-lp": "late_promotion",
    "-fma": "fma",
    "-swap": "swap_ab",
    "-stream": "stream_k",
    "-th": "tail_halves",
    "-kb": "kmajor_b",
    "-phase": "phase_a",
    "-hl": "half_lines",
}
_NAME = re.compile(r"BM(\d+)-BN(\d+)-BK(\d+)-w(\d+)-s(\d+)-g(\d+)")
_VARIANT_SUFFIXES = {f"-{v.replace('_', '-')}": v for v in VARIANTS if v != "tile" and v not in SPLIT_VARIANTS}


def config_from_name(name: str) -> GemmConfig:
    """The config `str(config)` names (the library's records of the configs a tune timed)."""
    match = _NAME.match(name)
    if match is None:
        raise ValueError(f"not a GEMM config name: {name!r} (expected e.g. 'BM128-BN256-BK64-w8-s3-g8-tma')")
    bm, bn, bk, warps, stages, group = map(int, match.groups())
    fields: dict = {"group_m": group}
    rest = name[match.end() :]
    flags = re.findall(f"(?:{'|'.join(_FLAG_SUFFIXES)})(?=-|$)", rest)  # (the flags come last)
    for flag in flags:
        fields[_FLAG_SUFFIXES[flag]] = True
    rest = rest[: len(rest) - len("".join(flags))] if flags else rest
    extra = re.search(r"-xn(\d+)$", rest)  # (extra columns, after the variant)
    if extra:
        fields["extra_n"] = int(extra.group(1))
        rest = rest[: extra.start()]
    cluster = re.search(r"-c([mn])(\d+)$", rest)  # (a cluster's, after the variant)
    if cluster:
        fields[f"cluster_{cluster.group(1)}"] = int(cluster.group(2))
        rest = rest[: cluster.start()]
    split = re.fullmatch(f"-({'|'.join(_SPLIT_SUFFIXES.values())})(\\d+)", rest)
    own_split = re.fullmatch(r"(-[a-z-]+)-sk(\d+)", rest)  # a variant that splits K itself
    if own_split and own_split.group(1) in _VARIANT_SUFFIXES:
        rest = own_split.group(1)
        fields["split_k"] = int(own_split.group(2))
    if split:
        variant = next(v for v, suffix in _SPLIT_SUFFIXES.items() if suffix == split.group(1))
        fields.update(variant=variant, split_k=int(split.group(2)))
    elif rest:
        if rest not in _VARIANT_SUFFIXES:
            raise ValueError(f"not a GEMM config name: {name!r} (unknown suffix {rest!r})")
        fields["variant"] = _VARIANT_SUFFIXES[rest]
    config = GemmConfig(bm, bn, bk, warps, stages, **fields)
    if str(config) != name:
        raise ValueError(f"not a GEMM config name: {name!r} (reads back as {str(config)!r})")
    return config


def _next_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def dtype_bytes(dtype: str) -> int:
    try:
        return DTYPE_BYTES[dtype]
    except KeyError:
        raise ValueError(f"unknown dtype name {dtype!r}; expected one of {sorted(DTYPE_BYTES)}") from None


def _block_choices(extent: int, options: tuple[int, ...], unit: int) -> list[int]:
    """Options that are multiples of `unit` and not larger than the rounded-up extent."""
    cap = max(unit, _next_pow2(extent))
    chosen = [b for b in options if b % unit == 0 and b <= cap]
    return chosen or [max(unit, min(options))]


def candidate_configs(
    spec: TargetSpec, dtype: str, M: int, N: int, K: int, *, limit: int | None = MAX_CONFIGS
) -> list[GemmConfig]:
    """The autotune space for one problem on one chip, best guess first (the first `limit`;
    None: all of it, for a search that refines around what it timed)."""
    for name, value in (("M", M), ("N", N), ("K", K)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"candidate_configs: {name} must be an int >= 1, got {value!r}")
    return list(_candidate_configs(spec, dtype, M, N, K)[:limit])


@functools.lru_cache(maxsize=4096)
def _candidate_configs(spec: TargetSpec, dtype: str, M: int, N: int, K: int) -> tuple[GemmConfig, ...]:
    nbytes = dtype_bytes(dtype)
    tile_m, tile_n, tile_k16 = spec.mma_tile
    # K depth of one matrix instruction is fixed in bytes (32 B: k16 for fp16,
    # k32 for fp8, k8 for tf32); keep BLOCK_K >= 16 so loads stay >= 32 bytes wide.
    unit_k = max(16, tile_k16 * 2 // nbytes)
    vector_elems = spec.max_vector_load_bits // 8 // nbytes

    if M <= 16:  # decode: one or a few tokens
        m_options: tuple[int, ...] = (16, 32)
    elif M <= 64:
        m_options = (16, 32, 64)
    else:
        m_options = (64, 128, 256)
    block_ms = _block_choices(M, m_options, tile_m)
    block_ns = _block_choices(N, (32, 64, 128, 256), tile_n)
    k_options = (32, 64, 128) if nbytes >= 2 else (64, 128, 256)
    if M <= 16 and nbytes == 2:
        # Decode reads B once and is bound by the bytes in flight: deeper K steps put more of
        # them in each stage (fp8's best decode configs on the H200 took K steps of 256 bytes+).
        k_options = (64, 128, 256)
    block_ks = [b for b in _block_choices(K, k_options, unit_k) if b >= vector_elems] or [max(k_options)]

    budget = spec.smem_per_block_bytes
    acc_regs_per_thread_max = (spec.max_registers_per_thread + 1) // 2
    stage_options = STAGES + (DEEP_STAGES if memory_bound(spec, dtype, M, N, K) else ())

    configs = []
    for bm in block_ms:
        for bn in block_ns:
            for bk in block_ks:
                k_iters = math.ceil(K / bk)
                stages = [s for s in stage_options if s <= k_iters] or [1]
                for warps in WARPS:
                    threads = warps * spec.warp_size
                    if bm * bn / threads > acc_regs_per_thread_max:
                        continue  # accumulator would spill
                    for s in stages:
                        cfg = GemmConfig(bm, bn, bk, warps, s)
                        if cfg.smem_bytes(nbytes) <= budget:
                            configs.append(cfg)
    if not configs:
        raise ValueError(
            f"no GEMM config fits target {spec.name!r} for {dtype} {M}x{N}x{K}: "
            f"shared memory budget {budget} bytes is below the smallest tile"
        )
    swapped = []
    if M <= SWAP_MAX_M and nbytes <= 2 and spec.arch == "sm_90":
        # Hopper's warpgroup MMA needs 64 rows: decode tiles computed transposed (B^T @ A^T) get it.
        swapped = [
            dataclasses.replace(cfg, swap_ab=True)
            for cfg in configs
            if cfg.block_m <= SWAP_MAX_M and cfg.block_n >= SWAP_MIN_BLOCK_N
        ]
        configs += swapped
    configs += _variants(spec, configs, M, N, K, nbytes)
    if spec.tma:
        # ... and in the persistent TMA kernel: operand tiles by descriptor through the ring, one
        # program per tile up to one per SM, no split of K (cuBLAS's decode kernels on the H200).
        configs += [dataclasses.replace(cfg, variant="tma") for cfg in swapped]
    if nbytes == 4 and spec.arch == "sm_90":
        # tf32's warpgroup MMA reads B K-major only: the persistent TMA configs also on a K-major
        # copy of B (the launcher refuses them for a K-major B, and for ieee fp32: no MMA there).
        configs += [dataclasses.replace(cfg, kmajor_b=True) for cfg in configs if cfg.uses_tma and not cfg.swap_ab]
    configs += _gluon_configs(spec, M, N, K, nbytes)
    if M <= FMA_MAX_M and nbytes <= 2:
        fma = _fma_configs(spec, M, N, K, block_ks, nbytes)
        configs += fma + _variants(spec, fma, M, N, K, nbytes)
    a_row, b_row = K * nbytes, N * nbytes  # (bytes, whichever way each operand's rows run)
    if a_row % PAD_ROW_BYTES or b_row % PAD_ROW_BYTES:
        # Rows of A (K long) or B (N long) that are not 16-byte multiples allow neither vector
        # loads nor TMA, and rows that are not 128-byte multiples cross cache lines in every tile's
        # load (fp16 1000^3: 10.7 us, on rows 2048 bytes apart 6.9): offer each config also on
        # aligned copies of the operands (kernels.matmul._aligned).
        unpadded = configs
        configs = unpadded + [dataclasses.replace(cfg, pad=True) for cfg in unpadded]
        pad_b = []
        if a_row % PAD_ROW_BYTES and b_row % PAD_ROW_BYTES and not a_row % 16 and not b_row % 16:
            # Both operands' rows off the lines, either usable as it is: also each one alone copied.
            configs += [dataclasses.replace(cfg, pad_a=True) for cfg in unpadded if not cfg.kmajor_b]
            pad_b = [dataclasses.replace(cfg, pad_b=True) for cfg in unpadded if not cfg.kmajor_b]
            configs += pad_b
        phases = line_phases(a_row)  # (the launcher's count: row_phases)
        if a_row % PAD_ROW_BYTES and not a_row % 16 and spec.tma and not M % phases:
            # A's rows usable but off the lines: the TMA configs also in tiles of one offset within
            # a line (phase_a, on whole lines: no `half_lines` twin), which start every tile row of A
            # on a line without copying A; beside B as it is, and where B's rows are off the lines
            # too, beside its copy (pad_b). Only where M is a multiple of the offsets' count.
            configs += [
                dataclasses.replace(cfg, phase_a=True)
                for cfg in unpadded + pad_b
                if cfg.variant in PHASE_VARIANTS and not (cfg.swap_ab or cfg.kmajor_b)
            ]
    if nbytes == 1:
        # (gluon_ws promotes a precise accumulation its own way: no late_promotion twin)
        # fp8: each config also with late promotion (used where the accumulation is precise).
        configs += [
            dataclasses.replace(cfg, late_promotion=True)
            for cfg in configs
            if not (cfg.fma or cfg.uses_gluon)
            and cfg.block_k <= LATE_PROMOTION_MAX_BLOCK_K
            and cfg.block_m * cfg.block_n <= LATE_PROMOTION_MAX_ACC_PER_THREAD * math_warps(spec, cfg) * spec.warp_size
            # (Triton 3.6 fails to compile late promotion inside Hopper's warp-specialized loop)
            and not (cfg.variant == "tma_ws" and spec.arch == "sm_90")
        ]
    configs.sort(key=lambda c: _score(spec, c, M, N, K, nbytes), reverse=True)
    # (gluon_ws's stages are its ring's slots, GLUON_STAGES, not a deep software pipeline)
    deep = [c for c in configs if c.num_stages > max(STAGES) and not c.uses_gluon]
    usual = [c for c in configs if c.num_stages <= max(STAGES) or c.uses_gluon]
    return tuple(_interleave_tiles(usual) + _interleave_tiles(deep))


# gluon_ws: its ring depths (a slot per K step in flight; 2 stages leave the loader no slack; 8-12
# for the small tiles of memory-bound problems, as cuBLAS's 7-13 on the H200's 128-row fp8 cells),
# its tiles (rows, columns, warps): two warpgroups on 128 rows or one on 64 (a warpgroup MMA has
# 64 rows), 128-256 columns (the 128 x 256 fp16 tile and the 128 x 128 ones took the H200's
# 2048-8192 fp16 cells at 0.97-1.06x native: docs/BENCHMARKS.md, 2026-12-02 fourth session),
# and 64 columns (cuBLAS's 128 x 64 and 64 x 64 tiles, in the 1024^3 and 128-row cells, which
# make about one wave of tiles there: docs/BENCHMARKS.md, 2026-12-02 fifth session),
# and the registers an MMA warp may hold for accumulators (of the 240 the loader's 24 leave it;
# fp8 with precise accumulation needs three accumulators of <= GLUON_STEP_MAX_ACC values per
# thread, or, for wider tiles, an accumulator and half a tile's partial sum: kernels/gluon_hopper.py).
GLUON_STAGES = (3, 4, 5, 6, 8, 12)
GLUON_TILES = ((128, 128, 8), (128, 256, 8), (64, 128, 4), (64, 256, 4), (128, 64, 4), (128, 64, 8), (64, 64, 4))
GLUON_MAX_ACC_PER_THREAD = 128
# (not 3 or 6: 36 tiles of 128 x 128 in 3 units, or 18 of 128 x 256 in 6, fill a wave of the
# H100's 132 SMs, but lost to the 64-column tiles in every 128-row cell timed: fp8 128x10240x8192
# 46.0 us against 41.6, fp16 128x37888x3584 111.4 against 106.0; docs/results/2026-12-07b-swap128)
GLUON_SPLITS = (2, 4, 8)
GLUON_SPLIT_MIN_STEPS = 4
GLUON_SPLIT_MAX_WAVES = 8
GLUON_STEP_MAX_ACC = 64
# Stream-K's last wave: a tile's partials are summed by one program, which reads the others' fp32
# tiles at the end of the launch; at most this many programs on a tile (the chunks' count makes
# about P / (tiles left over)), each chunk >= GLUON_SPLIT_MIN_STEPS K steps.
GLUON_STREAM_MAX_PARTS = 4
# (rows, warps) of the tile whose two MMA warpgroups "gluon_wg" makes partitions of their own
GLUON_WG_TILE = (128, 8)


def gluon_by_halves(
    block_m: int, block_n: int, num_warps: int, nbytes: int, precise: bool = True, warp_size: int = 32
) -> bool:
    """Whether the Gluon kernel's precise fp8 accumulation takes this tile by halves of N: 8-bit
    operands, more than GLUON_STEP_MAX_ACC accumulator values per thread."""
    return nbytes == 1 and precise and block_m * block_n / (num_warps * warp_size) > GLUON_STEP_MAX_ACC


def gluon_c_tile_bytes(cfg: GemmConfig, nbytes: int, precise: bool = True, warp_size: int = 32) -> int:
    """Shared memory of gluon_ws's output tile (16-bit C: fp16/bf16, or fp8's bf16): the whole
    tile, or half of it for the tiles taken by halves of N (`gluon_by_halves`), which store each
    half as it is done; and the extra columns' (`extra_n`)."""
    halves = gluon_by_halves(cfg.block_m, cfg.block_n, cfg.num_warps, nbytes, precise, warp_size)
    return cfg.block_m * cfg.block_n * (1 if halves else 2) + cfg.block_m * cfg.extra_n * 2


@functools.cache
def gluon_available() -> bool:
    """Whether the installed Triton has Gluon's Hopper module (kernels/gluon_hopper.py's needs)."""
    import importlib.util

    try:
        return importlib.util.find_spec("triton.experimental.gluon.language.nvidia.hopper") is not None
    except ImportError:  # no triton, or no triton.experimental
        return False


@functools.cache
def gluon_cluster_problem() -> str | None:
    """Why the installed Triton cannot build the Gluon kernel's clusters (None when it can): they
    need Gluon's CTA-cluster layouts, barriers and multicast TMA load (`tma.async_load(...,
    multicast=)`, `mbarrier.allocate_mbarrier`, `gl.num_ctas`): Triton 3.9 has them, 3.6 none."""
    import inspect

    if not gluon_available():
        return "the installed Triton has no Gluon Hopper module"
    import triton
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language.nvidia.hopper import mbarrier, tma

    load = getattr(tma, "async_load", None)
    if load is None or "multicast" not in inspect.signature(load).parameters:
        return f"Triton {triton.__version__}'s Gluon has no multicast TMA load (tma.async_load(..., multicast=))"
    if not (hasattr(mbarrier, "allocate_mbarrier") and hasattr(gl, "num_ctas")):
        return f"Triton {triton.__version__}'s Gluon has no CTA-cluster barriers (mbarrier.allocate_mbarrier)"
    return None


# Triton versions whose Gluon clusters have computed the product on a Hopper GPU (tests/test_gluon.py's
# gpu tests): the candidates include cluster configs only there. 3.9: on the H200, 2026-12-03
# (docs/BENCHMARKS.md, fifth session); 3.6 has no clusters. A config named by hand (`gemmwatch
# try --configs`, a library entry) runs wherever they compile.
GLUON_CLUSTER_TRITON: tuple[str, ...] = ("3.9",)


def gluon_clusters_offered() -> bool:
    """Whether the candidates include the Gluon kernel's cluster configs (`GLUON_CLUSTER_TRITON`)."""
    return _triton_listed(GLUON_CLUSTER_TRITON) and gluon_cluster_problem() is None


def _clusters(cfg: GemmConfig, M: int, N: int, nbytes: int) -> list[GemmConfig]:
    """A Gluon config's cluster versions: two CTAs along M where there are two tile rows, along N
    where there are two tile columns; gluon_wg's (each warpgroup half of A's rows) along N only,
    and fp8's tiles taken by halves of N (`gluon_by_halves`) along M only."""
    out = []
    if math.ceil(M / cfg.block_m) >= 2 and cfg.variant != "gluon_wg":
        out.append(dataclasses.replace(cfg, cluster_m=2))
    if math.ceil(N / cfg.block_n) >= 2 and not gluon_by_halves(cfg.block_m, cfg.block_n, cfg.num_warps, nbytes):
        out.append(dataclasses.replace(cfg, cluster_n=2))
    return out


def gluon_splits(spec: TargetSpec, M: int, N: int, k_iters: int, block_m: int, block_n: int) -> list[int]:
    """The Gluon kernel's splits of K for this tile: those of the last, partial wave of tiles
    (all of them where they make less than a wave; kernels/gluon_hopper.whole_tiles), whose units
    then make at most one wave, each of >= GLUON_SPLIT_MIN_STEPS K steps, after at most
    GLUON_SPLIT_MAX_WAVES full waves (later, a split of the last wave gains the run too little)."""
    tiles = math.ceil(M / block_m) * math.ceil(N / block_n)
    partial = tiles % spec.sm_count
    if not partial or tiles // spec.sm_count > GLUON_SPLIT_MAX_WAVES:
        return []
    return [
        split
        for split in GLUON_SPLITS
        if partial * split <= spec.sm_count and math.ceil(k_iters / split) >= GLUON_SPLIT_MIN_STEPS
    ]


def gluon_stream_k(spec: TargetSpec, M: int, N: int, k_iters: int, block_m: int, block_n: int) -> bool:
    """Whether the Gluon kernel's stream-K takes this tile: a last, partial wave of tiles after at
    most GLUON_SPLIT_MAX_WAVES full ones, whose K steps, cut into one chunk per SM, give chunks of
    >= GLUON_SPLIT_MIN_STEPS steps and tiles of <= GLUON_STREAM_MAX_PARTS chunks."""
    tiles = math.ceil(M / block_m) * math.ceil(N / block_n)
    partial = tiles % spec.sm_count
    if not partial or tiles // spec.sm_count > GLUON_SPLIT_MAX_WAVES:
        return False
    chunk = partial * k_iters // spec.sm_count  # (the shortest chunk)
    return chunk >= GLUON_SPLIT_MIN_STEPS and math.ceil(k_iters / chunk) + 1 <= GLUON_STREAM_MAX_PARTS


def tail_rows(M: int, N: int, block_m: int, block_n: int, programs: int) -> int | None:
    """The rows a first launch of the Gluon kernel takes whole when the last, partial wave of tiles
    goes to a second launch in tiles of half the width (config flag `tail_halves`), or None where
    that cannot pay: the first launch takes the whole tile rows that fit its full waves, the second
    the rest of the rows in (block_m, block_n / 2) tiles, which must fit one wave. E.g. 4096 x 3584
    in 128 x 256 tiles on 132 SMs: 3.4 waves run as 28 tile rows (392 tiles, 3 waves) and 112 half
    tiles (one wave of about 0.6 of a tile's time) instead of 4 rounds."""
    if block_n < 128:
        return None
    tiles_n, rows = math.ceil(N / block_n), math.ceil(M / block_m)
    waves, partial = divmod(rows * tiles_n, programs)
    first = waves * programs // tiles_n
    if not (partial and waves and first) or (rows - first) * math.ceil(N / (block_n // 2)) > programs:
        return None
    return first * block_m


def _gluon_configs(spec: TargetSpec, M: int, N: int, K: int, nbytes: int) -> list[GemmConfig]:
    """The gluon_ws configs of a problem: Hopper (warpgroup MMA, TMA), 16- and 8-bit operands,
    more rows than a decode tile, C's rows 16-byte multiples (a `pad` config aligns A and B, not C);
    the ring's stages and the output tile within the shared memory."""
    if spec.arch != "sm_90" or not spec.tma or nbytes > 2 or M <= 64 or not gluon_available():
        return []
    if N % 8:
        return []  # C's rows (16-bit) are not 16-byte multiples: no descriptor over C (its TMA store)
    out = []
    for bk in (64, 128) if nbytes == 2 else (128,):
        k_iters = math.ceil(K / bk)
        for bm, bn, warps in GLUON_TILES:
            if bm > max(64, _next_pow2(M)) or bn > max(128, _next_pow2(N)):
                continue
            if bm * bn / (warps * spec.warp_size) > GLUON_MAX_ACC_PER_THREAD:
                continue
            splits = gluon_splits(spec, M, N, k_iters, bm, bn)
            stream = gluon_stream_k(spec, M, N, k_iters, bm, bn)
            for stages in GLUON_STAGES:
                cfg = GemmConfig(bm, bn, bk, warps, stages, variant="gluon_ws")
                # (never deeper than the K loop, as every config: the seed's rule; fp8's tiles
                # sized for its precise accumulation, the matrix's, which fast accumulation's
                # launcher refuses where its whole output tile would not fit: kernels/matmul.py)
                c_tile = gluon_c_tile_bytes(cfg, nbytes, warp_size=spec.warp_size)
                if stages <= k_iters and cfg.smem_bytes(nbytes) + c_tile <= spec.smem_per_block_bytes:
                    variants = [cfg]
                    if (bm, warps) == GLUON_WG_TILE:  # (and with each of its two MMA warpgroups a partition)
                        variants.append(dataclasses.replace(cfg, variant="gluon_wg"))
                    out += variants
                    for split in splits:
                        out += [dataclasses.replace(v, split_k=split) for v in variants]
                    if stream:
                        out += [dataclasses.replace(v, stream_k=True) for v in variants]
                    if tail_rows(M, N, bm, bn, spec.sm_count) is not None:
                        out += [dataclasses.replace(v, tail_halves=True) for v in variants]
                    if gluon_clusters_offered():
                        out += [c for v in variants for c in _clusters(v, M, N, nbytes)]
                    if gluon_extra_n_offered():
                        out += _extra_n_configs(spec, variants, M, N, k_iters, nbytes)
    return out


def _extra_n_configs(spec: TargetSpec, variants: list, M: int, N: int, k_iters: int, nbytes: int) -> list:
    """The Gluon variants of one tile with extra columns: whole (`extra_n_width`) and, where this
    Triton is listed for them, split in K (`extra_n_splits`); each where its ring and output tiles
    fit in shared memory and the launcher takes it for these operands (`extra_n_takes`)."""
    bm, bn = variants[0].block_m, variants[0].block_n
    widths = [(extra_n_width(spec, M, N, bm, bn), 1)]
    if gluon_extra_n_offered(split=True):
        widths += extra_n_splits(spec, M, N, k_iters, bm, bn)
    out = []
    for extra, split in widths:
        wider = [dataclasses.replace(v, extra_n=extra, split_k=split) for v in variants] if extra else []
        if wider and (
            wider[0].smem_bytes(nbytes) + gluon_c_tile_bytes(wider[0], nbytes, warp_size=spec.warp_size)
            <= spec.smem_per_block_bytes
            and extra_n_takes(wider[0], nbytes, spec.warp_size)
        ):
            out += wider
    return out


# Triton versions whose extra-column tiles (`GemmConfig.extra_n`) have computed the product on a
# Hopper GPU (tests/test_gluon.py's gpu tests; 3.6 and 3.9 on the H200, docs/BENCHMARKS.md
# "2026-12-04 (third session)" and "(fourth session)"): the candidates include them only there; a
# config named by hand (`gemmwatch try --configs`) runs wherever it compiles.
GLUON_EXTRA_N_TRITON: tuple[str, ...] = ("3.6.", "3.9.")
# The same for extra-column tiles split in K (`extra_n_splits`): their gpu tests passed under 3.6
# on the H200 (2026-12-04, fifth session; 3.9: compiled without spills, not yet run).
GLUON_EXTRA_N_SPLIT_TRITON: tuple[str, ...] = ("3.6.",)


def gluon_extra_n_offered(split: bool = False) -> bool:
    """Whether the candidates include the Gluon kernel's extra-column tiles (`GLUON_EXTRA_N_TRITON`;
    with `split`, those split in K: `GLUON_EXTRA_N_SPLIT_TRITON` too)."""
    return _triton_listed(GLUON_EXTRA_N_TRITON) and (not split or _triton_listed(GLUON_EXTRA_N_SPLIT_TRITON))


def extra_n_width(spec: TargetSpec, M: int, N: int, block_m: int, block_n: int) -> int:
    """The extra columns (`GemmConfig.extra_n`) whose wider tiles fill the SMs' waves best, where
    that is at least EXTRA_N_MIN_GAIN more of the waves' slots than block_m x block_n tiles fill
    (the fewest columns among equals; 0: none does). E.g. 128 x 4608 in 64 x 64 tiles: 144 tiles on
    132 SMs, two waves 55% full; 64 x 72: 128 tiles, one wave 97% full (cuBLAS's tile there)."""

    def filled(width: int) -> float:
        tiles = math.ceil(M / block_m) * math.ceil(N / width)
        return tiles / (math.ceil(tiles / spec.sm_count) * spec.sm_count)

    best = max((e for e in EXTRA_N_WIDTHS if e < block_n), key=lambda e: (round(filled(block_n + e), 3), -e))
    return best if filled(block_n + best) >= filled(block_n) + EXTRA_N_MIN_GAIN else 0


def extra_n_splits(spec: TargetSpec, M: int, N: int, k_iters: int, block_m: int, block_n: int) -> list[tuple[int, int]]:
    """(extra columns, split of K) pairs for tiles that make less than a wave: for each of the Gluon
    kernel's splits (`gluon_splits` of the wider tile), the extra columns whose split tiles fill
    one wave of units best, where that is at least EXTRA_N_MIN_GAIN more of the SMs than
    block_m x block_n tiles fill, whole or split. E.g. fp8 128 x 4608 in 128 x 64 tiles: 72 tiles,
    55% of 132 SMs (split in two, 144 units would need a second round); 128 x 72 split in two: 128
    units, 97%, each unit reading about a quarter less of A and B than a 64 x 72 tile, which fill
    the SMs as well whole."""

    def tiles(width: int) -> int:
        return math.ceil(M / block_m) * math.ceil(N / width)

    def filled(units: int) -> float:
        return units / (math.ceil(units / spec.sm_count) * spec.sm_count)

    if tiles(block_n) >= spec.sm_count:
        return []
    base = max(filled(tiles(block_n) * s) for s in (1, *gluon_splits(spec, M, N, k_iters, block_m, block_n)))
    out = []
    for split in GLUON_SPLITS:
        extras = [
            e
            for e in EXTRA_N_WIDTHS
            if e < block_n and split in gluon_splits(spec, M, N, k_iters, block_m, block_n + e)
        ]
        if extras:
            best = max(extras, key=lambda e: (round(filled(tiles(block_n + e) * split), 3), -e))
            if filled(tiles(block_n + best) * split) >= base + EXTRA_N_MIN_GAIN:
                out.append((best, split))
    return out


def extra_n_too_narrow(extra_n: int, n_major_bytes: int, block_k: int) -> bool:
    """Whether extra columns are EXTRA_N_NARROW_BYTES or fewer along B's rows in a K step deeper than
    EXTRA_N_NARROW_MAX_BLOCK_K (wrong on the H200); `n_major_bytes`: B's element size where its rows
    run along N, 0 where B is K-major."""
    return 0 < extra_n * n_major_bytes <= EXTRA_N_NARROW_BYTES and block_k > EXTRA_N_NARROW_MAX_BLOCK_K


def extra_n_takes(cfg: GemmConfig, nbytes: int, warp_size: int = 32) -> bool:
    """Whether the launcher takes an extra-column config for the matrix's operands (16-bit B with
    rows along N, fp8 B K-major and precisely accumulated): not `extra_n_too_narrow`, and no tile
    that fp8's precise accumulation takes by halves of N (`gluon_by_halves`), which extra columns
    do not take."""
    if gluon_by_halves(cfg.block_m, cfg.tile_n, cfg.num_warps, nbytes, warp_size=warp_size):
        return False
    return not extra_n_too_narrow(cfg.extra_n, 0 if nbytes == 1 else nbytes, cfg.block_k)


def memory_bound(spec: TargetSpec, dtype: str, M: int, N: int, K: int) -> bool:
    """Whether the problem moves its operands (A, B and C once each) in longer than its FLOPs take at
    the chip's peak; without the spec's figures, whether it has at most 128 rows."""
    roofline = spec.roofline_seconds(dtype, 2.0 * M * N * K, (M * K + K * N + M * N) * dtype_bytes(dtype))
    return M <= 128 if roofline is None else roofline[0] > roofline[1]


def _fma_configs(spec: TargetSpec, M: int, N: int, K: int, block_ks: list[int], nbytes: int) -> list[GemmConfig]:
    """The decode tiles summed on the CUDA cores: BLOCK_M the rows (a power of two), the K steps of
    the matrix configs, the products of a step within FMA_MAX_PRODUCTS_PER_THREAD registers; for
    one row also the GEMV_TILES that fit the problem (not wider than N, no deeper than K, rounded
    up to powers of two)."""
    bm = _next_pow2(M)
    out = []
    for bn in _block_choices(N, (32, 64, 128), 16):
        for bk in block_ks:
            stages = [s for s in (2, 3) if s <= math.ceil(K / bk)] or [1]
            for warps in WARPS:
                if bm * bk * bn > FMA_MAX_PRODUCTS_PER_THREAD * warps * spec.warp_size:
                    continue
                out += [GemmConfig(bm, bn, bk, warps, s, fma=True) for s in stages]
    if M == 1:
        for bn, k_bytes, warps in GEMV_TILES:
            bk = k_bytes // nbytes
            if bn > max(16, _next_pow2(N)) or bk > max(16, _next_pow2(K)):
                continue
            out.append(GemmConfig(1, bn, bk, warps, 1, fma=True))
    return list(dict.fromkeys(out))


# Triton versions whose warp-specialized persistent loop runs on sm_90: none yet. Triton 3.6
# partitions the unflattened loop there (tests/test_resources.py compiles it offline: a producer
# and two consumer warpgroups for 4-warp configs of >= 128 rows), but on the H200 those kernels
# never finished (fp16, bf16 and fp8 alike: docs/BENCHMARKS.md, 2026-12-01 third session); 3.9
# fails to compile it ("descriptor block and tensor must have the same number of elements").
# Until a version is listed, Hopper gets no tma_ws candidates and a forced tma_ws config runs
# with the loop flattened, which Triton leaves unpartitioned there (the "tma" kernel).
HOPPER_WARP_SPECIALIZING_TRITON: tuple[str, ...] = ()


def hopper_partitions() -> bool:
    """Whether the installed Triton's warp-specialized loop is used (partitioned) on sm_90."""
    return _triton_listed(HOPPER_WARP_SPECIALIZING_TRITON)


@functools.cache
def _triton_version() -> str:
    try:
        import triton
    except ImportError:
        return ""
    return triton.__version__


def _triton_listed(versions: tuple[str, ...]) -> bool:
    """Whether the installed Triton's version starts with one of `versions` (a gate's list: the
    versions under which a kernel path has run on a GPU)."""
    return bool(versions) and _triton_version().startswith(versions)


def _hopper_warp_specialized(cfg: GemmConfig, nbytes: int) -> GemmConfig | None:
    """The "tma_ws" config that the installed Triton partitions on sm_90 for this tile, or None.

    Partitioned, a 4-warp config runs a producer warpgroup and two 4-warp consumer warpgroups:
    its accumulator is spread over 8 warps. So an 8-warp tile (sized for 8 warps' registers, as
    BM128-BN256 is) becomes the 4-warp tma_ws config, and a 4-warp tile keeps its 4. 16- and
    8-bit operands only: with fp32 ones Triton 3.6 leaves the ieee loop unpartitioned and fails
    to compile the tf32 one.
    """
    if not hopper_partitions() or nbytes > 2 or cfg.block_m < 128:
        return None
    if cfg.num_warps not in (4, 8):
        return None
    return dataclasses.replace(cfg, variant="tma_ws", num_warps=4)


def math_warps(spec: TargetSpec, cfg: GemmConfig) -> int:
    """The warps that hold the accumulator: a partitioned Hopper tma_ws config's two consumer
    warpgroups (its `num_warps` is each one's size), else `num_warps`."""
    hopper_ws = cfg.variant == "tma_ws" and spec.arch == "sm_90" and hopper_partitions()
    return 2 * cfg.num_warps if hopper_ws else cfg.num_warps


def _variants(spec: TargetSpec, tiles: list[GemmConfig], M: int, N: int, K: int, nbytes: int) -> list[GemmConfig]:
    """The persistent-TMA and split-K versions of the tile configs where they can pay off."""
    out = []
    for cfg in tiles:
        if spec.tma and cfg.block_m >= 64 and not cfg.swap_ab:  # (swap-AB's TMA configs: the caller's)
            out.append(dataclasses.replace(cfg, variant="tma"))
            if spec.auto_warp_specialize:
                ws = (
                    _hopper_warp_specialized(cfg, nbytes)
                    if spec.arch == "sm_90"
                    else dataclasses.replace(cfg, variant="tma_ws")
                )
                if ws is not None and ws not in out:
                    out.append(ws)
            # The output tile staged in shared memory for its TMA store (16-bit C, 32-bit for fp32).
            c_tile = cfg.block_m * cfg.block_n * (4 if nbytes == 4 else 2)
            if cfg.smem_bytes(nbytes) + c_tile <= spec.smem_per_block_bytes:
                out.append(dataclasses.replace(cfg, variant="tma_store"))
        programs = math.ceil(M / cfg.block_m) * math.ceil(N / cfg.block_n)
        k_iters = math.ceil(K / cfg.block_k)
        waves = programs / spec.sm_count
        if waves < 4 and waves % 1 and k_iters >= 4 and not (cfg.fma or cfg.swap_ab):
            # A partial last wave (or less than one) that is a large part of the work: stream-K
            # deals the (tile, K step) iterations out evenly to every SM instead.
            out.append(dataclasses.replace(cfg, variant="streamk"))
        if programs >= spec.sm_count:
            continue  # a full wave already: splitting K only adds the reduction
        # The smallest split that fills the chip, and twice that; decode shapes (M <= 16,
        # bound by reading B) also 4x, up to 8 programs per SM, to keep more loads in flight.
        # Each slice keeps >= 2 K iterations (one would leave the pipeline nothing to overlap).
        fill = [s for s in SPLITS if programs * s >= spec.sm_count] or [SPLITS[-1]]
        factors = (1, 2, 4) if M <= 16 else (1, 2)
        splits = [x for x in SPLITS if x in {f * fill[0] for f in factors}]
        for s in [x for x in splits if x == fill[0] or programs * x <= 8 * spec.sm_count]:
            slice_iters = math.ceil(k_iters / s)
            if slice_iters >= 2 and cfg.num_stages <= slice_iters:
                out.append(dataclasses.replace(cfg, variant="splitk", split_k=s))
                out.append(dataclasses.replace(cfg, variant="splitk_serial", split_k=s))
    return out


def _tile_group(cfg: GemmConfig) -> tuple:
    """What a config's code path and output tile are: its K step, stage count and split vary within."""
    return (
        cfg.variant, cfg.pad, cfg.pad_a, cfg.pad_b, cfg.late_promotion, cfg.fma, cfg.swap_ab, cfg.block_m, cfg.block_n, cfg.num_warps,
        cfg.cluster_m, cfg.cluster_n, cfg.kmajor_b, cfg.extra_n, cfg.phase_a, cfg.half_lines,
    )  # fmt: skip


def siblings(fastest: list[GemmConfig], pool: list[GemmConfig], groups: int) -> list[GemmConfig]:
    """The configs of `pool` (a problem's whole space) that share a tile group with one of the
    first `groups` distinct groups of `fastest` (timed, fastest first) and are not in it.

    The round-robin ranking puts one config per group first, so a short timed search sees each
    tile with one K step and stage count; this is the second look at the best tiles.
    """
    best: list[tuple] = []
    for cfg in fastest:
        if _tile_group(cfg) not in best:
            best.append(_tile_group(cfg))
    best = best[:groups]
    timed = set(fastest)
    return [cfg for cfg in pool if _tile_group(cfg) in best and cfg not in timed]


def _interleave_tiles(ranked: list[GemmConfig]) -> list[GemmConfig]:
    """Round-robin over output tiles (BM, BN, warps) in rank order.

    A timed search over the first few configs then tries several tile shapes
    instead of one tile with every BLOCK_K and stage count.
    """
    groups: dict[tuple, list[GemmConfig]] = {}
    for cfg in ranked:
        groups.setdefault(_tile_group(cfg), []).append(cfg)
    out: list[GemmConfig] = []
    queues = list(groups.values())
    depth = 0
    while len(out) < len(ranked):
        for queue in queues:
            if depth < len(queue):
                out.append(queue[depth])
        depth += 1
    return out


def _score(spec: TargetSpec, cfg: GemmConfig, M: int, N: int, K: int, nbytes: int) -> tuple:
    """Best-guess ranking from a coarse model; the chosen config on a GPU comes from timing.

    Primary key: the fraction of the chip's matrix rate the config can reach,
    modelled as (busy SMs in the last wave) x (real output in the computed
    tiles) x (operand reuse of the tile, saturating like a roofline).
    """
    tiles_m, tiles_n = math.ceil(M / cfg.block_m), math.ceil(N / cfg.tile_n)
    waves = tiles_m * tiles_n * cfg.split_k / spec.sm_count
    # Stream-K fills every SM but pays for the tiles its programs share (partials written,
    # waited for, summed): on the H200 it won 2 of the 46 buckets tuned with it, split-K most
    # of the rest, so it ranks below an exact wave of either.
    wave_eff = STREAMK_WAVE_EFFICIENCY if cfg.variant == "streamk" or cfg.stream_k else waves / math.ceil(waves)
    useful = (M * N) / (tiles_m * cfg.block_m * tiles_n * cfg.tile_n)
    if cfg.split_k > 1:
        # The fp32 partial sums are written and read back once each: charge
        # that traffic against the operands' own.
        operand_bytes = (M * K + K * N) * nbytes
        useful *= operand_bytes / (operand_bytes + 8 * cfg.split_k * M * N)
    # FLOPs per operand element loaded; ~32 is where a tile stops being
    # limited by shared-memory bandwidth on current tensor-core parts.
    intensity = (cfg.block_m * cfg.tile_n) / (cfg.block_m + cfg.tile_n)
    reuse_eff = intensity / (intensity + 32)
    threads = math_warps(spec, cfg) * spec.warp_size
    outputs_per_thread = cfg.block_m * cfg.tile_n / threads
    return (
        # (the plain matrix configs first: a search that times only the first few keeps them)
        not (cfg.fma or cfg.swap_ab),
        round(wave_eff * useful * reuse_eff, 2),
        cfg.uses_tma or cfg.uses_gluon,  # asynchronous bulk copies free the warps for the math
        outputs_per_thread >= 16,  # enough work per thread to hide latency
        cfg.block_k * nbytes >= 128,  # K steps of >= 128 bytes: wide loads, fewer loop iterations
        cfg.num_stages,
        -cfg.num_warps,
    )


def shape_bucket(M: int, N: int, K: int) -> tuple[int, int, int]:
    """The key the best config is cached under: powers of two (M, N, K).

    Within a bucket the best choice rarely changes, while each distinct shape
    would otherwise pay its own autotuning.
    """
    return (_next_pow2(M), _next_pow2(N), _next_pow2(K))
