"""`gemmwatch resources`: the tuned kernels compiled for the target chip offline, their resource use read back."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import triton

ROOT = Path(__file__).resolve().parent.parent


def cli(*args, interpret=False):
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    return subprocess.run([sys.executable, "-m", "ci.cli", "resources", *args], cwd=ROOT, capture_output=True,
                          text=True, env=env, timeout=600)  # fmt: skip


def _config(bm, bn, bk, warps, stages, variant="tile", split_k=1):
    return {"block_m": bm, "block_n": bn, "block_k": bk, "num_warps": warps, "num_stages": stages, "group_m": 8,
            "variant": variant, "split_k": split_k}  # fmt: skip


def _resources_of(tmp_path, entries: dict, returncode: int = 0):
    """`gemmwatch resources --target h200` of a library of these entries (for the installed Triton)."""
    path = tmp_path / "lib.json"
    path.write_text(json.dumps({"target": "h200", "triton": triton.__version__, "meta": {}, "entries": entries}))
    proc = cli("--target", "h200", "--library", str(path))
    assert proc.returncode == returncode, proc.stderr
    return proc


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    entries = {
        "a": {"cell": "fp16 4096x4096x4096", "config": _config(128, 256, 64, 8, 3, "tma"), "speedup_over_native": 1.0},
        "b": {"cell": "bf16 16x4096x4096", "config": _config(16, 64, 64, 4, 3, "splitk", 4)},
        "c": {"cell": "fp8_e4m3 128x4096x4096", "config": _config(64, 64, 128, 4, 3)},
    }
    path = tmp_path_factory.mktemp("lib") / "lib.json"
    path.write_text(json.dumps({"target": "h200", "triton": triton.__version__, "meta": {}, "entries": entries}))
    return path


@pytest.fixture(scope="module")
def report(library):
    proc = cli("--target", "h200", "--library", str(library))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _rows(text):
    return [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines()[2:] if line.startswith("|")]


def test_every_kernel_of_every_config_is_compiled_for_the_target(report):
    rows = _rows(report)
    kernels = [(r[0], r[3]) for r in rows]
    assert kernels == [
        ("bf16 16x4096x4096", "_gemm_kernel"),
        ("bf16 16x4096x4096", "_splitk_reduce_kernel"),  # split-K: the second pass too
        ("fp16 4096x4096x4096", "_gemm_tma_kernel"),
        ("fp8_e4m3 128x4096x4096", "_gemm_kernel"),
    ]
    for row in rows:
        registers, spilled, shared_kib, programs = int(row[4]), row[5], float(row[6]), int(row[7])
        assert shared_kib > 0
        assert 0 < registers <= 255 and spilled.strip("*").isdigit()
        assert programs >= 1
    waits = {r[3]: r[8] for r in rows}
    assert waits["_splitk_reduce_kernel"] == "-"  # no matrix instructions at all
    assert float(waits["_gemm_tma_kernel"]) >= 2  # fp16: a K step's wgmmas chained, one wait
    tma = next(r for r in rows if r[3] == "_gemm_tma_kernel")
    # 128x64 + 64x256 fp16 tiles, 3 stages: 144 KiB of operand buffers at least, so one program per SM.
    assert float(tma[6]) >= 144 and int(tma[7]) == 1
    assert tma[2] == "1.000x" and rows[0][2] == "n/a"


def test_fma_decode_configs_compile_for_the_target_without_spilling(tmp_path):
    # The CUDA cores' decode tiles (no matrix instruction): a K step's products stay in registers.
    fma = {"fma": True}
    entries = {
        "a": {"cell": "fp16 1x4096x4096", "config": {**_config(1, 64, 128, 4, 2, "splitk_serial", 4), **fma}},
        "b": {"cell": "fp8_e4m3 1x4096x4096", "config": {**_config(1, 32, 256, 4, 3), **fma}},
    }
    proc = _resources_of(tmp_path, entries)
    rows = _rows(proc.stdout)
    assert [(r[0], r[1], r[3]) for r in rows] == [
        ("fp16 1x4096x4096", "`BM1-BN64-BK128-w4-s2-g8-sks4-fma`", "_gemm_kernel"),
        ("fp8_e4m3 1x4096x4096", "`BM1-BN32-BK256-w4-s3-g8-fma`", "_gemm_kernel"),
    ]
    for row in rows:
        assert row[5] == "0" and int(row[4]) <= 255, row  # no spills
        assert row[8] == "-", row  # no wgmma


def test_swap_ab_in_the_tma_kernel_gets_the_warpgroup_mma_and_a_deep_ring(tmp_path):
    # cuBLAS's decode structure: a 64-column (of N) x 16-row (of M) warpgroup MMA tile, its operands
    # streamed by TMA through a 12-16 slot ring, one program per tile.
    swap = {"swap_ab": True}
    entries = {
        "a": {"cell": "fp8_e4m3 1x3584x3584", "config": {**_config(16, 64, 128, 4, 12, "tma"), **swap}},
        "b": {"cell": "fp8_e4m3 16x4608x3584", "config": {**_config(16, 64, 128, 4, 16, "tma"), **swap,
                                                          "late_promotion": True}},
        "c": {"cell": "fp16 1x4608x3584", "config": {**_config(16, 64, 64, 4, 12, "tma"), **swap}},
    }  # fmt: skip
    proc = _resources_of(tmp_path, entries)
    rows = _rows(proc.stdout)
    assert len(rows) == 3 and {r[3] for r in rows} == {"_gemm_tma_kernel"}
    for row in rows:
        assert row[5] == "0" and row[8] != "-" and float(row[6]) >= 120, row  # no spills; wgmma; the ring


def test_one_row_gemv_tiles_keep_b_out_of_shared_memory(tmp_path):
    # fp8's B is K-major: a one-row fma tile takes the GEMV form, its 16 KiB K steps summed in
    # registers; shared memory holds only the epilogue's few KiB (the rows' 3-D form staged each
    # step's operands there, 17 KiB for a 32 x 512 tile with Triton 3.6), and 5 programs fit an SM.
    fma = {"fma": True}
    entries = {
        "a": {"cell": "fp8_e4m3 1x3584x3584", "config": {**_config(1, 64, 256, 4, 1, "splitk_serial", 8), **fma}},
        "b": {"cell": "fp8_e4m3 1x8192x8192", "config": {**_config(1, 16, 1024, 4, 1), **fma}},
        "c": {"cell": "fp8_e4m3 1x4096x4096", "config": {**_config(1, 32, 512, 4, 1, "splitk_serial", 4), **fma}},
    }  # fmt: skip
    proc = _resources_of(tmp_path, entries)
    rows = _rows(proc.stdout)
    assert len(rows) == 3 and {r[3] for r in rows} == {"_gemm_kernel"}
    for row in rows:
        assert row[5] == "0" and float(row[6]) <= 4.0 and int(row[7]) >= 4, row


def test_swap_ab_decode_configs_get_the_warpgroup_mma(tmp_path):
    # A 16-row tile computed transposed: B's 128 columns are a warpgroup MMA's rows (the plain
    # 16-row tile compiles to mma.sync: no wgmma at all), fp8 with and without late promotion.
    swap = {"swap_ab": True}
    entries = {
        "a": {"cell": "fp16 1x4096x4096", "config": {**_config(16, 128, 64, 4, 4, "splitk_serial", 4), **swap}},
        "b": {"cell": "fp8_e4m3 1x8192x8192", "config": {**_config(16, 128, 128, 4, 4, "splitk_serial", 4), **swap}},
        "c": {"cell": "fp8_e4m3 1x6144x4096",
              "config": {**_config(16, 128, 128, 8, 4, "splitk_serial", 8), **swap, "late_promotion": True}},
        "d": {"cell": "fp8_e4m3 16x4096x4096", "config": _config(16, 128, 128, 4, 4, "splitk_serial", 4)},
    }  # fmt: skip
    proc = _resources_of(tmp_path, entries)
    rows = {r[1]: r for r in _rows(proc.stdout) if r[3] == "_gemm_kernel"}
    assert len(rows) == 4
    for name, row in rows.items():
        assert row[5] == "0", row  # no spills
        if name.endswith("-swap`"):
            assert row[8] != "-", row  # warpgroup MMAs
        else:
            assert row[8] == "-", row
    assert float(rows["`BM16-BN128-BK64-w4-s4-g8-sks4-swap`"][8]) >= 4  # fp16: a K step's MMAs chained


def test_deep_pipelines_of_memory_bound_shapes_fit_the_shared_memory(tmp_path):
    # 8-stage 64x128 tiles (fp16 and fp8, pointer loads and TMA) and 16-row decode tiles (plain, and
    # swap-AB with 6 stages, and fp8 with 16): within the H200's 227 KiB per block, one program per
    # SM, no spills.
    entries = {
        "a": {"cell": "fp16 128x4096x4096", "config": _config(64, 128, 64, 4, 8)},
        "b": {"cell": "fp8_e4m3 128x8192x8192", "config": _config(64, 128, 128, 4, 8, "tma")},
        "c": {"cell": "bf16 16x4096x4096", "config": _config(16, 64, 128, 4, 8)},
        "d": {"cell": "bf16 16x4096x4096", "config": {**_config(16, 128, 128, 4, 6), "swap_ab": True}},
        "e": {"cell": "fp8_e4m3 1x4096x4096", "config": _config(16, 64, 128, 4, 16)},  # cuBLAS's depth
    }
    proc = _resources_of(tmp_path, entries)
    rows = _rows(proc.stdout)
    assert len(rows) == 5
    for row in rows:
        assert row[5] == "0" and 100 <= float(row[6]) <= 227 and int(row[7]) == 1, row


def test_bad_input_is_refused_by_name(library, tmp_path):
    proc = cli("--target", "h200", "--library", str(library), interpret=True)
    assert proc.returncode == 2 and "unset TRITON_INTERPRET" in proc.stderr
    proc = cli("--target", "mi300x", "--library", str(library))
    assert proc.returncode == 2 and "'mi300x' is not an NVIDIA catalogue entry" in proc.stderr
    proc = cli("--target", "h200", "--library", str(library), "--cells", "fp16 1x2x3")
    assert proc.returncode == 2 and "no library entry for cell(s) fp16 1x2x3" in proc.stderr
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"target": "h200", "triton": "0.0.1", "meta": {}, "entries": {}}))
    proc = cli("--target", "h200", "--library", str(other))
    assert proc.returncode == 2 and "tuned with Triton 0.0.1" in proc.stderr
    proc = cli("--target", "h200", "--library", str(tmp_path / "missing.json"))
    assert proc.returncode == 2 and "missing.json" in proc.stderr


def test_a_config_the_launcher_refuses_is_a_row_with_its_reason_and_the_others_are_still_compiled(tmp_path):
    swap = {**_config(128, 64, 64, 4, 3, "tma"), "swap_ab": True}  # (swap-AB is for 16- and 8-bit operands)
    entries = {
        "x": {"cell": "fp32-ieee 16x4096x4096", "config": swap},
        "y": {"cell": "bf16 16x4096x4096", "config": _config(16, 64, 64, 4, 3, "splitk", 4)},
    }
    proc = _resources_of(tmp_path, entries, returncode=1)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "1 config(s) not compiled: fp32-ieee 16x4096x4096: BM128-BN64-BK64-w4-s3-g8-tma-swap" in proc.stderr
    rows = _rows(proc.stdout)
    assert [r[0] for r in rows] == ["bf16 16x4096x4096"] * 2 + ["fp32-ieee 16x4096x4096"]  # (split K: two kernels)
    assert rows[2][3].startswith("**not compiled**: ValueError: config BM128-BN64-BK64-w4-s3-g8-tma-swap cannot run")


WS_CHECK = """
import re, sys, torch
from triton.runtime import driver
import kernels.matmul  # noqa: F401
from ci.resources import _offline_driver
import targets.configs
from targets import GemmConfig
m = sys.modules["kernels.matmul"]
if sys.argv[2] == "hopper-partitions":  # as if the installed Triton were listed as running them
    targets.configs.HOPPER_WARP_SPECIALIZING_TRITON = (__import__("triton").__version__,)
driver.set_active(_offline_driver(int(sys.argv[1])))
a, b, out = torch.empty(512, 512, dtype=torch.float16), torch.empty(512, 512, dtype=torch.float16), torch.empty(512, 512, dtype=torch.float16)
with m.compile_only(132) as kernels:
    m.matmul(a, b, out=out, config=CONFIG)
print(len(re.findall("setmaxnreg", kernels[0].asm["ptx"])), kernels[0].metadata.num_warps)
"""


@pytest.mark.parametrize(
    ("capability", "config", "hopper_partitions", "partitioned"),
    [
        (100, "GemmConfig(128, 128, 64, 4, 3, variant='tma_ws')", False, True),
        # Hopper: the loop stays flattened, so unpartitioned, while no Triton is listed as running
        # the partitioned kernels (configs.HOPPER_WARP_SPECIALIZING_TRITON: 3.6's hung on the H200).
        (90, "GemmConfig(128, 128, 64, 4, 3, variant='tma_ws')", False, False),
        (90, "GemmConfig(128, 256, 64, 4, 3, variant='tma_ws')", False, False),
        # Listed, the loop is unflattened and 3.6 partitions it for 4-warp configs of >= 128 rows.
        (90, "GemmConfig(128, 128, 64, 4, 3, variant='tma_ws')", True, True),
        (90, "GemmConfig(128, 256, 64, 4, 3, variant='tma_ws')", True, True),
        (90, "GemmConfig(128, 256, 64, 8, 3, variant='tma_ws')", True, False),  # 8 warps: left alone on sm_90
        (90, "GemmConfig(128, 128, 64, 4, 3, variant='tma')", True, False),
    ],
)
def test_warp_specialization_takes_effect_where_the_spec_says(capability, config, hopper_partitions, partitioned):
    # The source of TargetSpec.auto_warp_specialize and of the Hopper rule in configs._variants:
    # the compiler splits the TMA kernel's loop into partitions (register rebalancing between
    # them, extra warps) on sm_100 with the loop flattened, and on sm_90 with it unflattened (the
    # kernel's FLATTEN follows the target and configs.hopper_partitions()) for 4-warp configs of
    # >= 128 rows.
    import triton

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    mode = "hopper-partitions" if hopper_partitions else "as-installed"
    proc = subprocess.run([sys.executable, "-c", WS_CHECK.replace("CONFIG", config), str(capability), mode],
                          cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)  # fmt: skip
    if capability == 90 and partitioned and not triton.__version__.startswith("3.6."):
        # Triton 3.9 fails to compile the unflattened Hopper loop.
        assert proc.returncode != 0 and "descriptor block and tensor" in proc.stderr, proc.stderr[-2000:]
        return
    assert proc.returncode == 0, proc.stderr
    setmaxnreg, warps = map(int, proc.stdout.split())
    assert (setmaxnreg > 0 and warps > 4) == partitioned, (setmaxnreg, warps)


PRECOMPILE_CHECK = """
import sys, torch
from triton.runtime import driver
import kernels.matmul  # noqa: F401
from ci.resources import _offline_driver
from kernels import autotune
from targets import GemmConfig
m = sys.modules["kernels.matmul"]
driver.set_active(_offline_driver(90))
captured = {}
def fake_run(key, launch, *, forced=None, precompile=None, ineligible=None):
    captured.update(launch=launch, precompile=precompile)
autotune.run = fake_run
def check(a, b, configs):
    with m.compile_only(132):
        m.matmul(a, b)  # autotune.run is replaced: this only builds the launcher's closures
    jobs = []
    autotune.compile_in_parallel = lambda worker, js: jobs.extend((worker, j) for j in js)
    with m.compile_only(132):  # the SM count the persistent kernel's program count comes from
        captured["precompile"](configs)
    for cfg, (worker, job) in zip(configs, jobs):
        with m.compile_only(132) as launched:
            captured["launch"](cfg)
        kernel = m._gemm_tma_kernel if job[0] == "tma" else m._gemm_kernel
        original = kernel.warmup
        hashes = []
        kernel.warmup = lambda *args, **kw: hashes.append(original(*args, **kw).hash)
        worker(*job)
        kernel.warmup = original
        print(cfg, hashes[0] == launched[0].hash)
check(torch.empty(256, 192, dtype=torch.float16), torch.empty(192, 320, dtype=torch.float16).t().contiguous().t(),
      [GemmConfig(128, 64, 64, 4, 3, variant="tma"), GemmConfig(64, 64, 64, 4, 3),
       GemmConfig(64, 64, 32, 4, 2, variant="splitk", split_k=2),
       GemmConfig(64, 64, 32, 4, 2, variant="splitk_serial", split_k=2),
       GemmConfig(128, 64, 64, 4, 3, variant="tma_store")])
check(torch.empty(100, 190, dtype=torch.float16), torch.empty(190, 333, dtype=torch.float16),  # odd rows
      [GemmConfig(64, 64, 64, 4, 3, variant="tma", pad=True), GemmConfig(64, 64, 64, 4, 3, pad=True),
       GemmConfig(16, 64, 32, 4, 2, variant="splitk", split_k=2, pad=True), GemmConfig(64, 64, 64, 4, 3)])
check(torch.empty(100, 200, dtype=torch.float16), torch.empty(200, 360, dtype=torch.float16),  # rows off the lines
      [GemmConfig(64, 64, 64, 4, 3, variant="tma", pad_a=True), GemmConfig(64, 64, 64, 4, 3, variant="tma", pad_b=True),
       GemmConfig(64, 64, 64, 4, 3, pad_b=True)])
"""


def test_the_compile_workers_build_the_binaries_the_launch_uses():
    # The parallel precompile sends types, not tensors (and descriptors as dtype + block); what the
    # workers compile must be the very binary the launch then looks up, or the cache is useless.
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.run([sys.executable, "-c", PRECOMPILE_CHECK], cwd=ROOT, capture_output=True, text=True,
                          env=env, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split("\n")[:-1]
    assert len(lines) == 12 and all(line.endswith(" True") for line in lines), proc.stdout


VECTOR_CHECK = """
import re, sys, torch
from triton.runtime import driver
import kernels.matmul  # noqa: F401
from ci.resources import _offline_driver
from targets import GemmConfig
m = sys.modules["kernels.matmul"]
driver.set_active(_offline_driver(90))
for M, N, K, cfg in [
    (1000, 1000, 1000, GemmConfig(128, 128, 64, 8, 3)),
    (3000, 5000, 1000, GemmConfig(128, 128, 64, 8, 3, variant="tma")),
    (127, 4097, 1023, GemmConfig(64, 64, 64, 4, 3, pad=True)),
    (127, 4097, 1023, GemmConfig(64, 64, 64, 4, 3)),
]:
    a, b = torch.empty(M, K, dtype=torch.float16), torch.empty(K, N, dtype=torch.float16)
    with m.compile_only(132) as compiled:
        m.matmul(a, b, config=cfg)
    ptx = compiled[0].asm["ptx"]
    loads = "vector" if re.search(r"cp\\.async\\.(cg|bulk)", ptx) and not re.search(r"ld\\.global\\.b16", ptx) else "scalar"
    stores = "vector" if re.search(r"st\\.global\\.v4", ptx) else "scalar"
    print(M, N, K, cfg, loads, stores)
"""


def test_sizes_that_are_multiples_of_8_and_aligned_copies_get_vector_memory_access():
    # Triton marks integers divisible by 16 on its own; 1000 and 5000 (multiples of 8) lost
    # vectorized loads and stores until the launcher passed their divisibility, and rows of odd
    # length get them only on aligned copies ("pad").
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.run([sys.executable, "-c", VECTOR_CHECK], cwd=ROOT, capture_output=True, text=True,
                          env=env, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    access = [line.split()[-2:] for line in proc.stdout.splitlines()]
    assert access == [
        ["vector", "vector"],  # 1000^3, tile kernel: cp.async 16-byte loads, v4 stores
        ["vector", "vector"],  # 3000x5000x1000, TMA kernel: its epilogue's stores
        ["vector", "scalar"],  # odd rows on aligned copies: the loads (C's rows stay odd)
        ["scalar", "scalar"],  # the same without the copies
    ], proc.stdout


LATE_PROMOTION_CHECK = """
import re, subprocess, sys, tempfile, torch, triton
from pathlib import Path
from triton.runtime import driver
import kernels.matmul  # noqa: F401
from ci.resources import _offline_driver
from targets import GemmConfig
m = sys.modules["kernels.matmul"]
driver.set_active(_offline_driver(90))
tool = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
for M, cfg in [(128, GemmConfig(64, 64, 128, 4, 4)), (128, GemmConfig(64, 64, 128, 4, 4, late_promotion=True)),
               (4096, GemmConfig(128, 128, 128, 8, 4, variant="tma")),
               (4096, GemmConfig(128, 128, 128, 8, 4, variant="tma", late_promotion=True))]:
    a = torch.empty(M, 4096, dtype=torch.float8_e4m3fn)
    b = torch.empty(4096, 4096, dtype=torch.float8_e4m3fn).t()
    one = torch.tensor(1.0)
    with m.compile_only(132) as compiled:
        m.scaled_matmul(a, b, one, one, out_dtype=torch.bfloat16, config=cfg)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "k.cubin"
        path.write_bytes(compiled[0].asm["cubin"])
        sass = subprocess.run([str(tool), "-sass", str(path)], capture_output=True, text=True, check=True).stdout
    ops = [("G" if "GMMA" in l else "W" if "DEPBAR.LE gsb0, 0x0" in l else "F")
           for l in sass.splitlines() if re.search(r"GMMA|DEPBAR.LE gsb0, 0x0|FADD", l)]
    first = ops.index("G")
    print(cfg, ops[first:ops.index("W", first)].count("F"))
"""


def test_late_promotion_adds_the_partial_sums_while_the_mmas_run():
    # fp8 with precise accumulation: Triton's own promotion (max_num_imprecise_acc) waits for the
    # K step's MMAs and then adds their partial sum, with the tensor cores idle; the late
    # promotion's adds of the previous step's partial are issued between the step's MMAs.
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.run([sys.executable, "-c", LATE_PROMOTION_CHECK], cwd=ROOT, capture_output=True, text=True,
                          env=env, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    overlapped = {line.rsplit(" ", 1)[0]: int(line.rsplit(" ", 1)[1]) for line in proc.stdout.splitlines()}
    assert overlapped["BM64-BN64-BK128-w4-s4-g8"] == 0 and overlapped["BM128-BN128-BK128-w8-s4-g8-tma"] == 0
    assert overlapped["BM64-BN64-BK128-w4-s4-g8-lp"] >= 8, proc.stdout
    assert overlapped["BM128-BN128-BK128-w8-s4-g8-tma-lp"] >= 4, proc.stdout


def test_wgmma_per_wait_counts_the_chains_a_wait_ends():
    from ci.resources import mma_per_wait

    chained = "\n".join(["HGMMA.64x256x16.F32 R24, gdesc[UR4], R24 ;"] * 4 + ["WARPGROUP.DEPBAR.LE gsb0, 0x0 ;"])
    assert mma_per_wait(chained + "\nWARPGROUP.DEPBAR.LE gsb0, 0x1 ;\n" + chained) == 4.0
    serial = "QGMMA.64x128x32.F32.E4M3.E4M3 R24, gdesc[UR8], R24 ;\nWARPGROUP.DEPBAR.LE gsb0, 0x0 ;\n" * 8
    assert mma_per_wait(serial) == 1.0
    assert mma_per_wait("HMMA.16816.F32 R4, R8, R12, R4 ;\nFADD R1, R2, R3 ;") is None  # mma.sync, no wgmma
