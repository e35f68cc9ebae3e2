"""The Python side of both bots: set up kernel arrays, run them, package the result."""

from __future__ import annotations

import random
import threading
from collections.abc import Mapping

import numpy as np

from arena.engine.api import (
    Limits,
    SearchResult,
    StopFlag,
    TreeNode,
    captured,
    tree_budget_spent,
)
from arena.engine.gomoku import sharpmoku
from arena.engine.gomoku.board import EXACT_FIVE
from arena.engine.gomoku.budget import Budget
from arena.engine.gomoku.config import (
    ARENA_GOMOKU,
    PARAMETERS,
    linear_set,
    screen_margin,
    weight_set,
)
from arena.engine.gomoku.control import (
    CTX_ABORTED,
    CTX_NODES,
    CTX_TREE_COUNT,
    CTX_TREE_RESERVE,
    new_context,
)
from arena.engine.gomoku.evaluation import (
    HAND_WEIGHTS,
    BoardNet,
    Weights,
    load_board,
    load_weights,
)
from arena.engine.gomoku.patterns import setup
from arena.engine.gomoku.position import Position
from arena.engine.gomoku.root import (
    HOW_SEARCH,
    OUT_CUT_SHORT,
    OUT_DEPTH,
    OUT_LENGTH,
    OUT_MOVE,
    OUT_PV,
    OUT_PV_LEN,
    OUT_SCORE,
    OUT_TREE_COUNT,
    PARAM_MAX_DEPTH,
    PARAM_REDUCE,
    PARAM_ROOT_WIDTH,
    PARAM_VCF_PLIES,
    PARAM_VCT_NODES,
    PARAM_VCT_PLIES,
    PARAM_WIDTH,
    PARAMS,
    search_root,
    search_threats,
)
from arena.engine.gomoku.search import WIN_BOUND, new_tt
from arena.engine.gomoku.threats import new_memo
from arena.engine.gomoku.tree import new_tree, read_tree
from arena.engine.gomoku.work import W_LINE, new_work

# Do not start another iteration after this share of the time is gone (on the clock of
# the limits: wall or the searching thread's CPU time). An iteration the limit cuts short
# still counts for the root moves it finished (``root._deepen``), so starting one late
# is not wasted.
SOFT_TIME_SHARE = 0.6


def _context(budget: Budget, tree_budget: int, salt: int = 0) -> np.ndarray:
    return new_context(budget.limits.nodes or 0, budget.deadline(), tree_budget,
                       budget.clock_id, salt)


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
        params["centre_ties"] == 1, pos.rule == EXACT_FIVE, ctx, stop.array, tree,
    )
    nodes = int(ctx[CTX_NODES])
    nodes_tree, capture_ms = captured(
        lambda: read_tree(tree, int(ctx[CTX_TREE_COUNT]), [int(move)])) if tree_budget else (
        None, 0.0)
    return SearchResult(
        int(move), int(score), depth, nodes, budget.elapsed_ms(), [int(move)], nodes_tree,
        cut_short=bool(ctx[CTX_ABORTED]), cpu_ms=budget.cpu_ms(), capture_ms=capture_ms,
        tree_truncated=tree_budget_spent(int(ctx[CTX_TREE_COUNT]), tree_budget,
                                         int(ctx[CTX_TREE_RESERVE])),
    )


class _Tables:
    """A thread's transposition table, threat memo and scratch array, kept between its
    searches: allocating (and page-faulting) 16 MiB per search cost more than a
    shallow search. Each search salts its table tags (``CTX_SALT``), so results never
    depend on earlier searches."""

    def __init__(self, tt_bits: int) -> None:
        self.tt_bits = tt_bits
        self.tt = new_tt(tt_bits)
        self.memo = new_memo()
        self.work = new_work()
        self.searches = 0

    def next_salt(self) -> int:
        self.searches += 1
        return (self.searches * 0x9E3779B97F4A7C15) & ((1 << 63) - 1)


_LOCAL = threading.local()
DEFAULT_TT_BITS = PARAMETERS[ARENA_GOMOKU]["tt_bits"][0]


def thread_tables(tt_bits: int | None) -> _Tables:
    """This thread's tables of ``2**tt_bits`` entries (``None``: those it has, or the
    presets' size for a thread that has none), made on the first call or a new size."""
    tables: _Tables | None = getattr(_LOCAL, "tables", None)
    if tables is not None and tt_bits is None:
        return tables
    tt_bits = DEFAULT_TT_BITS if tt_bits is None else tt_bits
    if tables is None or tables.tt_bits != tt_bits:
        tables = _Tables(tt_bits)
        _LOCAL.tables = tables
    return tables


class _ArenaState:
    """Kernel arrays for one arena-gomoku search."""

    def __init__(self, pos: Position, params: Mapping[str, int], tree_budget: int) -> None:
        """``params``: the resolved arena-gomoku config; it picks the shipped weight set
        (``config.weight_set``), the linear weights (``config.linear_set``) and the screen's
        margin (``config.screen_margin``)."""
        self.me = pos.to_move
        evaluation: tuple[Weights, BoardNet | None]
        weights, linear = weight_set(params), linear_set(params)
        if weights is None or linear is None:
            evaluation = HAND_WEIGHTS, None
        else:
            evaluation = load_weights(linear)[0], load_board(weights)
        self.cells, self.pat, self.st, self.table = setup(
            pos.size, pos.rule, pos.moves, *evaluation, screen_margin(params))
        self.tables = thread_tables(params["tt_bits"])
        self.salt = self.tables.next_salt()
        self.tree = new_tree(tree_budget)
        self.kept_tree = new_tree(tree_budget)
        self.out = np.zeros(OUT_LENGTH, dtype=np.int64)

    def search(self, params: np.ndarray, soft_deadline: int, ctx: np.ndarray,
               stop: StopFlag) -> int:
        """Run ``search_root``; returns how the move was found, the report in ``out``."""
        return int(search_root(
            self.cells, self.pat, self.st, self.table, self.me, params, soft_deadline,
            self.tables.tt, self.tables.memo, self.tables.work, ctx, stop.array, self.tree,
            self.kept_tree, self.out,
        ))


def _kernel_params(params: dict[str, int], limits: Limits) -> np.ndarray:
    values = np.zeros(PARAMS, dtype=np.int64)
    values[PARAM_MAX_DEPTH] = min(params["max_depth"], limits.depth or params["max_depth"])
    values[PARAM_WIDTH] = params["width"]
    values[PARAM_ROOT_WIDTH] = params["root_width"]
    values[PARAM_VCF_PLIES] = params["vcf_plies"]
    values[PARAM_VCT_PLIES] = params["vct_plies"]
    values[PARAM_VCT_NODES] = params["vct_nodes"]
    values[PARAM_REDUCE] = params["reductions"]
    return values


def run_arena(
    pos: Position, params: dict[str, int], budget: Budget, stop: StopFlag, tree_budget: int
) -> SearchResult:
    if not pos.moves:
        return _opening((pos.size // 2) * (pos.size + 1), budget)
    state = _ArenaState(pos, params, tree_budget)
    ctx = _context(budget, tree_budget, state.salt)
    how = state.search(_kernel_params(params, budget.limits),
                       budget.soft_deadline(SOFT_TIME_SHARE), ctx, stop)
    out = state.out
    pv = [int(m) for m in out[OUT_PV : OUT_PV + out[OUT_PV_LEN]]]
    score = int(out[OUT_SCORE])
    tree: list[TreeNode] | None = None
    capture_ms = 0.0
    if tree_budget:
        tree, capture_ms = ([], 0.0) if how != HOW_SEARCH else captured(
            lambda: read_tree(state.kept_tree, int(out[OUT_TREE_COUNT]), pv))
    return SearchResult(int(out[OUT_MOVE]), score, int(out[OUT_DEPTH]), int(ctx[CTX_NODES]),
                        budget.elapsed_ms(), pv, tree, exact=abs(score) >= WIN_BOUND,
                        cut_short=bool(out[OUT_CUT_SHORT]), cpu_ms=budget.cpu_ms(),
                        capture_ms=capture_ms, tree_truncated=bool(tree) and tree_budget_spent(
                            int(out[OUT_TREE_COUNT]), tree_budget, int(ctx[CTX_TREE_RESERVE])))


def threat_line(
    pos: Position, plies: int, fours_only: bool, nodes: int = 0
) -> list[int]:
    """The side to move's VCF (``fours_only``) or VCT of at most ``plies`` plies, found
    within ``nodes`` nodes (0: no cap), as a line of moves; empty if none was found.
    The threat search alone, for tests and benchmarks."""
    cells, pat, st, table = setup(pos.size, pos.rule, pos.moves)
    tables = thread_tables(20)
    ctx = new_context(0, 0, 0, salt=tables.next_salt())
    stop = StopFlag()
    length = int(search_threats(cells, pat, st, table, pos.to_move, plies, nodes, fours_only,
                                tables.memo, tables.work, ctx, stop.array))
    return [int(m) for m in tables.work[W_LINE : W_LINE + length]]
