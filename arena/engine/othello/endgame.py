"""Exact endgame solver: the final disc difference for the side to move with perfect play.

Scores follow the OBF convention (empty squares go to the winner). The solver is a
principal-variation alpha-beta over the disc difference:

* above ``SHALLOW`` empties: a table of (lower, upper) bounds in two-entry buckets, the
  table move first, then fastest-first order (fewest opponent replies, corners counting
  double; ties by fewest empty squares next to our discs), enhanced transposition cutoffs
  (a child's stored bound that already refutes the parent), and a stability cutoff (the
  opponent's stable discs bound our best result);
* ``SHALLOW`` empties or fewer: ``endgame_small`` (no table, no move generation).

A win/loss/draw solve is the same search with the window (-1, 1).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from arena.engine.othello._jit import (
    CLOCK_MONOTONIC,
    CORNERS,
    U0,
    U1,
    inline_kernel,
    kernel,
    leading_zeros,
    lowest_square,
    popcount,
    prefetch,
    search_kernel,
)
from arena.engine.othello.bitboard import PASS, final_score, flips, get_moves, pair_key
from arena.engine.othello.endgame_small import (
    EG_INF,
    STABILITY_ALPHA_PER_EMPTY,
    STABILITY_MIN_ALPHA,
    last_move_score,
    odd_quadrants,
    solve_small,
    solve_three,
    solve_two,
)
from arena.engine.othello.search import (
    _ORDER_VALUE,
    MAX_MOVES,
    MAX_PLY,
    ST_ABORTED,
    ST_CLOCK,
    ST_DEADLINE,
    ST_NODE_LIMIT,
    ST_NODES,
    ST_ROOT_BEST,
    ST_ROOT_DONE,
    ST_ROOT_SCORES,
    ST_SALT,
    _should_stop,
    new_state,
)
from arena.engine.othello.stability import stable_discs

SHALLOW = 7
ETC_MIN_EMPTIES = 12  # below this, probing every child costs more than the cutoffs save

_M8 = np.uint64(0xFF)
_M16 = np.uint64(0xFFFF)
_SH8 = np.uint64(8)
_SH16 = np.uint64(16)
_SH24 = np.uint64(24)
_SH32 = np.uint64(32)


@inline_kernel
def _unpack(data: np.uint64) -> tuple[int, int, int]:
    lower = int(data & _M8) - 64
    upper = int((data >> _SH8) & _M8) - 64
    move = int((data >> _SH24) & _M8) - 1
    return lower, upper, move


@inline_kernel
def _bucket(tt: npt.NDArray[np.uint64], key: np.uint64) -> int:
    """Index in ``tt`` of the two-entry bucket of ``key`` (32 bytes: one cache line)."""
    return int(np.int64(key & np.uint64(tt.shape[0] // 4 - 1))) * 4


@inline_kernel
def eg_probe(tt: npt.NDArray[np.uint64], key: np.uint64) -> tuple[bool, int, int, int]:
    """(hit, lower bound, upper bound, best move) stored for ``key``."""
    b = _bucket(tt, key)
    if tt[b] == key:
        lower, upper, move = _unpack(tt[b + 1])
        return True, lower, upper, move
    if tt[b + 2] == key:
        lower, upper, move = _unpack(tt[b + 3])
        return True, lower, upper, move
    return False, -EG_INF, EG_INF, -1


@kernel
def eg_store(
    tt: npt.NDArray[np.uint64],
    key: np.uint64,
    gen: np.uint64,
    empties: int,
    alpha: int,
    beta: int,
    score: int,
    move: int,
) -> None:
    """Record ``score`` searched with (alpha, beta) as bounds, merged with what is there."""
    b = _bucket(tt, key)
    lower, upper = -64, 64
    if tt[b] == key:
        slot = b
    elif tt[b + 2] == key:
        slot = b + 2
    else:
        # Replace an entry of an earlier search, else the one with fewer empties below it.
        d0, d1 = tt[b + 1], tt[b + 3]
        if (d1 >> _SH32) & _M16 != gen:
            slot = b + 2
        elif (d0 >> _SH32) & _M16 != gen or (d0 >> _SH16) & _M8 < (d1 >> _SH16) & _M8:
            slot = b
        else:
            slot = b + 2
    if tt[slot] == key:
        lower, upper, _ = _unpack(tt[slot + 1])
    if score <= alpha:
        upper = min(upper, score)
    elif score >= beta:
        lower = max(lower, score)
    else:
        lower = upper = score
    if lower > upper:  # a key collision left foreign bounds: keep only the new result
        lower, upper = (-64, score) if score <= alpha else (score, 64)
    data = np.uint64(lower + 64) | (np.uint64(upper + 64) << _SH8)
    data |= (np.uint64(empties) << _SH16) | (np.uint64(move + 1) << _SH24) | (gen << _SH32)
    tt[slot] = key
    tt[slot + 1] = data


_NOT_A = np.uint64(0xFEFEFEFEFEFEFEFE)
_NOT_H = np.uint64(0x7F7F7F7F7F7F7F7F)
_S1 = np.uint64(1)
_S7 = np.uint64(7)
_S8 = np.uint64(8)
_S9 = np.uint64(9)
# Ordering key weights (tuned on FFO 20-39 node counts): replies dominate, then the squares
# next to our discs that the opponent could later play into, the square's static value, and
# whether it lies in a quadrant with an odd number of empties.
REPLY_WEIGHT = 1024
FRONTIER_WEIGHT = 32
SQUARE_WEIGHT = 8
PARITY_WEIGHT = 16


@inline_kernel
def _adjacent(b: np.uint64) -> np.uint64:
    """Squares next to a disc of ``b`` (in any of the 8 directions)."""
    side = ((b << _S1) | (b << _S9) | (b >> _S7)) & _NOT_A
    side |= ((b >> _S1) | (b >> _S9) | (b << _S7)) & _NOT_H
    return side | (b << _S8) | (b >> _S8)


@kernel
def _order(
    p: np.uint64,
    o: np.uint64,
    moves: np.uint64,
    first: int,
    work: npt.NDArray[np.int64],
    ply: int,
    fetch: np.int64,
    buckets: np.uint64,
    salt: np.uint64,
) -> int:
    """Moves into ``work[ply, 0]``, keys in ``work[ply, 1]``: the table move, then fewest
    opponent replies (corners count 2), fewest empty squares next to our discs, best static
    square, odd quadrant.

    ``fetch`` (non-zero: the table's address, ``buckets`` its bucket count less one) starts
    loading each child's bucket now, so that the child's probe rarely waits for memory."""
    odd = odd_quadrants(~(p | o))
    n = 0
    while moves != U0:
        sq = lowest_square(moves)
        m = U1 << sq
        moves ^= m
        f = flips(p, o, sq)
        if fetch != 0:
            child = pair_key(o ^ f, p ^ f ^ m) ^ salt
            prefetch(fetch + 32 * np.int64(child & buckets))
        if sq == first:
            key = 1 << 40
        else:
            replies = get_moves(o ^ f, p ^ f ^ m)
            mine = p ^ f ^ m
            key = -REPLY_WEIGHT * (popcount(replies) + popcount(replies & CORNERS))
            key -= FRONTIER_WEIGHT * popcount(_adjacent(mine) & ~(mine | o))
            key += _ORDER_VALUE[sq] * SQUARE_WEIGHT + (PARITY_WEIGHT if odd & m else 0)
        j = n
        while j > 0 and work[ply, 1, j - 1] < key:
            work[ply, 0, j] = work[ply, 0, j - 1]
            work[ply, 1, j] = work[ply, 1, j - 1]
            j -= 1
        work[ply, 0, j] = sq
        work[ply, 1, j] = key
        n += 1
    return n


@kernel
def _etc_cut(
    p: np.uint64,
    o: np.uint64,
    moves: np.uint64,
    beta: int,
    tt: npt.NDArray[np.uint64],
    salt: np.uint64,
) -> int:
    """A value >= beta proven by a child's stored upper bound, else -EG_INF."""
    while moves != U0:
        sq = lowest_square(moves)
        m = U1 << sq
        moves ^= m
        f = flips(p, o, sq)
        cp, co = o ^ f, p ^ f ^ m
        hit, _lower, upper, _move = eg_probe(tt, pair_key(cp, co) ^ salt)
        if hit and -upper >= beta:
            return -upper
    return -EG_INF


@kernel
def _solve_tail(p: np.uint64, o: np.uint64, alpha: int, beta: int, empties: int) -> tuple[int, int]:
    """(score, nodes) of a position with ``SHALLOW`` empties or fewer."""
    if empties == 0:
        return final_score(p, o), 0
    empty = ~(p | o)
    if empties == 1:
        return last_move_score(p, lowest_square(empty), alpha), 1
    if empties == 2:
        return solve_two(p, o, alpha, beta, lowest_square(empty), 63 - leading_zeros(empty))
    if empties == 3:
        return solve_three(p, o, alpha, beta, empty)
    return solve_small(p, o, alpha, beta, empties)


@search_kernel
def solve_deep(
    p: np.uint64,
    o: np.uint64,
    alpha: int,
    beta: int,
    empties: int,
    ply: int,
    tt: npt.NDArray[np.uint64],
    work: npt.NDArray[np.int64],
    st: npt.NDArray[np.int64],
    stop_ext: npt.NDArray[np.int64],
) -> int:
    """Exact (fail-soft) score within (alpha, beta); returns 0 when aborted."""
    if ply > 0 and empties <= SHALLOW:
        value, nodes = _solve_tail(p, o, alpha, beta, empties)
        st[ST_NODES] += nodes
        return value
    if _should_stop(st, stop_ext):
        return 0
    salt = np.uint64(st[ST_SALT])
    key = pair_key(p, o) ^ salt
    # The address as int64: uint64 + int64 would go through a float in numba.
    base = np.int64(tt.ctypes.data)
    prefetch(base + 8 * _bucket(tt, key))  # read below, after the cheap tests
    moves = get_moves(p, o)
    if moves == U0:
        if get_moves(o, p) == U0:
            return final_score(p, o)
        if ply == 0:
            st[ST_ROOT_BEST] = PASS
        return -solve_deep(o, p, -beta, -alpha, empties, ply + 1, tt, work, st, stop_ext)
    if ply > 0 and alpha >= STABILITY_MIN_ALPHA + STABILITY_ALPHA_PER_EMPTY * empties:
        ceiling = 64 - 2 * popcount(stable_discs(o, p))
        if ceiling <= alpha:
            return ceiling
    if ply > 0 and moves & (moves - U1) == U0:
        # A single move: no order to find and rarely worth a table entry (or its cache miss).
        sq = lowest_square(moves)
        f = flips(p, o, sq)
        return -solve_deep(
            o ^ f, p ^ f ^ moves, -beta, -alpha, empties - 1, ply + 1, tt, work, st, stop_ext
        )
    gen = salt & _M16
    hit, lower, upper, first = eg_probe(tt, key)
    if hit and ply > 0:
        if lower >= beta:
            return lower
        if upper <= alpha or lower == upper:
            return upper
        alpha = max(alpha, lower)
        beta = min(beta, upper)
    if ply > 0 and empties >= ETC_MIN_EMPTIES:
        cut = _etc_cut(p, o, moves, beta, tt, salt)
        if cut >= beta:
            return cut
    fetch = base if empties - 1 > SHALLOW else np.int64(0)
    n = _order(p, o, moves, first, work, ply, fetch, np.uint64(tt.shape[0] // 4 - 1), salt)
    best = -EG_INF
    best_move = work[ply, 0, 0]
    a = alpha
    for i in range(n):
        sq = work[ply, 0, i]
        m = U1 << sq
        f = flips(p, o, sq)
        cp = o ^ f
        co = p ^ f ^ m
        if empties - 1 <= SHALLOW:
            # The small solvers take no arrays: calling them here, not through a
            # recursive call that passes four, saves most of a call at the commonest level.
            value, below = _solve_tail(cp, co, -beta, -a, empties - 1)
            st[ST_NODES] += below
            value = -value
        elif i == 0:
            value = -solve_deep(cp, co, -beta, -a, empties - 1, ply + 1, tt, work, st, stop_ext)
        else:
            value = -solve_deep(cp, co, -a - 1, -a, empties - 1, ply + 1, tt, work, st, stop_ext)
            if a < value < beta and st[ST_ABORTED] == 0:
                value = -solve_deep(
                    cp, co, -beta, -value, empties - 1, ply + 1, tt, work, st, stop_ext
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
    eg_store(tt, key, gen, empties, alpha, beta, best, best_move)
    return best


class EndgameSolver:
    """Scratch arrays for exact solves; the table is reused across positions.

    Each solve's entries carry its generation (the salt's low 16 bits), and an entry of
    another generation is the first replaced (``eg_store``), so a table full of earlier
    solves' entries behaves as an empty one, and a solve counts the same nodes whatever
    the thread solved before (the shared cache relies on it). The generations are
    counted, 1 to 65535, and the table cleared when they start again: drawn at random
    with the salt, a generation could be an earlier solve's still in the table, whose
    entries then competed as the current solve's (27 nodes more in a 19-empty solve)."""

    def __init__(self, tt_bits: int = 20) -> None:
        self.tt = np.zeros(2 << tt_bits, dtype=np.uint64)  # 2^tt_bits entries, 2 per bucket
        # Per ply: the ordered moves and their keys (one array: fewer kernel arguments).
        self.work = np.zeros((MAX_PLY, 2, MAX_MOVES), dtype=np.int64)
        self.salt = 0
        self.generation = 0  # the last solve's (0: none yet, as an empty entry says)

    def clear(self) -> None:
        self.tt.fill(0)

    def _next_generation(self) -> int:
        self.generation = self.generation % int(_M16) + 1
        if self.generation == 1 and self.salt:  # every generation may be in the table
            self.clear()
        return self.generation

    def solve(
        self,
        p: int,
        o: int,
        alpha: int,
        beta: int,
        node_limit: int,
        stop_ext: npt.NDArray[np.int64],
        deadline: int = 0,
        clock_id: int = CLOCK_MONOTONIC,
    ) -> tuple[int, npt.NDArray[np.int64]]:
        """(score, state vector) of the position; the state holds nodes, best move, abort.

        ``deadline`` is in ns on the clock ``clock_id`` (0: none)."""
        st = new_state()
        st[ST_SALT] = st[ST_SALT] & ~int(_M16) | self._next_generation()
        st[ST_NODE_LIMIT] = node_limit
        st[ST_DEADLINE] = deadline
        st[ST_CLOCK] = clock_id
        empties = 64 - bin(p | o).count("1")
        score = solve_deep(
            np.uint64(p),
            np.uint64(o),
            alpha,
            beta,
            empties,
            0,
            self.tt,
            self.work,
            st,
            stop_ext,
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
            if moves & (moves - 1) == 0:  # a forced move: the solver stores none
                move = moves.bit_length() - 1
            else:
                hit, _lower, _upper, move = eg_probe(
                    self.tt, np.uint64(pair_key(up, uo)) ^ np.uint64(self.salt)
                )
                if not hit or move < 0 or not moves >> int(move) & 1:
                    break
            f = int(flips(up, uo, int(move)))
            line.append(int(move))
            p, o = o ^ f, p ^ f ^ (1 << int(move))
        return line
