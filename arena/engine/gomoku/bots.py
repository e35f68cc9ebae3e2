"""The Python side of both bots: set up kernel arrays, run them, package the result."""

from __future__ import annotations

import random
import time

import numpy as np

from arena.engine.api import Limits, SearchResult, StopFlag, TreeNode, deadline_ns
from arena.engine.gomoku import sharpmoku
from arena.engine.gomoku.board import ZOBRIST, Cells, Counts, Keys, position_key
from arena.engine.gomoku.control import (
    CTX_ABORTED,
    CTX_NODES,
    CTX_TREE_BUDGET,
    CTX_TREE_COUNT,
    new_context,
)
from arena.engine.gomoku.patterns import (
    Patterns,
    Stats,
    Table,
    new_pattern_state,
    play,
    refresh_all,
    table_for,
    unplay,
)
from arena.engine.gomoku.position import Position
from arena.engine.gomoku.search import MAX_PLY, WIN, WIN_BOUND, generate, negamax
from arena.engine.gomoku.threats import five_cells, vcf
from arena.engine.gomoku.tree import new_tree, read_tree

# Do not start another iteration after this share of the time is gone.
SOFT_TIME_SHARE = 0.4


def _elapsed_ms(started: int) -> float:
    return (time.monotonic_ns() - started) / 1e6


def run_sharpmoku(
    pos: Position, depth: int, limits: Limits, stop: StopFlag, tree_budget: int, seed: int
) -> SearchResult:
    started = time.monotonic_ns()
    if not pos.moves:
        # SharpMoku opens at random, never on the last row or column.
        rng = random.Random(seed)
        move = rng.randrange(pos.size - 1) + pos.size * rng.randrange(pos.size - 1)
        return SearchResult(move, 0, 0, 0, _elapsed_ms(started), [move])
    if limits.depth is not None:
        depth = max(1, min(depth, limits.depth))
    ctx = new_context(limits.nodes or 0, deadline_ns(limits, started), tree_budget)
    tree = new_tree(tree_budget)
    move, score, _how = sharpmoku.choose(
        pos.cells.copy(), pos.near1.copy(), pos.near2.copy(), pos.size, pos.to_move, depth,
        ctx, stop.array, tree,
    )
    nodes = int(ctx[CTX_NODES])
    nodes_tree = read_tree(tree, int(ctx[CTX_TREE_COUNT]), [int(move)]) if tree_budget else None
    return SearchResult(
        int(move), int(score), depth, nodes, _elapsed_ms(started), [int(move)], nodes_tree,
        cut_short=bool(ctx[CTX_ABORTED]),
    )


class _ArenaState:
    """Kernel arrays for one arena-gomoku search."""

    def __init__(self, pos: Position, tt_bits: int) -> None:
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

    def board(self) -> tuple[Cells, Counts, Counts, Patterns, Stats, Keys, Table, int]:
        return (self.cells, self.near1, self.near2, self.pat, self.stats, self.key,
                self.table, self.size)

    def vcf_for(self, attacker: int, plies: int, ctx: np.ndarray, stop: StopFlag) -> list[int]:
        seq = np.zeros(plies + 4, dtype=np.int64)
        length = vcf(*self.board(), attacker, plies, 0, seq, self.vtable, ctx, stop.array)
        return [int(m) for m in seq[:length]]

    def play(self, move: int, colour: int) -> None:
        play(*self.board(), move, colour)

    def unplay(self, move: int) -> None:
        unplay(*self.board(), move)

    def five_points(self, colour: int) -> list[int]:
        out = np.zeros(self.size * self.size, dtype=np.int64)
        return [int(m) for m in out[: five_cells(self.pat, colour, out)]]


def run_arena(
    pos: Position, params: dict[str, int], limits: Limits, stop: StopFlag, tree_budget: int
) -> SearchResult:
    started = time.monotonic_ns()
    if not pos.moves:
        centre = (pos.size // 2) * (pos.size + 1)
        return SearchResult(centre, 0, 0, 0, _elapsed_ms(started), [centre])
    state = _ArenaState(pos, params["tt_bits"])
    ctx = new_context(limits.nodes or 0, deadline_ns(limits, started), 0)
    quick = _threat_answer(state, params, ctx, stop)
    if quick is not None:
        move, score, line = quick
        return SearchResult(move, score, len(line), int(ctx[CTX_NODES]), _elapsed_ms(started),
                            line, [] if tree_budget else None, exact=abs(score) >= WIN_BOUND,
                            cut_short=bool(ctx[CTX_ABORTED]))
    vcf_cut = bool(ctx[CTX_ABORTED])  # the VCF search found nothing before a limit
    root = _safe_root_moves(state, ctx, stop)
    vcf_cut = vcf_cut or bool(ctx[CTX_ABORTED])
    ctx[CTX_ABORTED] = 0
    result = _iterate(state, params, limits, stop, tree_budget, root, started, ctx)
    result.cut_short = result.cut_short or vcf_cut
    return result


def _threat_answer(
    state: _ArenaState, params: dict[str, int], ctx: np.ndarray, stop: StopFlag
) -> tuple[int, int, list[int]] | None:
    """A five to play, a five to block, or an own VCF: (move, score, line) or None.

    A forced block is answered at once with score 0 (not a proven value).
    """
    me, op = state.me, 3 - state.me
    own = state.five_points(me)
    if own:
        return own[0], WIN - 1, [own[0]]
    threats = state.five_points(op)
    if len(threats) == 1:  # the only move; no search needed to find it
        return threats[0], 0, [threats[0]]
    if threats:
        return threats[0], -(WIN - 2), [threats[0]]
    if params["vcf_plies"] >= 3:
        line = state.vcf_for(me, params["vcf_plies"], ctx, stop)
        if line:
            return line[0], WIN - len(line), line
    return None


def _safe_root_moves(state: _ArenaState, ctx: np.ndarray, stop: StopFlag) -> np.ndarray:
    """When the opponent has a VCF, the root moves after which it has none (else all)."""
    op = 3 - state.me
    if not state.vcf_for(op, 31, ctx, stop) or ctx[CTX_ABORTED]:
        return np.zeros(0, dtype=np.int64)
    n = state.size * state.size
    moves = np.zeros(n, dtype=np.int64)
    keys = np.zeros(n, dtype=np.int64)
    count = generate(state.cells, state.near2, state.pat, state.stats, state.me, n, moves, keys)
    safe = []
    for move in moves[:count].tolist():
        state.play(move, state.me)
        refuted = state.vcf_for(op, 31, ctx, stop)
        state.unplay(move)
        if ctx[CTX_ABORTED]:
            return np.zeros(0, dtype=np.int64)
        if not refuted:
            safe.append(move)
    return np.array(safe, dtype=np.int64)


def _iterate(
    state: _ArenaState, params: dict[str, int], limits: Limits, stop: StopFlag,
    tree_budget: int, root: np.ndarray, started: int, ctx: np.ndarray,
) -> SearchResult:
    max_depth = min(params["max_depth"], limits.depth or params["max_depth"])
    tree = new_tree(tree_budget)
    ctx[CTX_TREE_BUDGET] = tree_budget
    best: tuple[int, int, int, list[int]] | None = None  # move, score, depth, pv
    cut_short = False
    kept_tree: list[TreeNode] | None = [] if tree_budget else None
    for depth in range(1, max_depth + 1):
        ctx[CTX_TREE_COUNT] = 0
        score = negamax(
            *state.board(), state.me, depth, 0, -WIN - 1, WIN + 1, -1, -1, params["width"],
            state.tt_keys, state.tt_data, state.pv, state.move_buf, state.key_buf, ctx,
            stop.array, tree, root,
        )
        if ctx[CTX_ABORTED] and best is not None:
            cut_short = True
            break
        length = int(state.pv[0, 0])
        pv = [int(m) for m in state.pv[0, 1 : 1 + length]]
        if pv:
            best = (pv[0], int(score), depth, pv)
            if tree_budget:
                kept_tree = read_tree(tree, int(ctx[CTX_TREE_COUNT]), pv)
        if ctx[CTX_ABORTED] or abs(score) >= WIN_BOUND:
            cut_short = bool(ctx[CTX_ABORTED])
            break
        if depth < max_depth and limits.time_ms is not None and (
                _elapsed_ms(started) > SOFT_TIME_SHARE * limits.time_ms):
            cut_short = True
            break
    if best is None:  # stopped before depth 1 finished: the first candidate
        fallback = int(root[0]) if root.shape[0] else _first_candidate(state)
        best = (fallback, 0, 0, [fallback])
        cut_short = True
    move, score, depth, pv = best
    return SearchResult(move, score, depth, int(ctx[CTX_NODES]), _elapsed_ms(started), pv,
                        kept_tree, exact=abs(score) >= WIN_BOUND, cut_short=cut_short)


def _first_candidate(state: _ArenaState) -> int:
    n = state.size * state.size
    moves = np.zeros(n, dtype=np.int64)
    keys = np.zeros(n, dtype=np.int64)
    count = generate(state.cells, state.near2, state.pat, state.stats, state.me, 1, moves, keys)
    return int(moves[0]) if count else int(np.flatnonzero(state.cells == 0)[0])
