"""One-row (GEMV) decode kernels against the library's configs and the native library, timed as the
suites time (benchmarks.measure's sides and plan).

    mkdir -p BASE && git archive <commit before the GEMV form> kernels targets | tar -x -C BASE
    GEMMWATCH_TUNED_DIR=$PWD/targets/tuned python3 docs/results/2026-12-03c-h200-gemv/gemv_timing.py OUT.json BASE

Sides: native; the library's config with this tree's kernels and with BASE's ("library-base": the
fma configs' 3-D form); this tree's fma configs of one row over a grid of tiles and K splits
(`-fma` names: the 2-D GEMV form); the deep-pipeline matrix configs; and gemv_proto.py's variant
that sums the products elementwise over the K loop and reduces once at the end (`proto-defer`).
gemv_proto.py: program (n-block, K slice) streams its B tile (BN columns x BK of K per step, 16-byte
loads along B's contiguous dimension) times x, summed on the CUDA cores; K slices (SPLIT) meet in
an fp32 workspace, the last to arrive summing them in slice order.
"""

import json
import os
import sys
import time

import torch

sys.path.insert(0, os.getcwd())
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pathlib import Path

import gemv_proto

from benchmarks.cells import Prepared
from benchmarks.matrix import parse_cell
from benchmarks.measure import prepare_process, timed_sides, timing_plan
from ci.recheck import load_tree
from targets import detect
from targets.configs import config_from_name

# (BN, BK, warps) of the one-row fma configs: K-major B (fp8) and N-major B (fp16, bf16)
KMAJOR_TILES = [(16, 1024, 4), (32, 512, 4), (64, 256, 4), (64, 128, 4), (64, 512, 8), (128, 256, 8)]
NMAJOR_TILES = [(128, 64, 4), (128, 128, 8), (256, 64, 8), (256, 32, 4), (512, 32, 8), (1024, 16, 4)]
CELLS = {
    "fp8_e4m3 1x3584x3584": ["BM16-BN64-BK128-w4-s12-g8", "BM16-BN64-BK128-w4-s16-g8"],
    "fp8_e4m3 1x4096x4096": ["BM16-BN64-BK128-w4-s12-g8", "BM16-BN64-BK128-w4-s16-g8"],
    "fp8_e4m3 1x4608x3584": [],
    "fp8_e4m3 1x6144x4096": [],
    "fp8_e4m3 1x8192x8192": [],
    "fp8_e4m3 1x10240x8192": [],
    "fp8_e4m3 1x8192x28672": [],
    "fp8_e4m3 1x3584x18944": [],
    "fp16 1x4608x3584": [],
    "bf16 1x4608x3584": [],
    "bf16 1x8192x8192": [],
    "fp16 1x8192x28672": [],
    "fp16 1x3584x3584": [],
}


SCRATCH = {}  # per output copy: its own workspace and counters


def scratch_for(out):
    key = (out.data_ptr(), out.shape[1])
    if key not in SCRATCH:
        N = out.shape[1]
        SCRATCH[key] = (torch.empty(8, N, device="cuda"), torch.zeros(N, dtype=torch.int32, device="cuda"))
    return SCRATCH[key]


def splits(N: int, BN: int, sms: int):
    return [s for s in (1, 2, 4, 8, 16) if (-(-N // BN)) * s <= 8 * sms]


def fma_names(kmajor: bool, N: int, sms: int):
    for BN, BK, W in KMAJOR_TILES if kmajor else NMAJOR_TILES:
        for split in splits(N, BN, sms):
            yield f"BM1-BN{BN}-BK{BK}-w{W}-s1-g8" + (f"-sks{split}" if split > 1 else "") + "-fma"


def proto_variants(kmajor: bool, N: int, sms: int):
    if kmajor:
        return  # (deferred sums of a K-major tile took 228 registers compiled for sm_90)
    for BN, BK, W in NMAJOR_TILES[:4]:
        for split in splits(N, BN, sms):
            if N % BN == 0:
                yield dict(BN=BN, BK=BK, SPLIT=split, warps=W)


def vname(v):
    return f"proto-defer-BN{v['BN']}-BK{v['BK']}-w{v['warps']}-sk{v['SPLIT']}"


def main(out_path, base):
    spec = detect()
    prepare_process("cuda")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    rows = {}
    for text, extra in CELLS.items():
        t0 = time.time()
        _, cell = parse_cell(text)
        prep = Prepared(cell, "cuda")
        ref = prep.reference()
        kmajor = prep.b.stride(0) == 1

        names, calls = [], []

        def err_of(out, ref=ref):
            return ((out.double() - ref).norm() / ref.norm()).item()

        names.append("native")
        calls.append(lambda ops, prep=prep: prep.native(operands=ops))
        names.append("library")
        calls.append(lambda ops, prep=prep: prep.triton(operands=ops))
        names.append("library-base")
        calls.append(lambda ops, prep=prep: prep.triton(kernels=base, operands=ops))
        for n in [*extra, *fma_names(kmajor, cell.N, sms)]:
            cfg = config_from_name(n)
            try:
                prep.triton(config=cfg)
            except Exception as exc:  # noqa: BLE001
                print(f"  {n} FAILED {type(exc).__name__}: {str(exc)[:150]}", flush=True)
                continue
            e = err_of(prep.out)
            if e > 2e-2:
                print(f"  {n} WRONG err {e:.3g}", flush=True)
                continue
            names.append(n)
            calls.append(lambda ops, cfg=cfg, prep=prep: prep.triton(config=cfg, operands=ops))
        for v in proto_variants(kmajor, cell.N, sms):

            def call(ops, v=v, prep=prep):
                a, b, out = (ops or (prep.a, prep.b, prep.out))[:3]
                ws, cnt = scratch_for(out)
                return gemv_proto.launch(a, b, out, ws, cnt, prep.scale_a, prep.scale_b, v["BN"], v["BK"],
                                         v["SPLIT"], 1, v["warps"], 1)  # fmt: skip

            try:
                call(None)
                e = err_of(prep.out)
            except Exception as exc:  # noqa: BLE001
                print(f"  {vname(v)} FAILED {type(exc).__name__}: {str(exc)[:150]}", flush=True)
                continue
            if e > 2e-2:
                print(f"  {vname(v)} WRONG err {e:.3g}", flush=True)
                continue
            names.append(vname(v))
            calls.append(call)
        sides = timed_sides(prep, "cuda", spec, calls)
        from benchmarks.timing import measure

        timing = measure(*sides, rounds=30, warmup=1, **timing_plan(prep, spec))
        us = {n: timing.median(i) * 1e6 for i, n in enumerate(names)}
        rows[text] = us
        nat = us["native"]
        best = sorted((t, n) for n, t in us.items() if n not in ("native",))
        print(f"{text}: native {nat:.2f} us, library {us['library']:.2f} us (x{nat / us['library']:.3f}); "
              f"{len(names)} sides, {time.time() - t0:.0f} s", flush=True)  # fmt: skip
        for t, n in best[:12]:
            print(f"    {n:36s} {t:8.2f} us  x{nat / t:.3f}", flush=True)
        json.dump(rows, open(out_path, "w"), indent=1)
        del prep, ref


if __name__ == "__main__":
    main(sys.argv[1], load_tree(Path(sys.argv[2])))
