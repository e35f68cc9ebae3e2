"""Exact solver for the last few empty squares (no table, no move list).

With so few empties, generating the move bitboard costs more than trying each empty square:
a square next to no opponent disc is skipped at once, any other is tried by computing its
flips (none: not a legal move). Squares in quadrants holding an odd number of empties come
first (parity: the side that plays last in a region usually gains there).

Scores are OBF disc differences for the side to move (empties go to the winner); the
solvers are fail-soft alpha-beta and return (score, nodes searched).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from arena.engine.othello._jit import U0, U1, kernel, leading_zeros, lowest_square, popcount
from arena.engine.othello.bitboard import final_score, flips

EG_INF = 100
_QUAD0 = np.uint64(0x000000000F0F0F0F)
_QUAD1 = np.uint64(0x00000000F0F0F0F0)
_QUAD2 = np.uint64(0x0F0F0F0F00000000)
_QUAD3 = np.uint64(0xF0F0F0F000000000)


def _neighbour_masks() -> npt.NDArray[np.uint64]:
    masks = np.zeros(64, dtype=np.uint64)
    for sq in range(64):
        row, col = divmod(sq, 8)
        bits = 0
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                r, c = row + dr, col + dc
                if (dr or dc) and 0 <= r < 8 and 0 <= c < 8:
                    bits |= 1 << (r * 8 + c)
        masks[sq] = bits
    return masks


NEIGHBOURS = _neighbour_masks()


@kernel
def odd_quadrants(empty: np.uint64) -> np.uint64:
    """The union of the board quadrants that hold an odd number of the ``empty`` squares."""
    mask = U0
    if popcount(empty & _QUAD0) & 1:
        mask |= _QUAD0
    if popcount(empty & _QUAD1) & 1:
        mask |= _QUAD1
    if popcount(empty & _QUAD2) & 1:
        mask |= _QUAD2
    if popcount(empty & _QUAD3) & 1:
        mask |= _QUAD3
    return mask


@kernel
def _try_flips(p: np.uint64, o: np.uint64, sq: int) -> np.uint64:
    """Flips of a move on ``sq``, zero when it flips nothing (or touches no opponent disc)."""
    if NEIGHBOURS[sq] & o == U0:
        return U0
    return flips(p, o, sq)


@kernel
def _can_move(p: np.uint64, o: np.uint64, empty: np.uint64) -> bool:
    while empty != U0:
        sq = lowest_square(empty)
        empty &= empty - U1
        if _try_flips(p, o, sq) != U0:
            return True
    return False


@kernel
def last_move_score(p: np.uint64, o: np.uint64, sq: int) -> int:
    """Exact score when only ``sq`` is empty."""
    count = popcount(p)
    f = _try_flips(p, o, sq)
    if f != U0:
        return 2 * (count + popcount(f) + 1) - 64
    f = _try_flips(o, p, sq)
    if f != U0:
        return 2 * (count - popcount(f)) - 64
    diff = 2 * count - 63  # neither side can play: the empty square goes to the winner
    return diff + 1 if diff > 0 else diff - 1


@kernel
def solve_two(
    p: np.uint64, o: np.uint64, alpha: int, beta: int, x1: int, x2: int
) -> tuple[int, int]:
    """(exact score, nodes) with exactly the two empty squares ``x1`` and ``x2``."""
    best = -EG_INF
    f = _try_flips(p, o, x1)
    if f != U0:
        best = -last_move_score(o ^ f, p ^ f ^ (U1 << x1), x2)
        if best >= beta:
            return best, 1
    f = _try_flips(p, o, x2)
    if f != U0:
        value = -last_move_score(o ^ f, p ^ f ^ (U1 << x2), x1)
        if value > best:
            best = value
    if best > -EG_INF:
        return best, 1
    # No move: the opponent plays (scores stay from our side, so it minimises).
    worst = EG_INF
    f = _try_flips(o, p, x1)
    if f != U0:
        worst = last_move_score(p ^ f, o ^ f ^ (U1 << x1), x2)
        if worst <= alpha:
            return worst, 2
    f = _try_flips(o, p, x2)
    if f != U0:
        value = last_move_score(p ^ f, o ^ f ^ (U1 << x2), x1)
        if value < worst:
            worst = value
    if worst < EG_INF:
        return worst, 2
    return final_score(p, o), 2


@kernel
def solve_small(p: np.uint64, o: np.uint64, alpha: int, beta: int, empties: int) -> tuple[int, int]:
    """(exact score, nodes) with 3 or more empties.

    Nodes come back as a value, not through a counter array: every call that passes an
    array atomically updates its reference count, which cost a third of the solver's time.
    """
    nodes = 1
    empty = ~(p | o)
    odd = odd_quadrants(empty)
    best = -EG_INF
    for parity in range(2):
        candidates = empty & odd if parity == 0 else empty & ~odd
        while candidates != U0:
            sq = lowest_square(candidates)
            candidates &= candidates - U1
            f = _try_flips(p, o, sq)
            if f == U0:
                continue
            m = U1 << sq
            if empties == 3:
                rest = empty ^ m
                value, below = solve_two(
                    o ^ f, p ^ f ^ m, -beta, -alpha, lowest_square(rest), 63 - leading_zeros(rest)
                )
            else:
                value, below = solve_small(o ^ f, p ^ f ^ m, -beta, -alpha, empties - 1)
            value = -value
            nodes += below
            if value > best:
                best = value
                if value > alpha:
                    alpha = value
                    if value >= beta:
                        return value, nodes
    if best > -EG_INF:
        return best, nodes
    if not _can_move(o, p, empty):
        return final_score(p, o), nodes
    value, below = solve_small(o, p, -beta, -alpha, empties)
    return -value, nodes + below
