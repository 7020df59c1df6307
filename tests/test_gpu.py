"""The same checks at real sizes, on a GPU (`pytest -m gpu`); skipped without one."""

import time

import pytest
import torch
from fp8_cases import fp8_problem

import kernels
from benchmarks.cells import TOLERANCE, reference_gemm, relative_error
from targets import GemmConfig

pytestmark = pytest.mark.gpu

DTYPES = {
    "fp16": (torch.float16, None),
    "bf16": (torch.bfloat16, None),
    "fp32-ieee": (torch.float32, "ieee"),
    "fp32-tf32": (torch.float32, "tf32"),
}
SHAPES = [
    (4096, 4096, 4096),
    (16, 4096, 4096),
    (1, 4096, 4096),
    (128, 4096, 14336),
    (3000, 5000, 1000),
    (1023, 1025, 999),
]


def _randn(shape, dtype, gen):
    return torch.randn(*shape, generator=gen, device="cuda").to(dtype)


@pytest.fixture
def gen():
    return torch.Generator(device="cuda").manual_seed(7)


def test_detect_finds_the_catalogue_entry():
    from targets import CATALOGUE, detect

    spec = detect()
    assert not spec.is_interpreter
    assert spec.name in CATALOGUE, f"{torch.cuda.get_device_name()} should be in the catalogue"
    props = torch.cuda.get_device_properties(0)
    assert spec.sm_count == props.multi_processor_count
    assert spec.l2_bytes == props.L2_cache_size


def test_the_card_is_named_by_its_uuid():
    from benchmarks.context import device_description

    card = device_description()["card"]
    assert card.startswith("GPU-") and len(card) > 20, card


@pytest.mark.parametrize("dtype_name", list(DTYPES))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_matmul_real_sizes(dtype_name, shape, gen):
    dtype, precision = DTYPES[dtype_name]
    M, N, K = shape
    a, b = _randn((M, K), dtype, gen), _randn((K, N), dtype, gen)
    out = torch.full((M, N), float("nan"), dtype=dtype, device="cuda")
    kernels.matmul(a, b, precision=precision, out=out)
    torch.cuda.synchronize()
    assert relative_error(out, reference_gemm(a, b)) <= TOLERANCE[dtype_name]


@pytest.mark.parametrize("layouts", ["row-col", "col-row", "col-col"])
def test_matmul_layouts_real_size(layouts, gen):
    a, b = _randn((2048, 1536), torch.float16, gen), _randn((1536, 2560), torch.float16, gen)
    la, lb = layouts.split("-")
    a = a if la == "row" else a.t().contiguous().t()
    b = b if lb == "row" else b.t().contiguous().t()
    out = torch.full((2048, 2560), float("nan"), dtype=torch.float16, device="cuda")
    kernels.matmul(a, b, out=out)
    assert relative_error(out, reference_gemm(a, b)) <= TOLERANCE["fp16"]


@pytest.mark.parametrize("dtype_name", ["fp16", "bf16"])
@pytest.mark.parametrize("activation", ["gelu", "silu", "relu"])
def test_fused_epilogue_real_size(dtype_name, activation, gen):
    dtype, _ = DTYPES[dtype_name]
    M, N, K = 4096, 4096, 4096
    a, b, bias = _randn((M, K), dtype, gen), _randn((K, N), dtype, gen), _randn((N,), dtype, gen)
    out = torch.full((M, N), float("nan"), dtype=dtype, device="cuda")
    kernels.matmul(a, b, bias=bias, activation=activation, out=out)
    ref = reference_gemm(a, b, bias=bias, activation=activation)
    unfused = getattr(torch.nn.functional, activation)(a @ b + bias)
    assert relative_error(out, ref) <= TOLERANCE[dtype_name]
    assert relative_error(out, ref) <= 1.5 * relative_error(unfused, ref) + 1e-6


@pytest.mark.parametrize("fp8", [torch.float8_e4m3fn, torch.float8_e5m2], ids=["e4m3", "e5m2"])
@pytest.mark.parametrize("shape", [(4096, 4096, 4096), (128, 4096, 14336), (16, 4096, 4096), (1000, 1000, 1008)],
                         ids=lambda s: "x".join(map(str, s)))  # fmt: skip
@pytest.mark.parametrize("scaling", ["tensorwise", "rowwise"])
@pytest.mark.parametrize("fast_accum", [False, True], ids=["precise", "fast-accum"])
def test_scaled_matmul_matches_reference_and_scaled_mm(fp8, shape, scaling, fast_accum, gen):
    _, N, K = shape
    a, b, sa, sb, out = fp8_problem(shape, scaling, gen, fp8)  # (B column-major, as _scaled_mm wants)
    kernels.scaled_matmul(a, b, sa, sb, use_fast_accum=fast_accum, out=out)
    ref = reference_gemm(a, b, scale_a=sa, scale_b=sb)
    err = relative_error(out, ref)
    assert err <= TOLERANCE["fp8_e4m3"]
    # torch._scaled_mm has no e5m2 x e5m2 kernel and needs K, N divisible by 16.
    if fp8 == torch.float8_e4m3fn and K % 16 == 0 and N % 16 == 0:
        native = torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16, use_fast_accum=fast_accum)
        assert err <= 1.5 * relative_error(native, ref) + 1e-6


@pytest.mark.parametrize(
    ("shape", "config"),
    [
        ((4096, 4096, 4096), GemmConfig(128, 128, 128, 8, 4, variant="tma", late_promotion=True)),
        ((128, 4096, 14336), GemmConfig(64, 64, 128, 4, 4, late_promotion=True)),
        ((128, 4096, 14336), GemmConfig(128, 64, 128, 4, 4, variant="splitk_serial", split_k=4, late_promotion=True)),
        ((16, 4096, 4096), GemmConfig(16, 64, 128, 4, 4, variant="streamk", late_promotion=True)),
    ],
    ids=str,
)
def test_late_promotion_is_as_precise_as_the_native_precise_accumulation(shape, config, gen):
    _assert_fp8_as_precise_as_native(shape, config, gen)


def _assert_fp8_as_precise_as_native(shape, config, gen):
    """Scaled fp8 (e4m3, K-major B) with `config`: no further from float64 than 1.5x cuBLAS's
    precise-accumulation result."""
    M, N, K = shape
    a = _randn((M, K), torch.float32, gen).to(torch.float8_e4m3fn)
    b = _randn((N, K), torch.float32, gen).to(torch.float8_e4m3fn).t()
    sa, sb = torch.tensor(0.5, device="cuda"), torch.tensor(1.5, device="cuda")
    out = kernels.scaled_matmul(a, b, sa, sb, config=config)
    ref = reference_gemm(a, b, scale_a=sa, scale_b=sb)
    native = torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16, use_fast_accum=False)
    assert relative_error(out, ref) <= 1.5 * relative_error(native, ref) + 1e-6


@pytest.mark.parametrize(
    ("dtype", "shape", "config"),
    [
        ("fp16", (4096, 4096, 4096), GemmConfig(128, 256, 64, 4, 3, variant="tma_ws")),
        ("bf16", (3000, 5000, 1000), GemmConfig(128, 128, 64, 4, 4, variant="tma_ws")),
        ("fp8_e4m3", (4096, 4096, 4096), GemmConfig(128, 256, 128, 4, 3, variant="tma_ws")),
        ("fp8_e4m3", (4096, 4096, 4096), GemmConfig(256, 128, 128, 4, 3, variant="tma_ws")),
    ],
    ids=str,
)
def test_warp_specialized_configs_compute_the_product(dtype, shape, config, gen):
    # Where the Triton is listed as running Hopper's partitioned loop (configs.hopper_partitions(): none
    # yet, 3.6's hung on the H200) a producer and two consumer warpgroups; elsewhere on Hopper the
    # loop stays flattened and unpartitioned (tests/test_resources.py checks the compiled code).
    if dtype == "fp8_e4m3":
        _assert_fp8_as_precise_as_native(shape, config, gen)
        return
    M, N, K = shape
    torch_dtype = DTYPES[dtype][0]
    a, b = _randn((M, K), torch_dtype, gen), _randn((K, N), torch_dtype, gen)
    assert relative_error(kernels.matmul(a, b, config=config), reference_gemm(a, b)) <= TOLERANCE[dtype]


def test_autotune_timed_and_recorded(gen, monkeypatch):
    monkeypatch.setenv("GEMMWATCH_TUNED", "0")  # the tuned library would serve this bucket without timing
    # A column-major A: a layout (and so a cache key) no other test of this process uses.
    a, b = _randn((2048, 2048), torch.float16, gen).t().contiguous().t(), _randn((2048, 2048), torch.float16, gen)
    kernels.matmul(a, b)
    key_rows = [s for s in kernels.autotune.selections() if s.key.M == 2048 and s.key.layout == "colrow"]
    assert key_rows and key_rows[0].method == "timed"
    sel = key_rows[0]
    assert sel.kernel_hash, "the compiled kernel's hash identifies the binary in results"
    assert sel.timings_ms and str(sel.config) in sel.timings_ms
    assert sel.timings_ms[str(sel.config)] == min(sel.timings_ms.values())


def test_the_tunes_coarse_pass_times_every_variant_with_graph_replays(monkeypatch):
    # Decode cell: every variant (split-K, serial split-K, stream-K, tile) captured in a graph.
    from benchmarks.cells import Cell, Prepared
    from ci.tune import coarse_ms
    from kernels import autotune

    monkeypatch.setenv("GEMMWATCH_TUNED", "0")  # the target's order (the library's rankings would reorder it)

    prep = Prepared(Cell("fp16", 16, 4096, 4096), "cuda")
    with autotune.fresh_search(24, timer=coarse_ms):
        prep.triton()
    search = autotune.last()
    assert not search.failed, search.failed
    assert len(search.timings_ms) == 24
    names = list(search.timings_ms)
    assert any("-sks" in c for c in names) and any("-sk" in c and "-sks" not in c for c in names)
    assert any(c.endswith("-streamk") for c in names)
    # GPU time of a 16x4096x4096 GEMM (32 MiB of B read from HBM at ~4.8 TB/s): 7 us or more, far below
    # the per-launch overhead that `do_bench` adds to such kernels.
    assert 0.006 < min(search.timings_ms.values()) < 0.05


def test_the_tunes_refinement_times_the_fastest_tiles_other_k_steps_and_stages():
    from benchmarks.cells import Cell
    from ci.tune import tune_bucket
    from targets import candidate_configs, detect

    spec = detect()
    entry = tune_bucket([Cell("fp16", 128, 4096, 4096)], rounds=3, top_k=16, finalists=1, spec=spec, device="cuda",
                        refine=1)  # fmt: skip
    assert "error" not in entry, entry
    first16 = {str(c) for c in candidate_configs(spec, "fp16", 128, 4096, 4096)[:16]}
    refined = set(entry["ranked_ms"]) - first16
    assert refined, "the fastest tile's siblings were timed too"
    assert all(v > 0 for v in entry["ranked_ms"].values())


def test_each_cell_of_a_bucket_ranks_its_own_candidates_and_brings_its_finalists():
    from benchmarks.cells import Cell
    from ci.tune import finalists_of, tune_bucket
    from targets import candidate_configs, detect

    spec = detect()
    cells = [Cell("fp16", 128, 4096, 4096), Cell("fp16", 128, 3584, 3584)]
    entry = tune_bucket(cells, rounds=2, top_k=6, finalists=1, spec=spec, device="cuda", refine=0)
    assert "error" not in entry, entry
    ranked = entry["ranked_on"]["fp16 128x3584x3584"]
    offered = candidate_configs(spec, "fp16", 128, 3584, 3584)[:6]
    own = {str(c) for c in offered}
    assert set(ranked) | (set(entry["failed"]) & own) == own  # (each ranked there, or failed)
    # its finalists are timed on both cells, with the first cell's
    for cfg in finalists_of(ranked, offered, 1):
        assert all(str(cfg) in entry["cells"][cell.name]["tried"] for cell in cells), cfg


VARIANT_CELLS = [
    ("fp16", 4096, 4096, 4096),
    ("bf16", 16, 4096, 4096),
    ("fp16", 1, 4096, 14336),
    ("bf16", 128, 4096, 14336),
    ("fp16", 3000, 5000, 1000),
    ("fp8_e4m3", 4096, 4096, 4096),
    ("fp8_e4m3", 16, 4096, 4096),
    ("fp8_e4m3-fastacc", 128, 4096, 14336),
    ("fp32-tf32", 1000, 1000, 1008),
    ("fp16", 127, 4097, 1023),  # rows of odd length: each variant also on aligned copies ("pad")
    ("bf16", 1, 1001, 4095),
]


@pytest.mark.parametrize("cell", VARIANT_CELLS, ids=lambda c: f"{c[0]}-{c[1]}x{c[2]}x{c[3]}")
def test_the_best_ranked_config_of_every_variant_is_correct(cell):
    from benchmarks.cells import Cell, Prepared
    from kernels import DTYPE_NAMES
    from targets import candidate_configs, detect

    dtype, M, N, K = cell
    prep = Prepared(Cell(dtype, M, N, K), "cuda")
    ref = prep.reference()
    firsts = {}
    for cfg in candidate_configs(detect(), DTYPE_NAMES[prep.a.dtype], M, N, K):
        firsts.setdefault((cfg.variant, cfg.pad), cfg)
    if detect().tma and M > 64:
        assert ("tma", False) in firsts, "Hopper and later get the persistent TMA kernel (tiles of >= 64 rows)"
    for cfg in firsts.values():
        prep.out.fill_(float("nan"))
        try:
            out = prep.triton(config=cfg)
        except ValueError as err:  # TMA on rows that are not 16-byte multiples: its pad version runs instead
            if (cfg.uses_tma or cfg.uses_gluon) and not cfg.pad and "cannot run this problem" in str(err):
                continue
            raise
        torch.cuda.synchronize()
        assert relative_error(out, ref) <= TOLERANCE[dtype], cfg


DECODE_CELLS = [("fp16", 1, 4096, 4096), ("bf16", 3, 4608, 3584), ("fp8_e4m3", 1, 8192, 8192), ("bf16", 1, 1001, 4095)]


@pytest.mark.parametrize("path", ["fma", "swap_ab"])
@pytest.mark.parametrize("cell", DECODE_CELLS, ids=lambda c: f"{c[0]}-{c[1]}x{c[2]}x{c[3]}")
def test_the_decode_paths_configs_are_correct(cell, path):
    # Every variant's first config of the decode path (fma: the products summed on the CUDA cores;
    # swap_ab: the tile computed transposed, on Hopper's warpgroup MMA), as the tune's --match coarse
    # pass times them: each also in a replayed CUDA graph.
    from benchmarks.cells import Cell, Prepared
    from ci.tune import coarse_ms
    from kernels import DTYPE_NAMES, autotune
    from targets import candidate_configs, detect

    dtype, M, N, K = cell
    prep = Prepared(Cell(dtype, M, N, K), "cuda")
    ref = prep.reference()
    space = candidate_configs(detect(), DTYPE_NAMES[prep.a.dtype], M, N, K, limit=None)
    mine = [c for c in space if getattr(c, path)]
    if path == "swap_ab" and detect().arch != "sm_90":
        assert not mine
        pytest.skip("swap-AB decode configs are for Hopper's warpgroup MMA")
    aligned = (K * prep.a.element_size()) % 16 == 0 and (N * prep.b.element_size()) % 16 == 0
    firsts = {}
    for cfg in mine:
        if cfg.uses_tma and not (aligned or cfg.pad):
            continue  # (descriptors need rows of 16-byte multiples: the aligned copies' config runs)
        firsts.setdefault(cfg.variant, cfg)
    assert set(firsts) == {"tile", "splitk", "splitk_serial"} | ({"tma"} if path == "swap_ab" else set())
    for cfg in firsts.values():
        prep.out.fill_(float("nan"))
        out = prep.triton(config=cfg)
        torch.cuda.synchronize()
        assert relative_error(out, ref) <= TOLERANCE[dtype], cfg
    with autotune.fresh_search(len(firsts), timer=coarse_ms, configs=list(firsts.values())):
        prep.triton()
    search = autotune.last()
    assert not search.failed, search.failed
    assert set(search.timings_ms) == {str(c) for c in firsts.values()}


@pytest.mark.parametrize("cell", [("fp16", 128, 4096, 4096), ("fp8_e4m3", 1, 4096, 4096), ("bf16", 16, 4096, 4096)],
                         ids=lambda c: f"{c[0]}-{c[1]}x{c[2]}x{c[3]}")  # fmt: skip
def test_the_deep_pipelines_are_correct(cell):
    # The first config of each deep stage count (6-16) of a memory-bound shape, and of its swap-AB
    # form where there is one: the pipelines a tune's refinement or --match '-s1[26]-' times.
    from benchmarks.cells import Cell, Prepared
    from kernels import DTYPE_NAMES
    from targets import candidate_configs, detect
    from targets.configs import DEEP_STAGES

    dtype, M, N, K = cell
    prep = Prepared(Cell(dtype, M, N, K), "cuda")
    ref = prep.reference()
    firsts = {}
    for cfg in candidate_configs(detect(), DTYPE_NAMES[prep.a.dtype], M, N, K, limit=None):
        if cfg.num_stages in DEEP_STAGES:
            firsts.setdefault((cfg.num_stages, cfg.swap_ab), cfg)
    assert {s for s, _ in firsts} >= {6, 8, 12}, sorted(firsts)
    for cfg in firsts.values():
        prep.out.fill_(float("nan"))
        out = prep.triton(config=cfg)
        torch.cuda.synchronize()
        assert relative_error(out, ref) <= TOLERANCE[dtype], cfg


def test_serial_split_k_in_replayed_cuda_graphs_matches_the_second_pass(gen):
    # The tile counters live outside the graph (created by a call on the capturing stream before
    # capture, as benchmarks.timing does); each replay must find them zero and leave them zero.
    a, b = _randn((16, 4096), torch.bfloat16, gen), _randn((4096, 4096), torch.bfloat16, gen)
    two_pass = GemmConfig(16, 64, 64, 4, 3, variant="splitk", split_k=8)
    serial = GemmConfig(16, 64, 64, 4, 3, variant="splitk_serial", split_k=8)
    expected = kernels.matmul(a, b, config=two_pass)
    out = torch.empty_like(expected)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        kernels.matmul(a, b, out=out, config=serial)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=stream):
            kernels.matmul(a, b, out=out, config=serial)
    for _ in range(3):
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(out, expected)


@pytest.mark.parametrize("shape", [(1024, 1024, 1024), (128, 4096, 4096), (1000, 1000, 1000)])
def test_stream_k_on_the_gpu_matches_the_tile_kernel(shape, gen):
    # Every SM's program synchronises the tiles it shares through counters in memory: the sum must
    # be right, the same bits every call, and the counters zero again after each launch.
    from kernels.matmul import _COUNTERS

    M, N, K = shape
    a, b = _randn((M, K), torch.float16, gen), _randn((K, N), torch.float16, gen)
    config = GemmConfig(128 if M > 128 else 64, 128 if M > 128 else 64, 64, 8 if M > 128 else 4, 3, variant="streamk")
    first = kernels.matmul(a, b, config=config)
    for _ in range(3):
        assert torch.equal(kernels.matmul(a, b, config=config), first)
    assert relative_error(first, reference_gemm(a, b)) <= TOLERANCE["fp16"]
    torch.cuda.synchronize()
    assert all(not buffer.any() for buffer in _COUNTERS.values())


@pytest.mark.parametrize("cell", ["bf16 128x3584x18944", "fp8_e4m3 128x8192x8192"])
def test_placements_are_issued_from_threads_with_their_own_cublas_workspaces(cell):
    """Each placement's calls come from a host thread of its own (benchmarks.timing._Issuer), so
    cuBLAS gets a workspace per placement, and every copy's output is written in the replays."""
    from benchmarks.cells import Cell, Prepared
    from benchmarks.timing import Placements, measure

    dtype, shape = cell.split()
    prep = Prepared(Cell(dtype, *map(int, shape.split("x"))), "cuda")
    copies = prep.operand_copies(4)

    def grown(*sides, **kwargs):
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        timing = measure(
            *sides, rounds=2, warmup=0, stream=torch.cuda.Stream(), **kwargs
        )  # a new stream: new workspaces
        torch.cuda.synchronize()
        return torch.cuda.memory_allocated() - before, timing

    one, _ = grown(lambda: prep.native(copies[0]))
    ref = prep.reference()
    placed = Placements(lambda ops=ops: prep.native(ops) for ops in copies)
    for workspaces in (None, 8):  # one issuer per copy; then twice as many, each copy from two
        for ops in copies:
            ops[3].zero_()
        grew, timing = grown(placed, workspaces=workspaces)
        issuers = workspaces or len(copies)
        assert one > 0 and grew >= issuers * one, (workspaces, one, grew)  # (the caller's, and one per issuer)
        assert timing.inner % issuers == 0 and timing.method.endswith("-workspaces") == (workspaces is not None)
        for ops in copies:
            assert relative_error(ops[3], ref) < TOLERANCE[dtype]


def test_early_workspaces_are_allocated_when_the_process_starts(monkeypatch):
    """GEMMWATCH_EARLY_WORKSPACES=1: `prepare_process` creates the issuers and their cuBLAS workspaces
    on the placements' stream, so a placed cell measured after it allocates none of its own."""
    from benchmarks.cells import Cell, Prepared
    from benchmarks.measure import prepare_process
    from benchmarks.timing import Placements, _Issuer, _placements_stream, measure

    monkeypatch.setenv("GEMMWATCH_EARLY_WORKSPACES", "1")
    monkeypatch.setenv("GEMMWATCH_WORKSPACES", "16")
    new = 16 - len(_Issuer._all)  # (earlier tests' issuers have theirs on this stream already)
    assert new > 0
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    prepare_process("cuda")
    torch.cuda.synchronize()
    grew = torch.cuda.memory_allocated() - before
    assert len(_Issuer._all) == 16 and grew >= new * (1 << 20), (new, grew)  # a workspace each (MiBs in torch)
    prep = Prepared(Cell("fp16", 16, 4096, 4096), "cuda")  # (a library bucket: no autotune)
    copies = prep.operand_copies(4)
    placed = [Placements(lambda ops=ops, call=call: call(operands=ops) for ops in copies)
              for call in (prep.triton, prep.native)]  # fmt: skip
    measure(*placed, rounds=1, warmup=1, stream=_placements_stream(), workspaces=16)  # compiles, first calls
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    measure(*placed, rounds=2, warmup=0, stream=_placements_stream(), workspaces=16)
    torch.cuda.synchronize()
    assert torch.cuda.memory_allocated() - before < 1 << 20, "no workspace allocated by the cell"


def test_flush_buffers_are_created_when_the_process_starts_and_taken_in_turn(monkeypatch):
    """GEMMWATCH_FLUSH_BUFFERS=N: `prepare_process` creates N L2 flush buffers, a placed replay's
    calls flush them in turn (the calls per replay a multiple of N), a single call flushes the
    first, and no measurement allocates a flush buffer of its own."""
    from benchmarks.cells import Cell, Prepared
    from benchmarks.measure import prepare_process
    from benchmarks.timing import Placements, _flush_pool, drop_flush_buffers, flush_bytes, measure

    monkeypatch.setenv("GEMMWATCH_FLUSH_BUFFERS", "4")
    drop_flush_buffers()
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    prepare_process("cuda")
    torch.cuda.synchronize()
    assert torch.cuda.memory_allocated() - before >= 4 * flush_bytes()
    (pool,) = _flush_pool.values()
    assert len(pool) == 4 and len({b.data_ptr() for b in pool}) == 4
    prep = Prepared(Cell("fp16", 16, 4096, 4096), "cuda")
    copies = prep.operand_copies(2)  # two copies, four buffers: a cycle of four calls
    placed = [Placements(lambda ops=ops, call=call: call(operands=ops) for ops in copies)
              for call in (prep.triton, prep.native)]  # fmt: skip
    measure(*placed, rounds=1, warmup=1, flush_buffers=4)  # compiles, first calls
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    timing = measure(*placed, rounds=3, warmup=0, flush_buffers=4)
    single = measure(prep.triton, rounds=3, warmup=0, flush_buffers=4)
    torch.cuda.synchronize()
    assert torch.cuda.memory_allocated() - before < flush_bytes(), "no flush buffer allocated by the cells"
    assert timing.inner % 4 == 0 and timing.method.endswith("+4-flush-buffers"), timing
    assert "flush-buffers" not in single.method and single.flush_seconds > 0
    split = measure(*placed, rounds=3, warmup=0, flush_buffers=4, captures=3)  # 3 graphs per side
    assert split.inner % 12 == 0 and split.method.endswith("+4-flush-buffers+3-captures"), split
    assert abs(split.median(0) / timing.median(0) - 1) < 0.2, (split, timing)
    begun = time.perf_counter()
    settled = measure(*placed, rounds=3, warmup=0, flush_buffers=4, settle=0.3)
    assert time.perf_counter() - begun >= 0.3 and settled.method.endswith("+settle0.3s"), settled
    assert all(0 < x < 1e-3 for series in timing.samples for x in series)
    drop_flush_buffers()


@pytest.mark.parametrize("cell", ["bf16 128x3584x18944", "fp8_e4m3 128x4608x3584"])
def test_the_operand_arena_places_a_cell_alike_whatever_came_before(monkeypatch, cell):
    """GEMMWATCH_ARENA=1: `prepare_process` allocates the arena once, a placed cell's copies lie in
    it at the same places for a second preparation after other allocations, and both sides'
    outputs there are right after the suites' timing."""
    import benchmarks.measure
    from benchmarks.cells import Cell, Prepared
    from benchmarks.measure import PLACEMENTS, prepare_process, timed_sides, timing_plan
    from benchmarks.timing import Placements, measure
    from targets import detect

    monkeypatch.setenv("GEMMWATCH_ARENA", "1")
    monkeypatch.setattr(benchmarks.measure, "_arena", None)  # (freed when the test ends)
    prepare_process("cuda")
    arena = benchmarks.measure._arena
    assert arena is not None and arena.numel() >= 16 << 30
    prepare_process("cuda")
    assert benchmarks.measure._arena is arena, "one per process"
    spec, dtype, shape = detect(), *cell.split()

    def placed():
        prep = Prepared(Cell(dtype, *map(int, shape.split("x"))), "cuda")
        calls = [lambda ops: prep.triton(operands=ops), lambda ops: prep.native(operands=ops)]
        return prep, timed_sides(prep, "cuda", spec, calls)

    prep, sides = placed()
    assert all(isinstance(side, Placements) and len(side) == PLACEMENTS for side in sides)
    copies = [fn.args[0] for fn in sides[0]]
    timing = measure(*sides, rounds=3, **timing_plan(prep, spec))
    ref = prep.reference()
    for ops in copies:
        assert arena.data_ptr() <= ops[0].data_ptr() < arena.data_ptr() + arena.numel()
        assert relative_error(ops[2], ref) < TOLERANCE[dtype] and relative_error(ops[3], ref) < TOLERANCE[dtype]
    assert all(0 < x < 1e-3 for series in timing.samples for x in series)
    held = torch.empty(77 << 20, dtype=torch.uint8, device="cuda")  # another history
    _, again = placed()
    assert [[t.data_ptr() for t in fn.args[0]] for fn in again[0]] == [[t.data_ptr() for t in ops] for ops in copies]
    del held
