"""Numba plumbing shared by the Othello kernels.

``kernel`` is ``numba.njit(cache=True, boundscheck=False)`` with a type that mypy understands,
so decorated functions keep their Python signatures for the type checker. ``search_kernel``
adds ``nogil`` for the entry points that run long (a search, a solve, a perft): another
thread (a worker's cancel, its poster) runs while they do. The short helpers keep the GIL:
they run for microseconds, and each release is a chance for another thread to take the GIL
and make the search thread wait (and lose its caches) to get it back.

Every bitboard is a ``uint64``. Numba turns ``uint64 op int64`` into ``int64`` or ``float64``,
so all bit arithmetic goes through the typed constants below, never bare integer literals.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba
import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]
from numba import types
from numba.core import cgutils as _cgutils
from numba.extending import intrinsic

import arena.engine.numba_cache  # noqa: F401  (where numba caches the kernels below)

F = TypeVar("F", bound=Callable[..., Any])


def kernel(fn: F) -> F:
    """Compile ``fn`` lazily with numba, caching the machine code on disk."""
    return cast(F, numba.njit(cache=True, boundscheck=False)(fn))


def inline_kernel(fn: F) -> F:
    """A small hot helper: as ``kernel``, and inlined into its callers by numba.

    Numba compiles every function into a module of its own and calls across modules; LLVM
    cannot inline such calls. A flip or a last-square count costs a few dozen instructions,
    so the call itself and the values it cannot keep in registers cost as much again.
    """
    return cast(F, numba.njit(cache=True, boundscheck=False, inline="always")(fn))


def search_kernel(fn: F) -> F:
    """A long-running entry point: as ``kernel``, and it releases the GIL while it runs."""
    return cast(F, numba.njit(cache=True, nogil=True, boundscheck=False)(fn))


U0 = np.uint64(0)
U1 = np.uint64(1)
FULL = np.uint64(0xFFFFFFFFFFFFFFFF)
# Columns b..g: a disc that a horizontal or diagonal line flips is never on the a or h file.
INNER = np.uint64(0x7E7E7E7E7E7E7E7E)
CORNERS = np.uint64(0x8100000000000081)
NOT_A = np.uint64(0xFEFEFEFEFEFEFEFE)  # every file but a
NOT_H = np.uint64(0x7F7F7F7F7F7F7F7F)  # every file but h
S1 = np.uint64(1)
S7 = np.uint64(7)
S8 = np.uint64(8)
S9 = np.uint64(9)


def _popcount_intrinsic(typingctx: Any, x: Any) -> Any:
    """Number of set bits of a uint64, as int64 (LLVM ``ctpop``, one instruction)."""
    sig = types.int64(types.uint64)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        fn = builder.module.declare_intrinsic("llvm.ctpop", [ir.IntType(64)])
        return builder.call(fn, args)

    return sig, codegen


def _lowest_square_intrinsic(typingctx: Any, x: Any) -> Any:
    """Index of the lowest set bit of a non-zero uint64 (LLVM ``cttz``)."""
    sig = types.int64(types.uint64)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        fn = builder.module.declare_intrinsic("llvm.cttz", [ir.IntType(64), ir.IntType(1)])
        return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 0)])

    return sig, codegen


def _leading_zeros_intrinsic(typingctx: Any, x: Any) -> Any:
    """Number of leading zero bits of a uint64, 64 for zero (LLVM ``ctlz``)."""
    sig = types.int64(types.uint64)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        fn = builder.module.declare_intrinsic("llvm.ctlz", [ir.IntType(64), ir.IntType(1)])
        return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 0)])

    return sig, codegen


cgutils: Any = _cgutils  # untyped module
# Linux's clock ids: what time.monotonic_ns and time.thread_time_ns read.
CLOCK_MONOTONIC = 1
CLOCK_THREAD_CPUTIME_ID = 3


def _clock_ns_intrinsic(typingctx: Any, clock_id: Any) -> Any:
    """``clock_gettime(clock_id)`` in ns for kernels: libc's function, linked by name.

    Linking by symbol name (not a ctypes address) keeps the machine code valid in another
    process, so kernels that read a clock stay in numba's disk cache. The monotonic clock is
    served by the vDSO (tens of nanoseconds); the thread's CPU clock takes a system call
    (well under a microsecond), read once per ``POLL_NODES`` nodes.
    """
    sig = types.int64(types.int64)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        i32, i64 = ir.IntType(32), ir.IntType(64)
        timespec = ir.LiteralStructType([i64, i64])
        fnty = ir.FunctionType(i32, [i32, timespec.as_pointer()])
        clock_gettime = cgutils.get_or_insert_function(builder.module, fnty, "clock_gettime")
        out = cgutils.alloca_once(builder, timespec)
        builder.call(clock_gettime, [builder.trunc(args[0], i32), out])
        sec = builder.load(cgutils.gep_inbounds(builder, out, 0, 0))
        nsec = builder.load(cgutils.gep_inbounds(builder, out, 0, 1))
        return builder.add(builder.mul(sec, ir.Constant(i64, 1_000_000_000)), nsec)

    return sig, codegen


def _prefetch_intrinsic(typingctx: Any, address: Any) -> Any:
    """Start loading the cache line at ``address`` (an int) before it is read (LLVM
    ``prefetch``): a table probe that would wait for memory overlaps other work instead."""
    sig = types.void(types.int64)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = builder.module.declare_intrinsic("llvm.prefetch", [i8p], fnty)
        pointer = builder.inttoptr(args[0], i8p)
        builder.call(fn, [pointer, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


# Typed handles for mypy; numba sees the intrinsic objects themselves.
popcount = cast(Callable[[np.uint64], int], intrinsic(_popcount_intrinsic))
lowest_square = cast(Callable[[np.uint64], int], intrinsic(_lowest_square_intrinsic))
leading_zeros = cast(Callable[[np.uint64], int], intrinsic(_leading_zeros_intrinsic))
prefetch = cast(Callable[[int | np.int64], None], intrinsic(_prefetch_intrinsic))
clock_ns = cast(Callable[[int], int], intrinsic(_clock_ns_intrinsic))
