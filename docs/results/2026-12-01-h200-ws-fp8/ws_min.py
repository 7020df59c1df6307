"""A minimal persistent TMA GEMM (fp16, 4096^3) with `warp_specialize` on its tile loop: does the
installed Triton partition and run it on this GPU? Run it under a timeout, one config per process:

    python3 ws_min.py BM BN BK WARPS STAGES WARP_SPECIALIZE FLATTEN   (e.g. 128 256 64 4 3 1 0)

Prints the relative error, the time per call (CUDA-graph replay of 20 calls), TFLOP/s, and the
`setmaxnreg` count and warps of the compiled kernel (partitioned: > 0 and more warps than asked).
"""

import sys

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def gemm(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
         PROGRAMS: tl.constexpr, WS: tl.constexpr, FLATTEN: tl.constexpr):  # fmt: skip
    tiles_n = tl.cdiv(N, BN)
    num_tiles = tl.cdiv(M, BM) * tiles_n
    for tile in tl.range(tl.program_id(0), num_tiles, PROGRAMS, flatten=FLATTEN, warp_specialize=WS):
        off_m = (tile // tiles_n) * BM
        off_n = (tile % tiles_n) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for ki in range(tl.cdiv(K, BK)):
            a = a_desc.load([off_m, ki * BK])
            b = b_desc.load([off_n, ki * BK])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([off_m, off_n], acc.to(tl.float16))


def main() -> None:
    bm, bn, bk, warps, stages = (int(x) for x in sys.argv[1:6])
    ws, flatten = sys.argv[6] == "1", sys.argv[7] == "1"
    M = N = K = 4096
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(N, K, device="cuda", dtype=torch.float16)
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    programs = torch.cuda.get_device_properties(0).multi_processor_count
    descs = (TensorDescriptor.from_tensor(a, [bm, bk]), TensorDescriptor.from_tensor(b, [bn, bk]),
             TensorDescriptor.from_tensor(c, [bm, bn]))  # fmt: skip

    def call():
        return gemm[(programs,)](*descs, M, N, K, bm, bn, bk, programs, ws, flatten, num_warps=warps,
                                 num_stages=stages)  # fmt: skip

    compiled = call()
    torch.cuda.synchronize()
    ref = a.float() @ b.float().T
    err = ((c.float() - ref).abs().max() / ref.abs().max()).item()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(20):
            call()
    graph.replay()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    graph.replay()
    end.record()
    torch.cuda.synchronize()
    us = start.elapsed_time(end) * 1000 / 20
    print(
        f"BM{bm} BN{bn} BK{bk} w{warps} s{stages} ws={ws} flatten={flatten}: err {err:.2e}, {us:.1f} us, "
        f"{2 * M * N * K / us / 1e6:.0f} TFLOP/s, setmaxnreg {compiled.asm['ptx'].count('setmaxnreg')}, "
        f"warps {compiled.metadata.num_warps}"
    )


if __name__ == "__main__":
    main()
