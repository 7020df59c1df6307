"""One extra-column config on one cell, in a process of its own (an illegal address ends only it):
prints `dtype shape config OK|BAD|ERROR ...` with the relative error against torch's product.

    python3 xn_probe.py fp16 128x4608x3584 BM64-BN64-BK64-w4-s12-g8-gluon-ws-xn8
"""

import sys

import torch

import kernels
from targets.configs import config_from_name

dtype, shape, name = sys.argv[1:4]
M, N, K = (int(x) for x in shape.split("x"))
torch.manual_seed(0)
try:
    cfg = config_from_name(name)
    if dtype == "fp8_e4m3":
        a = torch.randn(M, K, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn).t()
        one = torch.tensor(1.0, device="cuda")
        out = kernels.scaled_matmul(a, b, one, one, config=cfg)
        ref = a.float() @ b.float()
    else:
        t = {"fp16": torch.float16, "bf16": torch.bfloat16}[dtype]
        a, b = torch.randn(M, K, device="cuda", dtype=t), torch.randn(K, N, device="cuda", dtype=t)
        out = kernels.matmul(a, b, config=cfg)
        ref = a.float() @ b.float()
    torch.cuda.synchronize()
    err = ((out.float() - ref).norm() / ref.norm()).item()
    print(dtype, shape, name, "OK" if err < 2e-2 else "BAD", f"{err:.1e}", flush=True)
except Exception as exc:  # noqa: BLE001 - the line says what failed
    text = str(exc).strip().splitlines()
    print(dtype, shape, name, "ERROR", type(exc).__name__, text[-1][:160] if text else "", flush=True)
