"""A monotonic clock readable from numba kernels.

Kernels must stop at a deadline without returning to Python. ``time.monotonic_ns``
is not available in nopython mode, so this intrinsic calls libc's
``clock_gettime(CLOCK_MONOTONIC)`` by symbol name. Resolving by name (not by a ctypes
address) keeps the kernels cacheable across processes.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir  # type: ignore[import-untyped]
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

CLOCK_MONOTONIC = 1  # Linux; the same clock as time.monotonic_ns


@intrinsic
def _clock_monotonic_ns(typingctx: Any) -> Any:
    sig = types.int64()

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        i64 = ir.IntType(64)
        timespec = ir.LiteralStructType([i64, i64])
        fnty = ir.FunctionType(ir.IntType(32), [ir.IntType(32), timespec.as_pointer()])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "clock_gettime")  # type: ignore[no-untyped-call]
        slot = cgutils.alloca_once(builder, timespec)  # type: ignore[no-untyped-call]
        builder.call(fn, [ir.Constant(ir.IntType(32), CLOCK_MONOTONIC), slot])
        gep = cgutils.gep_inbounds
        seconds = builder.load(gep(builder, slot, 0, 0))  # type: ignore[no-untyped-call]
        nanos = builder.load(gep(builder, slot, 0, 1))  # type: ignore[no-untyped-call]
        return builder.add(builder.mul(seconds, ir.Constant(i64, 1_000_000_000)), nanos)

    return sig, codegen


@njit(cache=True)
def monotonic_ns() -> int:
    """``time.monotonic_ns()`` inside a kernel."""
    return int(_clock_monotonic_ns())  # type: ignore[call-arg]
