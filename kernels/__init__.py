"""gemmwatch's Triton GEMM kernels.

    >>> import kernels
    >>> c = kernels.matmul(a, b, bias=bias, activation="gelu")
    >>> c8 = kernels.scaled_matmul(a8, b8, scale_a, scale_b, out_dtype=torch.bfloat16)

On a machine without a GPU, set TRITON_INTERPRET=1 before importing triton
(or this package) to run them in Triton's interpreter, for correctness only.
"""

import os

from targets.detect import interpreter_requested

# Floating-point contraction (a * b + c as one fma) in the kernels, as Triton compiled them before
# 3.9 and as their figures were measured: Triton 3.9 warns when this is left unset, since its
# default turns to no contraction in 3.10, which would change what the kernels compute. An
# explicit setting wins.
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

if interpreter_requested():
    from kernels._interpreter import apply_interpreter_fixes

    apply_interpreter_fixes()

from kernels import autotune
from kernels._validate import ACTIVATIONS, DTYPE_NAMES, PRECISIONS
from kernels.matmul import matmul, scaled_matmul

__all__ = ["ACTIVATIONS", "DTYPE_NAMES", "PRECISIONS", "autotune", "matmul", "scaled_matmul"]
