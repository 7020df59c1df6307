"""Does Triton's Gluon multicast a TMA load across a cluster? Compiled offline for sm_90, no GPU.

    python3 docs/results/2026-12-02h-h200-streamk/multicast_probe.py    # from the repository root

A kernel of a 2-CTA cluster (num_ctas=2) loads one 128 x 128 fp16 tile whose shared layout every
CTA holds whole (cga_layout [[0, 0]]), by `tma.async_load(..., multicast=True)` where the installed
Triton has it, else by the only copy there is; prints the PTX lines of its copies and cluster.
"""

import inspect
import os
import sys

import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier, tma
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
from triton.runtime import driver

LOAD = getattr(tma, "async_load", None)
MULTICAST = LOAD is not None and "multicast" in inspect.signature(LOAD).parameters


if MULTICAST:  # (Triton 3.7 on: async_load / async_store, the old names removed)

    @gluon.jit
    def copy(in_desc, out_desc):
        smem = gl.allocate_shared_memory(in_desc.dtype, in_desc.block_type.shape, in_desc.layout)
        bar = mbarrier.allocate_mbarrier()  # (a barrier laid out for the cluster)
        mbarrier.init(bar, count=1)
        mbarrier.expect(bar, in_desc.block_type.nbytes)
        tma.async_load(in_desc, [0, 0], bar, smem, multicast=True)
        mbarrier.wait(bar, 0)
        tma.async_store(out_desc, [0, 0], smem)
        tma.store_wait(0)

else:

    @gluon.jit
    def copy(in_desc, out_desc):
        smem = gl.allocate_shared_memory(in_desc.dtype, in_desc.block_type.shape, in_desc.layout)
        bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
        mbarrier.init(bar, count=1)
        mbarrier.expect(bar, in_desc.block_type.nbytes)
        tma.async_copy_global_to_shared(in_desc, [0, 0], bar, smem)
        mbarrier.wait(bar, 0)
        tma.async_copy_shared_to_global(out_desc, [0, 0], smem)
        tma.store_wait(0)


if __name__ == "__main__":
    sys.path.insert(0, os.getcwd())
    from ci.resources import _offline_driver

    driver.set_active(_offline_driver(90))
    tile = torch.empty((128, 128), dtype=torch.float16)
    layout = gl.NVMMASharedLayout.get_default_for([128, 128], gl.float16, cga_layout=[[0, 0]])
    desc = TensorDescriptor.from_tensor(tile, [128, 128], layout)
    ptx = copy.warmup(desc, desc, grid=(1,), num_warps=4, num_ctas=2).asm["ptx"]
    for line in ptx.splitlines():
        if "cp.async.bulk.tensor" in line or "cluster" in line:
            print(line.strip())
    print("async_load(multicast=) in this Triton:", MULTICAST, "| multicast in the PTX:", "multicast::cluster" in ptx)
