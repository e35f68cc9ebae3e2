"""Clocks readable from numba kernels: wall time or the searching thread's CPU time.

Kernels must stop at a deadline without returning to Python, on the clock the caller
chose (``Limits.clock``). ``time.monotonic_ns`` and ``time.thread_time_ns`` are not
available in nopython mode, so this intrinsic calls libc's ``clock_gettime`` with the
clock's Linux id. Resolving the function by symbol name (not by a ctypes address) keeps
the kernels cacheable across processes.

``CLOCK_MONOTONIC`` is served by the vDSO (tens of nanoseconds); the thread CPU clock is
a system call (under a microsecond), so kernels read either only every few dozen nodes.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir  # type: ignore[import-untyped]
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

import arena.engine.numba_cache  # noqa: F401  (where numba caches the kernels below)
from arena.engine.api import Clock

CLOCK_MONOTONIC = 1  # Linux; the clock of time.monotonic_ns
CLOCK_THREAD_CPUTIME_ID = 3  # Linux; the clock of time.thread_time_ns
CLOCK_IDS: dict[Clock, int] = {"wall": CLOCK_MONOTONIC, "cpu": CLOCK_THREAD_CPUTIME_ID}


@intrinsic
def _clock_gettime_ns(typingctx: Any, clock_id: Any) -> Any:
    sig = types.int64(types.int64)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        i32, i64 = ir.IntType(32), ir.IntType(64)
        timespec = ir.LiteralStructType([i64, i64])
        fnty = ir.FunctionType(i32, [i32, timespec.as_pointer()])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "clock_gettime")  # type: ignore[no-untyped-call]
        slot = cgutils.alloca_once(builder, timespec)  # type: ignore[no-untyped-call]
        builder.call(fn, [builder.trunc(args[0], i32), slot])
        gep = cgutils.gep_inbounds
        seconds = builder.load(gep(builder, slot, 0, 0))  # type: ignore[no-untyped-call]
        nanos = builder.load(gep(builder, slot, 0, 1))  # type: ignore[no-untyped-call]
        return builder.add(builder.mul(seconds, ir.Constant(i64, 1_000_000_000)), nanos)

    return sig, codegen


@njit(cache=True)
def clock_ns(clock_id: int) -> int:
    """Inside a kernel, the reading of clock ``clock_id`` (one of ``CLOCK_IDS``) in ns."""
    return int(_clock_gettime_ns(clock_id))  # type: ignore[call-arg]
