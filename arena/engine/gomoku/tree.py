"""Search-tree capture: kernels write nodes into a fixed int64 buffer, Python reads it.

Each row of the buffer is one node: parent, move, depth (the plies left to search below
it, as in KReversi's viewer and the Othello engines' trees: one fewer than its parent's,
as many for a forced block, two or three fewer for a reduced move), alpha, beta, score,
kind, cut-off. Scores and bounds are written from the root player's point of view, so
the viewer shows plain minimax values. Nodes beyond the budget are not recorded (the
search itself is unaffected), but the last ``CTX_TREE_RESERVE`` rows are kept for the
root's children, so that the tree holds every root move searched, the move played among
them. A node a stopped search left open (never scored) is not read, nor is what lies
under it.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

import arena.engine.numba_cache  # noqa: F401  (where numba caches the kernels below)
from arena.engine.api import NodeKind, TreeNode
from arena.engine.gomoku.control import (
    CTX_TREE_BUDGET,
    CTX_TREE_COUNT,
    CTX_TREE_RESERVE,
    Context,
)

TreeBuffer = npt.NDArray[np.int64]
KIND_MAX = 0
KIND_MIN = 1
KIND_LEAF = 2
KIND_OPEN = -1  # opened, never closed: the search stopped inside it
_KIND_NAMES: tuple[NodeKind, NodeKind, NodeKind] = ("max", "min", "leaf")

_COLUMNS = 8


def new_tree(budget: int) -> TreeBuffer:
    """A buffer for ``budget`` nodes (at least one row so kernels see one array type)."""
    return np.zeros((max(budget, 1), _COLUMNS), dtype=np.int64)


@njit(cache=True)
def tree_open(
    tree: TreeBuffer, ctx: Context, parent: int, move: int, ply: int, depth: int,
    alpha: int, beta: int,
) -> int:
    """Record a node ``ply`` plies below the root, with ``depth`` plies left to search;
    returns its id, or -1 once the budget is spent (for a child of the root, once the
    rows kept for them are spent too)."""
    node = ctx[CTX_TREE_COUNT]
    if node >= ctx[CTX_TREE_BUDGET]:  # at once when no tree is captured (a budget of 0)
        return -1
    if ply != 1 and node >= ctx[CTX_TREE_BUDGET] - ctx[CTX_TREE_RESERVE]:
        return -1
    ctx[CTX_TREE_COUNT] = node + 1
    tree[node, 0] = parent
    tree[node, 1] = move
    tree[node, 2] = depth
    tree[node, 3] = alpha
    tree[node, 4] = beta
    tree[node, 5] = 0
    tree[node, 6] = KIND_OPEN
    tree[node, 7] = 0
    return int(node)


@njit(cache=True)
def tree_close(tree: TreeBuffer, node: int, score: int, kind: int, cutoff: bool) -> None:
    if node >= 0:
        tree[node, 5] = score
        tree[node, 6] = kind
        tree[node, 7] = 1 if cutoff else 0


def read_tree(tree: TreeBuffer, count: int, pv: list[int]) -> list[TreeNode]:
    """Turn the first ``count`` rows into nodes, flagging the principal variation; the
    nodes left open and those under them are left out (the others renumbered).

    The PV path starts at the root and follows, at each level, the last child played
    with the PV move (a re-search records the same move twice; the last one counts).
    """
    rows = _closed(tree[:count])
    on_pv: set[int] = set()
    if count:
        on_pv.add(0)
        current = 0
        for move in pv:
            children = np.flatnonzero((rows[:, 0] == current) & (rows[:, 1] == move))
            if children.shape[0] == 0:
                break
            current = int(children[-1])
            on_pv.add(current)
    return [
        TreeNode(
            id=i, parent=parent, move=move, depth=depth, alpha=alpha, beta=beta, score=score,
            kind=_KIND_NAMES[kind], cutoff=bool(cutoff), pv=i in on_pv,
        )
        for i, (parent, move, depth, alpha, beta, score, kind, cutoff) in enumerate(
            rows.tolist())
    ]


def _closed(rows: TreeBuffer) -> TreeBuffer:
    """The rows of closed nodes under closed parents, parents renumbered. A parent comes
    before its children, so one pass in order sees each parent first. A finished
    iteration leaves no node open: its rows are returned as they are."""
    if not (rows[:, 6] == KIND_OPEN).any():
        return rows
    new_id = np.full(rows.shape[0], -1, dtype=np.int64)
    kept: list[int] = []
    for i, (parent, kind) in enumerate(rows[:, [0, 6]].tolist()):
        if kind == KIND_OPEN or (parent >= 0 and new_id[parent] < 0):
            continue
        new_id[i] = len(kept)
        kept.append(i)
    closed = rows[kept].copy()
    parents = closed[:, 0]
    closed[:, 0] = np.where(parents >= 0, new_id[np.maximum(parents, 0)], -1)
    return closed
