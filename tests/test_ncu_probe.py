"""ci/ncu_probe.py without a GPU: its details-page reader and table, and its refusals. (Nsight
Compute itself runs on the GPU box only; the table below has the columns of its details page as
`ncu --import R --csv --page details` writes them.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ci import ncu_probe

ROOT = Path(__file__).resolve().parents[1]
HEADER = (
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
    '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"'
)


def _row(kid, kernel, block, grid, section, name, unit, value):
    fields = [
        kid,
        "4242",
        "python3",
        "127.0.0.1",
        kernel,
        "1",
        "7",
        block,
        grid,
        "0",
        "9.0",
        section,
        name,
        unit,
        value,
    ]
    return ",".join(f'"{f}"' for f in fields)


def _details(tmp_path: Path) -> Path:
    ours = ("0", "_gemm_ws_kernel", "(384, 1, 1)", "(96, 1, 1)")
    memset = ("1", "Memset (Device)", "(1, 1, 1)", "(1, 1, 1)")
    cublas = ("2", "nvjet_sm90_qqtst_128x128_128x6_2x1_v_bz_coopA_TNT(cublasLt::Params)", "(384, 1, 1)", "(132, 1, 1)")
    sol, mem = "GPU Speed Of Light Throughput", "Memory Workload Analysis"
    lines = [
        "==PROF== Connected to process 4242",
        HEADER,
        _row(*ours, sol, "Duration", "usecond", "13.82"),
        _row(*ours, sol, "Compute (SM) Throughput", "%", "41.5"),
        _row(*ours, sol, "Memory Throughput", "%", "63.2"),
        _row(*ours, sol, "DRAM Throughput", "%", "38.9"),
        _row(*ours, sol, "L2 Cache Throughput", "%", "63.2"),
        _row(*ours, mem, "Memory Throughput", "Tbyte/second", "1.86"),  # (the same name, another unit)
        _row(*ours, mem, "L2 Hit Rate", "%", "79.4"),
        _row(*ours, "Occupancy", "Achieved Occupancy", "%", "9.2"),
        _row(*ours, "Launch Statistics", "Registers Per Thread", "register/thread", "168"),
        _row(*ours, "Warp State Statistics", "Warp Cycles Per Issued Instruction", "cycle", "1,234.5"),
        _row(*ours, "Command line profiler metrics", "lts__t_sectors_op_read.sum", "sector", "1,950,000"),
        _row(*ours, "Command line profiler metrics", "dram__bytes_read.sum", "Mbyte", "16.94"),
        _row(*memset, sol, "Duration", "nsecond", "1,472"),
        _row(*cublas, sol, "Duration", "usecond", "11.10"),
        _row(*cublas, sol, "Compute (SM) Throughput", "%", "55.0"),
    ]
    path = tmp_path / "cell--side.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_details_page_is_read_per_kernel_with_units_and_separators(tmp_path):
    kernels = ncu_probe.read_details(_details(tmp_path))
    assert [k["kernel"] for k in kernels][:2] == ["_gemm_ws_kernel", "Memset (Device)"]
    ours, memset, cublas = kernels
    assert ncu_probe._value(ours, "Duration", "us") == pytest.approx(13.82)
    assert ncu_probe._value(memset, "Duration", "us") == pytest.approx(1.472)  # ns, with a thousands separator
    assert ncu_probe._value(ours, "Memory Throughput", "%") == pytest.approx(63.2)  # the % one, not Tbyte/s
    assert ncu_probe._value(ours, "Warp Cycles Per Issued Instruction", "") == pytest.approx(1234.5)
    assert ncu_probe._value(cublas, "L2 Hit Rate", "%") is None
    table = ncu_probe.summary({"library": [ours], "native": [memset, cublas]})
    assert (
        "| library | _gemm_ws_kernel | 13.8 | 41.5 | 63.2 | 38.9 | 63.2 | 79.4 | 9.2 | 168 | 1234.5 | 62.4 | 16.9 |"
        in table
    )  # (1,950,000 sectors of 32 bytes read at L2)
    assert ncu_probe._value(ours, "dram__bytes_read.sum", "MB") == pytest.approx(16.94)
    # a C++ signature shortened to the kernel's name; a figure ncu did not give is "-"
    assert "| native | nvjet_sm90_qqtst_128x128_128x6_2x1_v_bz_coopA_TNT | 11.1 | 55.0 | - |" in table
    assert ncu_probe._per_call_us([memset, cublas], 1) == pytest.approx(12.572)
    assert ncu_probe._per_call_us([ours, ours], 2) == pytest.approx(13.82)


def test_a_details_page_written_by_ncu_on_the_h200_is_read():
    # ncu 2025.3.1 on the H200 (2026-12-02): fp8 128x6144x4096, BM128-BN64-BK128-w8-s8-g8-gluon-wg;
    # its columns past "Metric Value" (rule names and descriptions) are left aside
    (ours,) = ncu_probe.read_details(ROOT / "tests" / "golden" / "ncu-details-h200.csv")
    assert (ours["kernel"], ours["grid"], ours["block"]) == ("_gemm_ws_kernel", "(96, 1, 1)", "(384, 1, 1)")
    assert ncu_probe._value(ours, "Duration", "us") == pytest.approx(13.95)
    assert ncu_probe._value(ours, "Elapsed Cycles", "") == pytest.approx(25064)  # (a thousands separator)
    assert ncu_probe._value(ours, "DRAM Throughput", "%") == pytest.approx(38.49)
    assert ncu_probe._value(ours, "Registers Per Thread", "") == 168
    table = ncu_probe.summary({"library": [ours]})
    # (that page predates the raw read counters: "-")
    assert "| library | _gemm_ws_kernel | 13.9 | 23.9 | 38.5 | 38.5 | 45.3 | 37.5 | 19.5 | 168 | 7.7 | - | - |" in table


def test_summarize_prints_the_table_of_saved_csvs(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "ci.ncu_probe", "--summarize", str(_details(tmp_path))], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "| cell--side | _gemm_ws_kernel | 13.8 |" in proc.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--summarize", "{tmp}/none.csv"], "none.csv"),
        (["--summarize", "{tmp}/empty.csv"], 'no ncu details table (a header row starting with "ID")'),
        (["--cells", "fp99 1x1x1", "--out", "{tmp}/o"], "unknown dtype 'fp99'"),
        (["--cells", "fp16 64x64x64", "--configs", "BM64-BN64", "--out", "{tmp}/o"], "not a GEMM config name"),
        (["--cells", "fp16 64x64x64", "--out", "{tmp}/o", "--ncu", "{tmp}/no-ncu"], "no Nsight Compute"),
        (["--cells", "fp16 64x64x64"], "--cells and --out are needed"),
        (["--cells", "fp16 64x64x64", "--out", "{tmp}/o", "--launches", "0"], "--launches must be >= 1, got 0"),
    ],
)
def test_bad_input_is_refused_with_a_message_naming_it(tmp_path, args, message):
    (tmp_path / "empty.csv").write_text("==PROF== nothing profiled\n")
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    proc = subprocess.run([sys.executable, "-m", "ci.ncu_probe", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


def test_the_profiled_side_needs_a_gpu():
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is here")
    proc = subprocess.run([sys.executable, "-m", "ci.ncu_probe", "--child", "--cell", "fp16 64x64x64", "--side",
                           "native", "--launches", "1"], cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 2 and "needs a CUDA GPU" in proc.stderr, proc.stderr


def test_side_names_are_file_names():
    assert ncu_probe.side_name("fp8_e4m3 128x6144x4096", "native") == "fp8_e4m3-128x6144x4096--native"
    assert ncu_probe.side_name("fp16 64x64x64 bias+gelu", "BM64-BN64-BK64-w4-s3-g8") == (
        "fp16-64x64x64-bias-gelu--BM64-BN64-BK64-w4-s3-g8"
    )


@pytest.mark.gpu
def test_the_probe_profiles_both_sides_of_a_cell_on_the_gpu(tmp_path):
    import shutil

    import torch

    if not torch.cuda.is_available() or shutil.which("ncu") is None:
        pytest.skip("needs a GPU and Nsight Compute (ncu on PATH)")
    proc = subprocess.run([sys.executable, "-m", "ci.ncu_probe", "--cells", "fp16 1024x1024x1024", "--out",
                           str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for side in ("library", "native"):
        kernels = ncu_probe.read_details(tmp_path / f"{ncu_probe.side_name('fp16 1024x1024x1024', side)}.csv")
        assert kernels and all(ncu_probe._value(k, "Duration", "us") > 0 for k in kernels), side
    assert "| library |" in proc.stdout and "| native |" in proc.stdout and "x native (" in proc.stdout


def _library(tmp_path: Path) -> Path:
    """A bucket of two cells: 64^3 runs the bucket's config, 50x60x40 its own (faster there by more
    than the library's margin)."""
    import json

    from targets import GemmConfig

    bucket, own = GemmConfig(64, 64, 64, 4, 3), GemmConfig(32, 64, 64, 4, 2)
    other, worst = GemmConfig(64, 32, 64, 4, 3), GemmConfig(16, 64, 64, 4, 2)
    cells = {
        "fp16 64x64x64": {"tried": {str(bucket): 0.10, str(other): 0.12, str(own): 0.13, str(worst): 0.2}},
        "fp16 50x60x40": {"tried": {str(bucket): 0.10, str(other): 0.11, str(own): 0.05, str(worst): 0.2}},
    }
    entries = {"matmul|fp16|-|rowrow|64x64x64": {"config": bucket.as_dict(), "cell": "fp16 64x64x64", "cells": cells}}
    path = tmp_path / "lib.json"
    path.write_text(json.dumps({"target": "h200", "triton": "3.6.0", "entries": entries}))
    return path


def test_runners_up_are_the_librarys_config_and_the_fastest_others_its_tune_timed(tmp_path):
    lib = _library(tmp_path)
    assert [c for c, _ in ncu_probe.tuned_sides(lib, "fp16 64x64x64", 2)] == [
        "BM64-BN64-BK64-w4-s3-g8", "BM64-BN32-BK64-w4-s3-g8", "BM32-BN64-BK64-w4-s2-g8",
    ]  # fmt: skip
    # 50x60x40 runs its own config (`Library.shape_configs`), then the bucket's, then the next
    assert ncu_probe.tuned_sides(lib, "fp16 50x60x40", 2) == [
        ("BM32-BN64-BK64-w4-s2-g8", 0.05), ("BM64-BN64-BK64-w4-s3-g8", 0.10), ("BM64-BN32-BK64-w4-s3-g8", 0.11),
    ]  # fmt: skip
    proc = subprocess.run([sys.executable, "-m", "ci.ncu_probe", "--cells", "fp16 50x60x40", "--runners-up", "1",
                           "--library", str(lib), "--out", str(tmp_path / "o"), "--dry-run"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "fp16 50x60x40: BM32-BN64-BK64-w4-s2-g8, BM64-BN64-BK64-w4-s3-g8, native" in proc.stdout
    assert not (tmp_path / "o").exists()  # (a dry run writes nothing)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--cells", "fp16 128x128x128", "--runners-up", "1"],
            "no entry of {lib} was tuned on the cell 'fp16 128x128x128'",
        ),
        (["--cells", "fp16 64x64x64", "--runners-up", "-1"], "--runners-up must be >= 0, got -1"),
    ],
)
def test_runners_up_refuse_a_cell_the_library_does_not_hold(tmp_path, args, message):
    lib = _library(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "ci.ncu_probe", *args, "--library", str(lib), "--out",
                           str(tmp_path / "o")], cwd=ROOT, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 2 and message.format(lib=lib) in proc.stderr, proc.stderr
    assert not (tmp_path / "o").exists()


def test_an_earlier_probes_files_are_never_overwritten(tmp_path):
    out = tmp_path / "o"
    out.mkdir()
    earlier = out / f"{ncu_probe.side_name('fp16 64x64x64', 'native')}.csv"
    earlier.write_text("an earlier probe's table\n")
    proc = subprocess.run([sys.executable, "-m", "ci.ncu_probe", "--cells", "fp16 64x64x64", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert (
        proc.returncode == 2
        and f"{earlier} exists, from an earlier probe: give another --out (1 of this" in proc.stderr
    )
    assert earlier.read_text() == "an earlier probe's table\n" and sorted(out.iterdir()) == [earlier]
