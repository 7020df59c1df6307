import dataclasses
import math
import warnings
from types import SimpleNamespace

import pytest
import triton

from targets import (
    CATALOGUE,
    MAX_CONFIGS,
    GemmConfig,
    PeakRates,
    TargetSpec,
    UnknownTargetWarning,
    candidate_configs,
    configs,
    detect,
    get,
    spec_from_properties,
)
from targets.configs import (
    DEEP_STAGES,
    FMA_MAX_M,
    FMA_MAX_PRODUCTS_PER_THREAD,
    GEMV_TILES,
    GLUON_STAGES,
    GLUON_TILES,
    STAGES,
    SWAP_MAX_M,
    SWAP_MIN_BLOCK_N,
    TILE_KERNEL_VARIANTS,
    _tile_group,
    dtype_bytes,
    hopper_partitions,
    math_warps,
    memory_bound,
)

REQUIRED = {"h100-sxm", "h200", "a100-80gb", "l40s", "mi300x", "b200", "cpu-interpreter"}
SHAPES = [
    (1, 4096, 4096),
    (16, 4096, 4096),
    (128, 4096, 14336),
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (1, 7, 33),
    (1000, 129, 33),
    (3000, 5000, 1000),
    (64, 7168, 2048),
]
DTYPES = ["fp16", "bf16", "fp32", "fp8"]


def test_catalogue_has_required_chips():
    assert REQUIRED <= set(CATALOGUE)


def test_get_unknown_target_names_known_ones():
    with pytest.raises(KeyError, match="h200"):
        get("not-a-chip")


@pytest.mark.parametrize("name", sorted(CATALOGUE))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_candidate_configs_respect_the_spec(name, dtype, shape):
    spec = CATALOGUE[name]
    M, N, K = shape
    configs = candidate_configs(spec, dtype, M, N, K)
    assert 1 <= len(configs) <= MAX_CONFIGS
    assert len(set(configs)) == len(configs), "duplicates in the space"
    nbytes = dtype_bytes(dtype)
    tile_m, tile_n, tile_k = spec.mma_tile
    for cfg in configs:
        if cfg.swap_ab:  # (decode tiles computed transposed for Hopper's warpgroup MMA)
            assert spec.arch == "sm_90" and M <= SWAP_MAX_M and nbytes <= 2 and cfg.block_n >= SWAP_MIN_BLOCK_N, cfg
        if cfg.fma:  # (the CUDA cores' decode tiles: no matrix instruction, no shared-memory pipeline)
            assert M <= FMA_MAX_M and nbytes <= 2 and cfg.block_m == 1 << (M - 1).bit_length(), cfg
            assert cfg.variant in TILE_KERNEL_VARIANTS and not cfg.late_promotion
            gemv = (cfg.block_n, cfg.block_k * nbytes, cfg.num_warps) in GEMV_TILES and cfg.num_stages == 1
            assert (M == 1 and gemv) or (
                cfg.block_m * cfg.block_k * cfg.block_n <= FMA_MAX_PRODUCTS_PER_THREAD * cfg.num_warps * spec.warp_size
            ), cfg
            continue
        if cfg.uses_gluon:  # (the Gluon kernel: its ring, its tiles, the output tile beside the ring)
            assert spec.arch == "sm_90" and nbytes <= 2 and M > 64, cfg
            assert (cfg.block_m, cfg.block_n, cfg.num_warps) in GLUON_TILES and cfg.num_stages in GLUON_STAGES
            # 16-bit C, whole; fp8's precise accumulation stores its widest tiles by halves
            c_tile = cfg.block_m * cfg.block_n * (1 if nbytes == 1 else 2)
            assert cfg.smem_bytes(nbytes) + c_tile <= spec.smem_per_block_bytes, cfg
            assert cfg.num_stages <= math.ceil(K / cfg.block_k)
            continue
        assert cfg.smem_bytes(nbytes) <= spec.smem_per_block_bytes, f"{cfg} over {name}'s shared memory"
        assert cfg.block_m % tile_m == 0 and cfg.block_n % tile_n == 0
        assert (cfg.block_k * nbytes) % (tile_k * 2) == 0, f"{cfg}: BLOCK_K not a multiple of the MMA K depth"
        k_iters = math.ceil(K / cfg.block_k)
        assert cfg.num_stages <= max(1, k_iters), f"{cfg}: more stages than K iterations ({k_iters})"
        assert cfg.num_stages in (1, *STAGES, *(DEEP_STAGES if memory_bound(spec, dtype, M, N, K) else ()))
        assert cfg.num_stages >= 2 or k_iters < 2
        assert cfg.num_warps in (4, 8)
        threads = math_warps(spec, cfg) * spec.warp_size  # (a Hopper tma_ws config: its two consumer warpgroups)
        assert cfg.block_m * cfg.block_n / threads <= (spec.max_registers_per_thread + 1) // 2


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_decode_shapes_get_small_m_blocks(name):
    for M in (1, 8, 16):
        configs = candidate_configs(CATALOGUE[name], "fp16", M, 4096, 4096)
        assert all(c.block_m <= 32 for c in configs), "decode shapes must not waste 64+ row tiles"
    big = candidate_configs(CATALOGUE[name], "fp16", 4096, 4096, 4096)
    assert min(c.block_m for c in big) >= 64
    # Decode is bound by the bytes in flight: 16-bit decode also gets K steps of 256.
    assert 256 in {c.block_k for c in candidate_configs(CATALOGUE[name], "bf16", 16, 4096, 4096)}
    assert max(c.block_k for c in big) <= 128


def test_mi300x_lds_gives_a_different_space_from_h100():
    h100 = set(candidate_configs(get("h100-sxm"), "fp16", 4096, 4096, 4096))
    mi300 = set(candidate_configs(get("mi300x"), "fp16", 4096, 4096, 4096))
    assert h100 != mi300
    # A 64 KB LDS cannot hold what a 227 KB shared memory can.
    assert max(c.smem_bytes(2) for c in mi300) <= 64 * 1024 < max(c.smem_bytes(2) for c in h100)
    # Wavefront 64 and bigger register files change the warp/tile trade-off too.
    assert any(c.block_m * c.block_n == 256 * 256 for c in mi300)


def test_stages_never_exceed_k_iterations():
    configs = candidate_configs(get("h200"), "fp16", 4096, 4096, 64)
    assert all(c.num_stages <= math.ceil(64 / c.block_k) or c.num_stages == 1 for c in configs)
    assert all(c.num_stages == 1 for c in configs if c.block_k >= 64)


def test_bad_problem_sizes_are_rejected():
    with pytest.raises(ValueError, match="M must be an int >= 1"):
        candidate_configs(get("h200"), "fp16", 0, 16, 16)
    with pytest.raises(ValueError, match="unknown dtype name 'int4'"):
        candidate_configs(get("h200"), "int4", 16, 16, 16)


def test_gemm_config_validates_itself():
    with pytest.raises(ValueError, match="block_m must be a power of two"):
        GemmConfig(48, 64, 32, 4, 2)
    with pytest.raises(ValueError, match="num_warps"):
        GemmConfig(64, 64, 32, 3, 2)
    assert str(GemmConfig(128, 256, 64, 8, 3)) == "BM128-BN256-BK64-w8-s3-g8"
    assert str(GemmConfig(128, 256, 64, 8, 3, variant="tma")) == "BM128-BN256-BK64-w8-s3-g8-tma"
    assert str(GemmConfig(16, 64, 128, 4, 3, variant="splitk", split_k=8)) == "BM16-BN64-BK128-w4-s3-g8-sk8"
    assert str(GemmConfig(16, 64, 128, 4, 3, variant="splitk_serial", split_k=8)) == "BM16-BN64-BK128-w4-s3-g8-sks8"
    with pytest.raises(ValueError, match="split_k must be an int in 2..64 for variant splitk_serial, got 1"):
        GemmConfig(64, 64, 32, 4, 2, variant="splitk_serial")
    with pytest.raises(
        ValueError, match="variant must be one of tile, tma, .*, streamk, gluon_ws, gluon_wg, got 'streamk2'"
    ):
        GemmConfig(64, 64, 32, 4, 2, variant="streamk2")
    with pytest.raises(ValueError, match="split_k must be an int in 2..64 for variant splitk, got 1"):
        GemmConfig(64, 64, 32, 4, 2, variant="splitk")
    with pytest.raises(ValueError, match="split_k must be 1 for variant 'tma', got 4"):
        GemmConfig(64, 64, 32, 4, 2, variant="tma", split_k=4)


def test_serial_split_k_stream_k_and_tma_store_where_they_can_pay_off():
    h200 = get("h200")
    assert "splitk_serial" in {c.variant for c in candidate_configs(h200, "fp16", 16, 4096, 4096)}
    # 1024^3 in 128x128 tiles: 64 tiles for 132 SMs, a partial wave: stream-K evens it out.
    assert "streamk" in {c.variant for c in candidate_configs(h200, "fp16", 1024, 1024, 1024)}
    assert "streamk" not in {c.variant for c in candidate_configs(h200, "fp16", 8192, 8192, 8192)}  # 16 full waves
    assert str(GemmConfig(128, 128, 64, 8, 3, variant="streamk")) == "BM128-BN128-BK64-w8-s3-g8-streamk"
    # tma_store: beside tma, where the output tile also fits in shared memory with the pipeline.
    stores = [c for c in candidate_configs(h200, "fp16", 4096, 4096, 4096) if c.variant == "tma_store"]
    assert stores and all(c.uses_tma for c in stores)
    assert all(c.smem_bytes(2) + c.block_m * c.block_n * 2 <= h200.smem_per_block_bytes for c in stores)
    assert str(stores[0]).endswith("-tma-store")


def test_late_promotion_configs_only_for_fp8_with_registers_to_spare():
    h200 = get("h200")
    for shape in ((4096, 4096, 4096), (128, 4096, 4096), (16, 4096, 4096)):
        configs = candidate_configs(h200, "fp8_e4m3", *shape)
        late = [c for c in configs if c.late_promotion]
        assert late and len(late) < len(configs), shape
        for c in late:
            assert c.block_k <= 128 and c.block_m * c.block_n <= 64 * math_warps(h200, c) * 32, c
            assert c.variant != "tma_ws", c  # (Triton 3.6 cannot compile it inside Hopper's partitions)
        assert not [c for c in candidate_configs(h200, "fp16", *shape) if c.late_promotion]
    cfg = GemmConfig(128, 128, 128, 8, 4, variant="tma", late_promotion=True)
    assert str(cfg) == "BM128-BN128-BK128-w8-s4-g8-tma-lp" and cfg.as_dict()["late_promotion"] is True
    assert "late_promotion" not in GemmConfig(64, 64, 64, 4, 3).as_dict()
    assert GemmConfig(**cfg.as_dict()) == cfg
    with pytest.raises(ValueError, match="late_promotion must be a bool, got 1"):
        GemmConfig(64, 64, 64, 4, 3, late_promotion=1)
    with pytest.raises(ValueError, match="late_promotion needs block_k <= 128"):
        GemmConfig(64, 64, 256, 4, 3, late_promotion=True)


def test_fma_decode_configs_for_a_few_rows_of_16_and_8_bit_operands():
    h200 = get("h200")
    for dtype, M in (("fp8_e4m3", 1), ("fp16", 3), ("bf16", 4)):
        configs = candidate_configs(h200, dtype, M, 4096, 4096)
        fma = [c for c in configs if c.fma]
        assert fma, (dtype, M)  # within the MAX_CONFIGS first (one per tile group comes early)
        assert not configs[0].fma, "the matrix configs rank first (the interpreter's and a short search's pick)"
        assert {c.variant for c in fma} == {"tile", "splitk", "splitk_serial"}
        assert {c.block_m for c in fma} == {1 << (M - 1).bit_length()}
    for dtype, M in (("fp16", 16), ("fp16", 5), ("fp32", 1), ("tf32", 1)):
        assert not [c for c in candidate_configs(h200, dtype, M, 4096, 4096, limit=None) if c.fma], (dtype, M)
    # One row also gets the GEMV tiles (bytes of K per step, whatever the element size), one stage;
    # more rows, none of them beyond the products' bound.
    for dtype, nbytes in (("fp8_e4m3", 1), ("fp16", 2)):
        space = candidate_configs(h200, dtype, 1, 4096, 4096, limit=None)
        tiles = {(c.block_n, c.block_k * nbytes, c.num_warps, c.num_stages) for c in space if c.fma}
        assert {(*tile, 1) for tile in GEMV_TILES} <= tiles, dtype
    assert not [
        c
        for c in candidate_configs(h200, "fp16", 3, 4096, 4096, limit=None)
        if c.fma and c.block_m * c.block_k * c.block_n > FMA_MAX_PRODUCTS_PER_THREAD * c.num_warps * 32
    ]
    cfg = GemmConfig(1, 64, 128, 4, 2, variant="splitk_serial", split_k=8, fma=True)
    assert str(cfg) == "BM1-BN64-BK128-w4-s2-g8-sks8-fma" and GemmConfig(**cfg.as_dict()) == cfg
    assert "fma" not in GemmConfig(64, 64, 64, 4, 3).as_dict()  # (library entries without the field read back)


def test_swap_ab_decode_configs_on_hopper_for_16_and_8_bit_operands():
    h200 = get("h200")
    for dtype, M in (("fp8_e4m3", 1), ("fp16", 16), ("bf16", 32), ("fp8_e4m3", 128)):
        space = candidate_configs(h200, dtype, M, 4096, 4096, limit=None)
        swap = [c for c in space if c.swap_ab]
        assert swap and not space[0].swap_ab, (dtype, M)  # (the plain matrix configs rank first)
        assert {c.variant for c in swap} == {"tile", "splitk", "splitk_serial", "tma"}
        assert all(c.block_m <= SWAP_MAX_M and c.block_n >= SWAP_MIN_BLOCK_N and not c.fma for c in swap)
        # each one is a plain decode config, transposed (the TMA kernel's: of the one-tile kernel's)
        plain = set(space)
        assert all(dataclasses.replace(c, swap_ab=False) in plain for c in swap if c.variant != "tma")
        assert all(dataclasses.replace(c, variant="tile") in set(swap) for c in swap if c.variant == "tma")
        # (the TMA kernel's deep rings too: cuBLAS streams B through 12-16 slots there)
        assert max(c.num_stages for c in swap if c.variant == "tma") == 16
    assert any(c.late_promotion for c in candidate_configs(h200, "fp8_e4m3", 1, 4096, 4096, limit=None) if c.swap_ab)
    for target, dtype, M in (
        ("h200", "fp16", SWAP_MAX_M + 1),
        ("h200", "tf32", 1),
        ("a100-80gb", "fp16", 1),
        ("mi300x", "bf16", 1),
    ):
        assert not [c for c in candidate_configs(get(target), dtype, M, 4096, 4096, limit=None) if c.swap_ab], (
            target, dtype, M)  # fmt: skip
    cfg = GemmConfig(16, 128, 128, 4, 4, variant="splitk_serial", split_k=4, late_promotion=True, swap_ab=True)
    assert str(cfg) == "BM16-BN128-BK128-w4-s4-g8-sks4-lp-swap" and GemmConfig(**cfg.as_dict()) == cfg
    assert "swap_ab" not in GemmConfig(64, 64, 64, 4, 3).as_dict()  # (library entries without the field read back)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((4, 64, 64, 4, 2), {}, "block_m must be a power of two >= 16, got 4"),
        ((3, 64, 64, 4, 2), {"fma": True}, "block_m must be a power of two >= 1, got 3"),
        ((64, 64, 64, 4, 2), {"variant": "tma", "fma": True}, "fma is for the variants tile, splitk, splitk_serial .*, got 'tma'"),
        ((1, 64, 64, 4, 2), {"late_promotion": True, "fma": True}, "got 'tile' with late_promotion"),
        ((1, 64, 64, 4, 2), {"fma": "yes"}, "fma must be a bool, got 'yes'"),
        ((16, 32, 64, 4, 2), {"swap_ab": True}, "swap_ab is for the variants tile, splitk, splitk_serial, .*BM16-BN32"),
        ((16, 64, 64, 4, 2), {"variant": "streamk", "swap_ab": True}, "swap_ab is for the variants .*-streamk"),
        ((16, 64, 64, 4, 2), {"variant": "tma_store", "swap_ab": True}, "swap_ab is for the variants tile, splitk, splitk_serial, tma, .*-tma-store"),
        ((1, 64, 64, 4, 2), {"fma": True, "swap_ab": True}, "swap_ab is for the variants .*-fma"),
        ((16, 64, 64, 4, 2), {"swap_ab": 1}, "swap_ab must be a bool, got 1"),
    ],
)  # fmt: skip
def test_decode_configs_that_cannot_be_are_refused(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        GemmConfig(*args, **kwargs)


def test_pad_configs_only_where_rows_are_not_line_multiples():
    h200 = get("h200")
    for dtype, shape in (("fp16", (1024, 1024, 1024)), ("fp8_e4m3", (4096, 4096, 4096)), ("fp32", (64, 96, 32))):
        assert not [c for c in candidate_configs(h200, dtype, *shape, limit=None) if c.pad], (dtype, shape)
    for dtype, shape in (("fp16", (127, 4097, 1023)), ("bf16", (1, 1001, 4095)), ("fp32", (64, 64, 1001))):
        configs = candidate_configs(h200, dtype, *shape)
        padded = [c for c in configs if c.pad]
        assert padded and len(padded) < len(configs), (dtype, shape)  # both kinds, for the timing to decide
        assert {c.variant for c in padded} >= {"tile", "splitk"}
    # rows 2000 bytes apart: 16-byte multiples, not 128-byte ones (each tile's row crosses one more line)
    for dtype, shape in (("fp16", (1000, 1000, 1000)), ("bf16", (3000, 5000, 1000))):
        configs = candidate_configs(h200, dtype, *shape, limit=None)
        padded = [c for c in configs if c.pad]
        plain = [c for c in configs if not (c.pad or c.pad_a or c.pad_b or c.phase_a)]
        assert len(padded) == len(plain) and "tma" in {c.variant for c in padded}, (dtype, shape)
    assert "tma" in {c.variant for c in candidate_configs(h200, "fp16", 127, 4097, 1023) if c.pad}
    cfg = GemmConfig(64, 64, 64, 4, 3, variant="tma", pad=True)
    assert str(cfg) == "BM64-BN64-BK64-w4-s3-g8-tma-pad" and cfg.as_dict()["pad"] is True
    assert "pad" not in GemmConfig(64, 64, 64, 4, 3).as_dict()  # entries without the field read back the same
    assert GemmConfig(**cfg.as_dict()) == cfg
    with pytest.raises(ValueError, match="pad must be a bool, got 1"):
        GemmConfig(64, 64, 64, 4, 3, pad=1)


def test_one_operand_pad_configs_where_both_rows_are_off_the_lines_and_usable_as_they_are():
    from targets.configs import config_from_name

    h200 = get("h200")
    # rows 2000 (A) and 2000 / 10000 (B) bytes apart: 16-byte multiples, neither a 128-byte one
    for dtype, shape in (("fp16", (1000, 1000, 1000)), ("bf16", (3000, 5000, 1000)), ("fp32", (1000, 1000, 1000))):
        configs = candidate_configs(h200, dtype, *shape, limit=None)
        plain = {c for c in configs if not (c.pad or c.pad_a or c.pad_b or c.phase_a)}
        for flag in ("pad_a", "pad_b"):
            one = [c for c in configs if getattr(c, flag) and not c.phase_a]
            # each the twin of a config on the operands as they are (kmajor_b's own copy aside)
            assert {dataclasses.replace(c, **{flag: False}) for c in one} == {c for c in plain if not c.kmajor_b}
            assert "tma" in {c.variant for c in one}, (dtype, shape, flag)
    for dtype, shape in (
        ("fp16", (1024, 1024, 1024)),  # every row on the lines
        ("fp16", (127, 4097, 1023)),  # rows not 16-byte multiples: only the copy of both
        ("fp16", (1000, 1024, 1000)),  # B's rows on the lines: `pad` copies A alone already
        ("fp8_e4m3", (1000, 1000, 1000)),  # 1000-byte rows: not 16-byte multiples
    ):
        assert not [c for c in candidate_configs(h200, dtype, *shape, limit=None) if c.pad_a or c.pad_b], shape
    cfg = GemmConfig(128, 128, 64, 8, 4, variant="gluon_wg", extra_n=64, pad_b=True)
    assert str(cfg) == "BM128-BN128-BK64-w8-s4-g8-gluon-wg-xn64-padb" and config_from_name(str(cfg)) == cfg
    assert config_from_name("BM64-BN128-BK128-w4-s4-g8-tma-pada") == GemmConfig(
        64, 128, 128, 4, 4, variant="tma", pad_a=True
    )
    assert config_from_name("BM64-BN128-BK128-w4-s4-g8-tma-pad").pad  # (not read as pad_a or pad_b)
    assert cfg.as_dict()["pad_b"] is True and GemmConfig(**cfg.as_dict()) == cfg
    assert not {"pad_a", "pad_b"} & set(GemmConfig(64, 64, 64, 4, 3).as_dict())  # older entries read back the same
    assert _tile_group(cfg) != _tile_group(dataclasses.replace(cfg, pad_b=False, pad_a=True))
    with pytest.raises(ValueError, match="pad_a must be a bool"):
        GemmConfig(64, 64, 64, 4, 3, pad_a=1)
    for flags in ({"pad": True, "pad_a": True}, {"pad_a": True, "pad_b": True}):
        with pytest.raises(ValueError, match="exclude each other"):
            GemmConfig(64, 64, 64, 4, 3, **flags)
    with pytest.raises(ValueError, match="kmajor_b excludes pad_a and pad_b"):
        GemmConfig(64, 64, 64, 4, 3, variant="tma", kmajor_b=True, pad_b=True)


def test_phase_configs_where_a_rows_are_usable_but_off_the_lines():
    from targets.configs import PHASE_VARIANTS, config_from_name

    h200 = get("h200")
    for dtype, shape, with_pad_b in (
        ("fp16", (1000, 1000, 1000), True),  # A and B rows 2000 bytes apart
        ("bf16", (3000, 5000, 1000), True),  # B's 10000
        ("fp16", (1000, 1024, 1000), False),  # B's rows on the lines
        ("fp8_e4m3", (128, 4096, 1040), False),  # A's rows 1040 bytes apart, B's 4096
        ("fp16", (1000, 1000, 1056), True),  # A's rows 2112 bytes apart: 2 offsets
    ):
        configs = candidate_configs(h200, dtype, *shape, limit=None)
        phase = [c for c in configs if c.phase_a]
        plain = {c for c in configs if c.variant in PHASE_VARIANTS and not (c.pad or c.pad_a or c.pad_b)}
        plain = {c for c in plain if not (c.swap_ab or c.kmajor_b or c.phase_a)}
        assert {dataclasses.replace(c, phase_a=False) for c in phase if not c.pad_b} == plain, (dtype, shape)
        assert any(c.pad_b for c in phase) == with_pad_b, (dtype, shape)
        assert {c.variant for c in phase} <= set(PHASE_VARIANTS)
        assert not any(c.half_lines for c in phase)  # (measured slower on an H100: the probes' alone)
    for dtype, shape in (
        ("fp16", (1024, 1000, 1024)),  # A's rows on the lines (B's are not)
        ("fp16", (127, 4097, 1023)),  # A's rows not 16-byte multiples
        ("fp16", (1001, 1000, 1000)),  # rows of 8 offsets in a line (4 in a half), 1001 a multiple of neither
    ):
        assert not [c for c in candidate_configs(h200, dtype, *shape, limit=None) if c.phase_a], shape
    assert not [c for c in candidate_configs(get("a100-80gb"), "fp16", 1000, 1000, 1000, limit=None) if c.phase_a]
    cfg = GemmConfig(128, 256, 64, 8, 4, variant="tma", pad_b=True, phase_a=True)
    assert str(cfg) == "BM128-BN256-BK64-w8-s4-g8-tma-padb-phase" and config_from_name(str(cfg)) == cfg
    assert cfg.as_dict()["phase_a"] is True and GemmConfig(**cfg.as_dict()) == cfg
    assert "phase_a" not in GemmConfig(64, 64, 64, 4, 3).as_dict()  # older entries read back the same

    half = dataclasses.replace(cfg, half_lines=True)
    assert str(half) == "BM128-BN256-BK64-w8-s4-g8-tma-padb-phase-hl" and config_from_name(str(half)) == half
    assert half.phase_unit == 64 and cfg.phase_unit == 128
    assert GemmConfig(**half.as_dict()) == half and "half_lines" not in cfg.as_dict()
    assert _tile_group(cfg) != _tile_group(dataclasses.replace(cfg, phase_a=False))
    assert _tile_group(cfg) != _tile_group(half)
    with pytest.raises(ValueError, match="half_lines is for phase_a configs"):
        GemmConfig(64, 64, 64, 4, 3, variant="tma", half_lines=True)
    with pytest.raises(ValueError, match="half_lines must be a bool"):
        GemmConfig(64, 64, 64, 4, 3, variant="tma", phase_a=True, half_lines=1)
    with pytest.raises(ValueError, match="phase_a must be a bool"):
        GemmConfig(64, 64, 64, 4, 3, variant="tma", phase_a=1)
    for bad in (
        {"variant": "tile"},
        {"variant": "tma_store"},
        {"variant": "tma", "pad": True},
        {"variant": "tma", "pad_a": True},
        {"variant": "tma", "kmajor_b": True},
    ):
        with pytest.raises(ValueError, match="phase_a is for the variants tma, tma_ws"):
            GemmConfig(64, 64, 64, 4, 3, phase_a=True, **bad)


def test_phase_parts_and_their_second_accumulator():
    from targets.configs import line_phases, phase_parts, split_accumulator

    assert [phase_parts(bk, 2, unit=64) for bk in (32, 64, 128)] == [1, 2, 4]  # fp16 in 64-byte parts
    assert [phase_parts(bk, 1, unit=64) for bk in (64, 128)] == [1, 2]
    assert [phase_parts(bk, 2, unit=128) for bk in (32, 64, 128)] == [1, 1, 1]  # (whole lines: one part)
    assert split_accumulator(GemmConfig(128, 64, 64, 4, 4, variant="tma", phase_a=True))  # 2 x 64 a thread
    assert not split_accumulator(GemmConfig(128, 256, 64, 8, 4, variant="tma", phase_a=True))  # 2 x 128
    assert line_phases(2000) == 8 and line_phases(2000, 64) == 4 and line_phases(2048, 64) == 1


def test_kmajor_b_configs_for_32_bit_operands_on_hopper():
    from targets.configs import config_from_name

    h200 = get("h200")
    for shape in ((4096, 4096, 4096), (1024, 1024, 1024), (64, 64, 1001)):
        configs = candidate_configs(h200, "fp32", *shape, limit=None)
        kb = [c for c in configs if c.kmajor_b]
        assert kb and {c.variant for c in kb} <= {"tma", "tma_ws", "tma_store"}
        # each the twin of a TMA config on B as it is, for the timing to decide
        assert {dataclasses.replace(c, kmajor_b=False) for c in kb} <= set(configs)
    for dtype in ("fp16", "bf16", "fp8_e4m3"):  # 16-bit B either way; fp8's B comes K-major
        assert not [c for c in candidate_configs(h200, dtype, 4096, 4096, 4096, limit=None) if c.kmajor_b]
    assert not [c for c in candidate_configs(get("a100-80gb"), "fp32", 4096, 4096, 4096, limit=None) if c.kmajor_b]
    cfg = GemmConfig(128, 128, 32, 8, 3, variant="tma", kmajor_b=True)
    assert str(cfg) == "BM128-BN128-BK32-w8-s3-g8-tma-kb" and config_from_name(str(cfg)) == cfg
    assert config_from_name("BM64-BN64-BK32-w4-s3-g8-tma-store-pad-kb") == GemmConfig(
        64, 64, 32, 4, 3, variant="tma_store", pad=True, kmajor_b=True
    )
    assert GemmConfig(**cfg.as_dict()) == cfg and "kmajor_b" not in GemmConfig(64, 64, 64, 4, 3).as_dict()
    assert _tile_group(cfg) != _tile_group(dataclasses.replace(cfg, kmajor_b=False))
    with pytest.raises(ValueError, match="kmajor_b is for the persistent TMA kernel's variants"):
        GemmConfig(64, 64, 64, 4, 3, kmajor_b=True)
    with pytest.raises(ValueError, match="kmajor_b must be a bool, got 1"):
        GemmConfig(64, 64, 64, 4, 3, variant="tma", kmajor_b=1)


def test_tma_variant_only_on_chips_with_a_tma(monkeypatch):
    for name, spec in CATALOGUE.items():
        variants = {c.variant for c in candidate_configs(spec, "fp16", 4096, 4096, 4096)}
        assert ("tma" in variants) == spec.tma, name
        assert ("tma_ws" in variants) == (spec.auto_warp_specialize and spec.arch != "sm_90"), name
    assert get("b200").auto_warp_specialize and get("h200").auto_warp_specialize
    # On Hopper none while no Triton is listed as running the partitioned loop (3.6's kernels hung
    # on the H200; 3.9 fails to compile them) ...
    assert not hopper_partitions()
    assert not [
        c for c in candidate_configs(get("h200"), "fp16", 4096, 4096, 4096, limit=None) if c.variant == "tma_ws"
    ]
    assert math_warps(get("h200"), GemmConfig(128, 256, 64, 4, 4, variant="tma_ws")) == 4  # not partitioned
    # ... and once one is, only the configs it partitions: 4 warps (a producer and two consumer
    # warpgroups then) and >= 128 rows; on Blackwell every TMA tile.
    monkeypatch.setattr(configs, "HOPPER_WARP_SPECIALIZING_TRITON", (triton.__version__,))
    configs._candidate_configs.cache_clear()
    try:
        hopper = [
            c for c in candidate_configs(get("h200"), "fp16", 4096, 4096, 4096, limit=None) if c.variant == "tma_ws"
        ]
        assert hopper and all(c.num_warps == 4 and c.block_m >= 128 for c in hopper)
        # An 8-warp tile's accumulator fits the two consumer warpgroups of the 4-warp tma_ws config:
        # BM128-BN256 (too big for 4 warps as a plain tile) is offered, as cuBLAS's Hopper tile.
        assert GemmConfig(128, 256, 64, 4, 4, variant="tma_ws") in hopper
        assert math_warps(get("h200"), GemmConfig(128, 256, 64, 4, 4, variant="tma_ws")) == 8
        # fp32: not partitioned (ieee) or not compiled (tf32) by Triton 3.6 there, so not offered.
        fp32 = candidate_configs(get("h200"), "fp32", 4096, 4096, 4096, limit=None)
        assert fp32 and not [c for c in fp32 if c.variant == "tma_ws"]
        assert GemmConfig(128, 256, 64, 4, 4) not in candidate_configs(
            get("h200"), "fp16", 4096, 4096, 4096, limit=None
        )
    finally:
        configs._candidate_configs.cache_clear()
    blackwell = [
        c for c in candidate_configs(get("b200"), "fp16", 4096, 4096, 4096, limit=None) if c.variant == "tma_ws"
    ]
    assert any(c.num_warps == 8 or c.block_m < 128 for c in blackwell)
    assert str(GemmConfig(128, 128, 64, 4, 3, variant="tma_ws")) == "BM128-BN128-BK64-w4-s3-g8-tma-ws"
    assert get("h200").tma and get("b200").tma and not get("a100-80gb").tma and not get("mi300x").tma


def test_split_k_only_where_one_wave_leaves_sms_idle():
    h200 = get("h200")
    # 4096^3: 128x128 tiles already fill 132 SMs many times over.
    assert not [c for c in candidate_configs(h200, "fp16", 4096, 4096, 4096) if c.variant == "splitk"]
    # Decode and small-M long-K shapes: few output tiles, long K.
    for shape in ((16, 4096, 4096), (1, 4096, 14336), (128, 4096, 14336)):
        configs = candidate_configs(h200, "fp16", *shape)
        split = [c for c in configs if c.variant == "splitk"]
        assert split, shape
        serial = {(c.block_m, c.block_n, c.block_k, c.split_k) for c in configs if c.variant == "splitk_serial"}
        assert serial, "the one-launch reduction is offered beside the two-pass one"
        for c in split:
            tiles = math.ceil(shape[0] / c.block_m) * math.ceil(shape[1] / c.block_n)
            assert tiles < h200.sm_count <= tiles * c.split_k * 2  # fills the chip ...
            fill = min(x for x in (2, 4, 8, 16) if tiles * x >= h200.sm_count)
            decode = shape[0] <= 16
            assert c.split_k in ((fill, 2 * fill, 4 * fill) if decode else (fill, 2 * fill))  # ... and not far beyond
            assert c.split_k == fill or tiles * c.split_k <= 8 * h200.sm_count
            assert math.ceil(math.ceil(shape[2] / c.block_k) / c.split_k) >= max(2, c.num_stages)
    # Decode shapes get deeper splits than prefill ones (memory-bound: more loads in flight).
    deep = [c for c in candidate_configs(h200, "fp16", 1, 4096, 4096) if c.variant == "splitk"]
    assert max(c.split_k for c in deep) >= 8
    # Split-K is among the first candidates a timed search tries there.
    assert any(c.variant == "splitk" for c in candidate_configs(h200, "fp16", 16, 4096, 4096)[:4])
    # Too short a K to cut: no slices of a single step.
    assert not [c for c in candidate_configs(h200, "fp16", 16, 4096, 64) if c.variant == "splitk"]


def _spec_kwargs(**changes):
    """A valid spec's fields (the H200's), with `changes` applied."""
    base = {f.name: getattr(get("h200"), f.name) for f in dataclasses.fields(TargetSpec)}
    return {**base, **changes}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"vendor": "intel"}, "vendor must be one of"),
        ({"sm_count": 0}, "sm_count must be a positive int"),
        ({"warp_size": 48}, "warp_size must be 32 or 64"),
        ({"smem_per_block_bytes": 1.5}, "smem_per_block_bytes must be a positive int"),
        ({"max_vector_load_bits": 12}, "multiple of 8"),
        ({"mma_tile": (16, 12, 16)}, "mma_tile"),
        ({"name": ""}, "name must be a non-empty string"),
    ],
)
def test_target_spec_validates_itself(changes, message):
    with pytest.raises(ValueError, match=message):
        TargetSpec(**_spec_kwargs(**changes))
    with pytest.raises(TypeError, match="tma must be a bool, got 'yes'"):
        TargetSpec(**_spec_kwargs(tma="yes"))
    with pytest.raises(ValueError, match="auto_warp_specialize needs tma"):
        TargetSpec(**_spec_kwargs(tma=False, auto_warp_specialize=True))


def test_peak_rates_validate():
    with pytest.raises(ValueError, match="fp16"):
        PeakRates(fp32=1.0, tf32=1.0, fp16=-3.0, bf16=1.0, fp8=None)
    assert get("h200").peak_tflops.get("bf16") == pytest.approx(989.4)
    assert get("a100-80gb").peak_tflops.get("fp8") is None


def test_spec_is_frozen_and_hashable():
    spec = get("h200")
    with pytest.raises(AttributeError):
        spec.sm_count = 1
    assert hash(spec) == hash(get("h200"))


def test_detect_without_gpu_is_the_interpreter():
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    assert detect().name == "cpu-interpreter"
    assert detect().is_interpreter


def _props(**kw):
    base = dict(
        name="NVIDIA H200",
        major=9,
        minor=0,
        multi_processor_count=132,
        shared_memory_per_block_optin=227 * 1024,
        warp_size=32,
        regs_per_multiprocessor=65536,
        L2_cache_size=60 * 1024 * 1024,
    )
    base.update(kw)
    return SimpleNamespace(**base)


def test_known_device_properties_match_the_catalogue():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert spec_from_properties(_props()) is get("h200")
        assert spec_from_properties(_props(name="NVIDIA H100 80GB HBM3", L2_cache_size=50 * 1024 * 1024)).name == (
            "h100-sxm"
        )
        mi = _props(name="AMD Instinct MI300X", multi_processor_count=304, shared_memory_per_block_optin=65536,
                    warp_size=64, regs_per_multiprocessor=131072, gcnArchName="gfx942:sramecc+:xnack-")  # fmt: skip
        assert spec_from_properties(mi, is_rocm=True).name == "mi300x"


def test_partitioned_device_uses_reported_values_with_a_warning():
    with pytest.warns(UnknownTargetWarning, match="sm_count=16"):
        spec = spec_from_properties(_props(multi_processor_count=16))
    assert spec.sm_count == 16 and spec.name == "h200-custom"


def test_unknown_gpu_gets_a_spec_from_its_properties_with_a_warning():
    props = _props(name="NVIDIA RTX 9090", major=12, minor=0, multi_processor_count=170,
                   shared_memory_per_block_optin=101376, L2_cache_size=96 * 1024 * 1024)  # fmt: skip
    with pytest.warns(UnknownTargetWarning, match="not in the gemmwatch catalogue"):
        spec = spec_from_properties(props)
    assert spec.arch == "sm_120" and spec.sm_count == 170 and spec.smem_per_block_bytes == 101376
    assert spec.peak_tflops.get("fp16") is None
    assert spec.tma, "compute capability 9.0 and later have a TMA"
    assert spec.auto_warp_specialize, "Triton partitions warp-specialized loops from sm_100 on"
    assert candidate_configs(spec, "fp16", 4096, 4096, 4096), "an unknown chip still gets a config space"


def test_swap_ab_configs_are_tile_groups_of_their_own():
    """A swap-AB config is another code path than its plain twin: the round-robin ranking gives it a
    place among the first candidates (an autotune of an untuned decode shape tries it), and the
    refinement around a swap tile times swap configs only."""
    from targets.configs import siblings

    h200 = get("h200")
    first = candidate_configs(h200, "fp16", 16, 4096, 4096)
    assert len(first) == 128 and any(c.swap_ab for c in first) and not first[0].swap_ab
    space = candidate_configs(h200, "fp16", 16, 4096, 4096, limit=None)
    swap = next(c for c in space if c.swap_ab)
    more = siblings([swap], space, groups=1)
    assert more and all(c.swap_ab for c in more)
    assert all(not c.swap_ab for c in siblings([dataclasses.replace(swap, swap_ab=False)], space, groups=1))


def test_siblings_are_the_other_k_steps_stages_and_splits_of_the_fastest_tiles():
    from targets.configs import siblings

    space = candidate_configs(get("h200"), "fp16", 128, 4096, 4096, limit=None)
    assert len(space) > len(candidate_configs(get("h200"), "fp16", 128, 4096, 4096)) == 128
    timed = space[:32]
    # The short search sees one config per tile group: the other K steps and stages are not in it.
    assert not any(c.block_k == 128 for c in timed)
    fastest = [timed[5], timed[9], timed[0]]  # as a coarse pass might order them
    more = siblings(fastest, space, groups=2)
    assert more and not set(more) & set(fastest)
    groups = {(c.variant, c.pad, c.late_promotion, c.block_m, c.block_n, c.num_warps) for c in more}
    assert groups <= {(c.variant, c.pad, c.late_promotion, c.block_m, c.block_n, c.num_warps) for c in fastest[:2]}
    assert any(c.block_k == 128 for c in more) and any(c.num_stages != fastest[0].num_stages for c in more)
    assert siblings(fastest, space, groups=0) == []


def test_memory_bound_problems_also_get_deep_pipelines_ranked_after_the_usual_ones():
    from targets.configs import siblings

    h200 = get("h200")
    assert memory_bound(h200, "fp16", 128, 4096, 4096) and memory_bound(h200, "fp8_e4m3", 16, 57344, 8192)
    assert not memory_bound(h200, "fp16", 4096, 4096, 4096) and not memory_bound(h200, "bf16", 1000, 1000, 1000)
    unknown = h200.replace(mem_bandwidth_gbs=None)  # without the figures: the rows decide
    assert memory_bound(unknown, "fp16", 128, 4096, 4096) and not memory_bound(unknown, "fp16", 129, 4096, 4096)
    for dtype, shape in (("fp16", (128, 4096, 4096)), ("fp8_e4m3", (128, 8192, 8192)), ("bf16", (16, 4096, 4096))):
        space = candidate_configs(h200, dtype, *shape, limit=None)
        deep = [c for c in space if c.num_stages in DEEP_STAGES and not c.uses_gluon]
        assert deep and {c.num_stages for c in space if not c.uses_gluon} <= {*STAGES, *DEEP_STAGES}
        assert all(c.smem_bytes(dtype_bytes(dtype)) <= h200.smem_per_block_bytes for c in deep)
        assert space.index(deep[0]) == len(space) - len(deep), "after every usual stage count"
        assert not any(c.num_stages in DEEP_STAGES and not c.uses_gluon for c in candidate_configs(h200, dtype, *shape))
        # the refinement around a fast tile times its deeper pipelines too
        fast = next(c for c in space if c.num_stages == 4 and dataclasses.replace(c, num_stages=8) in deep)
        assert dataclasses.replace(fast, num_stages=8) in siblings([fast], space, groups=1)
    compute_bound = candidate_configs(h200, "fp16", 4096, 4096, 4096, limit=None)
    assert {c.num_stages for c in compute_bound if not c.uses_gluon} <= set(STAGES)
    # 12 and 16 stages where they fit: the small decode tiles (cuBLAS's keep 12-16), not a 64x128 tile.
    decode = candidate_configs(h200, "fp8_e4m3", 1, 4096, 4096, limit=None)
    assert GemmConfig(16, 64, 128, 4, 16) in decode and GemmConfig(16, 32, 256, 4, 12) in decode
    prefill = candidate_configs(h200, "fp16", 128, 4096, 4096, limit=None)
    assert GemmConfig(64, 64, 64, 4, 12) in prefill and not any(
        c.num_stages >= 12 and c.block_m * c.block_n >= 64 * 128 and c.block_k >= 64 for c in prefill
    )


def test_gluon_configs_come_on_hopper_for_16_and_8_bit_operands_of_more_than_64_rows():
    from targets.configs import gluon_available

    if not gluon_available():
        pytest.skip("this Triton has no Gluon Hopper module")
    h200 = get("h200")
    space = candidate_configs(h200, "fp16", 4096, 4096, 4096, limit=None)
    gluon = [c for c in space if c.uses_gluon]
    assert GemmConfig(128, 256, 64, 8, 3, variant="gluon_ws") in gluon  # (the tile measured on the H200)
    assert GemmConfig(128, 128, 128, 8, 5, variant="gluon_ws") in candidate_configs(
        h200, "fp8_e4m3", 4096, 4096, 4096, limit=None
    )
    assert str(GemmConfig(128, 256, 64, 8, 3, variant="gluon_ws")) == "BM128-BN256-BK64-w8-s3-g8-gluon-ws"
    assert not any(c.late_promotion for c in candidate_configs(h200, "fp8_e4m3", 4096, 4096, 4096, limit=None)
                   if c.uses_gluon)  # fmt: skip
    # 128 x 256 on 8 warps with 16-bit operands: 3 stages fit beside the output tile, 4 do not
    assert GemmConfig(128, 256, 64, 8, 4, variant="gluon_ws") not in gluon
    # fp8's (48 KiB a stage too): its precise accumulation stores the tile by halves, so 4 stages fit
    fp8 = [c for c in candidate_configs(h200, "fp8_e4m3", 4096, 4096, 4096, limit=None) if c.uses_gluon]
    assert GemmConfig(128, 256, 128, 8, 4, variant="gluon_ws") in fp8
    assert GemmConfig(128, 256, 128, 8, 5, variant="gluon_ws") not in fp8
    # the 8-warp tiles also with each MMA warpgroup a partition of its own; the 4-warp ones have one
    split = {(c.block_m, c.block_n, c.num_warps) for c in space + fp8 if c.variant == "gluon_wg"}
    assert split == {(128, 64, 8), (128, 128, 8), (128, 256, 8)}
    assert {dataclasses.replace(c, variant="gluon_ws") for c in space if c.variant == "gluon_wg"} <= set(gluon)
    assert str(GemmConfig(128, 256, 64, 8, 3, variant="gluon_wg")) == "BM128-BN256-BK64-w8-s3-g8-gluon-wg"
    from targets.configs import config_from_name

    # less than a wave of tiles (1024^3 in 128 x 128: 64): K split 2-8 ways, not past the SM count
    small = [c for c in candidate_configs(h200, "fp16", 1024, 1024, 1024, limit=None) if c.uses_gluon]
    splits = {(c.block_m, c.block_n, c.split_k) for c in small if c.split_k > 1}
    assert (128, 128, 2) in splits and (128, 256, 4) in splits and (128, 128, 4) not in splits
    assert all(c.split_k == 1 for c in gluon)  # (4096^3: no partial wave that a split would fill)
    # 3.4 waves (fp8 4096 x 3584 in 128 x 256: 448 tiles on 132 SMs): the last 52 tiles split in
    # two (104 units), fp8's tiles by halves of N too; not in four (208 units: past one wave)
    tail = [c for c in candidate_configs(h200, "fp8_e4m3", 4096, 3584, 3584, limit=None) if c.uses_gluon]
    tail_splits = {(c.block_m, c.block_n, c.variant, c.split_k) for c in tail if c.split_k > 1}
    assert {(128, 256, "gluon_ws", 2), (128, 256, "gluon_wg", 2)} <= tail_splits
    assert not {(128, 256, v, 4) for v in ("gluon_ws", "gluon_wg")} & tail_splits
    # past GLUON_SPLIT_MAX_WAVES full waves a split of the last one gains too little: none
    from targets.configs import GLUON_SPLIT_MAX_WAVES, gluon_splits

    assert gluon_splits(h200, 4096, 28672, 32, 128, 256) == []  # 27 waves and 20 tiles
    assert gluon_splits(h200, 4096, 3584, 28, 128, 256) == [2]
    assert gluon_splits(h200, 4096, 4096, 32, 128, 256) == []  # 3 waves and 116 tiles: no split fits
    assert gluon_splits(h200, 1024, 1024, 16, 128, 128) == [2]  # 64 tiles, 4 K steps per unit at least
    waves = GLUON_SPLIT_MAX_WAVES * h200.sm_count + 10
    assert gluon_splits(h200, 128, 128 * waves, 64, 128, 128) == [2, 4, 8]
    assert gluon_splits(h200, 128, 128 * (waves + h200.sm_count), 64, 128, 128) == []
    assert str(GemmConfig(128, 64, 64, 4, 8, variant="gluon_ws", split_k=2)) == "BM128-BN64-BK64-w4-s8-g8-gluon-ws-sk2"
    assert config_from_name("BM128-BN64-BK64-w8-s8-g8-gluon-wg-sk4") == GemmConfig(
        128, 64, 64, 8, 8, variant="gluon_wg", split_k=4
    )
    assert config_from_name("BM128-BN256-BK64-w8-s3-g8-gluon-wg") == GemmConfig(128, 256, 64, 8, 3, variant="gluon_wg")
    for dtype, shape, target in (("fp32", (4096,) * 3, "h200"), ("fp16", (64, 4096, 4096), "h200"),
                                 ("fp16", (4096,) * 3, "a100-80gb"), ("fp16", (4096,) * 3, "b200")):  # fmt: skip
        assert not any(c.uses_gluon for c in candidate_configs(get(target), dtype, *shape, limit=None)), (dtype, target)


def test_gluon_stream_k_where_the_last_wave_cuts_into_few_chunks_per_tile():
    from targets.configs import GLUON_STREAM_MAX_PARTS, config_from_name, gluon_stream_k

    h200 = get("h200")
    # fp8 4096 x 3584 x 3584 in 128 x 256: 52 tiles after 3 waves, 28 K steps: chunks of 11, 2-4 per tile
    assert gluon_stream_k(h200, 4096, 3584, 28, 128, 256)
    assert gluon_stream_k(h200, 128, 6144, 32, 128, 128)  # 48 tiles (< a wave) of 32 steps: chunks of 11
    # 128 x 3584 in 128 x 128: 28 tiles, chunks of 5 steps: 7 on a tile, past GLUON_STREAM_MAX_PARTS
    assert GLUON_STREAM_MAX_PARTS < 7 and not gluon_stream_k(h200, 128, 3584, 28, 128, 128)
    assert not gluon_stream_k(h200, 4096, 4224, 32, 128, 128)  # 1056 tiles: 8 whole waves, no last one
    assert not gluon_stream_k(h200, 256, 256, 8, 128, 128)  # 4 tiles of 8 steps: chunks of no step
    cands = [c for c in candidate_configs(h200, "fp8_e4m3", 4096, 3584, 3584, limit=None) if c.stream_k]
    assert {(c.block_n, c.variant) for c in cands} >= {(256, "gluon_ws"), (256, "gluon_wg")}
    assert all(c.split_k == 1 for c in cands)
    name = "BM128-BN256-BK128-w8-s4-g8-gluon-wg-stream"
    assert str(config_from_name(name)) == name and config_from_name(name).stream_k
    with pytest.raises(ValueError, match="stream_k is for the Gluon variants without split_k"):
        GemmConfig(128, 256, 64, 8, 3, variant="tma", stream_k=True)
    with pytest.raises(ValueError, match="stream_k is for the Gluon variants without split_k"):
        GemmConfig(128, 256, 64, 8, 3, variant="gluon_wg", split_k=2, stream_k=True)


def test_gluon_tail_halves_where_the_last_waves_rows_fit_one_wave_of_half_tiles():
    from targets.configs import config_from_name, tail_rows

    h200 = get("h200")
    # 4096 x 3584 in 128 x 256: 448 tiles, 3.4 waves: 28 tile rows (392 tiles) whole, then 4 rows
    # in 112 tiles of 128 x 128; 4096 x 4608: 29 rows (522 tiles), then 3 rows in 108 half tiles
    assert tail_rows(4096, 3584, 128, 256, 132) == 28 * 128
    assert tail_rows(4096, 4608, 128, 256, 132) == 29 * 128
    assert tail_rows(4096, 4224, 128, 256, 132) == 31 * 128  # (a ragged last column of tiles)
    assert tail_rows(4096, 3584, 128, 128, 132) is None  # 896 tiles: the last 104's 4 rows make 224 halves
    assert tail_rows(4096, 28672, 128, 256, 132) is None  # a tile row is 112 tiles: 224 halves
    assert tail_rows(1024, 1024, 128, 256, 132) is None  # less than a wave: nothing whole to keep
    assert tail_rows(4096, 4096, 128, 64, 132) is None  # (no half of a 64-column tile)
    cands = [c for c in candidate_configs(h200, "fp8_e4m3", 4096, 3584, 3584, limit=None) if c.tail_halves]
    assert {(c.block_n, c.variant) for c in cands} == {(256, "gluon_ws"), (256, "gluon_wg")}
    name = "BM128-BN256-BK128-w8-s3-g8-gluon-wg-th"
    assert str(config_from_name(name)) == name and config_from_name(name).tail_halves
    with pytest.raises(ValueError, match="tail_halves is for the Gluon variants"):
        GemmConfig(128, 256, 64, 8, 3, variant="gluon_wg", stream_k=True, tail_halves=True)
    with pytest.raises(ValueError, match="tail_halves is for the Gluon variants"):
        GemmConfig(128, 64, 64, 8, 3, variant="gluon_ws", tail_halves=True)


def _offered(monkeypatch, gate, versions, problem, field):
    """The H200's candidates for `problem` (dtype, M, N, K) whose `field` is set, with the Triton
    versions `gate` lists set to `versions` (None: the installed one)."""
    import targets.configs as configs

    configs._candidate_configs.cache_clear()
    monkeypatch.setattr(configs, gate, (configs._triton_version(),) if versions is None else versions)
    try:
        return [c for c in candidate_configs(get("h200"), *problem, limit=None) if getattr(c, field)]
    finally:
        configs._candidate_configs.cache_clear()


def test_gluon_clusters_are_named_checked_and_offered_only_where_they_have_run(monkeypatch):
    import targets.configs as configs
    from targets.configs import config_from_name

    for name, cfg in (
        ("BM128-BN128-BK64-w8-s4-g8-gluon-ws-cm2", GemmConfig(128, 128, 64, 8, 4, variant="gluon_ws", cluster_m=2)),
        ("BM128-BN64-BK128-w8-s8-g8-gluon-wg-cn2", GemmConfig(128, 64, 128, 8, 8, variant="gluon_wg", cluster_n=2)),
    ):
        assert str(cfg) == name and config_from_name(name) == cfg and cfg.clustered
        assert cfg.as_dict()["cluster_m" if cfg.cluster_m > 1 else "cluster_n"] == 2
    plain = GemmConfig(128, 128, 64, 8, 4, variant="gluon_ws")
    assert not plain.clustered and "cluster_m" not in plain.as_dict()  # (libraries written before read the same)
    for bad, match in (
        (dict(variant="gluon_ws", cluster_m=2, cluster_n=2), "along M or along N, not both"),
        (dict(variant="tma", cluster_m=2), "for the Gluon variants"),
        (dict(variant="gluon_ws", cluster_m=2, split_k=2), "for the Gluon variants"),
        (dict(variant="gluon_ws", cluster_n=2, stream_k=True), "for the Gluon variants"),
        (dict(variant="gluon_wg", cluster_m=2), "gluon_wg .* clusters along N only"),
        (dict(variant="gluon_ws", cluster_m=4), r"cluster_m must be one of \(1, 2\)"),
        (dict(variant="gluon_ws", cluster_n=True), r"cluster_n must be one of"),
    ):
        with pytest.raises(ValueError, match=match):
            GemmConfig(128, 128, 64, 8, 4, **bad)
    # a cluster where there are two tiles to pair: gluon_wg along N only, fp8's by-halves tiles along M only
    assert [str(c) for c in configs._clusters(GemmConfig(128, 128, 64, 8, 4, variant="gluon_wg"), 4096, 4096, 2)] == [
        "BM128-BN128-BK64-w8-s4-g8-gluon-wg-cn2"
    ]
    wide = GemmConfig(128, 256, 128, 8, 3, variant="gluon_ws")
    assert [c.cluster_m for c in configs._clusters(wide, 4096, 3584, 1)] == [2]
    assert [c.cluster_n for c in configs._clusters(wide, 128, 3584, 1)] == []  # (one tile row; by halves)
    assert [c.cluster_n for c in configs._clusters(wide, 128, 3584, 2)] == [2]
    # offered only for a Triton whose clusters have run on a GPU (GLUON_CLUSTER_TRITON), and that has them
    assert not _offered(monkeypatch, "GLUON_CLUSTER_TRITON", (), ("fp16", 4096, 4096, 4096), "clustered")
    offered = _offered(monkeypatch, "GLUON_CLUSTER_TRITON", None, ("fp16", 4096, 4096, 4096), "clustered")
    if configs.gluon_cluster_problem() is not None:  # (Triton 3.6: none, listed or not)
        assert offered == []
    else:
        assert offered and all(c.uses_gluon and c.split_k == 1 and not c.tail_halves for c in offered)
        assert {c.cluster_m for c in offered} == {1, 2} and {c.cluster_n for c in offered} == {1, 2}


def test_gluon_extra_columns_are_named_checked_and_offered_only_where_they_have_run(monkeypatch):
    from targets.configs import config_from_name, extra_n_takes, extra_n_width, gluon_available, gluon_c_tile_bytes

    cfg = GemmConfig(64, 64, 128, 4, 8, variant="gluon_ws", extra_n=8)
    assert str(cfg) == "BM64-BN64-BK128-w4-s8-g8-gluon-ws-xn8" and config_from_name(str(cfg)) == cfg
    assert cfg.tile_n == 72 and cfg.as_dict()["extra_n"] == 8
    assert _tile_group(cfg) != _tile_group(dataclasses.replace(cfg, extra_n=0))  # (another output tile)
    assert cfg.smem_bytes(1) == (64 * 128 + 128 * 72) * 8  # (the extra columns' B tiles in the ring)
    assert gluon_c_tile_bytes(cfg, 1) == 64 * 64 * 2 + 64 * 8 * 2
    assert "extra_n" not in GemmConfig(64, 64, 128, 4, 8, variant="gluon_ws").as_dict()  # (older entries alike)
    wg = config_from_name("BM128-BN128-BK64-w8-s4-g8-gluon-wg-xn32")
    assert (wg.variant, wg.extra_n, wg.tile_n) == ("gluon_wg", 32, 160)
    for bad, match in (
        (dict(variant="gluon_ws", extra_n=12), r"extra_n must be 0 or one of \(8, 16, 32, 64\)"),
        (dict(variant="gluon_ws", extra_n=True), r"extra_n must be 0 or one of"),
        (dict(variant="gluon_ws", extra_n=64), "less than block_n"),
        (dict(variant="tma", extra_n=8), "for the Gluon variants"),
        (dict(variant="gluon_ws", extra_n=8, stream_k=True), "for the Gluon variants"),
        (dict(variant="gluon_ws", extra_n=8, cluster_n=2), "for the Gluon variants"),
    ):
        with pytest.raises(ValueError, match=match):
            GemmConfig(64, 64, 128, 4, 8, **bad)
    # the extra columns whose tiles fill the waves best, where that is 5% of the slots more
    h200 = get("h200")
    assert extra_n_width(h200, 128, 4608, 64, 64) == 8  # 144 tiles -> 128 of 64 x 72
    assert extra_n_width(h200, 128, 6144, 64, 64) == 32  # 192 -> 128 of 64 x 96
    assert extra_n_width(h200, 128, 37888, 128, 256) == 32  # 148 -> 132 of 128 x 288
    assert extra_n_width(h200, 128, 3584, 64, 64) == 0  # 112 tiles: already one wave
    assert extra_n_width(h200, 4096, 4096, 128, 256) == 0  # 512 tiles: four whole waves
    assert extra_n_width(h200, 128, 4096, 64, 128) == 0  # 64: less than a wave
    assert extra_n_width(h200, 3000, 5000, 128, 128) == 64  # 960 tiles, 7.3 waves -> 648, 4.9 waves
    # offered only for a Triton whose extra columns have run on a GPU (GLUON_EXTRA_N_TRITON), not
    # split in K unless GLUON_EXTRA_N_SPLIT_TRITON lists it too
    import targets.configs as configs

    monkeypatch.setattr(configs, "GLUON_EXTRA_N_SPLIT_TRITON", ())
    assert not _offered(monkeypatch, "GLUON_EXTRA_N_TRITON", (), ("fp8", 128, 4608, 3584), "extra_n")
    offered = _offered(monkeypatch, "GLUON_EXTRA_N_TRITON", None, ("fp8", 128, 4608, 3584), "extra_n")
    if not gluon_available():
        assert offered == []
        return
    assert offered and {(c.block_m, c.block_n, c.extra_n, c.split_k) for c in offered} == {(64, 64, 8, 1)}
    # and split in K where GLUON_EXTRA_N_SPLIT_TRITON lists this Triton: 128 x 72 tiles in two
    # units each (64 tiles, 128 units)
    monkeypatch.setattr(configs, "GLUON_EXTRA_N_SPLIT_TRITON", (configs._triton_version(),))
    offered = _offered(monkeypatch, "GLUON_EXTRA_N_TRITON", None, ("fp8", 128, 4608, 3584), "extra_n")
    assert {(c.block_m, c.block_n, c.extra_n, c.split_k) for c in offered} == {(64, 64, 8, 1), (128, 64, 8, 2)}
    monkeypatch.setattr(configs, "GLUON_EXTRA_N_SPLIT_TRITON", ())
    assert all(c.smem_bytes(1) + gluon_c_tile_bytes(c, 1) <= h200.smem_per_block_bytes for c in offered)
    assert all(config_from_name(str(c)) == c for c in offered)
    # only what the launcher takes for the matrix's operands (`extra_n_takes`): a 16-bit B's 8 extra
    # columns in 64-deep K steps only; for fp8, tiles that one accumulator per K step holds
    half = _offered(monkeypatch, "GLUON_EXTRA_N_TRITON", None, ("fp16", 128, 4608, 3584), "extra_n")
    assert half and {(c.extra_n, c.block_k) for c in half if c.block_n == 64} == {(8, 64)}
    assert not _offered(monkeypatch, "GLUON_EXTRA_N_TRITON", None, ("fp8", 128, 57344, 8192), "extra_n")
    assert extra_n_takes(GemmConfig(128, 64, 128, 8, 4, variant="gluon_ws", extra_n=16), 1)  # 40 per thread
    assert not extra_n_takes(GemmConfig(128, 128, 128, 8, 4, variant="gluon_ws", extra_n=32), 1)  # 80
    assert extra_n_takes(GemmConfig(64, 64, 128, 4, 4, variant="gluon_ws", extra_n=16), 2)  # 32 bytes wide


def test_extra_columns_with_a_split_fill_a_wave_of_units_where_whole_tiles_cannot():
    from targets.configs import extra_n_splits

    h200 = get("h200")
    # fp8 128 x 4608 in 128 x 64 tiles: 72 (55% of 132 SMs; split in two, 144 units, two rounds);
    # 128 x 72 in two units: 128 (97%)
    assert extra_n_splits(h200, 128, 4608, 28, 128, 64) == [(8, 2)]
    assert extra_n_splits(h200, 128, 6144, 32, 128, 64) == [(32, 2)]  # 96 tiles -> 64 x 2 of 128 x 96
    assert extra_n_splits(h200, 128, 3584, 28, 128, 64) == []  # 56 tiles split in two fill 85%: none better
    assert extra_n_splits(h200, 128, 8192, 64, 128, 64) == []  # 128 tiles: a wave already
    assert extra_n_splits(h200, 4096, 4096, 32, 128, 256) == []  # (waves of tiles: no split of all of them)
    # a split's units must keep GLUON_SPLIT_MIN_STEPS K steps each
    assert extra_n_splits(h200, 128, 4608, 4, 128, 64) == []
    cfg = GemmConfig(128, 64, 128, 8, 8, variant="gluon_wg", split_k=2, extra_n=8)
    assert str(cfg) == "BM128-BN64-BK128-w8-s8-g8-gluon-wg-sk2-xn8"


def test_gluon_output_tile_is_staged_whole_or_by_halves_for_precise_fp8_wide_tiles():
    from targets.configs import gluon_c_tile_bytes

    wide, square = (
        GemmConfig(128, 256, 128, 8, 4, variant="gluon_ws"),
        GemmConfig(128, 128, 128, 8, 5, variant="gluon_ws"),
    )
    assert gluon_c_tile_bytes(wide, 2) == 128 * 256 * 2  # 16-bit operands: the whole 16-bit tile
    assert gluon_c_tile_bytes(wide, 1) == 128 * 128 * 2  # fp8, precise: 128 values per thread, by halves
    assert gluon_c_tile_bytes(wide, 1, precise=False) == 128 * 256 * 2  # fast accumulation: whole
    assert gluon_c_tile_bytes(square, 1) == 128 * 128 * 2  # 64 values per thread: promoted by step, whole


def test_no_gluon_config_for_an_output_whose_rows_no_descriptor_takes():
    from targets.configs import gluon_available

    if not gluon_available():
        pytest.skip("this Triton has no Gluon Hopper module")
    h200 = get("h200")
    assert not any(c.uses_gluon for c in candidate_configs(h200, "fp16", 127, 4097, 1023, limit=None))
    assert any(c.uses_gluon and c.pad for c in candidate_configs(h200, "fp16", 127, 4096, 1023, limit=None))


def test_config_names_read_back_as_the_configs_they_name():
    from targets.configs import config_from_name

    h200 = get("h200")
    seen = 0
    for dtype, shape in (("fp16", (4096, 4096, 4096)), ("fp8", (16, 4096, 4096)), ("bf16", (1, 1001, 4095)),
                         ("fp8", (128, 8192, 8192)), ("fp16", (127, 4096, 1023))):  # fmt: skip
        for cfg in candidate_configs(h200, dtype, *shape, limit=None):
            assert config_from_name(str(cfg)) == cfg
            seen += 1
    assert seen > 500
    assert config_from_name("BM16-BN64-BK128-w4-s3-g8-sks8-pad-lp") == GemmConfig(
        16, 64, 128, 4, 3, variant="splitk_serial", split_k=8, pad=True, late_promotion=True
    )
    for bad in ("BM128-BN256", "BM128-BN256-BK64-w8-s3-g8-warp", "fast", "BM128-BN256-BK64-w8-s3-g8-lp-pad"):
        with pytest.raises(ValueError, match="not a GEMM config name"):
            config_from_name(bad)


def test_a_config_of_two_launches_is_identified_by_both_kernels_hashes():
    from kernels.autotune import _kernel_hash

    one, two = SimpleNamespace(hash="ab12"), SimpleNamespace(hash="cd34")
    assert _kernel_hash(one) == "ab12"
    assert _kernel_hash([one, two]) == "ab12+cd34"  # (gluon tail_halves: the whole rows, then the half tiles)
    assert _kernel_hash([one, object()]) is None  # (a launch without a compiled kernel: no hash to stand by)
    assert _kernel_hash(None) is None
