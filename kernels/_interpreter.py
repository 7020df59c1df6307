"""Workarounds for Triton's CPU interpreter, applied only when it is active.

The interpreter's `tl.dot` multiplies bfloat16 operands as their raw uint16
bit patterns (relative error ~1e9; triton-lang/triton#11584, "not supported
yet"). bfloat16 is the top half of a float32, so widening the bits
(`bits << 16`, viewed as float32) gives the exact operand values. The GPU
kernel is never changed for this: only the interpreter's dot is wrapped.
"""

from __future__ import annotations

import functools

_PATCHED = False


def apply_interpreter_fixes() -> None:
    global _PATCHED
    if _PATCHED:
        return
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter

    original = interpreter.InterpreterBuilder.create_dot

    def widen(handle):
        if handle.dtype.scalar != tl.bfloat16:
            return handle
        as_f32 = (handle.data.astype(np.uint32) << 16).view(np.float32)
        return interpreter.TensorHandle(as_f32, tl.float32)

    @functools.wraps(original)
    def create_dot(self, a, b, d, *args, **kwargs):
        return original(self, widen(a), widen(b), d, *args, **kwargs)

    interpreter.InterpreterBuilder.create_dot = create_dot
    _PATCHED = True
