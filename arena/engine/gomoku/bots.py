"""The Python side of both bots: set up kernel arrays, run them, package the result."""

from __future__ import annotations

import random

import numpy as np

from arena.engine.api import SearchResult, StopFlag, TreeNode
from arena.engine.gomoku import sharpmoku
from arena.engine.gomoku.board import ZOBRIST, position_key
from arena.engine.gomoku.budget import Budget
from arena.engine.gomoku.control import CTX_ABORTED, CTX_NODES, CTX_TREE_COUNT, new_context
from arena.engine.gomoku.patterns import new_pattern_state, refresh_all, table_for
from arena.engine.gomoku.position import Position
from arena.engine.gomoku.root import (
    HOW_SEARCH,
    OUT_CUT_SHORT,
    OUT_DEPTH,
    OUT_MOVE,
    OUT_PV,
    OUT_PV_LEN,
    OUT_SCORE,
    OUT_TREE_COUNT,
    PARAM_MAX_DEPTH,
    PARAM_VCF_PLIES,
    PARAM_WIDTH,
    search_root,
)
from arena.engine.gomoku.search import MAX_PLY, WIN_BOUND
from arena.engine.gomoku.tree import new_tree, read_tree

# Do not start another iteration after this share of the time is gone (on the clock of
# the limits: wall or the searching thread's CPU time).
SOFT_TIME_SHARE = 0.4


def _context(budget: Budget, tree_budget: int) -> np.ndarray:
    return new_context(budget.limits.nodes or 0, budget.deadline(tree_budget), tree_budget,
                       budget.clock_id)


def _opening(move: int, budget: Budget) -> SearchResult:
    """The move played on the empty board, without a search."""
    return SearchResult(move, 0, 0, 0, budget.elapsed_ms(), [move], cpu_ms=budget.cpu_ms())


def run_sharpmoku(
    pos: Position, params: dict[str, int], budget: Budget, stop: StopFlag, tree_budget: int,
    seed: int,
) -> SearchResult:
    if not pos.moves:
        # SharpMoku opens at random, never on the last row or column.
        rng = random.Random(seed)
        return _opening(rng.randrange(pos.size - 1) + pos.size * rng.randrange(pos.size - 1),
                        budget)
    depth = params["depth"]
    if budget.limits.depth is not None:
        depth = max(1, min(depth, budget.limits.depth))
    ctx = _context(budget, tree_budget)
    tree = new_tree(tree_budget)
    move, score, _how = sharpmoku.choose(
        pos.cells.copy(), pos.near1.copy(), pos.near2.copy(), pos.size, pos.to_move, depth,
        params["centre_ties"] == 1, ctx, stop.array, tree,
    )
    nodes = int(ctx[CTX_NODES])
    nodes_tree = read_tree(tree, int(ctx[CTX_TREE_COUNT]), [int(move)]) if tree_budget else None
    return SearchResult(
        int(move), int(score), depth, nodes, budget.elapsed_ms(), [int(move)], nodes_tree,
        cut_short=bool(ctx[CTX_ABORTED]), cpu_ms=budget.cpu_ms(),
    )


class _ArenaState:
    """Kernel arrays for one arena-gomoku search."""

    def __init__(self, pos: Position, tt_bits: int, tree_budget: int) -> None:
        self.size = pos.size
        self.me = pos.to_move
        self.cells = pos.cells.copy()
        self.near1 = pos.near1.copy()
        self.near2 = pos.near2.copy()
        self.table = table_for(pos.rule)
        self.pat, self.stats = new_pattern_state(pos.size)
        refresh_all(self.cells, self.pat, self.stats, self.table, pos.size)
        self.key = np.array([position_key(self.cells, ZOBRIST)], dtype=np.uint64)
        self.tt_keys = np.zeros(1 << tt_bits, dtype=np.uint64)
        self.tt_data = np.zeros(1 << tt_bits, dtype=np.int64)
        self.vtable = np.zeros((1 << 16, 2), dtype=np.uint64)
        n = pos.size * pos.size
        self.pv = np.zeros((MAX_PLY + 1, MAX_PLY + 2), dtype=np.int64)
        self.move_buf = np.zeros(MAX_PLY * n, dtype=np.int64)
        self.key_buf = np.zeros(MAX_PLY * n, dtype=np.int64)
        self.tree = new_tree(tree_budget)
        self.kept_tree = new_tree(tree_budget)
        self.out = np.zeros(OUT_PV + MAX_PLY + 2, dtype=np.int64)

    def search(self, params: np.ndarray, soft_deadline: int, ctx: np.ndarray,
               stop: StopFlag) -> int:
        """Run ``search_root``; returns how the move was found, the report in ``out``."""
        return int(search_root(
            self.cells, self.near1, self.near2, self.pat, self.stats, self.key, self.table,
            self.size, self.me, params, soft_deadline, self.tt_keys, self.tt_data,
            self.vtable, self.pv, self.move_buf, self.key_buf, ctx, stop.array, self.tree,
            self.kept_tree, self.out,
        ))


def run_arena(
    pos: Position, params: dict[str, int], budget: Budget, stop: StopFlag, tree_budget: int
) -> SearchResult:
    if not pos.moves:
        return _opening((pos.size // 2) * (pos.size + 1), budget)
    state = _ArenaState(pos, params["tt_bits"], tree_budget)
    ctx = _context(budget, tree_budget)
    max_depth = min(params["max_depth"], budget.limits.depth or params["max_depth"])
    kernel_params = np.zeros(3, dtype=np.int64)
    kernel_params[PARAM_MAX_DEPTH] = max_depth
    kernel_params[PARAM_WIDTH] = params["width"]
    kernel_params[PARAM_VCF_PLIES] = params["vcf_plies"]
    how = state.search(kernel_params, budget.soft_deadline(SOFT_TIME_SHARE), ctx, stop)
    out = state.out
    pv = [int(m) for m in out[OUT_PV : OUT_PV + out[OUT_PV_LEN]]]
    score = int(out[OUT_SCORE])
    tree: list[TreeNode] | None = None
    if tree_budget:
        tree = [] if how != HOW_SEARCH else read_tree(state.kept_tree, int(out[OUT_TREE_COUNT]),
                                                      pv)
    return SearchResult(int(out[OUT_MOVE]), score, int(out[OUT_DEPTH]), int(ctx[CTX_NODES]),
                        budget.elapsed_ms(), pv, tree, exact=abs(score) >= WIN_BOUND,
                        cut_short=bool(out[OUT_CUT_SHORT]), cpu_ms=budget.cpu_ms())
