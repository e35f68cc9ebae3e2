"""Exact endgame solver: the final disc difference for the side to move with perfect play.

Scores follow the OBF convention (empty squares go to the winner). The solver is a
principal-variation alpha-beta over the disc difference:

* many empties: transposition table and fastest-first ordering (fewest opponent replies);
* ``SHALLOW`` empties or fewer: no table, moves in odd-parity quadrants first;
* the last empty square is scored without generating moves.

A win/loss/draw solve is the same search with the window (-1, 1).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from arena.engine.othello._jit import U0, U1, kernel, lowest_square, popcount
from arena.engine.othello.bitboard import PASS, final_score, flips, get_moves, pair_key
from arena.engine.othello.search import (
    _ORDER_VALUE,
    BOUND_EXACT,
    BOUND_LOWER,
    BOUND_UPPER,
    MAX_MOVES,
    MAX_PLY,
    ST_ABORTED,
    ST_ROOT_BEST,
    ST_ROOT_DONE,
    ST_ROOT_SCORES,
    ST_SALT,
    _should_stop,
    new_state,
    tt_probe,
    tt_store,
)

SHALLOW = 6
_QUAD0 = np.uint64(0x000000000F0F0F0F)
_QUAD1 = np.uint64(0x00000000F0F0F0F0)
_QUAD2 = np.uint64(0x0F0F0F0F00000000)
_QUAD3 = np.uint64(0xF0F0F0F000000000)
_EG_INF = 100


@kernel
def last_move_score(p: np.uint64, o: np.uint64, sq: int) -> int:
    """Exact score when only ``sq`` is empty."""
    count = popcount(p)
    f = flips(p, o, sq)
    if f != U0:
        return 2 * (count + popcount(f) + 1) - 64
    f = flips(o, p, sq)
    if f != U0:
        return 2 * (count - popcount(f)) - 64
    diff = 2 * count - 63  # neither side can play: the empty square goes to the winner
    return diff + 1 if diff > 0 else diff - 1


@kernel
def _odd_quadrants(empty: np.uint64) -> np.uint64:
    mask = U0
    for quad in (_QUAD0, _QUAD1, _QUAD2, _QUAD3):
        if popcount(empty & quad) & 1:
            mask |= quad
    return mask


@kernel
def solve_shallow(
    p: np.uint64, o: np.uint64, alpha: int, beta: int, empties: int, st: npt.NDArray[np.int64]
) -> int:
    """Alpha-beta without a table for few empties (>= 2), odd quadrants first."""
    st[0] += 1
    moves = get_moves(p, o)
    if moves == U0:
        if get_moves(o, p) == U0:
            return final_score(p, o)
        return -solve_shallow(o, p, -beta, -alpha, empties, st)
    empty = ~(p | o)
    odd = _odd_quadrants(empty)
    best = -_EG_INF
    for parity_pass in range(2):
        mm = moves & odd if parity_pass == 0 else moves & ~odd
        while mm != U0:
            sq = lowest_square(mm)
            m = U1 << sq
            mm ^= m
            f = flips(p, o, sq)
            if empties == 2:
                value = -last_move_score(o ^ f, p ^ f ^ m, lowest_square(empty ^ m))
            else:
                value = -solve_shallow(o ^ f, p ^ f ^ m, -beta, -alpha, empties - 1, st)
            if value > best:
                best = value
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        return best
    return best


@kernel
def _order_endgame(
    p: np.uint64,
    o: np.uint64,
    moves: np.uint64,
    first: int,
    out: npt.NDArray[np.int64],
    keys: npt.NDArray[np.int64],
) -> int:
    n = 0
    while moves != U0:
        sq = lowest_square(moves)
        moves &= moves - U1
        if sq == first:
            key = 1 << 40
        else:
            f = flips(p, o, sq)
            m = U1 << sq
            key = _ORDER_VALUE[sq] * 8 - 256 * popcount(get_moves(o ^ f, p ^ f ^ m))
        j = n
        while j > 0 and keys[j - 1] < key:
            out[j] = out[j - 1]
            keys[j] = keys[j - 1]
            j -= 1
        out[j] = sq
        keys[j] = key
        n += 1
    return n


@kernel
def solve_deep(
    p: np.uint64,
    o: np.uint64,
    alpha: int,
    beta: int,
    empties: int,
    ply: int,
    tt: npt.NDArray[np.uint64],
    buf: npt.NDArray[np.int64],
    keys: npt.NDArray[np.int64],
    st: npt.NDArray[np.int64],
    stop_ext: npt.NDArray[np.int64],
    stop_time: npt.NDArray[np.int64],
) -> int:
    """Exact (fail-soft) score within (alpha, beta); returns 0 when aborted."""
    if ply > 0 and empties <= SHALLOW:
        if empties == 0:
            return final_score(p, o)
        if empties == 1:
            st[0] += 1
            return last_move_score(p, o, lowest_square(~(p | o)))
        return solve_shallow(p, o, alpha, beta, empties, st)
    if _should_stop(st, stop_ext, stop_time):
        return 0
    moves = get_moves(p, o)
    if moves == U0:
        if get_moves(o, p) == U0:
            return final_score(p, o)
        if ply == 0:
            st[ST_ROOT_BEST] = PASS
        return -solve_deep(
            o, p, -beta, -alpha, empties, ply + 1, tt, buf, keys, st, stop_ext, stop_time
        )
    key = pair_key(p, o) ^ np.uint64(st[ST_SALT])
    hit, _depth, t_bound, t_score, first = tt_probe(tt, key)
    if hit and ply > 0:
        if t_bound == BOUND_EXACT:
            return t_score
        if t_bound == BOUND_LOWER and t_score >= beta:
            return t_score
        if t_bound == BOUND_UPPER and t_score <= alpha:
            return t_score
    n = _order_endgame(p, o, moves, first, buf[ply], keys[ply])
    best = -_EG_INF
    best_move = buf[ply, 0]
    a = alpha
    for i in range(n):
        sq = buf[ply, i]
        m = U1 << sq
        f = flips(p, o, sq)
        cp = o ^ f
        co = p ^ f ^ m
        if i == 0:
            value = -solve_deep(
                cp, co, -beta, -a, empties - 1, ply + 1, tt, buf, keys, st, stop_ext, stop_time
            )
        else:
            value = -solve_deep(
                cp, co, -a - 1, -a, empties - 1, ply + 1, tt, buf, keys, st, stop_ext, stop_time
            )
            if a < value < beta and st[ST_ABORTED] == 0:
                value = -solve_deep(
                    cp,
                    co,
                    -beta,
                    -value,
                    empties - 1,
                    ply + 1,
                    tt,
                    buf,
                    keys,
                    st,
                    stop_ext,
                    stop_time,
                )
        if st[ST_ABORTED] != 0:
            return 0
        if ply == 0:
            st[ST_ROOT_SCORES + sq] = value
            st[ST_ROOT_DONE] = i + 1
        if value > best:
            best = value
            best_move = sq
            if ply == 0:
                st[ST_ROOT_BEST] = sq
            if value > a:
                a = value
                if a >= beta:
                    break
    bound = BOUND_UPPER if best <= alpha else BOUND_LOWER if best >= beta else BOUND_EXACT
    tt_store(tt, key, empties, bound, best, best_move)
    return best


class EndgameSolver:
    """Scratch arrays for exact solves; the table is reused across positions."""

    def __init__(self, tt_bits: int = 20) -> None:
        self.tt = np.zeros(2 << tt_bits, dtype=np.uint64)
        self.buf = np.zeros((MAX_PLY, MAX_MOVES), dtype=np.int64)
        self.keys = np.zeros((MAX_PLY, MAX_MOVES), dtype=np.int64)
        self.salt = 0

    def clear(self) -> None:
        self.tt.fill(0)

    def solve(
        self,
        p: int,
        o: int,
        alpha: int,
        beta: int,
        node_limit: int,
        stop_ext: npt.NDArray[np.int64],
        stop_time: npt.NDArray[np.int64],
    ) -> tuple[int, npt.NDArray[np.int64]]:
        """(score, state vector) of the position; the state holds nodes, best move, abort."""
        st = new_state()
        st[1] = node_limit
        empties = 64 - bin(p | o).count("1")
        score = solve_deep(
            np.uint64(p),
            np.uint64(o),
            alpha,
            beta,
            empties,
            0,
            self.tt,
            self.buf,
            self.keys,
            st,
            stop_ext,
            stop_time,
        )
        self.salt = int(st[ST_SALT])
        return int(score), st

    def principal_variation(self, p: int, o: int, limit: int = 60) -> list[int]:
        """Moves stored in the table from (p, o): the solver's best line, as far as kept."""
        line: list[int] = []
        for _ in range(limit):
            up, uo = np.uint64(p), np.uint64(o)
            moves = int(get_moves(up, uo))
            if moves == 0:
                if int(get_moves(uo, up)) == 0:
                    break
                line.append(PASS)
                p, o = o, p
                continue
            hit, _d, _b, _s, move = tt_probe(
                self.tt, np.uint64(pair_key(up, uo)) ^ np.uint64(self.salt)
            )
            if not hit or move < 0 or not moves >> int(move) & 1:
                break
            f = int(flips(up, uo, int(move)))
            line.append(int(move))
            p, o = o ^ f, p ^ f ^ (1 << int(move))
        return line
