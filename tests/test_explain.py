"""`gemmwatch explain` on a real H200 run: the launch-level facts of each cell below native."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from ci import cli
from ci.explain import explain, main_kernel, native_tile
from ci.ncu_probe import short_kernel_name
from ci.run import suite_context_cells

ROOT = Path(__file__).resolve().parent.parent
EV = ROOT / "docs" / "results" / "2026-12-03-h200-pingpong" / "ev"  # (cold and warm runs, 1394fb3)


@pytest.fixture(scope="module")
def context(tmp_path_factory) -> Path:
    """The warm run's context (<Suite>.json files with our configs and the native kernels)."""
    out = tmp_path_factory.mktemp("ctx")
    with tarfile.open(EV / "warm-context.tgz") as tar:
        tar.extractall(out, filter="data")
    (directory,) = (out / "context" / "h200").iterdir()
    return directory


def test_native_tiles_and_clusters_are_read_from_the_kernel_names():
    t = native_tile("nvjet_sm90_hsh_160x256_64x3_2x1_v_bz_coopA_NNN")
    assert (t.m, t.n, t.cluster, t.cluster_size) == (160, 256, (2, 1), 2)
    assert native_tile("nvjet_sm90_qqtst_72x64_128x12_4x2_h_bz_algo2_TNN").cluster_size == 8
    assert native_tile("cutlass3x_sm90_tensorop_gemm_f16_f16_f32_f16_f16_128x256x64_2x1x1_0_tnn_align8").cluster == (
        2,
        1,
    )
    older = native_tile("void cutlass::Kernel2<cutlass_75_tensorop_f16_s1688gemm_f16_128x128_nn_align1>(Params)")
    assert (older.m, older.n, older.cluster) == (128, 128, (1, 1))
    assert native_tile("Memset (Device)") is None
    gemv = "std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, __half>(cublasGemvParamsEx<int>)"
    assert native_tile(gemv) is None
    # (its name, not its return type's parenthesis; a CUTLASS kernel without `void` and its signature)
    assert short_kernel_name(gemv) == "internal::gemvx::kernel<int, int, __half>"
    assert (
        short_kernel_name("void cutlass::Kernel2<k_128x128_nn_align1>(Params)")
        == "cutlass::Kernel2<k_128x128_nn_align1>"
    )
    assert short_kernel_name("x" * 80, 20) == "x" * 17 + "..."


def test_the_gemm_kernel_is_picked_over_memsets_and_split_k_reductions():
    launches = [
        {"name": "Memset (Device)"},
        {"name": "nvjet_sm90_hsh_128x16_64x11_4x1_v_bz_splitK_NNT", "grid": [4, 28, 1]},
        {"name": "void cublasLt::splitKreduce_kernel<32, 16>(params)", "grid": [129, 4, 1]},
    ]
    name, launch = main_kernel([], launches)
    assert name.startswith("nvjet_sm90_hsh_128x16") and launch["grid"] == [4, 28, 1]
    assert (
        main_kernel(["Memset (Device)", "internal::gemvx::kernel<int>(p)"], [])[0] == "internal::gemvx::kernel<int>(p)"
    )
    assert main_kernel([], []) == (None, None)


def test_our_clusters_are_shown_and_only_a_larger_native_cluster_is_a_difference():
    from ci.explain import explain_cell

    native = {"native_kernels": ["nvjet_sm90_qqtst_128x128_128x6_2x1_v_bz_coopA_algo2_TNT"]}
    plain = explain_cell(
        "fp8_e4m3 4096x3584x3584", 0.92, {"config": "BM128-BN128-BK128-w8-s6-g8-gluon-wg", **native}, 132
    )
    assert "native clusters of 2 (operand tiles multicast)" in plain["facts"]
    paired = explain_cell(
        "fp8_e4m3 4096x3584x3584", 0.97, {"config": "BM128-BN128-BK128-w8-s6-g8-gluon-wg-cn2", **native}, 132
    )
    assert paired["ours"].startswith("128x128, cluster 1x2: 896 tiles") and "native clusters" not in paired["facts"]
    eight = {"native_kernels": ["nvjet_sm90_qqtst_72x64_128x12_4x2_h_bz_algo2_TNN"]}
    small = explain_cell(
        "fp8_e4m3 128x3584x3584", 0.9, {"config": "BM64-BN64-BK128-w4-s8-g8-gluon-ws-cm2", **eight}, 132
    )
    assert "native clusters of 8 (operand tiles multicast), ours of 2" in small["facts"]


def test_operand_reads_from_l2_count_a_multicast_tile_once_per_cluster():
    from ci.explain import explain_cell

    # fp8 128x4608x3584: cuBLAS's 72 x 64 tiles (its first side along our N), two along our M in a
    # cluster sharing B's 72 columns: 128 tiles x (64 + 72 / 2) per K step; our 64 x 72 tiles read
    # 128 x (64 + 72), 1.36x; our 128 x 72 tiles split in two units, 64 x (128 + 72): as native
    native = {"native_kernels": ["nvjet_sm90_qqtst_72x64_128x12_1x2_h_bz_algo2_TNN"]}
    cell = "fp8_e4m3 128x4608x3584"
    whole = explain_cell(cell, 0.81, {"config": "BM64-BN64-BK128-w4-s8-g8-gluon-ws-xn8", **native}, 132)
    assert "1.36x native's operand reads from L2" in whole["facts"]
    assert "outputs of native's" not in whole["facts"]  # (the same tiles, one round each)
    split = explain_cell(cell, 0.9, {"config": "BM128-BN64-BK128-w8-s8-g8-gluon-wg-sk2-xn8", **native}, 132)
    assert "reads from L2" not in split["facts"] and "ours splits K" in split["facts"]
    # our own clusters count the same way: two CTAs along M share B's tile, as cuBLAS's two along
    # its first side (our N) share A's: the same reads
    native = {"native_kernels": ["nvjet_sm90_qqtst_128x128_128x6_2x1_v_bz_coopA_algo2_TNT"]}
    paired = explain_cell(
        "fp8_e4m3 4096x3584x3584", 0.97, {"config": "BM128-BN128-BK128-w8-s6-g8-gluon-ws-cm2", **native}, 132
    )
    assert paired["ours"].startswith("128x128, cluster 2x1: 896 tiles") and "reads from L2" not in paired["facts"]
    alone = explain_cell(
        "fp8_e4m3 4096x3584x3584", 0.95, {"config": "BM128-BN128-BK128-w8-s6-g8-gluon-ws", **native}, 132
    )
    assert "1.33x native's operand reads from L2" in alone["facts"]  # (256 against 192 per tile)


def test_every_cell_below_native_is_listed_with_its_launches(context):
    rows = explain(EV / "run-warm.json.gz", suite_context_cells(context), 1.0, 132)
    assert len(rows) == 84  # (169 fp16/bf16/fp8 cells, 85 of them >= 1.00x in this run)
    assert [r["speedup"] for r in rows] == sorted(r["speedup"] for r in rows) and rows[-1]["speedup"] < 1.0
    by = {r["cell"]: r for r in rows}
    # the ncu reading (this session): cuBLAS's 160 x 256 tiles in clusters of 2 make 3 rounds of
    # tiles where our 128 x 256 make 4
    short = by["fp16 3000x5000x1000"]
    assert short["native_tiles"] == 384 and short["native_cluster"] == 2
    assert "clusters of 2" in short["facts"] and "1.07x the outputs" in short["facts"]
    assert short["ours"].startswith("128x256: 480 tiles")
    # cuBLAS's view is transposed (its tile's first side along our N): where its kernel is not
    # persistent and does not split K, the launched CTAs are its tiles, rounded up to whole clusters
    checked = 0
    for r in rows:
        ctas, tiles = r.get("native_ctas"), r.get("native_tiles")
        if ctas and tiles and ctas >= tiles and not r["native_splits_k"]:
            cluster = r["native_cluster"]
            assert ctas == -(-tiles // cluster) * cluster, r
            checked += 1
    assert checked >= 30
    # a split-K native kernel (a CUTLASS kernel over 8 slices of K, then a reduction) is said so
    assert "native splits K" in by["fp16 127x4097x1023"]["facts"]


def test_the_cli_prints_the_table_and_refuses_what_it_cannot_read(context, tmp_path, capsys):
    assert cli.main(["explain", str(EV / "run-warm.json.gz"), "--context", str(context)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| cell | speedup |") and "84 cells below" in out
    assert "`nvjet_sm90_hsh_160x256_64x3_2x1_v_bz_coopA_NNN`" in out
    # no context beside the results (ci/gpu_evidence.sh packs it apart)
    assert cli.main(["explain", str(EV / "run-warm.json.gz")]) == 2
    assert "no context beside" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli.main(["explain", str(EV / "run-warm.json.gz"), "--context", str(empty)]) == 2
    assert f"--context {empty}: no suite context files" in capsys.readouterr().err
    assert cli.main(["explain", str(EV / "run-warm.json.gz"), "--context", str(context), "--below", "0"]) == 2
    assert "--below must be a speedup > 0" in capsys.readouterr().err
    assert cli.main(["explain", str(tmp_path / "missing.json"), "--context", str(context)]) == 2
    assert "missing.json" in capsys.readouterr().err


def test_our_extra_columns_count_in_the_tile_and_its_waves():
    from ci.explain import explain_cell

    native = {"native_kernels": ["nvjet_sm90_qqtst_72x64_128x12_1x2_h_bz_algo2_TNN"]}
    wide = explain_cell(
        "fp8_e4m3 128x4608x3584", 0.9, {"config": "BM64-BN64-BK128-w4-s8-g8-gluon-ws-xn8", **native}, 132
    )
    assert wide["ours"].startswith("64x72: 128 tiles, 0.97 waves"), wide


def test_operand_rows_off_the_128_byte_lines_are_named():
    from ci.explain import explain_cell, unaligned_rows
    from ci.explain import render as render_rows

    native = {"native_kernels": ["nvjet_sm90_hsh_160x256_64x3_2x1_v_bz_coopA_NNN"]}
    row = explain_cell("fp16 3000x5000x1000", 0.77, {"config": "BM128-BN256-BK64-w8-s4-g8-tma", **native}, 132)
    # A's rows are K = 1000 halves (2000 bytes), B's N = 5000 (10000 bytes): neither a multiple of 128
    assert "rows of A, B 2000 / 10000 bytes apart, not 128-byte multiples (each tile row crosses" in row["facts"]
    padded = explain_cell("fp16 3000x5000x1000", 0.9, {"config": "BM128-BN256-BK64-w8-s4-g8-tma-pad", **native}, 132)
    assert "not 128-byte multiples (copied onto aligned rows)" in padded["facts"]
    one = explain_cell("fp16 3000x5000x1000", 0.9, {"config": "BM128-BN256-BK64-w8-s4-g8-tma-padb", **native}, 132)
    assert "(B copied onto aligned rows, the other's tile rows cross one more line)" in one["facts"]
    phase = explain_cell("fp16 1000x1000x1000", 0.99, {"config": "BM128-BN64-BK64-w4-s4-g8-tma-phase", **native}, 132)
    assert "(A read in tiles of one line offset from it, B's tile rows cross one more line)" in phase["facts"]
    both = explain_cell(
        "fp16 3000x5000x1000", 0.9, {"config": "BM128-BN256-BK64-w8-s4-g8-tma-padb-phase", **native}, 132
    )
    assert "(B copied onto aligned rows, A read in tiles of one line offset from it)" in both["facts"]
    assert "operand rows off the 128-byte lines in 2." in render_rows([row, padded], 132)
    from benchmarks.matrix import parse_cell

    assert unaligned_rows(parse_cell("fp16 4096x4096x4096")[1]) is None
    assert unaligned_rows(parse_cell("bf16 1024x5000x1024")[1]) == "B 10000 bytes"
    # fp8's B is column-major: its rows run along K (4096 bytes), whatever N
    assert unaligned_rows(parse_cell("fp8_e4m3 128x1000x4096")[1]) is None
    assert unaligned_rows(parse_cell("fp32-ieee 1x1001x4095")[1]) == "A, B 16380 / 4004 bytes"
