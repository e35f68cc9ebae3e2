"""arena-gomoku's alpha-beta: negamax with PVS, a transposition table, threat ordering.

At every node, before any move list: a five point for the side to move wins; two
five points for the opponent lose; one must be blocked (the only move, searched
without using up depth); an open four while the opponent cannot even make a four wins
in three plies. When the opponent has an open three (it can make an open four), only
blocks and our own fours are searched. Otherwise the candidates near the stones are
ordered by their threats for both sides (fives, fours, open threes first) and the
best ``width`` are searched. Leaves read the incrementally kept pattern sums.

Scores are from the side to move; wins are ``WIN - plies``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from arena.engine.gomoku.board import EMPTY, Cells, Counts, Keys
from arena.engine.gomoku.control import CTX_ABORTED, Context, StopArray, poll_stop
from arena.engine.gomoku.patterns import (
    FIVE,
    FOUR,
    OPEN_FOUR,
    OPEN_THREE,
    VALUE,
    Patterns,
    Stats,
    Table,
    count_class,
    play,
    unplay,
)
from arena.engine.gomoku.threats import five_cells
from arena.engine.gomoku.tree import (
    KIND_LEAF,
    KIND_MAX,
    KIND_MIN,
    TreeBuffer,
    tree_close,
    tree_open,
)

WIN = 1_000_000
WIN_BOUND = WIN - 1_000
MAX_PLY = 96
EXACT, LOWER, UPPER = 1, 2, 3
ORDER_WEIGHT = np.array([0, 2, 5, 6, 30, 25, 100, 0], dtype=np.int64)

Moves = npt.NDArray[np.int64]
TtKeys = npt.NDArray[np.uint64]
TtData = npt.NDArray[np.int64]
PvTable = npt.NDArray[np.int64]


@njit(cache=True)
def evaluate(stats: Stats, me: int) -> int:
    """Pattern sums, the side to move's counted 20% higher (it moves first)."""
    return int((stats[me, VALUE] * 12 - stats[3 - me, VALUE] * 10) // 10)


@njit(cache=True)
def move_priority(pat: Patterns, me: int, cell: int) -> int:
    """Threat-first ordering key of ``cell`` for the side ``me`` to move."""
    op = 3 - me
    score = 0
    for d in range(4):
        score += ORDER_WEIGHT[pat[me, d, cell]] + ORDER_WEIGHT[pat[op, d, cell]]
    for side, scale in ((me, 2), (op, 1)):
        fours = count_class(pat, side, cell, FOUR)
        threes = count_class(pat, side, cell, OPEN_THREE) - fours
        if count_class(pat, side, cell, FIVE) > 0:
            score += 1_000_000 * scale
        elif count_class(pat, side, cell, OPEN_FOUR) > 0 or fours >= 2:
            score += 50_000 * scale
        elif fours == 1 and threes >= 1:
            score += 10_000 * scale
        elif threes >= 2:
            score += 2_000 * scale
    return score


@njit(cache=True)
def generate(
    cells: Cells, near2: Counts, pat: Patterns, stats: Stats, me: int, width: int,
    moves: Moves, keys: Moves,
) -> int:
    """Candidate moves sorted by priority, at most ``width`` unless defending a three."""
    op = 3 - me
    defending = stats[op, OPEN_FOUR] > 0
    count = 0
    for cell in range(cells.shape[0]):
        if cells[cell] != EMPTY or near2[cell] == 0:
            continue
        if defending and count_class(pat, me, cell, FOUR) == 0 and count_class(
            pat, op, cell, FOUR
        ) == 0:
            continue
        priority = move_priority(pat, me, cell)
        i = count
        while i > 0 and keys[i - 1] < priority:
            keys[i] = keys[i - 1]
            moves[i] = moves[i - 1]
            i -= 1
        keys[i] = priority
        moves[i] = cell
        count += 1
    return count if defending else min(count, width)


@njit(cache=True)
def _tt_pack(score: int, depth: int, flag: int, move: int) -> int:
    return ((score + (1 << 30)) << 32) | (depth << 16) | (flag << 12) | (move + 1)


@njit(cache=True)
def _tt_store(
    tt_keys: TtKeys, tt_data: TtData, key: np.uint64, score: int, depth: int, flag: int,
    move: int, ply: int,
) -> None:
    if score > WIN_BOUND:
        score += ply
    elif score < -WIN_BOUND:
        score -= ply
    slot = np.int64(key & np.uint64(tt_keys.shape[0] - 1))
    tt_keys[slot] = key
    tt_data[slot] = _tt_pack(score, depth, flag, move)


@njit(cache=True)
def _tt_probe(tt_keys: TtKeys, tt_data: TtData, key: np.uint64, ply: int) -> tuple[
    bool, int, int, int, int
]:
    """(hit, score, depth, flag, move) for ``key``."""
    slot = np.int64(key & np.uint64(tt_keys.shape[0] - 1))
    if tt_keys[slot] != key:
        return False, 0, -1, 0, -1
    data = tt_data[slot]
    score = (data >> 32) - (1 << 30)
    if score > WIN_BOUND:
        score -= ply
    elif score < -WIN_BOUND:
        score += ply
    return True, score, (data >> 16) & 0xFF, (data >> 12) & 0xF, (data & 0xFFF) - 1


@njit(cache=True)
def _root_view(ply: int, value: int) -> int:
    return value if ply % 2 == 0 else -value


@njit(cache=True)
def negamax(
    cells: Cells, near1: Counts, near2: Counts, pat: Patterns, stats: Stats, key: Keys,
    table: Table, size: int, me: int, depth: int, ply: int, alpha: int, beta: int,
    last: int, parent: int, width: int, tt_keys: TtKeys, tt_data: TtData, pv: PvTable,
    move_buf: Moves, key_buf: Moves, ctx: Context, stop: StopArray, tree: TreeBuffer,
    root_moves: Moves,
) -> int:
    """Score of the position for ``me`` to move; ``root_moves`` (if any) limit ply 0."""
    if ply % 2 == 0:
        node = tree_open(tree, ctx, parent, last, ply, alpha, beta)
    else:
        node = tree_open(tree, ctx, parent, last, ply, -beta, -alpha)
    pv[ply, 0] = 0
    if poll_stop(ctx, stop):
        return 0
    op = 3 - me
    n = cells.shape[0]
    moves = move_buf[ply * n : (ply + 1) * n]
    keys = key_buf[ply * n : (ply + 1) * n]
    forced = False
    leaf_score = 0
    is_leaf = True
    if stats[me, FIVE] > 0:
        leaf_score = WIN - ply
    elif stats[op, FIVE] > 0:
        if five_cells(pat, op, moves) > 1:
            leaf_score = -(WIN - ply - 1)
        else:
            forced = True
            is_leaf = False
    elif stats[me, OPEN_FOUR] > 0 and stats[op, FOUR] == 0 and stats[op, OPEN_FOUR] == 0:
        leaf_score = WIN - ply - 2
    elif depth <= 0 or ply >= MAX_PLY - 2:
        leaf_score = evaluate(stats, me)
    else:
        is_leaf = False
    if is_leaf:
        tree_close(tree, node, _root_view(ply, leaf_score), KIND_LEAF, False)
        return leaf_score
    hit, tt_score, tt_depth, tt_flag, tt_move = _tt_probe(tt_keys, tt_data, key[0], ply)
    usable = hit and ply > 0 and tt_depth >= depth and not forced
    if usable and (
        tt_flag == EXACT
        or (tt_flag == LOWER and tt_score >= beta)
        or (tt_flag == UPPER and tt_score <= alpha)
    ):
        tree_close(tree, node, _root_view(ply, tt_score), KIND_LEAF, tt_flag != EXACT)
        return tt_score
    if forced:
        count = 1
    elif ply == 0 and root_moves.shape[0] > 0:
        count = root_moves.shape[0]
        moves[:count] = root_moves
        _move_to_front(moves, count, tt_move)
    else:
        count = generate(cells, near2, pat, stats, me, width, moves, keys)
        _move_to_front(moves, count, tt_move)
    child_depth = depth if forced else depth - 1
    alpha0 = alpha
    best = -WIN - 1
    best_move = moves[0]
    cut = False
    for i in range(count):
        move = moves[i]
        play(cells, near1, near2, pat, stats, key, table, size, move, me)
        if i == 0:
            score = -negamax(
                cells, near1, near2, pat, stats, key, table, size, op, child_depth, ply + 1,
                -beta, -alpha, move, node, width, tt_keys, tt_data, pv, move_buf, key_buf,
                ctx, stop, tree, root_moves,
            )
        else:
            score = -negamax(
                cells, near1, near2, pat, stats, key, table, size, op, child_depth, ply + 1,
                -alpha - 1, -alpha, move, node, width, tt_keys, tt_data, pv, move_buf,
                key_buf, ctx, stop, tree, root_moves,
            )
            if alpha < score < beta and ctx[CTX_ABORTED] == 0:
                score = -negamax(
                    cells, near1, near2, pat, stats, key, table, size, op, child_depth,
                    ply + 1, -beta, -alpha, move, node, width, tt_keys, tt_data, pv,
                    move_buf, key_buf, ctx, stop, tree, root_moves,
                )
        unplay(cells, near1, near2, pat, stats, key, table, size, move)
        if ctx[CTX_ABORTED] != 0:
            break
        if score > best:
            best = score
            best_move = move
            if score > alpha:
                alpha = score
                _update_pv(pv, ply, move)
                if alpha >= beta:
                    cut = True
                    break
    if ctx[CTX_ABORTED] != 0:
        return best if best > -WIN - 1 else 0
    flag = LOWER if cut else (EXACT if best > alpha0 else UPPER)
    _tt_store(tt_keys, tt_data, key[0], best, depth, flag, best_move, ply)
    tree_close(tree, node, _root_view(ply, best), KIND_MAX if ply % 2 == 0 else KIND_MIN, cut)
    return best


@njit(cache=True)
def _move_to_front(moves: Moves, count: int, move: int) -> None:
    for i in range(count):
        if moves[i] == move:
            for j in range(i, 0, -1):
                moves[j] = moves[j - 1]
            moves[0] = move
            return


@njit(cache=True)
def _update_pv(pv: PvTable, ply: int, move: int) -> None:
    """Row ``ply`` holds its length in column 0, then the moves."""
    child = pv[ply + 1, 0]
    pv[ply, 1] = move
    for i in range(child):
        pv[ply, 2 + i] = pv[ply + 1, 1 + i]
    pv[ply, 0] = child + 1
