"""The Gluon warp-specialized Hopper GEMM (kernels/gluon_hopper.py, variant "gluon_ws").

Without a GPU: compiled for sm_90 with the installed Triton, through the project's launcher
(partitioned, no spills, a K step's warpgroup MMAs issued back to back), and refused where it
cannot run. With one (`-m gpu`): the product against the float64 reference, edges included.
"""

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from fp8_cases import fp8_problem

import kernels
from benchmarks.cells import TOLERANCE, reference_gemm, relative_error
from targets import GemmConfig
from targets.configs import config_from_name, gluon_available, gluon_cluster_problem

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(not gluon_available(), reason="this Triton has no Gluon Hopper module")

# Compiled in a child process (the offline driver replaces Triton's active one for good there).
OFFLINE = r"""
import importlib, json, re, sys, torch
from triton.runtime import driver
from ci.resources import _offline_driver, _usage
from targets import GemmConfig
m = importlib.import_module("kernels.matmul")
driver.set_active(_offline_driver(90))
for dtype, cfg, scaling, *shape in json.loads(sys.argv[1]):
    cfg = GemmConfig(**cfg)
    M, N, K = shape[0] if shape else (1024, 1024, 1024)
    if dtype == "fp8":
        a = torch.empty(M, K, dtype=torch.float8_e4m3fn)
        b = torch.empty(N, K, dtype=torch.float8_e4m3fn).t()
        s = (torch.ones(()), torch.ones(())) if scaling == "tensorwise" else (torch.ones(M, 1), torch.ones(1, N))
        call = lambda: m.scaled_matmul(a, b, *s, use_fast_accum=scaling == "fast", config=cfg)
    else:
        a = torch.empty(M, K, dtype=getattr(torch, dtype))
        b = torch.empty(K, N, dtype=getattr(torch, dtype))
        call = lambda: m.matmul(a, b, config=cfg)
    with m.compile_only(132) as compiled:
        call()
    for k in compiled:  # (one kernel per config; tail_halves: two launches)
        ptx = k.asm["ptx"]
        cluster = [int(line.split()[-1]) for line in ptx.splitlines() if ".reqnctapercluster" in line]
        widths = sorted({int(w) for w in re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k", ptx)})
        print(json.dumps({"config": str(cfg), "dtype": dtype, "scaling": scaling, "setmaxnreg": ptx.count("setmaxnreg"),
                          "mma_widths": widths,
                          "launches": len(compiled), "shape": [M, N, K], "cluster": cluster[0] if cluster else 1,
                          "multicast": ptx.count(".multicast::cluster"),
                          "remote_arrive": ptx.count("mbarrier.arrive.shared::cluster"), **_usage(k)}))
"""


def _gluon(bm, bn, bk, warps, stages, variant="gluon_ws"):
    return {"block_m": bm, "block_n": bn, "block_k": bk, "num_warps": warps, "num_stages": stages,
            "variant": variant}  # fmt: skip


EXTRA_N_JOBS = [
    ("fp8", {**_gluon(64, 64, 128, 4, 8), "extra_n": 8}, "tensorwise", [128, 4608, 3584]),
    ("fp8", {**_gluon(64, 64, 128, 4, 8), "extra_n": 8}, "fast", [128, 4608, 3584]),
    ("fp8", {**_gluon(128, 64, 128, 8, 6, "gluon_wg"), "extra_n": 32}, "rowwise", [128, 6144, 4096]),
    ("float16", {**_gluon(64, 128, 64, 4, 4), "extra_n": 16}, None, [1000, 1000, 1000]),
    ("bfloat16", {**_gluon(128, 128, 64, 8, 4, "gluon_wg"), "extra_n": 8}, None, [128, 37888, 3584]),
    # split: fp8 128 x 72 tiles of 128 x 4608 in two units (64 tiles, 128 units), each MMA warpgroup
    # its own partition; 16-bit on one warpgroup
    ("fp8", {**_gluon(128, 64, 128, 8, 8, "gluon_wg"), "extra_n": 8, "split_k": 2}, "tensorwise", [128, 4608, 3584]),
    ("bfloat16", {**_gluon(128, 64, 64, 4, 8), "extra_n": 8, "split_k": 2}, None, [128, 4608, 3584]),
]


# Why this Triton cannot build the cluster configs (None: it can; 3.9 does, 3.6 does not).
CLUSTERS = gluon_cluster_problem()

# Two CTAs along M (B's tile shared) or N (A's), each CTA the tile it would have alone.
CLUSTER_JOBS = [
    ("float16", {**_gluon(128, 128, 64, 8, 4), "cluster_m": 2}, None),
    ("float16", {**_gluon(128, 128, 64, 8, 4), "cluster_n": 2}, None),
    ("bfloat16", {**_gluon(128, 128, 64, 8, 4, "gluon_wg"), "cluster_n": 2}, None),
    ("bfloat16", {**_gluon(64, 64, 64, 4, 8), "cluster_m": 2}, None, [128, 4096, 4096]),
    ("fp8", {**_gluon(128, 128, 128, 8, 5), "cluster_m": 2}, "rowwise", [4096, 3584, 3584]),
    ("fp8", {**_gluon(128, 256, 128, 8, 3), "cluster_m": 2}, "tensorwise", [4096, 3584, 3584]),  # (by halves of N)
    ("fp8", {**_gluon(64, 64, 128, 4, 8), "cluster_m": 2}, "tensorwise", [128, 4096, 4096]),
    ("fp8", {**_gluon(128, 64, 128, 8, 8), "cluster_n": 2}, "rowwise", [128, 8192, 28672]),
    ("fp8", {**_gluon(128, 64, 128, 8, 8, "gluon_wg"), "cluster_n": 2}, "tensorwise", [128, 6144, 4096]),
    # (and two of them alone, to compare)
    ("float16", _gluon(128, 128, 64, 8, 4), None),
    ("fp8", _gluon(128, 256, 128, 8, 3), "tensorwise", [4096, 3584, 3584]),
]


@pytest.fixture(scope="module")
def compiled():
    import json

    jobs = [
        ("float16", _gluon(128, 256, 64, 8, 3), None),
        ("bfloat16", _gluon(64, 128, 64, 4, 4), None),
        ("fp8", _gluon(128, 128, 128, 8, 5), "tensorwise"),
        ("fp8", _gluon(128, 128, 128, 8, 5), "rowwise"),
        ("fp8", _gluon(128, 256, 128, 8, 4), "tensorwise"),  # (precise on a wide tile: by halves of N)
        ("fp8", _gluon(64, 128, 128, 4, 5), "rowwise"),
        ("fp8", _gluon(128, 256, 128, 8, 3), "fast"),
        # each MMA warpgroup its own partition
        ("float16", _gluon(128, 256, 64, 8, 3, "gluon_wg"), None),
        ("fp8", _gluon(128, 256, 128, 8, 3, "gluon_wg"), "rowwise"),  # (by halves of N)
        ("fp8", _gluon(128, 128, 128, 8, 5, "gluon_wg"), "tensorwise"),  # (by step)
        # 64 columns: one warpgroup on 128 rows; a 12-slot ring
        ("float16", _gluon(128, 64, 64, 4, 8), None),
        ("fp8", _gluon(64, 64, 128, 4, 12), "tensorwise"),
        # K split among units (partial sums in a workspace, a counter per tile)
        ("float16", {**_gluon(128, 64, 64, 4, 8), "split_k": 2}, None),
        ("fp8", {**_gluon(128, 128, 128, 8, 6, "gluon_wg"), "split_k": 4}, "rowwise"),
        ("fp8", {**_gluon(128, 128, 128, 8, 6, "gluon_wg"), "split_k": 3}, "tensorwise"),
        # ... and a tile by halves of N: a half's partials summed beside the other half's accumulator
        ("fp8", {**_gluon(128, 256, 128, 8, 3, "gluon_wg"), "split_k": 8}, "rowwise"),
        # stream-K: the last wave's K steps in one chunk per program (a program waits for others)
        ("float16", {**_gluon(128, 256, 64, 8, 3, "gluon_wg"), "stream_k": True}, None),
        ("fp8", {**_gluon(128, 256, 128, 8, 3, "gluon_wg"), "stream_k": True}, "rowwise"),
        ("fp8", {**_gluon(128, 64, 128, 8, 8, "gluon_ws"), "stream_k": True}, "tensorwise"),
        # (the cluster configs, where this Triton has Gluon's clusters: CLUSTER_JOBS above)
        # the last wave in a second launch of half-width tiles (fp8's 128 x 128 then by step)
        ("fp8", {**_gluon(128, 256, 128, 8, 3, "gluon_wg"), "tail_halves": True}, "rowwise", [4096, 3584, 3584]),
        ("float16", {**_gluon(128, 256, 64, 8, 3, "gluon_ws"), "tail_halves": True}, None, [4000, 4608, 1000]),
        # ... and where the tiles make whole waves (4096^3: 512 tiles), one launch, as without it
        ("float16", {**_gluon(128, 256, 64, 8, 3, "gluon_ws"), "tail_halves": True}, None, [4096, 4096, 4096]),
        # extra columns beside the tile's (64 x 72: 128 tiles of 128 x 4608 on 132 SMs), precise by
        # step, fast, per-row scales; 16-bit B row-major; each MMA warpgroup its own partition
        *EXTRA_N_JOBS,
    ]
    if CLUSTERS is None:
        jobs += CLUSTER_JOBS
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.run([sys.executable, "-c", OFFLINE, json.dumps(jobs)], cwd=ROOT, capture_output=True,
                          text=True, env=env, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_tail_halves_compile_two_launches_the_second_in_half_width_tiles(compiled):
    tails = [k for k in compiled if "-th" in k["config"] and k["shape"] != [4096, 4096, 4096]]
    assert len(tails) == 4 and all(k["launches"] == 2 for k in tails)
    # where no partial wave fits one wave of half tiles, one launch of the whole tiles: a bucket's
    # config serves its shapes with and without such a wave
    whole = [k for k in compiled if "-th" in k["config"] and k["shape"] == [4096, 4096, 4096]]
    assert len(whole) == 1 and whole[0]["launches"] == 1
    plain = next(k for k in compiled if k["config"] == "BM128-BN256-BK64-w8-s3-g8-gluon-ws" and k["dtype"] == "float16")
    assert whole[0]["shared_bytes"] == plain["shared_bytes"]
    # the second launch's ring holds half-width B tiles: less shared memory than the first's
    for first, second in zip(tails[::2], tails[1::2], strict=True):
        assert first["config"] == second["config"] and second["shared_bytes"] < first["shared_bytes"]


def test_the_gluon_kernel_is_partitioned_into_a_loader_and_mma_warpgroups(compiled):
    for k in compiled:
        assert k["kernel"] == "_gemm_ws_kernel", k
        # the loader warp's warpgroup beside the asked warps; registers moved between them
        warps = 8 if "w8" in k["config"] else 4
        assert k["warps"] == warps + 4 and k["setmaxnreg"] > 0, k
        # (split K, stream-K: ptxas may spill a few registers in the fix-up that sums a tile's
        # partials, outside the K loop: none with Triton 3.6; with 3.9 16 bytes for fp8
        # BM128-BN256 wg sk2, 8 for fp16 BM128-BN256 wg stream)
        shared_k = "-sk" in k["config"] or "-stream" in k["config"]
        assert k["spill_bytes"] <= (32 if shared_k else 0), k
        assert k["shared_bytes"] <= 227 * 1024, k


def test_clusters_share_an_operand_tile_by_multicast_and_release_slots_across_ctas(compiled):
    if CLUSTERS is not None:
        pytest.skip(CLUSTERS)
    clustered = [k for k in compiled if "-cm2" in k["config"] or "-cn2" in k["config"]]
    assert len(clustered) == sum("cluster_m" in cfg or "cluster_n" in cfg for _, cfg, *_ in CLUSTER_JOBS)
    twins = 0
    for k in clustered:
        # a cluster of two CTAs; the first copies the shared tile into both (one or two boxes of
        # 128-byte rows), each MMA partition gives a slot back to the first CTA's loader too
        assert k["cluster"] == 2 and k["multicast"] >= 1 and k["remote_arrive"] >= 1, k
        plain = k["config"].replace("-cm2", "").replace("-cn2", "")
        same = ("dtype", "scaling", "shape")
        twin = next((p for p in compiled if p["config"] == plain and all(p[f] == k[f] for f in same)), None)
        if twin is not None:  # (a CTA's ring and output tile: what the tile takes alone)
            assert abs(k["shared_bytes"] - twin["shared_bytes"]) <= 64, (k, twin)
            twins += 1
    assert twins == 3  # (the fp16 tile along M and along N, the fp8 one along M)
    for k in compiled:
        if k not in clustered:
            assert k["cluster"] == 1 and k["multicast"] == 0 and k["remote_arrive"] == 0, k


def test_clusters_are_refused_where_the_kernel_cannot_run_them():
    gluon_hopper = importlib.import_module("kernels.gluon_hopper")
    a = torch.empty(1024, 1024, dtype=torch.float16)
    kw = dict(block_m=128, block_n=128, block_k=64, stages=4, num_warps=8, programs=132, compile_only=True)
    if CLUSTERS is not None:  # (Triton 3.6: no cluster at all, with the reason)
        assert "multicast" in CLUSTERS or "cluster" in CLUSTERS
        with pytest.raises(ValueError, match="gluon gemm: .*(multicast|cluster)"):
            gluon_hopper.gemm(a, a, a, cluster_m=2, **kw)
        return
    problem = gluon_hopper.cluster_problem
    assert problem(2, 1, gluon_hopper.PROMOTE_NONE, False) is None
    assert problem(1, 2, gluon_hopper.PROMOTE_STEP, True) is None
    assert "no gluon_wg" in problem(2, 1, gluon_hopper.PROMOTE_NONE, True)
    assert "halves of N" in problem(1, 2, gluon_hopper.PROMOTE_SPLIT, False)
    assert "2 CTAs along M or N" in problem(2, 2, gluon_hopper.PROMOTE_NONE, False)
    with pytest.raises(ValueError, match="no split_k, stream_k or tail_halves"):
        gluon_hopper.gemm(a, a, a, cluster_m=2, split_k=2, counters=torch.zeros(64, dtype=torch.int32), **kw)
    with pytest.raises(ValueError, match="no gluon_wg"):
        gluon_hopper.gemm(a, a, a, cluster_m=2, split_warpgroups=True, **kw)


def test_split_warpgroups_synchronise_only_within_each_warpgroup(compiled):
    # gluon_ws's 8-warp MMA partition waits for both warpgroups at every K step (a 256-thread
    # barrier before giving the slot back), so their promotion adds fall together and leave the
    # tensor cores idle; gluon_wg's warpgroups are partitions of their own (128-thread barriers).
    for k in compiled:
        if "gluon-wg" in k["config"]:
            assert k["barrier_threads"] == [128], k
        elif "w8" in k["config"]:
            assert 256 in k["barrier_threads"], k


def test_a_k_steps_mmas_are_issued_back_to_back_fp8_promotion_included(compiled):
    # 64-deep fp16 steps: 4 wgmma of k16; 128-deep fp8 steps: 4 of k32, the precise accumulation's
    # adds of the previous step's partial sum issued between them (not one wait per MMA: C7514).
    for k in compiled:
        # (a warpgroup on 128 rows issues each K sub-step's MMA for both halves of its rows: 8;
        # extra columns: their own MMAs beside the main ones, before the same wait)
        rows_per_warpgroup = 64 if "w8" in k["config"] or "BM64" in k["config"] else 128
        widths = 2 if "-xn" in k["config"] else 1
        assert k["mma_per_wait"] == 4.0 * rows_per_warpgroup / 64 * widths, k


def test_extra_columns_get_an_mma_of_their_width_beside_the_tiles(compiled):
    extra = [k for k in compiled if "-xn" in k["config"]]
    assert len(extra) == len(EXTRA_N_JOBS)
    for k in extra:
        cfg = config_from_name(k["config"])
        main = next(k2 for k2 in k["mma_widths"] if k2 != cfg.extra_n)
        assert k["mma_widths"] == sorted({main, cfg.extra_n}) and cfg.block_n % main == 0, k


def test_extra_columns_are_refused_where_the_kernel_cannot_take_them():
    gluon_hopper = importlib.import_module("kernels.gluon_hopper")
    problem = gluon_hopper.extra_n_problem
    assert problem(0, 64, gluon_hopper.PROMOTE_SPLIT, split_k=4) is None, "no extra columns: nothing to refuse"
    assert problem(8, 64, gluon_hopper.PROMOTE_STEP) is None
    assert "one of (8, 16, 32, 64) and less than block_n 64, got 64" in problem(64, 64, gluon_hopper.PROMOTE_NONE)
    assert "one of (8, 16, 32, 64)" in problem(24, 128, gluon_hopper.PROMOTE_NONE)
    for kwargs in ({"stream_k": True}, {"tail_halves": True}, {"cluster": 2}):
        assert "tiles of one CTA: no stream_k" in problem(8, 64, gluon_hopper.PROMOTE_NONE, **kwargs), kwargs
    assert problem(8, 64, gluon_hopper.PROMOTE_STEP, split_k=2) is None  # (split as any tile)
    assert "no promotion by halves" in problem(8, 256, gluon_hopper.PROMOTE_SPLIT)
    # 8 columns of a 16-bit B whose rows run along N, 128-deep K steps: wrong on the H200 (refused)
    narrow = problem(8, 64, gluon_hopper.PROMOTE_NONE, block_k=128, n_major_bytes=2)
    assert narrow == (
        "extra columns of 16 bytes along B's rows take K steps of at most 64 (deeper ones computed those "
        "columns wrong on the H200), got 128"
    )
    assert problem(8, 64, gluon_hopper.PROMOTE_NONE, block_k=64, n_major_bytes=2) is None
    assert problem(16, 64, gluon_hopper.PROMOTE_NONE, block_k=128, n_major_bytes=2) is None  # 32 bytes
    assert problem(8, 64, gluon_hopper.PROMOTE_STEP, block_k=128, n_major_bytes=0) is None  # K-major B (fp8)
    a = torch.empty(256, 256, dtype=torch.float16)
    with pytest.raises(ValueError, match="gluon gemm: extra columns are for tiles of one CTA"):
        gluon_hopper.gemm(a, a, a, block_m=128, block_n=64, block_k=64, stages=3, num_warps=4, programs=132,
                          stream_k=True, extra_n=8)  # fmt: skip


def test_gluon_configs_are_refused_where_they_cannot_run():
    a = torch.randn(256, 256).half()
    cfg = GemmConfig(128, 128, 64, 8, 3, variant="gluon_ws")
    if torch.cuda.is_available():
        pytest.skip("checks the refusal on a machine without a Hopper GPU")
    with pytest.raises(ValueError, match="cannot run this problem: gluon_ws configs are for Hopper"):
        kernels.matmul(a, a, config=cfg)
    fp8, one = torch.zeros(1024, 1024).to(torch.float8_e4m3fn), torch.tensor(1.0)
    with pytest.raises(ValueError, match="gluon_ws configs are for Hopper"):  # (before any register rule)
        kernels.scaled_matmul(fp8, fp8.t(), one, one, config=GemmConfig(128, 256, 128, 4, 3, variant="gluon_ws"))


def test_the_launcher_refuses_operands_the_descriptors_cannot_take():
    gluon_hopper = importlib.import_module("kernels.gluon_hopper")
    a = torch.empty(256, 256, dtype=torch.float16)
    assert gluon_hopper.unsupported(a, a, a) is None
    assert "A is not row-major" in gluon_hopper.unsupported(a.t(), a, a)
    assert "C is not row-major" in gluon_hopper.unsupported(a, a, a.t())
    odd = torch.empty(256, 1001, dtype=torch.float16)[:, :1000]
    assert "leading stride 1001 is not a multiple of 16 bytes" in gluon_hopper.unsupported(odd, a, a)
    fp8 = torch.empty(256, 256, dtype=torch.float8_e4m3fn)
    assert "fp8 B must be column-major" in gluon_hopper.unsupported(fp8, fp8, a)
    assert gluon_hopper.unsupported(fp8, fp8.t(), a) is None
    with pytest.raises(ValueError, match="gluon gemm: A is not row-major"):
        gluon_hopper.gemm(a.t(), a, a, block_m=128, block_n=128, block_k=64, stages=3, num_warps=8)
    assert gluon_hopper.max_registers(8) == 168 and gluon_hopper.max_registers(4) == 255 // 8 * 8


def _randn(shape, dtype, gen):
    return torch.randn(*shape, generator=gen, device="cuda").to(dtype)


GPU_CASES = [
    ("fp16", (4096, 4096, 4096), (128, 256, 64, 8, 3)),
    ("bf16", (3000, 5000, 1000), (128, 128, 64, 8, 5)),  # edges in M and N; K a multiple of 8 only
    ("fp16", (1000, 1000, 1000), (64, 128, 64, 4, 4)),
    ("bf16", (4096, 3584, 3584), (64, 256, 64, 4, 3)),
    ("fp16", (129, 4096, 14336), (128, 128, 128, 8, 3)),
    # each MMA warpgroup its own partition: the second's rows past M on 129 rows, edges in M and N
    ("fp16", (4096, 4096, 4096), (128, 256, 64, 8, 3, "gluon_wg")),
    ("bf16", (3000, 5000, 1000), (128, 128, 64, 8, 5, "gluon_wg")),
    ("fp16", (129, 4096, 14336), (128, 128, 128, 8, 3, "gluon_wg")),
    # 64 columns, one warpgroup on 128 rows and deep rings
    ("fp16", (1000, 1000, 1000), (128, 64, 64, 4, 8)),
    ("bf16", (128, 4096, 4096), (64, 64, 64, 4, 12)),
    # K split among units whose partial sums meet in a workspace; the last of 4 units has no K step
    ("fp16", (1024, 1024, 1024), (128, 64, 64, 4, 8, "gluon_ws", 2)),
    ("bf16", (1000, 1000, 1000), (128, 128, 64, 8, 4, "gluon_wg", 4)),
    ("fp16", (256, 512, 320), (128, 64, 64, 4, 3, "gluon_ws", 4)),
    ("bf16", (128, 4608, 3584), (128, 128, 64, 8, 4, "gluon_wg", 3)),  # 56 K steps in 19, 19 and 18
    # 3.4 waves of tiles (448 on 132 SMs): the 3 full waves' tiles whole, the last 52 split in two
    ("fp16", (4096, 3584, 3584), (128, 256, 64, 8, 3, "gluon_wg", 2)),
    ("bf16", (4000, 3584, 1000), (128, 256, 64, 8, 3, "gluon_ws", 2)),
    # stream-K: the last 52 tiles' K steps in 132 chunks (a tile in 2-4 of them)
    ("fp16", (4096, 3584, 3584), (128, 256, 64, 8, 3, "gluon_wg", "stream")),
    # less than a wave (48 tiles, every one shared), ragged edges (128 tiles), 84 tiles after 3 waves
    ("bf16", (128, 6144, 4096), (128, 128, 64, 8, 4, "gluon_ws", "stream")),
    ("fp16", (1000, 1000, 1000), (128, 64, 64, 4, 8, "gluon_ws", "stream")),
    ("bf16", (3000, 5000, 1000), (128, 256, 64, 8, 3, "gluon_ws", "stream")),
    # the last wave (52 tiles after 3 waves) in a second launch: 28 tile rows, then 112 half tiles;
    # 4000 rows: the second launch's last tile row cut by the edge
    ("fp16", (4096, 3584, 3584), (128, 256, 64, 8, 3, "gluon_wg", "halves")),
    ("bf16", (4000, 3584, 1000), (128, 256, 64, 8, 3, "gluon_ws", "halves")),
    # clusters of two CTAs along M or N (where this Triton has them); on ragged shapes the second
    # CTA's rows or columns past the edge (3000 rows: the last pair's second tile empty)
    ("fp16", (4096, 4096, 4096), (128, 128, 64, 8, 4, "gluon_ws", "cm2")),
    ("bf16", (4096, 4096, 4096), (128, 256, 64, 8, 3, "gluon_ws", "cn2")),
    ("fp16", (3000, 5000, 1000), (128, 128, 64, 8, 4, "gluon_ws", "cm2")),
    ("bf16", (3000, 5000, 1000), (128, 128, 64, 8, 4, "gluon_wg", "cn2")),
    ("bf16", (128, 4096, 4096), (64, 64, 64, 4, 8, "gluon_ws", "cm2")),
    ("fp16", (129, 4096, 14336), (128, 64, 64, 4, 8, "gluon_ws", "cn2")),
    # extra columns: 64 x 72 tiles (128 of them); ragged edges in M, N and K (1000^3 in 64 x 144);
    # each warpgroup its own partition, 129 rows (the second warpgroup's past M)
    ("bf16", (128, 4608, 3584), (64, 64, 64, 4, 8, "gluon_ws", "xn8")),
    ("fp16", (1000, 1000, 1000), (64, 128, 64, 4, 4, "gluon_ws", "xn16")),
    ("fp16", (129, 6144, 4096), (128, 64, 64, 8, 6, "gluon_wg", "xn32")),
    # ... split: 64 tiles of 128 x 72 in two units each; 129 rows (256 units on 132 programs);
    # 1000^3's 112 tiles of 64 x 144 in two units each, ragged (the partials over both
    # accumulators' columns)
    ("bf16", (128, 4608, 3584), (128, 64, 64, 4, 8, "gluon_ws", 2, "xn8")),
    ("fp16", (129, 4608, 3584), (128, 64, 64, 8, 6, "gluon_wg", 2, "xn8")),
    ("fp16", (1000, 1000, 1000), (64, 128, 64, 4, 4, "gluon_ws", 2, "xn16")),
]


def _config(tile) -> GemmConfig:
    """(BM, BN, BK, warps, stages[, variant[, split_k, "stream", "halves", "cm2", "cn2" or "xnE"[,
    "xnE" after a split_k]]]) as a Gluon config."""
    extra = tile[5:]
    variant = extra[0] if extra else "gluon_ws"
    split = extra[1] if len(extra) > 1 else 1
    if len(extra) > 2:
        return GemmConfig(*tile[:5], variant=variant, split_k=split, extra_n=int(extra[2][2:]))
    if split == "stream":
        return GemmConfig(*tile[:5], variant=variant, stream_k=True)
    if split == "halves":
        return GemmConfig(*tile[:5], variant=variant, tail_halves=True)
    if split in ("cm2", "cn2"):
        return GemmConfig(*tile[:5], variant=variant, **{f"cluster_{split[1]}": 2})
    if isinstance(split, str) and split.startswith("xn"):
        return GemmConfig(*tile[:5], variant=variant, extra_n=int(split[2:]))
    return GemmConfig(*tile[:5], variant=variant, split_k=split)


@pytest.mark.gpu
@pytest.mark.parametrize(
    ("dtype", "shape", "tile"), GPU_CASES, ids=lambda x: "x".join(map(str, x)) if isinstance(x, tuple) else x
)
@pytest.mark.parametrize("b_layout", ["row", "col"])
def test_gluon_configs_compute_the_product(dtype, shape, tile, b_layout):
    if _config(tile).clustered and CLUSTERS is not None:
        pytest.skip(CLUSTERS)
    if not torch.cuda.is_available():
        pytest.skip("needs a GPU")
    gen = torch.Generator(device="cuda").manual_seed(3)
    M, N, K = shape
    torch_dtype = getattr(torch, {"fp16": "float16", "bf16": "bfloat16"}[dtype])
    a = _randn((M, K), torch_dtype, gen)
    b = _randn((K, N), torch_dtype, gen) if b_layout == "row" else _randn((N, K), torch_dtype, gen).t()
    out = torch.full((M, N), float("nan"), dtype=torch_dtype, device="cuda")
    kernels.matmul(a, b, out=out, config=_config(tile))
    assert relative_error(out, reference_gemm(a, b)) <= TOLERANCE[dtype]
    for _ in range(2 if _config(tile).clustered else 0):  # (a cluster's barriers across launches too)
        kernels.matmul(a, b, out=out, config=_config(tile))
        assert relative_error(out, reference_gemm(a, b)) <= TOLERANCE[dtype]
    if _config(tile).split_k > 1 or _config(tile).stream_k:  # counters left zeroed, partials summed in one order:
        for _ in range(4):  # the same bits at every launch (units arrive in another order each time)
            assert torch.equal(kernels.matmul(a, b, config=_config(tile)), out)
        counters = importlib.import_module("kernels.matmul")._COUNTERS.values()
        assert all(int(buf.count_nonzero()) == 0 for buf in counters)


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(4096, 4096, 4096), (1000, 1000, 1008), (128, 8192, 8192)], ids=str)
@pytest.mark.parametrize("scaling", ["tensorwise", "rowwise"])
@pytest.mark.parametrize(
    ("fast_accum", "tile"),
    [
        (False, (128, 128, 128, 8, 5)),
        (False, (128, 256, 128, 8, 4)),
        (True, (128, 256, 128, 8, 3)),
        (False, (64, 64, 128, 4, 12)),
    ],
    ids=["precise", "precise-halves", "fast-accum", "precise-small"],
)
@pytest.mark.parametrize("variant", ["gluon_ws", "gluon_wg"])
def test_gluon_fp8_is_as_precise_as_the_native_library(shape, scaling, fast_accum, tile, variant):
    if variant == "gluon_wg" and tile[3] != 8:
        pytest.skip("gluon_wg splits two MMA warpgroups (8 warps)")
    if not torch.cuda.is_available():
        pytest.skip("needs a GPU")
    gen = torch.Generator(device="cuda").manual_seed(5)
    N = shape[1]
    a, b, sa, sb, out = fp8_problem(shape, scaling, gen)
    cfg = GemmConfig(*tile, variant=variant)
    kernels.scaled_matmul(a, b, sa, sb, use_fast_accum=fast_accum, out=out, config=cfg)
    ref = reference_gemm(a, b, scale_a=sa, scale_b=sb)
    assert relative_error(out, ref) <= TOLERANCE["fp8_e4m3"]
    if N % 16 == 0:  # (torch._scaled_mm needs K and N divisible by 16)
        native = torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16, use_fast_accum=fast_accum)
        assert relative_error(out, ref) <= 1.5 * relative_error(native, ref) + 1e-6


@pytest.mark.gpu
@pytest.mark.parametrize(
    ("shape", "tile", "scaling"),
    [
        ((4096, 3584, 3584), (128, 128, 128, 8, 5, "gluon_ws", "cm2"), "rowwise"),  # (precise: by step)
        ((4096, 3584, 3584), (128, 256, 128, 8, 3, "gluon_ws", "cm2"), "tensorwise"),  # (by halves of N)
        ((128, 4096, 4096), (64, 64, 128, 4, 8, "gluon_ws", "cm2"), "rowwise"),
        ((128, 8192, 8192), (128, 64, 128, 8, 8, "gluon_ws", "cn2"), "rowwise"),
        ((1000, 1000, 1008), (128, 64, 128, 8, 8, "gluon_wg", "cn2"), "tensorwise"),
    ],
    ids=str,
)
def test_gluon_fp8_clusters_are_as_precise_as_the_native_library(shape, tile, scaling):
    if CLUSTERS is not None:
        pytest.skip(CLUSTERS)
    if not torch.cuda.is_available():
        pytest.skip("needs a GPU")
    gen = torch.Generator(device="cuda").manual_seed(13)
    a, b, sa, sb, out = fp8_problem(shape, scaling, gen)
    kernels.scaled_matmul(a, b, sa, sb, out=out, config=_config(tile))
    ref = reference_gemm(a, b, scale_a=sa, scale_b=sb)
    assert relative_error(out, ref) <= TOLERANCE["fp8_e4m3"]
    if shape[1] % 16 == 0:
        native = torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16)
        assert relative_error(out, ref) <= 1.5 * relative_error(native, ref) + 1e-6


@pytest.mark.gpu
def test_the_launcher_refuses_16_byte_extra_tiles_in_deep_k_steps():
    """fp16 128x4608x3584 in 64 x 72 tiles with 128-deep K steps computed the 8 extra columns wrong
    (relative error 0.33 = sqrt(8 / 72)) on the H200 under Triton 3.6; the launcher refuses it and
    takes the 64-deep one."""
    if not torch.cuda.is_available():
        pytest.skip("needs a GPU")
    a = torch.randn(128, 3584, device="cuda", dtype=torch.float16)
    b = torch.randn(3584, 4608, device="cuda", dtype=torch.float16)
    with pytest.raises(ValueError, match="extra columns of 16 bytes along B's rows take K steps of at most 64"):
        kernels.matmul(a, b, config=_config((64, 64, 128, 4, 4, "gluon_ws", "xn8")))
    out = kernels.matmul(a, b, config=_config((64, 64, 64, 4, 4, "gluon_ws", "xn8")))
    assert relative_error(out, reference_gemm(a, b)) <= TOLERANCE["fp16"]


@pytest.mark.gpu
@pytest.mark.parametrize(
    ("shape", "tile", "scaling", "fast_accum"),
    [
        ((128, 4608, 3584), (64, 64, 128, 4, 8, "gluon_ws", "xn8"), "tensorwise", False),
        ((128, 4608, 3584), (64, 64, 128, 4, 8, "gluon_ws", "xn8"), "rowwise", True),
        ((128, 6144, 4096), (128, 64, 128, 8, 6, "gluon_wg", "xn32"), "rowwise", False),
        ((1000, 1000, 1008), (64, 64, 128, 4, 6, "gluon_ws", "xn16"), "rowwise", False),  # (edges)
        ((128, 4608, 3584), (128, 64, 128, 8, 8, "gluon_wg", 2, "xn8"), "tensorwise", False),  # (split)
        ((128, 6144, 4096), (128, 64, 128, 8, 6, "gluon_wg", 2, "xn32"), "rowwise", False),
    ],
    ids=str,
)
def test_gluon_fp8_extra_columns_are_as_precise_as_the_native_library(shape, tile, scaling, fast_accum):
    if not torch.cuda.is_available():
        pytest.skip("needs a GPU")
    gen = torch.Generator(device="cuda").manual_seed(17)
    a, b, sa, sb, out = fp8_problem(shape, scaling, gen)
    kernels.scaled_matmul(a, b, sa, sb, use_fast_accum=fast_accum, out=out, config=_config(tile))
    ref = reference_gemm(a, b, scale_a=sa, scale_b=sb)
    assert relative_error(out, ref) <= TOLERANCE["fp8_e4m3"]
    if shape[1] % 16 == 0:
        native = torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16, use_fast_accum=fast_accum)
        assert relative_error(out, ref) <= 1.5 * relative_error(native, ref) + 1e-6


def test_precise_fp8_promotes_by_step_by_halves_or_not_at_all_by_the_registers_it_needs():
    gluon_hopper = importlib.import_module("kernels.gluon_hopper")
    promotion = gluon_hopper.promotion
    # three 64-value accumulators per thread: 128 x 128 on 8 warps, 64 x 128 on 4
    assert promotion(128, 128, 8, precise=True) == promotion(64, 128, 4, True) == gluon_hopper.PROMOTE_STEP
    # twice that: the accumulator and half a partial sum
    assert promotion(128, 256, 8, True) == promotion(64, 256, 4, True) == gluon_hopper.PROMOTE_SPLIT
    assert promotion(128, 256, 4, True) is None  # 256 values per thread: refused (the GPU test below)
    assert promotion(128, 256, 4, False) == gluon_hopper.PROMOTE_NONE  # no promotion, one accumulator


def test_split_k_shares_the_tiles_of_the_last_partial_wave_and_runs_the_full_waves_whole():
    whole_tiles = importlib.import_module("kernels.gluon_hopper").whole_tiles
    assert whole_tiles(448, 132, 2) == 396  # 3 full waves whole; the last 52 tiles in 104 units
    assert whole_tiles(64, 132, 4) == 0  # less than a wave: every tile split
    assert whole_tiles(396, 132, 2) == 396  # no partial wave: nothing split
    assert whole_tiles(448, 132, 1) == 448  # no split K


@pytest.fixture
def fp8_zeros():
    """(A, its scale) for the launcher's refusals on the GPU: 1024 x 1024 fp8 zeros and 1.0."""
    if not torch.cuda.is_available():
        pytest.skip("needs a GPU")
    return torch.zeros(1024, 1024, device="cuda").to(torch.float8_e4m3fn), torch.tensor(1.0, device="cuda")


@pytest.mark.gpu
def test_fast_accumulation_refuses_a_ring_whose_whole_output_tile_does_not_fit(fp8_zeros):
    a, one = fp8_zeros
    cfg = GemmConfig(128, 256, 128, 8, 4, variant="gluon_ws")  # (a precise-accumulation candidate)
    with pytest.raises(ValueError, match="shared memory"):
        kernels.scaled_matmul(a, a.t(), one, one, use_fast_accum=True, config=cfg)
    kernels.scaled_matmul(a, a.t(), one, one, use_fast_accum=False, config=cfg)  # by halves: it fits


@pytest.mark.gpu
def test_precise_fp8_refuses_a_tile_too_wide_for_its_warps_on_the_gpu(fp8_zeros):
    a, one = fp8_zeros
    with pytest.raises(ValueError, match="accumulator and a partial sum of half the tile"):
        kernels.scaled_matmul(a, a.t(), one, one, config=GemmConfig(128, 256, 128, 4, 3, variant="gluon_ws"))


@pytest.mark.gpu
def test_split_warpgroups_are_refused_on_a_tile_of_one_warpgroup(fp8_zeros):
    a, one = fp8_zeros
    with pytest.raises(ValueError, match="split two MMA warpgroups: 128 rows on 8 warps"):
        kernels.scaled_matmul(a, a.t(), one, one, config=GemmConfig(64, 128, 128, 4, 3, variant="gluon_wg"))


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(128, 4096, 14336), (1024, 1024, 4096), (4096, 3584, 3584)], ids=str)
@pytest.mark.parametrize("scaling", ["tensorwise", "rowwise"])
@pytest.mark.parametrize(
    "tile",
    [
        (128, 64, 128, 8, 8, "gluon_wg", 2),
        (128, 128, 128, 8, 6, "gluon_ws", 4),
        (64, 64, 128, 4, 12, "gluon_ws", 4),
        (128, 256, 128, 8, 3, "gluon_wg", 2),  # (by halves of N)
        (128, 128, 128, 8, 6, "gluon_wg", 3),
        (128, 64, 128, 8, 8, "gluon_wg", "stream"),
        (128, 128, 128, 8, 6, "gluon_ws", "stream"),
        (128, 256, 128, 8, 3, "gluon_wg", "stream"),  # (by halves of N; 16 tiles of 128 x 4096: up to 10 chunks each)
        (128, 256, 128, 8, 3, "gluon_wg", "halves"),  # (the last wave in 128 x 128 tiles: 4096 x 3584 only)
    ],
    ids=["wg-sk2", "sk4", "small-sk4", "halves-wg-sk2", "wg-sk3", "wg-stream", "stream", "halves-wg-stream", "wg-th"],
)
def test_gluon_fp8_split_k_is_as_precise_as_the_native_library(shape, scaling, tile):
    if not torch.cuda.is_available():
        pytest.skip("needs a GPU")
    gen = torch.Generator(device="cuda").manual_seed(7)
    a, b, sa, sb, out = fp8_problem(shape, scaling, gen)
    kernels.scaled_matmul(a, b, sa, sb, out=out, config=_config(tile))
    ref = reference_gemm(a, b, scale_a=sa, scale_b=sb)
    native = torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16)
    assert relative_error(out, ref) <= 1.5 * relative_error(native, ref) + 1e-6
    if _config(tile).stream_k:  # the same bits at every launch, whichever program waits
        for _ in range(3):
            assert torch.equal(kernels.scaled_matmul(a, b, sa, sb, config=_config(tile)), out)


@pytest.mark.parametrize(
    ("tiles", "k_steps", "programs"),
    [(448, 28, 132), (48, 32, 132), (128, 16, 132), (480, 16, 132), (16, 112, 132), (7, 19, 5), (2, 3, 3)],
)
def test_stream_k_covers_each_k_step_of_the_last_wave_once_and_waits_only_on_earlier_programs(tiles, k_steps, programs):
    gluon_hopper = importlib.import_module("kernels.gluon_hopper")
    assert gluon_hopper.stream_k_problem(tiles, k_steps, programs) is None
    whole = gluon_hopper.whole_tiles(tiles, programs, 2)
    segments = gluon_hopper.stream_k_segments(tiles, k_steps, programs)
    covered = {}
    for p, segs in enumerate(segments):
        assert 1 <= len(segs) <= 2
        assert sum(split > 0 for _, split, *_ in segs) <= 1  # a program writes one partial at most
        for i, (tile, split, k_lo, k_hi, chunk, parts) in enumerate(segs):
            assert chunk == programs - 1 - p and 0 <= split < parts and k_lo < k_hi <= k_steps
            if split == 0:
                assert k_lo == 0 and i == len(segs) - 1  # the tile's first steps: the program's last unit
            else:
                assert i == 0  # the others' partials: their programs' first unit
            for k in range(k_lo, k_hi):
                assert (tile, k) not in covered
                covered[tile, k] = (p, split, parts)
    assert set(covered) == {(t, k) for t in range(whole, tiles) for k in range(k_steps)}
    for t in range(whole, tiles):
        owners = {covered[t, k] for k in range(k_steps)}
        parts = {o[2] for o in owners}
        assert parts == {len(owners)}  # every segment knows how many the tile has
        assert sorted(o[1] for o in owners) == list(range(len(owners)))
        waiter = next(o[0] for o in owners if o[1] == 0)
        assert all(o[0] < waiter for o in owners if o[1] > 0)  # it waits only for lower-numbered programs


def test_stream_k_is_refused_without_a_partial_wave_or_with_fewer_steps_than_programs():
    problem = importlib.import_module("kernels.gluon_hopper").stream_k_problem
    assert "whole waves" in problem(396, 28, 132)
    assert "fewer steps than 132 programs" in problem(10, 8, 132)
    assert problem(10, 14, 132) is None
