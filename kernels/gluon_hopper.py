"""Hopper GEMM written in Gluon, Triton's lower-level language: `C = scale_a * scale_b * (A @ B)`.

Why a second kernel: Triton 3.6's automatic warp specialization, which the `tma_ws` variant of
kernels/matmul.py asks for, never finished on the H200 (docs/BENCHMARKS.md, 2026-12-01 and
2026-12-02), and without it loads and MMAs share warps: the cuBLAS kernels the fp8 and the
4096-row fp16/bf16 cells lose to are warp-specialized. Gluon states the partitions, the shared
memory ring and its barriers itself, so nothing is left to the partitioner:

- `_gemm_ws_kernel` ("gluon_ws"): persistent, one program per SM over output tiles in grouped
  order. A one-warp loader partition streams A and B tiles into a `STAGES`-deep ring of shared
  memory buffers by tensor-memory-accelerator copies (`ready` barriers say a slot is full, `empty`
  ones that the MMAs have finished reading it); the default partition (4 or 8 warps, one or two
  warpgroups on one output tile) issues asynchronous warpgroup MMAs, keeps one in flight, and runs
  the epilogue. The loader runs ahead across tile boundaries, so the next tile's operands arrive
  during this tile's epilogue, and the output leaves by an asynchronous TMA store that overlaps the
  next tile's main loop.
  (The same ring in one partition, each step refilling the slot the previous MMA has finished
  with, measured 0.78-0.85x native on the H200's 2048-8192 fp16 cells where this kernel took
  0.97-1.06x: docs/BENCHMARKS.md, 2026-12-02 fourth session.)

- "gluon_wg": the same kernel with each of the two MMA warpgroups of a 128-row tile a partition of
  its own on half the rows (SPLIT_WARPGROUPS). In gluon_ws's 8-warp partition the two meet at a
  barrier at every K step (before the slot is given back), so fp8's promotion adds of both fall
  together while the tensor cores idle; as partitions each gives the slot back on its own (the
  slot's `empty` barrier counts both) and stores its own rows.
- Split K (SPLIT_K > 1, either variant) of the last, partial wave of tiles: the tiles of the full
  waves (`whole_tiles`: one tile per program each) run whole, and each tile after them has its K
  steps shared by SPLIT_K work units of the persistent loop; a unit writes its fp32 partial sum to
  a workspace and counts itself in at its tile's counter (release), and the one that arrives last
  (acquire) sums the partials in split order (the same bits at every launch), runs the epilogue
  and zeroes the counter. Nobody waits. Where the tiles make less than a wave, every tile is split;
  where they make 3.4 waves (fp8 4096 x 3584 on 128 x 256 tiles and 132 SMs), the 0.4 wave's tiles
  take half the time in two units each.
- Stream-K (STREAM_K) of that last wave instead: its tiles' K steps, end to end, cut into one chunk
  per program (`_unit_coords`), so that every SM gets the same share; a tile's first chunk waits for
  the partials of the others (the first units of lower-numbered programs) and sums them in chunk
  order. Partials lie in 8 x 8 blocks (`_partial_offsets`): a warp's 8-byte accesses then fill two
  128-byte lines per instruction (fp8 128 x 128 tiles of 128x6144x4096: a 3.8 us fix-up, 7.3 us in
  the tile's row-major order; docs/BENCHMARKS.md, 2026-12-02 eighth session).
- Clusters (CLUSTER_M or CLUSTER_N 2; Triton with Gluon's CTA clusters, 3.9): two CTAs on
  neighbouring tiles along M share B's tile, along N A's; the cluster's first CTA copies the shared
  tile from L2 once into both CTAs' ring slots (TMA multicast), each CTA copies its own half of the
  other operand, and each MMA partition gives a slot back to the first CTA's loader (by a barrier
  that lives in the first CTA, Gluon's two-CTA barrier) and, in the other CTA, to its own
  (`_release`). The kernel's tile is the cluster's, laid over the CTAs by its layouts (`_cga`);
  each CTA holds what its tile alone would. As cuBLAS's kernels do in most of the cells where this
  one loses (docs/BENCHMARKS.md, 2026-12-03 fourth session); on the H200 they compute the product
  and are mostly slower than one CTA (2026-12-03 fifth session).

- Extra columns (EXTRA_N 8-64; one CTA, no stream-K or tail halves): each tile is
  BLOCK_N + EXTRA_N columns wide, the extra ones in a B tile, an MMA, an accumulator and an output
  tile of their own beside the main ones (Triton's blocks are powers of two): tiles of 72, 80, 96,
  144 columns, the widths cuBLAS picks so that a problem's tiles fill the SMs once (fp8 128 x 4608 x
  3584: 64 x 72 tiles, 128 on 132 SMs, where 64 x 64 makes 144 and 128 x 64 72). Split K takes
  them as any tile, each accumulator's partial sums beside the other's in the tile's workspace slot
  (128 x 72 tiles of fp8 128 x 4608 in two units: 128 units, each reading a quarter less of A and
  B per SM than a 64 x 72 tile).

fp8 without fast accumulation (`PROMOTE`): every K step's MMAs (at most 128 elements of K, the
promotion interval of cuBLAS and CUTLASS) start from zero, and the previous step's partial sum is
added to the fp32 accumulator while they run: three accumulators live at once, 64 values per
thread each (128 x 128 tiles on 8 warps). Wider tiles (128 x 256 on 8 warps, whose operand tiles
ask less of L2 per FLOP) take the two halves of N in turn instead, each half's partial added after
its MMAs, so that an accumulator and half a partial fit (PROMOTE_SPLIT).

The launcher takes A row-major, B row-major or column-major (fp8: column-major, the K-major
layout its MMA needs), C row-major; all with 16-byte-aligned rows (what a descriptor needs).
Edges are handled by the descriptors: loads zero-fill past them, stores clip.
"""

from __future__ import annotations

import functools

import torch
import triton

from kernels._validate import descriptor_problem
from targets.configs import (
    EXTRA_N_NARROW_MAX_BLOCK_K,
    EXTRA_N_WIDTHS,
    GLUON_STEP_MAX_ACC,
    GLUON_WG_TILE,
    extra_n_too_narrow,
    gluon_cluster_problem,
    tail_rows,
)

try:  # Gluon and its Hopper module (Triton >= 3.5); without them no gluon config is offered
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language.nvidia.hopper import (
        fence_async_shared,
        mbarrier,
        tma,
        warpgroup_mma,
        warpgroup_mma_wait,
    )
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
except ImportError as err:  # pragma: no cover - depends on the installed Triton
    GLUON_IMPORT_ERROR: str | None = f"{type(err).__name__}: {err}"
else:
    GLUON_IMPORT_ERROR = None


# Why the installed Triton cannot build the cluster configs (None when it can).
CLUSTER_PROBLEM = gluon_cluster_problem()

# Scale modes, as kernels/matmul.py's: none, one scalar, one per row of A / column of B.
SCALE_NONE, SCALE_TENSOR, SCALE_VECTOR = 0, 1, 2

# Registers of the loader partition (one warp; allocation is by warpgroup). 24 is the least a
# warpgroup can be given (setmaxnreg); the loader only computes tile coordinates.
LOADER_REGS = 24

# Registers of the second MMA warpgroup's partition (SPLIT_WARPGROUPS): what the first, the
# default partition, is also raised to (the register file of 3 warpgroups: 240 + 240 + 24 <= 512).
MMA_REGS = 240

# The register file every program may use (65536 32-bit registers per SM, one program per SM).
_REGISTER_FILE = 65536


def available() -> str | None:
    """Why the Gluon kernels cannot be built with the installed Triton (None when they can)."""
    return GLUON_IMPORT_ERROR


if GLUON_IMPORT_ERROR is None:
    _LOADER_REGS = gl.constexpr(LOADER_REGS)
    _MMA_REGS = gl.constexpr(MMA_REGS)
    # The TMA copies' names: async_load / async_store from Triton 3.7 on (the old ones raise there).
    _tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared
    _tma_store = getattr(tma, "async_store", None) or tma.async_copy_shared_to_global
    # A barrier of the partition's threads: thread_barrier in Triton 3.6, barrier from 3.9 on.
    _thread_barrier = getattr(gl, "thread_barrier", None) or gl.barrier

    @gluon.jit
    def _no_cluster_mbarriers(batch: gl.constexpr, two_ctas: gl.constexpr = False):
        gl.static_assert(
            False, "this Triton's Gluon has no CTA-cluster barriers (kernels.gluon_hopper.CLUSTER_PROBLEM)"
        )

    # The cluster form's copy (it takes `multicast=`) and barriers (one per CTA of the cluster),
    # where the installed Triton has them; elsewhere stand-ins, so that the kernel's source
    # still resolves (Triton reads every name a kernel uses), and `cluster_problem` refuses.
    _cluster_load = tma.async_load if CLUSTER_PROBLEM is None else _tma_load
    _cluster_mbarriers = mbarrier.allocate_mbarrier if CLUSTER_PROBLEM is None else _no_cluster_mbarriers

    @gluon.constexpr_function
    def _cga(cluster_m, cluster_n):
        """How a (rows, columns) tile of a cluster is laid over its CTAs: the bases of the CTA
        index's bits (none without a cluster; [[1, 0]]: the second CTA holds the second half of
        the rows; [[0, 0]]: every CTA holds the whole tile, the multicast operand's)."""
        if cluster_m * cluster_n == 1:
            return []
        return [[1, 0]] if cluster_m > 1 else [[0, 1]]

    @gluon.constexpr_function
    def _mma_layout(block_m, block_n, k_width_bits, num_warps, cluster_m=1, cluster_n=1):
        """The warpgroup-MMA accumulator layout: warps stacked along M (a warpgroup's four warps
        cover 64 rows), the widest instruction N (<= 256) that divides the tile's columns. A
        cluster's tile (CLUSTER_M x CLUSTER_N CTAs) is split over its CTAs, each CTA's share laid
        out so."""
        block_m //= cluster_m
        block_n //= cluster_n
        warps_m = min(num_warps, max(block_m // 16, 4))
        warps_n = num_warps // warps_m
        instr_n = min(256, block_n // warps_n)
        while block_n % (instr_n * warps_n):
            instr_n -= 8
        shape = dict(version=[3, 0], warps_per_cta=[warps_m, warps_n], instr_shape=[16, instr_n, 256 // k_width_bits])
        if cluster_m * cluster_n > 1:
            shape["cga_layout"] = _cga(cluster_m, cluster_n)
        return gl.NVMMADistributedLayout(**shape)

    @gluon.jit
    def _cluster_rank():
        """This CTA's index in its cluster (PTX's %cluster_ctarank)."""
        return gl.inline_asm_elementwise(
            "mov.u32 $0, %cluster_ctarank; // $1", "=r,r", [gl.program_id(0)], dtype=gl.int32, is_pure=True, pack=1
        )

    @gluon.jit
    def _partial_offsets(acc, ROW0: gl.constexpr, COL0: gl.constexpr, BLOCK_N: gl.constexpr):
        """Where a split tile's fp32 partial sum (rows ROW0.., columns COL0.. of the tile) lies in
        its workspace slot: in 8 x 8 blocks of 256 contiguous bytes, row-major within a block, the
        blocks row-major over the tile. A warp's store or load of the MMA accumulator (8 rows by 8
        columns per instruction, 8 bytes a thread) then touches one block, two whole 128-byte
        lines, where the tile's own row-major order spread it over eight."""
        layout: gl.constexpr = acc.type.layout
        rows = ROW0 + gl.arange(0, acc.shape[0], layout=gl.SliceLayout(1, layout))
        cols = COL0 + gl.arange(0, acc.shape[1], layout=gl.SliceLayout(0, layout))
        r = gl.expand_dims(rows, 1)
        c = gl.expand_dims(cols, 0)
        return ((r // 8) * (BLOCK_N // 8) + c // 8) * 64 + (r % 8) * 8 + c % 8

    @gluon.jit
    def _tile_coords(tile_id, M, N, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, GROUP_M: gl.constexpr):
        """(row, column) offsets of output tile `tile_id` in grouped order: GROUP_M tile rows
        are walked column by column, so consecutive programs share A's and B's tiles in L2."""
        tiles_m = gl.cdiv(M, BLOCK_M)
        tiles_n = gl.cdiv(N, BLOCK_N)
        per_group = GROUP_M * tiles_n
        group = tile_id // per_group
        first_m = group * GROUP_M
        rows = gl.minimum(tiles_m - first_m, GROUP_M)
        pid_m = first_m + (tile_id % per_group) % rows
        pid_n = (tile_id % per_group) // rows
        return pid_m * BLOCK_M, pid_n * BLOCK_N

    @gluon.jit
    def _units(
        M, N, whole, num_programs, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, SPLIT_K: gl.constexpr,
        STREAM_K: gl.constexpr,
    ):  # fmt: skip
        """Work units of the persistent loop: the `whole` tiles, then SPLIT_K per other tile, or
        with STREAM_K two per program (the two segments of its chunk, `_unit_coords`)."""
        if STREAM_K:
            return whole + 2 * num_programs
        tiles = gl.cdiv(M, BLOCK_M) * gl.cdiv(N, BLOCK_N)
        return whole + (tiles - whole) * SPLIT_K

    @gluon.jit
    def _unit_coords(
        unit, whole, M, N, K, num_programs, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, BLOCK_K: gl.constexpr,
        GROUP_M: gl.constexpr, SPLIT_K: gl.constexpr, STREAM_K: gl.constexpr,
    ):  # fmt: skip
        """Work unit `unit` of the persistent loop: (tile, split, row and column offsets, first and
        end K step, chunk, parts). The first `whole` units are tiles 0 .. whole - 1 with all their
        K steps (split -1: no partial sums); after them a tile's SPLIT_K units are consecutive,
        each an equal share of its K steps (the last may have fewer, or none).

        STREAM_K: the K steps of the tiles after the `whole` ones, laid end to end, are cut into
        `num_programs` chunks of equal length (to a step), program p taking chunk P - 1 - p; a
        chunk is shorter than a tile, so it holds at most two segments: the end of one tile, then
        the start of the next. Unit whole + s * P + p is segment s of program p's chunk (split -2:
        empty). A tile's segments lie in consecutive chunks, `parts` of them; `split` is the
        segment's place among them (0: the tile's first K steps, whose program sums the others'
        partials; theirs are the first segments of lower-numbered programs, done before it)."""
        k_tiles = gl.cdiv(K, BLOCK_K)
        chunk = 0
        parts = 1
        if STREAM_K:
            rest = gl.maximum(unit - whole, 0)
            total = (gl.cdiv(M, BLOCK_M) * gl.cdiv(N, BLOCK_N) - whole) * k_tiles
            chunk = num_programs - 1 - rest % num_programs
            lo = chunk * total // num_programs
            hi = (chunk + 1) * total // num_programs
            cut = gl.minimum(hi, (lo // k_tiles + 1) * k_tiles)
            first_seg = rest // num_programs == 0
            start = gl.where(first_seg, lo, cut)
            stop = gl.where(first_seg, cut, hi)
            tile = start // k_tiles  # (among the tiles after the whole ones)
            # the chunk that holds step i is ((i + 1) * P - 1) // total
            first = ((tile * k_tiles + 1) * num_programs - 1) // total
            last = ((tile + 1) * k_tiles * num_programs - 1) // total
            parts = gl.where(unit < whole, 1, last - first + 1)
            split = gl.where(unit < whole, -1, gl.where(stop > start, chunk - first, -2))
            tile_id = gl.where(unit < whole, unit, whole + tile)
            k_lo = gl.where(unit < whole, 0, start - tile * k_tiles)
            k_hi = gl.where(unit < whole, k_tiles, gl.maximum(stop - tile * k_tiles, k_lo))
        elif SPLIT_K == 1:
            tile_id = unit
            split = -1
            k_lo = 0
            k_hi = k_tiles
        else:
            shared = gl.maximum(unit - whole, 0)
            split = gl.where(unit < whole, -1, shared % SPLIT_K)
            tile_id = gl.where(unit < whole, unit, whole + shared // SPLIT_K)
            k_per = gl.cdiv(k_tiles, SPLIT_K)
            k_lo = gl.maximum(split, 0) * k_per
            k_hi = gl.where(split < 0, k_tiles, gl.minimum(k_lo + k_per, k_tiles))
        off_m, off_n = _tile_coords(tile_id, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        return tile_id, split, off_m, off_n, k_lo, k_hi, chunk, parts

    @gluon.jit
    def _issue_loads(
        a_desc, b_desc, t_desc, a_buf, b_buf, t_buf, bar, off_m, off_n, off_k, B_KMAJOR: gl.constexpr,
        CLUSTER_M: gl.constexpr, CLUSTER_N: gl.constexpr, EXTRA_N: gl.constexpr,
    ):  # fmt: skip
        """One K step's A and B tiles into a ring slot; `bar` completes when both have landed.

        In a cluster of CLUSTER_M CTAs along M the CTAs share B's tile: the first CTA copies it
        once from L2 into every CTA's slot (multicast), each copies its own rows of A; along N
        (CLUSTER_N) A's tile is the shared one. Each CTA's `bar` expects what lands in its own
        shared memory. With EXTRA_N, B's extra columns (`t_desc`'s, after the main ones) land in
        `t_buf` too."""
        if CLUSTER_M * CLUSTER_N == 1:
            extra: gl.constexpr = t_desc.block_type.nbytes if EXTRA_N > 0 else 0
            mbarrier.expect(bar, a_desc.block_type.nbytes + b_desc.block_type.nbytes + extra)
            _tma_load(a_desc, [off_m, off_k], bar, a_buf)
            if B_KMAJOR:
                _tma_load(b_desc, [off_n, off_k], bar, b_buf)
            else:
                _tma_load(b_desc, [off_k, off_n], bar, b_buf)
            if EXTRA_N > 0:
                BLOCK_N: gl.constexpr = b_desc.block_type.shape[0] if B_KMAJOR else b_desc.block_type.shape[1]
                if B_KMAJOR:
                    _tma_load(t_desc, [off_n + BLOCK_N, off_k], bar, t_buf)
                else:
                    _tma_load(t_desc, [off_k, off_n + BLOCK_N], bar, t_buf)
        else:
            mbarrier.expect(bar, a_desc.nbytes_per_cta + b_desc.nbytes_per_cta)
            _cluster_load(a_desc, [off_m, off_k], bar, a_buf, multicast=CLUSTER_N > 1)
            if B_KMAJOR:
                _cluster_load(b_desc, [off_n, off_k], bar, b_buf, multicast=CLUSTER_M > 1)
            else:
                _cluster_load(b_desc, [off_k, off_n], bar, b_buf, multicast=CLUSTER_M > 1)

    @gluon.jit
    def _b_operand(b_buf, B_KMAJOR: gl.constexpr):
        """B's tile as the MMA reads it, (BLOCK_K, BLOCK_N): a K-major tile is a transposed view."""
        if B_KMAJOR:
            return b_buf.permute((1, 0))
        else:
            return b_buf

    @gluon.jit
    def _epilogue(
        acc, c_desc, c_smem, scale_a_ptr, scale_b_ptr, off_m, off_n, M, N,
        SCALE_A: gl.constexpr, SCALE_B: gl.constexpr,
    ):  # fmt: skip
        """Scale in fp32, round once to C's dtype, and send the tile out by an asynchronous TMA
        store (waiting first for the previous tile's store to have left `c_smem`)."""
        layout: gl.constexpr = acc.type.layout
        if SCALE_A == 1:
            acc = acc * gl.load(scale_a_ptr)
        elif SCALE_A == 2:
            offs_m = off_m + gl.arange(0, acc.shape[0], layout=gl.SliceLayout(1, layout))
            acc = acc * gl.expand_dims(gl.load(scale_a_ptr + offs_m, mask=offs_m < M, other=0.0), 1)
        if SCALE_B == 1:
            acc = acc * gl.load(scale_b_ptr)
        elif SCALE_B == 2:
            offs_n = off_n + gl.arange(0, acc.shape[1], layout=gl.SliceLayout(0, layout))
            acc = acc * gl.expand_dims(gl.load(scale_b_ptr + offs_n, mask=offs_n < N, other=0.0), 0)
        tma.store_wait(0)
        c_smem.store(acc.to(c_desc.dtype))
        fence_async_shared()
        _tma_store(c_desc, [off_m, off_n], c_smem)

    @gluon.jit
    def _finish(
        acc, c_desc, c_smem, scale_a_ptr, scale_b_ptr, off_m, off_n, M, N, ws_ptr, counters_ptr,
        tile_id, split, whole, counter, chunk, parts, ROW0: gl.constexpr, COL0: gl.constexpr,
        BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, SPLIT_K: gl.constexpr, STREAM_K: gl.constexpr,
        SCALE_A: gl.constexpr, SCALE_B: gl.constexpr,
    ):  # fmt: skip
        """The epilogue of a unit's accumulator (rows ROW0.., columns COL0.. of its tile). For a
        unit of a split tile (split >= 0: the tiles after the `whole` ones), the unit's fp32 partial
        sum goes to the workspace and its tile's counter is incremented (release); the unit that
        arrives last (acquire) sums the tile's partials and runs the epilogue, and resets the
        counter for the next launch. Nobody waits for anybody.

        STREAM_K: a segment after a tile's first (split > 0) writes its partial to its chunk's
        place in the workspace and counts itself in (release); the tile's first segment (split
        0), its program's last unit, waits (acquire) until the `parts` - 1 others have, adds
        their partials to its own accumulator in chunk order (the same bits at every launch),
        resets the counter and runs the epilogue. It only waits for lower-numbered programs'
        first units (`_unit_coords`), which the GPU starts no later than its own."""
        if STREAM_K:
            if split == -1:
                _epilogue(acc, c_desc, c_smem, scale_a_ptr, scale_b_ptr, off_m, off_n, M, N, SCALE_A, SCALE_B)
            elif split >= 0:
                offs = _partial_offsets(acc, ROW0, COL0, BLOCK_N)
                TILE: gl.constexpr = BLOCK_M * BLOCK_N
                if split == 0:
                    if parts > 1:
                        seen = gl.atomic_add(counters_ptr + counter, 0, sem="acquire", scope="gpu")
                        while seen < parts - 1:
                            seen = gl.atomic_add(counters_ptr + counter, 0, sem="acquire", scope="gpu")
                        for s in range(1, parts):
                            acc += gl.load(ws_ptr + (chunk + s).to(gl.int64) * TILE + offs, cache_modifier=".cg")
                        gl.store(counters_ptr + counter, 0)
                    _epilogue(acc, c_desc, c_smem, scale_a_ptr, scale_b_ptr, off_m, off_n, M, N, SCALE_A, SCALE_B)
                else:
                    gl.store(ws_ptr + chunk.to(gl.int64) * TILE + offs, acc)
                    _thread_barrier()  # (every thread's partial written before the release)
                    gl.atomic_add(counters_ptr + counter, 1, sem="release", scope="gpu")
        elif SPLIT_K == 1:  # (a constexpr branch: no workspace code in the kernels that do not split)
            _epilogue(acc, c_desc, c_smem, scale_a_ptr, scale_b_ptr, off_m, off_n, M, N, SCALE_A, SCALE_B)
        elif split < 0:
            _epilogue(acc, c_desc, c_smem, scale_a_ptr, scale_b_ptr, off_m, off_n, M, N, SCALE_A, SCALE_B)
        else:
            offs = _partial_offsets(acc, ROW0, COL0, BLOCK_N)
            TILE: gl.constexpr = BLOCK_M * BLOCK_N
            base = ws_ptr + (tile_id - whole).to(gl.int64) * (SPLIT_K * TILE)
            gl.store(base + split * TILE + offs, acc)
            _thread_barrier()  # (every thread's partial written before the release)
            arrived = gl.atomic_add(counters_ptr + counter, 1, sem="acq_rel", scope="gpu")
            if arrived == SPLIT_K - 1:
                # The partials summed in the order of their splits, its own read back too: in the
                # order of arrival, fp32's rounding made two launches differ (split 4, H200). One
                # at a time (a loop, not unrolled: with their loads issued together, ptxas spilled
                # up to 920 bytes for a half of fp8's 128 x 256 tile beside the other half's
                # accumulator, sk8).
                acc = gl.load(base + offs, cache_modifier=".cg")
                for s in range(1, SPLIT_K):
                    acc += gl.load(base + s * TILE + offs, cache_modifier=".cg")
                gl.store(counters_ptr + counter, 0)
                _epilogue(acc, c_desc, c_smem, scale_a_ptr, scale_b_ptr, off_m, off_n, M, N, SCALE_A, SCALE_B)

    @gluon.jit
    def _finish_two(
        acc0, acc1, c_desc, c_smem, c1_desc, c1_smem, scale_a_ptr, scale_b_ptr, off_m, off_n, M, N, ws_ptr,
        counters_ptr, tile_id, split, whole, counter, chunk, parts, ROW0: gl.constexpr, COL1: gl.constexpr,
        BLOCK_M: gl.constexpr, PITCH: gl.constexpr, SPLIT_K: gl.constexpr, STREAM_K: gl.constexpr,
        SCALE_A: gl.constexpr, SCALE_B: gl.constexpr,
    ):  # fmt: skip
        """`_finish` of two accumulators side by side in a tile of PITCH columns, the second from
        column COL1 (the halves of a tile promoted by halves of N; a tile and its extra columns, the
        second by its own descriptor): a split tile's partials of both in its workspace slot, each
        with a counter of its own (the tile's first and second)."""
        _finish(
            acc0, c_desc, c_smem, scale_a_ptr, scale_b_ptr, off_m, off_n, M, N, ws_ptr, counters_ptr, tile_id,
            split, whole, counter, chunk, parts, ROW0, 0, BLOCK_M, PITCH, SPLIT_K, STREAM_K, SCALE_A, SCALE_B,
        )  # fmt: skip
        _finish(
            acc1, c1_desc, c1_smem, scale_a_ptr, scale_b_ptr, off_m, off_n + COL1, M, N, ws_ptr, counters_ptr,
            tile_id, split, whole, counter + 1, chunk, parts, ROW0, COL1, BLOCK_M, PITCH, SPLIT_K, STREAM_K,
            SCALE_A, SCALE_B,
        )  # fmt: skip

    @gluon.jit
    def _ws_loader(
        a_desc, b_desc, t_desc, a_bufs, b_bufs, t_bufs, ready, empty, lead, M, N, K, num_programs, whole,
        BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, BLOCK_K: gl.constexpr, GROUP_M: gl.constexpr,
        B_KMAJOR: gl.constexpr, SPLIT_K: gl.constexpr, STREAM_K: gl.constexpr, CLUSTER_M: gl.constexpr,
        CLUSTER_N: gl.constexpr, EXTRA_N: gl.constexpr,
    ):  # fmt: skip
        """The loader partition: fill the ring in the order the MMA partition consumes it. In a
        cluster the first CTA's loader, which also writes the shared operand into the other CTAs'
        slots, waits for a slot on `lead` (every CTA's MMA partitions), the others on their own
        `empty` (`_release`)."""
        STAGES: gl.constexpr = a_bufs.type.shape[0]
        TILE_N: gl.constexpr = BLOCK_N + EXTRA_N
        units = _units(M, N, whole, num_programs, BLOCK_M, TILE_N, SPLIT_K, STREAM_K)
        step = 0
        for unit in range(gl.program_id(0), units, num_programs):
            _, _, off_m, off_n, k_lo, k_hi, _, _ = _unit_coords(
                unit, whole, M, N, K, num_programs, BLOCK_M, TILE_N, BLOCK_K, GROUP_M, SPLIT_K, STREAM_K
            )
            for ki in range(k_lo, k_hi):
                slot = step % STAGES
                # A barrier starts in phase 0 with the preceding phase (1) complete: the first
                # pass over the ring finds every slot empty.
                if CLUSTER_M * CLUSTER_N == 1:
                    mbarrier.wait(empty.index(slot), ((step // STAGES) & 1) ^ 1)
                else:
                    phase = ((step // STAGES) & 1) ^ 1
                    mbarrier.wait(lead.index(slot), phase, pred=_cluster_rank() == 0)
                    mbarrier.wait(empty.index(slot), phase, pred=_cluster_rank() != 0)
                _issue_loads(
                    a_desc, b_desc, t_desc, a_bufs.index(slot), b_bufs.index(slot), t_bufs.index(slot),
                    ready.index(slot), off_m, off_n, ki * BLOCK_K, B_KMAJOR, CLUSTER_M, CLUSTER_N, EXTRA_N,
                )  # fmt: skip
                step += 1

    @gluon.jit
    def _wait_slot(a_bufs, b_bufs, ready, step, ROW0: gl.constexpr, ROWS: gl.constexpr):
        """Wait until the ring slot of `step` holds its operands; its (A rows ROW0 .. ROW0 + ROWS,
        B) tiles."""
        STAGES: gl.constexpr = a_bufs.type.shape[0]
        slot = step % STAGES
        mbarrier.wait(ready.index(slot), (step // STAGES) & 1)
        a = a_bufs.index(slot)
        if ROWS < a_bufs.type.shape[1]:
            a = a.slice(ROW0, ROWS)
        return a, b_bufs.index(slot)

    @gluon.jit
    def _release(empty, lead, step, pred=True, CLUSTER: gl.constexpr = 1):
        """Give ring slot of `step` back to the loader (the MMA that read it has finished).

        In a cluster the first CTA's loader also writes the shared operand into the other CTAs'
        slots: every CTA's MMA partitions arrive at `lead`, one barrier per slot that lives in the
        first CTA (Gluon's two-CTA barrier: initialised there, counting the cluster's arrivals,
        each routed to it), and the other CTAs' partitions also at their own `empty`, which
        their loaders (writing their own shared memory only) wait on."""
        STAGES: gl.constexpr = empty.type.shape[0]
        if CLUSTER == 1:
            mbarrier.arrive(empty.index(step % STAGES), pred=pred)
        else:
            mbarrier.arrive(lead.index(step % STAGES), pred=pred)
            mbarrier.arrive(empty.index(step % STAGES), pred=(_cluster_rank() != 0) & pred)

    @gluon.jit
    def _ws_mma(
        a_bufs, b_bufs, t_bufs, ready, empty, lead, c_desc, c_smem, ct_desc, ct_smem, scale_a_ptr, scale_b_ptr,
        ws_ptr, counters_ptr, M, N, K, num_programs, whole,
        BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, BLOCK_K: gl.constexpr, GROUP_M: gl.constexpr,
        B_KMAJOR: gl.constexpr, PROMOTE: gl.constexpr, SCALE_A: gl.constexpr, SCALE_B: gl.constexpr,
        ROW0: gl.constexpr, ROWS: gl.constexpr, SPLIT_K: gl.constexpr, STREAM_K: gl.constexpr,
        CLUSTER_M: gl.constexpr, CLUSTER_N: gl.constexpr, EXTRA_N: gl.constexpr, num_warps: gl.constexpr,
    ):  # fmt: skip
        """An MMA partition: asynchronous warpgroup MMAs on rows ROW0 .. ROW0 + ROWS of every
        output tile (all of them, or with SPLIT_WARPGROUPS one warpgroup's half); a ring slot goes
        back to the loader as soon as the MMA that read it has finished (each partition arrives).

        PROMOTE 0: one accumulator, one MMA step in flight while the next is issued.
        PROMOTE 1 (fp8, precise): each step's partial sum from zero while the previous step's is
        added to the fp32 accumulator (ptxas issues the adds between the step's MMAs), then a wait
        for the step. Issuing the next step before waiting for this one, with the partials in
        turn (unrolled by two, so that no loop-carried partial is moved while its MMAs write it),
        makes ptxas serialise every MMA instead (C7514: it cannot tell that a `wait_group 1`
        has retired the partial that the adds read; checked offline with Triton 3.6).
        PROMOTE 2 (fp8, precise, wide tiles): the tile's two halves of N in turn, each step's
        half from zero, waited for and added: an accumulator and one half's partial (128 + 64
        values per thread for 128 x 256 on 8 warps) where PROMOTE 1's three would not fit; the
        other warpgroup's MMAs fill the tensor cores while one adds. The output leaves by halves.
        With SPLIT_K > 1 each unit covers a share of a tile's K steps (`_finish`); a tile's counter
        per partition and half of N.
        EXTRA_N > 0 (PROMOTE 0 or 1, no stream-K): the tile's extra columns (`t_bufs`) in a second
        accumulator, by a second MMA per K step, stored by their own descriptor (`ct_desc`); split,
        each accumulator's partials and counter (the tile's second) as PROMOTE 2's halves.
        """
        bits: gl.constexpr = a_bufs.type.element_ty.primitive_bitwidth
        layout: gl.constexpr = _mma_layout(ROWS, BLOCK_N, bits, num_warps, CLUSTER_M, CLUSTER_N)
        CLUSTER: gl.constexpr = CLUSTER_M * CLUSTER_N
        TILE_N: gl.constexpr = BLOCK_N + EXTRA_N
        units = _units(M, N, whole, num_programs, BLOCK_M, TILE_N, SPLIT_K, STREAM_K)
        PART: gl.constexpr = ROW0 // ROWS  # (this partition's index: its counters)
        step = 0
        for unit in range(gl.program_id(0), units, num_programs):
            tile_id, split, off_m, off_n, k_lo, k_hi, chunk, parts = _unit_coords(
                unit, whole, M, N, K, num_programs, BLOCK_M, TILE_N, BLOCK_K, GROUP_M, SPLIT_K, STREAM_K
            )
            off_m += ROW0
            counter = (tile_id * (BLOCK_M // ROWS) + PART) * 2
            if EXTRA_N > 0:
                gl.static_assert(not STREAM_K and CLUSTER == 1, "extra columns: no stream-K or clusters")
                gl.static_assert(PROMOTE != 2, "extra columns: no promotion by halves of N")
                STAGES: gl.constexpr = a_bufs.type.shape[0]
                extra_layout: gl.constexpr = _mma_layout(ROWS, EXTRA_N, bits, num_warps)
                acc = gl.zeros([ROWS, BLOCK_N], gl.float32, layout)
                acc_t = gl.zeros([ROWS, EXTRA_N], gl.float32, extra_layout)
                if PROMOTE == 0:
                    for ki in range(k_lo, k_hi):
                        a, b = _wait_slot(a_bufs, b_bufs, ready, step, ROW0, ROWS)
                        t = t_bufs.index(step % STAGES)
                        acc = warpgroup_mma(a, _b_operand(b, B_KMAJOR), acc, is_async=True)
                        acc_t = warpgroup_mma(a, _b_operand(t, B_KMAJOR), acc_t, is_async=True)
                        # (one commit group per MMA: the previous step's two have finished)
                        acc, acc_t = warpgroup_mma_wait(num_outstanding=2, deps=(acc, acc_t))
                        _release(empty, lead, step + STAGES - 1, pred=ki > k_lo)
                        step += 1
                    acc, acc_t = warpgroup_mma_wait(num_outstanding=0, deps=(acc, acc_t))
                    _release(empty, lead, step + STAGES - 1, pred=k_hi > k_lo)
                else:
                    zero = gl.zeros([ROWS, BLOCK_N], gl.float32, layout)
                    zero_t = gl.zeros([ROWS, EXTRA_N], gl.float32, extra_layout)
                    part = zero
                    part_t = zero_t
                    for _ in range(k_lo, k_hi):
                        a, b = _wait_slot(a_bufs, b_bufs, ready, step, ROW0, ROWS)
                        t = t_bufs.index(step % STAGES)
                        cur = warpgroup_mma(a, _b_operand(b, B_KMAJOR), zero, use_acc=False, is_async=True)
                        cur_t = warpgroup_mma(a, _b_operand(t, B_KMAJOR), zero_t, use_acc=False, is_async=True)
                        acc += part
                        acc_t += part_t
                        part, part_t = warpgroup_mma_wait(num_outstanding=0, deps=(cur, cur_t))
                        _release(empty, lead, step)
                        step += 1
                    acc += part
                    acc_t += part_t
                _finish_two(
                    acc, acc_t, c_desc, c_smem, ct_desc, ct_smem, scale_a_ptr, scale_b_ptr, off_m, off_n, M, N,
                    ws_ptr, counters_ptr, tile_id, split, whole, counter, chunk, parts, ROW0, BLOCK_N, BLOCK_M, TILE_N,
                    SPLIT_K, STREAM_K, SCALE_A, SCALE_B,
                )  # fmt: skip
            elif PROMOTE == 0:
                acc = gl.zeros([ROWS, BLOCK_N], gl.float32, layout)
                for ki in range(k_lo, k_hi):
                    a, b = _wait_slot(a_bufs, b_bufs, ready, step, ROW0, ROWS)
                    acc = warpgroup_mma(a, _b_operand(b, B_KMAJOR), acc, is_async=True)
                    acc = warpgroup_mma_wait(num_outstanding=1, deps=(acc,))
                    _release(empty, lead, step + empty.type.shape[0] - 1, pred=ki > k_lo, CLUSTER=CLUSTER)
                    step += 1
                acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc,))
                _release(
                    empty, lead, step + empty.type.shape[0] - 1, pred=k_hi > k_lo, CLUSTER=CLUSTER
                )  # (a unit may have no K step)
                _finish(
                    acc, c_desc, c_smem, scale_a_ptr, scale_b_ptr, off_m, off_n, M, N, ws_ptr, counters_ptr,
                    tile_id, split, whole, counter, chunk, parts, ROW0, 0, BLOCK_M, BLOCK_N, SPLIT_K, STREAM_K,
                    SCALE_A, SCALE_B,
                )  # fmt: skip
            elif PROMOTE == 1:
                acc = gl.zeros([ROWS, BLOCK_N], gl.float32, layout)
                zero = gl.zeros([ROWS, BLOCK_N], gl.float32, layout)
                part = zero
                for _ in range(k_lo, k_hi):
                    a, b = _wait_slot(a_bufs, b_bufs, ready, step, ROW0, ROWS)
                    cur = warpgroup_mma(a, _b_operand(b, B_KMAJOR), zero, use_acc=False, is_async=True)
                    acc += part
                    part = warpgroup_mma_wait(num_outstanding=0, deps=(cur,))
                    _release(empty, lead, step, CLUSTER=CLUSTER)
                    step += 1
                acc += part
                _finish(
                    acc, c_desc, c_smem, scale_a_ptr, scale_b_ptr, off_m, off_n, M, N, ws_ptr, counters_ptr,
                    tile_id, split, whole, counter, chunk, parts, ROW0, 0, BLOCK_M, BLOCK_N, SPLIT_K, STREAM_K,
                    SCALE_A, SCALE_B,
                )  # fmt: skip
            else:
                gl.static_assert(B_KMAJOR, "PROMOTE 2 is for fp8, whose B tiles are K-major")
                HALF: gl.constexpr = BLOCK_N // 2
                half_layout: gl.constexpr = _mma_layout(ROWS, HALF, bits, num_warps, CLUSTER_M, CLUSTER_N)
                acc0 = gl.zeros([ROWS, HALF], gl.float32, half_layout)
                acc1 = gl.zeros([ROWS, HALF], gl.float32, half_layout)
                zero = gl.zeros([ROWS, HALF], gl.float32, half_layout)
                for _ in range(k_lo, k_hi):
                    a, b = _wait_slot(a_bufs, b_bufs, ready, step, ROW0, ROWS)  # (B: (BLOCK_N, BLOCK_K), K-major)
                    part = warpgroup_mma(a, b.slice(0, HALF).permute((1, 0)), zero, use_acc=False, is_async=True)
                    part = warpgroup_mma_wait(num_outstanding=0, deps=(part,))
                    acc0 += part
                    part = warpgroup_mma(a, b.slice(HALF, HALF).permute((1, 0)), zero, use_acc=False, is_async=True)
                    part = warpgroup_mma_wait(num_outstanding=0, deps=(part,))
                    acc1 += part
                    _release(empty, lead, step, CLUSTER=CLUSTER)
                    step += 1
                _finish_two(
                    acc0, acc1, c_desc, c_smem, c_desc, c_smem, scale_a_ptr, scale_b_ptr, off_m, off_n, M, N, ws_ptr,
                    counters_ptr, tile_id, split, whole, counter, chunk, parts, ROW0, HALF, BLOCK_M, BLOCK_N, SPLIT_K,
                    STREAM_K, SCALE_A, SCALE_B,
                )  # fmt: skip
        tma.store_wait(0)

    @gluon.jit
    def _gemm_ws_kernel(
        a_desc, b_desc, c_desc, t_desc, ct_desc, scale_a_ptr, scale_b_ptr, ws_ptr, counters_ptr, M, N, K,
        num_programs, whole,
        BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, BLOCK_K: gl.constexpr, GROUP_M: gl.constexpr,
        STAGES: gl.constexpr, B_KMAJOR: gl.constexpr, PROMOTE: gl.constexpr,
        SCALE_A: gl.constexpr, SCALE_B: gl.constexpr, SPLIT_WARPGROUPS: gl.constexpr, SPLIT_K: gl.constexpr,
        STREAM_K: gl.constexpr, CLUSTER_M: gl.constexpr, CLUSTER_N: gl.constexpr, EXTRA_N: gl.constexpr,
        num_warps: gl.constexpr,
    ):  # fmt: skip
        """The "gluon_ws" variant: C (M, N) = A (M, K) x B (K, N), scaled, with a loader
        partition and an MMA partition (module docstring); with SPLIT_WARPGROUPS ("gluon_wg"),
        two MMA partitions of one warpgroup (`num_warps` 4) each, on the two halves of the
        tile's rows; with SPLIT_K > 1, the K steps of each tile after the first `whole` ones
        shared by SPLIT_K work units, whose fp32 partial sums meet in `ws_ptr` (`counters_ptr`: a
        zeroed int32 per tile, partition and half of N, left zeroed).

        CLUSTER_M x CLUSTER_N > 1 (a launch of `num_ctas` = that, the grid counting clusters):
        each tile (BLOCK_M x BLOCK_N) is a cluster's, split over its CTAs along M or N, the
        other operand's tile shared by them, copied once from L2 into all (`_issue_loads`); no
        split K or stream-K.

        EXTRA_N > 0 (one CTA, no stream-K): tiles of BLOCK_N + EXTRA_N columns, B's extra ones by
        `t_desc` into a ring of their own, C's by `ct_desc` (both stand-ins otherwise)."""
        PARTS: gl.constexpr = 2 if SPLIT_WARPGROUPS else 1
        CLUSTER: gl.constexpr = CLUSTER_M * CLUSTER_N
        ROWS: gl.constexpr = BLOCK_M // PARTS
        a_bufs = gl.allocate_shared_memory(a_desc.dtype, [STAGES] + a_desc.block_type.shape, a_desc.layout)  # noqa: RUF005 (Gluon has no starred lists)
        b_bufs = gl.allocate_shared_memory(b_desc.dtype, [STAGES] + b_desc.block_type.shape, b_desc.layout)  # noqa: RUF005
        c_smem = gl.allocate_shared_memory(c_desc.dtype, [PARTS] + c_desc.block_type.shape, c_desc.layout)  # noqa: RUF005
        if EXTRA_N > 0:
            t_bufs = gl.allocate_shared_memory(t_desc.dtype, [STAGES] + t_desc.block_type.shape, t_desc.layout)  # noqa: RUF005
            ct_smem = gl.allocate_shared_memory(ct_desc.dtype, [PARTS] + ct_desc.block_type.shape, ct_desc.layout)  # noqa: RUF005
        else:  # (stand-ins the partitions never read)
            t_bufs = b_bufs
            ct_smem = c_smem
        if CLUSTER == 1:
            ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
            empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
            lead = empty  # (no cluster: no other CTA's arrivals)
        else:  # (`ready` and `empty`: a barrier in each CTA; `lead`: one, in the first CTA)
            ready = _cluster_mbarriers(batch=STAGES)
            empty = _cluster_mbarriers(batch=STAGES)
            lead = _cluster_mbarriers(batch=STAGES, two_ctas=True)
        for i in gl.static_range(STAGES):
            mbarrier.init(ready.index(i), count=1)
            # (a slot is free once every MMA partition is done with it: `_release`)
            mbarrier.init(empty.index(i), count=PARTS)
            if CLUSTER > 1:  # (PARTS per CTA: Gluon multiplies a two-CTA barrier's count by its CTAs)
                mbarrier.init(lead.index(i), count=PARTS)
        fence_async_shared()
        # (Gluon takes the partitions' functions, and their constexpr arguments, only inline in the
        # call: the two forms below differ in the second MMA partition alone)
        if SPLIT_WARPGROUPS:
            gl.warp_specialize(
                [
                    (_ws_mma, (a_bufs, b_bufs, t_bufs, ready, empty, lead, c_desc, c_smem.index(0), ct_desc,
                               ct_smem.index(0), scale_a_ptr, scale_b_ptr, ws_ptr, counters_ptr, M, N, K, num_programs,
                               whole, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, B_KMAJOR, PROMOTE, SCALE_A, SCALE_B, 0, ROWS,
                               SPLIT_K, STREAM_K, CLUSTER_M, CLUSTER_N, EXTRA_N, num_warps)),
                    (_ws_mma, (a_bufs, b_bufs, t_bufs, ready, empty, lead, c_desc, c_smem.index(1), ct_desc,
                               ct_smem.index(1), scale_a_ptr, scale_b_ptr, ws_ptr, counters_ptr, M, N, K, num_programs,
                               whole, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, B_KMAJOR, PROMOTE, SCALE_A, SCALE_B, ROWS, ROWS,
                               SPLIT_K, STREAM_K, CLUSTER_M, CLUSTER_N, EXTRA_N, num_warps)),
                    (_ws_loader, (a_desc, b_desc, t_desc, a_bufs, b_bufs, t_bufs, ready, empty, lead, M, N, K,
                                  num_programs, whole, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, B_KMAJOR, SPLIT_K, STREAM_K,
                                  CLUSTER_M, CLUSTER_N, EXTRA_N)),
                ],
                [num_warps, 1],
                [_MMA_REGS, _LOADER_REGS],
            )  # fmt: skip
        else:
            gl.warp_specialize(
                [
                    (_ws_mma, (a_bufs, b_bufs, t_bufs, ready, empty, lead, c_desc, c_smem.index(0), ct_desc,
                               ct_smem.index(0), scale_a_ptr, scale_b_ptr, ws_ptr, counters_ptr, M, N, K, num_programs,
                               whole, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, B_KMAJOR, PROMOTE, SCALE_A, SCALE_B, 0, ROWS,
                               SPLIT_K, STREAM_K, CLUSTER_M, CLUSTER_N, EXTRA_N, num_warps)),
                    (_ws_loader, (a_desc, b_desc, t_desc, a_bufs, b_bufs, t_bufs, ready, empty, lead, M, N, K,
                                  num_programs, whole, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, B_KMAJOR, SPLIT_K, STREAM_K,
                                  CLUSTER_M, CLUSTER_N, EXTRA_N)),
                ],
                [1],
                [_LOADER_REGS],
            )  # fmt: skip


_GL_DTYPES = {
    torch.float16: "float16",
    torch.bfloat16: "bfloat16",
    torch.float32: "float32",
    torch.float8_e4m3fn: "float8e4nv",
    torch.float8_e5m2: "float8e5",
}


def _gl_dtype(dtype: torch.dtype):
    return getattr(gl, _GL_DTYPES[dtype])


@functools.cache
def _layout(block: tuple[int, ...], dtype: torch.dtype, cga: tuple[tuple[int, ...], ...] = ()):
    if not cga:
        return gl.NVMMASharedLayout.get_default_for(list(block), _gl_dtype(dtype))
    return gl.NVMMASharedLayout.get_default_for(list(block), _gl_dtype(dtype), cga_layout=[list(v) for v in cga])


def descriptor(t: torch.Tensor, block: list[int], cga: tuple[tuple[int, ...], ...] = ()):
    """A Gluon tensor descriptor over row-major `t` with tiles of `block` (the default swizzle);
    `cga`: how a cluster's tile is laid over its CTAs (`_cga`'s bases; none without a cluster)."""
    return TensorDescriptor.from_tensor(t, list(block), _layout(tuple(block), t.dtype, cga))


# A cluster tile's (rows, columns) over its two CTAs: split along rows, along columns, or whole in
# both (the operand the cluster shares, copied by multicast).
_ROWS_SPLIT, _COLS_SPLIT, _SHARED = ((1, 0),), ((0, 1),), ((0, 0),)


def cluster_layouts(cluster_m: int, cluster_n: int, b_kmajor: bool) -> tuple[tuple, tuple, tuple]:
    """The CTA layouts (A's, B's, C's descriptors) of a cluster of `cluster_m` x `cluster_n`
    CTAs (one of them 2): along M the rows of A and C are split and B is shared; along N the
    columns of B (its rows where B is K-major) and C are split and A is shared."""
    if cluster_m * cluster_n == 1:
        return (), (), ()
    if cluster_m > 1:
        return _ROWS_SPLIT, _SHARED, _ROWS_SPLIT
    return _SHARED, _ROWS_SPLIT if b_kmajor else _COLS_SPLIT, _COLS_SPLIT


def cluster_problem(cluster_m: int, cluster_n: int, promote: int, split_warpgroups: bool) -> str | None:
    """Why this kernel form cannot run in a cluster of `cluster_m` x `cluster_n` CTAs (None when
    it can): two CTAs along one dimension, with a Triton that has Gluon's clusters; split along
    M its A rows cannot be halved again between two MMA partitions (gluon_wg), split along N its
    B tiles not taken by halves of N (fp8's wide tiles)."""
    if (cluster_m, cluster_n) not in ((1, 1), (2, 1), (1, 2)):
        return (
            f"clusters are of 2 CTAs along M or N (cluster_m, cluster_n = 2, 1 or 1, 2), got {cluster_m}, {cluster_n}"
        )
    if cluster_m * cluster_n == 1:
        return None
    if CLUSTER_PROBLEM is not None:
        return CLUSTER_PROBLEM
    if cluster_m > 1 and split_warpgroups:
        return "a cluster along M splits A's rows between its CTAs: no gluon_wg (each warpgroup half the rows) on it"
    if cluster_n > 1 and promote == PROMOTE_SPLIT:
        return "a cluster along N splits B's columns between its CTAs: no tile taken by halves of N (fp8's wide tiles)"
    return None


def b_is_kmajor(b: torch.Tensor) -> bool:
    """Whether B (K, N) is column-major: its tiles are then loaded K-major, (BLOCK_N, BLOCK_K)."""
    return b.stride(0) == 1 and b.stride(1) != 1


def unsupported(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> str | None:
    """Why these operands cannot take the Gluon kernels (None when they can)."""
    if GLUON_IMPORT_ERROR is not None:
        return f"Gluon is not available with Triton {triton.__version__} ({GLUON_IMPORT_ERROR})"
    for name, t in (("A", a), ("B", b), ("C", c)):
        if t.dtype not in _GL_DTYPES:
            return f"{name}'s dtype {t.dtype} has no Gluon type here"
    if a.stride(1) != 1:
        return "A is not row-major (the Gluon kernels read A by rows)"
    if c.stride(1) != 1:
        return "C is not row-major (the Gluon kernels store C by rows)"
    if a.element_size() == 1 and not b_is_kmajor(b):
        return "fp8 B must be column-major (the fp8 warpgroup MMA reads both operands K-major)"
    reasons = (descriptor_problem(t, name) for name, t in (("A", a), ("B", b), ("C", c)))
    return next((r for r in reasons if r), None)


def launch_args(
    a: torch.Tensor,
    b: torch.Tensor,
    c: torch.Tensor,
    scale_a: torch.Tensor | None,
    scale_b: torch.Tensor | None,
    *,
    block_m: int,
    block_n: int,
    block_k: int,
    stages: int,
    num_warps: int,
    group_m: int,
    promote: int,
    programs: int,
    split_warpgroups: bool = False,
    split_k: int = 1,
    stream_k: bool = False,
    whole: int,
    workspace: torch.Tensor | None = None,
    counters: torch.Tensor | None = None,
    cluster_m: int = 1,
    cluster_n: int = 1,
    extra_n: int = 0,
) -> tuple[tuple, dict]:
    """(arguments, meta-parameters) of `_gemm_ws_kernel` for C = scale_a * scale_b * (A @ B);
    `whole`: the tiles run whole before the split ones (`whole_tiles`); `block_m`, `block_n`:
    one CTA's tile (a cluster's is `cluster_m` x `cluster_n` of them)."""
    M, K = a.shape
    N = b.shape[1]
    b_kmajor = b_is_kmajor(b)
    block_m, block_n = block_m * cluster_m, block_n * cluster_n  # (the kernel's tile is the cluster's)
    a_cga, b_cga, c_cga = cluster_layouts(cluster_m, cluster_n, b_kmajor)
    a_desc = descriptor(a, [block_m, block_k], a_cga)
    b_desc = descriptor(b.T, [block_n, block_k], b_cga) if b_kmajor else descriptor(b, [block_k, block_n], b_cga)
    # (PROMOTE 2 stores the tile by halves of N; split warpgroups each store their half of the rows)
    parts = 2 if split_warpgroups else 1
    c_desc = descriptor(c, [block_m // parts, block_n // 2 if promote == PROMOTE_SPLIT else block_n], c_cga)
    t_desc, ct_desc = b_desc, c_desc  # (stand-ins without extra columns)
    if extra_n:
        t_desc = descriptor(b.T, [extra_n, block_k]) if b_kmajor else descriptor(b, [block_k, extra_n])
        ct_desc = descriptor(c, [block_m // parts, extra_n])
    modes = []
    for s in (scale_a, scale_b):
        modes.append(SCALE_NONE if s is None else SCALE_TENSOR if s.numel() == 1 else SCALE_VECTOR)
    args = (
        a_desc, b_desc, c_desc, t_desc, ct_desc,
        c if scale_a is None else scale_a, c if scale_b is None else scale_b,
        c if workspace is None else workspace, c if counters is None else counters,
        M, N, K, programs, whole,
    )  # fmt: skip
    meta = dict(
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=group_m, STAGES=stages,
        B_KMAJOR=b_kmajor, PROMOTE=promote, SCALE_A=modes[0], SCALE_B=modes[1],
        SPLIT_WARPGROUPS=split_warpgroups, SPLIT_K=split_k, STREAM_K=stream_k, CLUSTER_M=cluster_m,
        CLUSTER_N=cluster_n, EXTRA_N=extra_n, num_warps=num_warps // parts,
    )  # fmt: skip
    if cluster_m * cluster_n > 1:
        meta["num_ctas"] = cluster_m * cluster_n
    return args, meta


# How fp8 partial sums reach the fp32 accumulator (`_ws_mma`): not at all (16-bit operands, fast
# accumulation), every K step beside the next step's MMAs, or every K step by halves of N.
PROMOTE_NONE, PROMOTE_STEP, PROMOTE_SPLIT = 0, 1, 2

# PROMOTE_STEP keeps three accumulators (the tile's, the step's partial sum in flight and the
# previous one's); 64 values per thread each (192 registers of the 240 an MMA warp gets) compile
# without spills for sm_90 (tests/test_gluon.py). PROMOTE_SPLIT takes tiles of up to twice that:
# an accumulator and one half's partial sum.
PROMOTE_MAX_ACC = GLUON_STEP_MAX_ACC


def promotion(block_m: int, block_n: int, num_warps: int, precise: bool) -> int | None:
    """The promotion mode of a tile on `num_warps` MMA warps, None where fp8's precise
    accumulation (`precise`) does not fit the registers."""
    if not precise:
        return PROMOTE_NONE
    per_thread = block_m * block_n / (num_warps * 32)
    if per_thread <= PROMOTE_MAX_ACC:
        return PROMOTE_STEP
    return PROMOTE_SPLIT if per_thread <= 2 * PROMOTE_MAX_ACC else None


def extra_n_problem(
    extra_n: int,
    block_n: int,
    promote: int,
    split_k: int = 1,
    stream_k: bool = False,
    tail_halves: bool = False,
    cluster: int = 1,
    *,
    block_k: int = 0,
    n_major_bytes: int = 0,
) -> str | None:
    """Why a launch cannot have `extra_n` extra columns per tile (None when it can, or has none).
    `n_major_bytes`: B's element size where B's rows run along N (0 where B is K-major)."""
    if not extra_n:
        return None
    if extra_n not in EXTRA_N_WIDTHS or extra_n >= block_n:
        return f"extra_n must be one of {EXTRA_N_WIDTHS} and less than block_n {block_n}, got {extra_n!r}"
    if stream_k or tail_halves or cluster > 1:
        return "extra columns are for tiles of one CTA: no stream_k, tail_halves or cluster with them"
    if promote == PROMOTE_SPLIT:
        return "extra columns take no promotion by halves of N (a tile this wide needs it: fewer columns or more warps)"
    if extra_n_too_narrow(extra_n, n_major_bytes, block_k):
        return (
            f"extra columns of {extra_n * n_major_bytes} bytes along B's rows take K steps of at most "
            f"{EXTRA_N_NARROW_MAX_BLOCK_K} (deeper ones computed those columns wrong on the H200), got {block_k}"
        )
    return None


def split_warpgroups_problem(block_m: int, num_warps: int) -> str | None:
    """Why a tile cannot have its two MMA warpgroups as partitions of their own (None if it can)."""
    if (block_m, num_warps) == GLUON_WG_TILE:
        return None
    rows, warps = GLUON_WG_TILE
    return f"gluon_wg configs split two MMA warpgroups: {rows} rows on {warps} warps, got {block_m} on {num_warps}"


def whole_tiles(tiles: int, programs: int, split_k: int) -> int:
    """The tiles a launch of `programs` programs runs whole, before the split ones: all of them
    without split K; with it, those of the full waves (`programs` tiles each), the last, partial
    wave's tiles (all of them, where they make less than a wave) being shared by `split_k` units."""
    if split_k == 1:
        return tiles
    return tiles // programs * programs


def stream_k_problem(tiles: int, k_steps: int, programs: int) -> str | None:
    """Why a launch cannot share its last, partial wave of tiles by stream-K (None when it can):
    there must be such a wave, and at least one K step per program in it (each program's chunk
    holds one: `_unit_coords`)."""
    whole = whole_tiles(tiles, programs, 2)
    if whole == tiles:
        return f"its {tiles} tiles make whole waves of {programs} programs"
    if (tiles - whole) * k_steps < programs:
        return f"the last wave's {tiles - whole} tiles of {k_steps} K steps give fewer steps than {programs} programs"
    return None


def stream_k_segments(tiles: int, k_steps: int, programs: int) -> list[list[tuple]]:
    """What each program's stream-K units cover: `_unit_coords`'s arithmetic restated in Python,
    per program its (tile, split, first K step, end K step, chunk, parts) after its whole tiles.
    The CPU tests check its properties (every step once, waits only on lower-numbered programs);
    the kernel's own results are checked on the GPU (tests/test_gluon.py)."""
    whole = whole_tiles(tiles, programs, 2)
    total = (tiles - whole) * k_steps
    out = []
    for p in range(programs):
        chunk = programs - 1 - p
        lo, hi = chunk * total // programs, (chunk + 1) * total // programs
        cut = min(hi, (lo // k_steps + 1) * k_steps)
        segs = []
        for start, stop in ((lo, cut), (cut, hi)):
            if stop > start:
                tile = start // k_steps
                first = ((tile * k_steps + 1) * programs - 1) // total
                last = ((tile + 1) * k_steps * programs - 1) // total
                segs.append((whole + tile, chunk - first, start - tile * k_steps, stop - tile * k_steps, chunk,
                             last - first + 1))  # fmt: skip
        out.append(segs)
    return out


def counters_needed(M: int, N: int, block_m: int, block_n: int) -> int:
    """The split-K counters of a launch: one per tile, MMA partition (2) and half of N (2)."""
    return triton.cdiv(M, block_m) * triton.cdiv(N, block_n) * 4


def max_registers(num_warps: int) -> int:
    """`maxnreg` for one program per SM: the register file over every warp the program has
    (the loader's warpgroup too), a multiple of 8. The loader then gives back what it does not
    use (LOADER_REGS), which the MMA partition receives."""
    return min(255, _REGISTER_FILE // (32 * (num_warps + 4))) // 8 * 8


def gemm(
    a: torch.Tensor,
    b: torch.Tensor,
    c: torch.Tensor,
    scale_a: torch.Tensor | None = None,
    scale_b: torch.Tensor | None = None,
    *,
    block_m: int,
    block_n: int,
    block_k: int,
    stages: int,
    num_warps: int,
    group_m: int = 8,
    promote: int = PROMOTE_NONE,
    programs: int | None = None,
    split_warpgroups: bool = False,
    split_k: int = 1,
    stream_k: bool = False,
    tail_halves: bool = False,
    cluster_m: int = 1,
    cluster_n: int = 1,
    extra_n: int = 0,
    counters: torch.Tensor | None = None,
    compile_only: bool = False,
):
    """Launch (or with `compile_only`, compile) the Gluon kernel: C = scale_a * scale_b * (A @ B).

    `promote`: PROMOTE_STEP or PROMOTE_SPLIT for fp8's precise accumulation (use_fast_accum=False:
    partial sums promoted to the fp32 accumulator every K step), PROMOTE_NONE otherwise.
    `split_warpgroups` ("gluon_wg"; 8 warps on 128 rows): each MMA warpgroup its own partition.
    `split_k` > 1: the K steps of each tile of the last, partial wave of tiles (`whole_tiles`)
    shared by that many work units (fp32 partial sums in a workspace allocated here); `counters`:
    zeroed int32, at least `counters_needed(...)`, which the kernel leaves zeroed (kept by the
    caller for the next launches).
    `stream_k` (with split_k 1): the last, partial wave's K steps cut into one chunk per program
    instead (`_unit_coords`; `stream_k_problem` says where it cannot), `counters` as for split K.
    `tail_halves`: the last, partial wave of tiles in a second launch, on the remaining rows in
    tiles of half the width (both launches' results, in a list) where `tail_rows` finds such a
    wave; elsewhere one launch of whole tiles, as without it (a bucket's config serves its shapes
    with and without such a wave, as split K serves shapes without a partial wave).
    `cluster_m` or `cluster_n` 2 (no split_k, stream_k or tail_halves): the tiles in pairs along M
    or N, each pair a cluster of two CTAs that share the other operand's tile, copied from L2 once
    into both (TMA multicast; Triton with Gluon's clusters: `cluster_problem`); `block_m` and
    `block_n` stay one CTA's.
    `extra_n` (8, 16, 32 or 64, less than `block_n`; one CTA, no stream_k or tail_halves, no
    promotion by halves): tiles of `block_n` + `extra_n` columns, the extra ones by a second MMA.
    `programs` defaults to one per SM of C's device (with clusters, one cluster per two SMs).
    Raises ValueError for operands the kernel does not take (`unsupported`)."""
    problem = unsupported(a, b, c)
    if problem:
        raise ValueError(f"gluon gemm: {problem}")
    if programs is None:
        programs = torch.cuda.get_device_properties(c.device).multi_processor_count
    if tail_halves and (split_k != 1 or stream_k):
        raise ValueError("gluon gemm: tail_halves runs the last wave in half tiles; no split_k or stream_k with it")
    cluster = cluster_m * cluster_n
    if problem := cluster_problem(cluster_m, cluster_n, promote, split_warpgroups):
        raise ValueError(f"gluon gemm: {problem}")
    if cluster > 1 and (split_k != 1 or stream_k or tail_halves):
        raise ValueError("gluon gemm: a cluster's tiles run whole: no split_k, stream_k or tail_halves with it")
    if problem := extra_n_problem(
        extra_n, block_n, promote, split_k, stream_k, tail_halves, cluster,
        block_k=block_k, n_major_bytes=0 if b_is_kmajor(b) else b.element_size(),
    ):  # fmt: skip
        raise ValueError(f"gluon gemm: {problem}")
    first = tail_rows(a.shape[0], b.shape[1], block_m, block_n, programs) if tail_halves else None
    if first is not None:
        kw = dict(stages=stages, num_warps=num_warps, group_m=group_m, programs=programs,
                  split_warpgroups=split_warpgroups, compile_only=compile_only)  # fmt: skip

        def rows(scale, lo, hi):  # (a scale per row of A is cut with it; a scalar one is shared)
            return scale if scale is None or scale.numel() == 1 else scale[lo:hi]

        m = a.shape[0]
        half_promote = promote if promote == PROMOTE_NONE else promotion(block_m, block_n // 2, num_warps, True)
        return [
            gemm(a[:first], b, c[:first], rows(scale_a, 0, first), scale_b, block_m=block_m, block_n=block_n,
                 block_k=block_k, promote=promote, **kw),
            gemm(a[first:], b, c[first:], rows(scale_a, first, m), scale_b, block_m=block_m, block_n=block_n // 2,
                 block_k=block_k, promote=half_promote, **kw),
        ]  # fmt: skip
    if promote not in (PROMOTE_NONE, PROMOTE_STEP, PROMOTE_SPLIT):
        raise ValueError(f"gluon gemm: promote must be PROMOTE_NONE, _STEP or _SPLIT (0, 1, 2), got {promote!r}")
    if split_warpgroups and (problem := split_warpgroups_problem(block_m, num_warps)):
        raise ValueError(f"gluon gemm: {problem}")
    tiles = triton.cdiv(a.shape[0], block_m * cluster_m) * triton.cdiv(b.shape[1], block_n * cluster_n + extra_n)
    programs = max(1, programs // cluster)  # (the grid counts clusters)
    if stream_k and split_k != 1:
        raise ValueError(f"gluon gemm: stream_k shares K steps itself; split_k must be 1, got {split_k}")
    if stream_k and (problem := stream_k_problem(tiles, triton.cdiv(a.shape[1], block_k), programs)):
        raise ValueError(f"gluon gemm: no stream-K here: {problem}")
    whole = whole_tiles(tiles, programs, 2 if stream_k else split_k)
    workspace = None
    if split_k > 1 or stream_k:
        need = counters_needed(a.shape[0], b.shape[1], block_m, block_n)
        if counters is None or counters.dtype != torch.int32 or counters.numel() < need:
            what = "stream_k" if stream_k else f"split_k {split_k}"
            raise ValueError(f"gluon gemm: {what} needs {need} zeroed int32 counters")
        # (stream-K: one partial per program's chunk at most; split K: one per unit)
        slots = programs if stream_k else (tiles - whole) * split_k
        workspace = torch.empty(max(1, slots * block_m * (block_n + extra_n)), dtype=torch.float32, device=c.device)
    if not stream_k:
        programs = min(programs, whole + (tiles - whole) * split_k)
    args, meta = launch_args(
        a, b, c, scale_a, scale_b, block_m=block_m, block_n=block_n, block_k=block_k, stages=stages,
        num_warps=num_warps, group_m=group_m, promote=promote, programs=programs, split_warpgroups=split_warpgroups,
        split_k=split_k, stream_k=stream_k, whole=whole, workspace=workspace, counters=counters,
        cluster_m=cluster_m, cluster_n=cluster_n, extra_n=extra_n,
    )  # fmt: skip
    maxnreg = max_registers(num_warps)
    if compile_only:
        return _gemm_ws_kernel.warmup(*args, grid=(programs,), maxnreg=maxnreg, **meta)
    return _gemm_ws_kernel[(programs,)](*args, maxnreg=maxnreg, **meta)
