"""Search control shared by the kernels: a context array of counters and limits.

Kernels take one ``int64`` context array instead of many scalars; its slots are named
here. ``poll_stop`` is called once per node and does the expensive checks (clock,
stop flag) only every ``POLL_NODES`` nodes, on the clock the caller chose (wall or the
thread's CPU time, ``CTX_CLOCK``).

``search_kernel`` marks the entry points that run for a whole search: they release the
interpreter lock, so other Python threads (a worker's poster, another match's search)
run meanwhile. A search enters one of them once. The short helpers keep the lock: each
release and re-take is a chance for another thread to hold it while the search waits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba
import numpy as np
import numpy.typing as npt
from numba import njit

import arena.engine.numba_cache  # noqa: F401  (where numba caches the kernels below)
from arena.engine.gomoku.clock import CLOCK_MONOTONIC, clock_ns

Context = npt.NDArray[np.int64]
StopArray = npt.NDArray[np.int64]

CTX_NODES = 0
CTX_NODE_LIMIT = 1  # 0: none
CTX_DEADLINE = 2  # ns on CTX_CLOCK, 0: none
CTX_ABORTED = 3
CTX_TREE_COUNT = 4
CTX_TREE_BUDGET = 5
CTX_CLOCK = 6  # the clock_gettime id of the deadline's clock
CTX_THREAT_CAP = 7  # a threat search stops when CTX_NODES reaches this (0: no cap)
# Xored into the tags of table entries (not their slots): a thread's tables serve many
# searches without clearing, and an entry of an earlier search never matches.
CTX_SALT = 8
CTX_ROOT_WIDTH = 9  # candidates searched at the root (0: the width)
CTX_REDUCE = 10  # 1: late moves that threaten nothing are searched shallower first
# Rows of the tree budget kept for the root's children (the root sets it once it knows
# its moves): a captured tree always holds the move played, however deep the first
# moves' subtrees went.
CTX_TREE_RESERVE = 11
CTX_SLOTS = 12
# Clock and stop flag are read every POLL_NODES nodes (a power of two): about half a
# millisecond of search, the largest part of a deadline's overshoot.
POLL_NODES = 64

F = TypeVar("F", bound=Callable[..., Any])


def search_kernel(fn: F) -> F:
    """A long-running entry point: compiled and disk-cached, and it releases the GIL."""
    return cast(F, numba.njit(cache=True, nogil=True)(fn))


def new_context(
    node_limit: int, deadline: int, tree_budget: int, clock_id: int = CLOCK_MONOTONIC,
    salt: int = 0,
) -> Context:
    ctx = np.zeros(CTX_SLOTS, dtype=np.int64)
    ctx[CTX_SALT] = salt
    ctx[CTX_NODE_LIMIT] = node_limit
    ctx[CTX_DEADLINE] = deadline
    ctx[CTX_TREE_BUDGET] = tree_budget
    ctx[CTX_CLOCK] = clock_id
    return ctx


@njit(cache=True)
def poll_stop(ctx: Context, stop: StopArray) -> bool:
    """Count a node; True (and latched in the context) once the search must stop."""
    ctx[CTX_NODES] += 1
    if ctx[CTX_ABORTED] != 0:
        return True
    nodes = ctx[CTX_NODES]
    if (ctx[CTX_NODE_LIMIT] > 0 and nodes >= ctx[CTX_NODE_LIMIT]) or (
        (nodes & (POLL_NODES - 1)) == 0 and (stop[0] != 0 or past_deadline(ctx))
    ):
        ctx[CTX_ABORTED] = 1
    return bool(ctx[CTX_ABORTED] != 0)


@njit(cache=True)
def past_deadline(ctx: Context) -> bool:
    return bool(ctx[CTX_DEADLINE] > 0 and clock_ns(ctx[CTX_CLOCK]) >= ctx[CTX_DEADLINE])
