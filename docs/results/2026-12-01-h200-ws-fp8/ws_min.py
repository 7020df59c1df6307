# Minimal persistent TMA GEMM with warp_specialize on the tile loop (unflattened), fp16, run in a subprocess with a timeout.
import sys, torch, triton, triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

@triton.jit
def k(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, NP: tl.constexpr, WS: tl.constexpr, FL: tl.constexpr):
    tiles_n = tl.cdiv(N, BN)
    num_tiles = tl.cdiv(M, BM) * tiles_n
    for t in tl.range(tl.program_id(0), num_tiles, NP, flatten=FL, warp_specialize=WS):
        om = (t // tiles_n) * BM
        on = (t % tiles_n) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for ki in range(tl.cdiv(K, BK)):
            a = a_desc.load([om, ki * BK])
            b = b_desc.load([on, ki * BK])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([om, on], acc.to(tl.float16))

BM, BN, BK, W, S = (int(x) for x in sys.argv[1:6]); ws = sys.argv[6] == "1"; fl = sys.argv[7] == "1"
M = N = K = 4096
a = torch.randn(M, K, device="cuda", dtype=torch.float16); b = torch.randn(N, K, device="cuda", dtype=torch.float16)
c = torch.empty(M, N, device="cuda", dtype=torch.float16)
NP = torch.cuda.get_device_properties(0).multi_processor_count
ad, bd, cd = TensorDescriptor.from_tensor(a, [BM, BK]), TensorDescriptor.from_tensor(b, [BN, BK]), TensorDescriptor.from_tensor(c, [BM, BN])
h = k[(NP,)](ad, bd, cd, M, N, K, BM, BN, BK, NP, ws, fl, num_warps=W, num_stages=S)
torch.cuda.synchronize()
err = ((c.float() - a.float() @ b.float().T).abs().max() / (a.float() @ b.float().T).abs().max()).item()
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    for _ in range(20): k[(NP,)](ad, bd, cd, M, N, K, BM, BN, BK, NP, ws, fl, num_warps=W, num_stages=S)
g.replay(); torch.cuda.synchronize()
e0, e1 = torch.cuda.Event(True), torch.cuda.Event(True)
e0.record(); g.replay(); e1.record(); torch.cuda.synchronize()
us = e0.elapsed_time(e1) * 1000 / 20
print(f"BM{BM} BN{BN} BK{BK} w{W} s{S} ws={ws} flatten={fl}: err {err:.2e}, {us:.1f} us, {2*M*N*K/us/1e6:.0f} TFLOP/s, setmaxnreg {h.asm['ptx'].count('setmaxnreg')}, warps {h.metadata.num_warps}")
