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

from arena.engine.othello._jit import (
    U0,
    U1,
    inline_kernel,
    kernel,
    lowest_square,
    popcount,
)
from arena.engine.othello.bitboard import final_score, flips
from arena.engine.othello.stability import stable_discs

EG_INF = 100
# The stability cutoff needs 64 - 2 * stable <= alpha: it is tried only from this alpha on,
# which grows with the empty squares (fewer discs are stable early).
STABILITY_MIN_ALPHA = -2
STABILITY_ALPHA_PER_EMPTY = 2
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


def _line_flip_counts() -> npt.NDArray[np.int64]:
    """LINE_FLIPS[i, bits]: twice the discs flipped by a move on square ``i`` of a line of 8
    whose own discs are ``bits`` and every other square holds an opponent disc."""
    table = np.zeros((8, 256), dtype=np.int64)
    for i in range(8):
        for bits in range(256):
            total = 0
            for step in (-1, 1):
                j, run = i + step, 0
                while 0 <= j < 8 and not bits >> j & 1:
                    j, run = j + step, run + 1
                if 0 <= j < 8:  # closed by an own disc
                    total += run
            table[i, bits] = 2 * total
    return table


def _diagonal_masks(step_col: int) -> npt.NDArray[np.uint64]:
    """The diagonal (``step_col`` 1: a1-h8 way, -1: h1-a8 way) through each square."""
    masks = np.zeros(64, dtype=np.uint64)
    for sq in range(64):
        row, col = divmod(sq, 8)
        masks[sq] = sum(
            1 << (r * 8 + c)
            for r in range(8)
            for c in range(8)
            if (c - col == r - row if step_col == 1 else c - col == row - r)
        )
    return masks


LINE_FLIPS = _line_flip_counts()
DIAGONAL_9 = _diagonal_masks(1)
DIAGONAL_7 = _diagonal_masks(-1)
_FILE_A = np.uint64(0x0101010101010101)
_FILE_TO_ROW = np.uint64(0x0102040810204080)  # gathers file a's bits into the top byte
_BYTE = np.uint64(0xFF)
_S56 = np.uint64(56)


@inline_kernel
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


@inline_kernel
def _try_flips(p: np.uint64, o: np.uint64, sq: int) -> np.uint64:
    """Flips of a move on ``sq``, zero when it flips nothing (or touches no opponent disc)."""
    if NEIGHBOURS[sq] & o == U0:
        return U0
    return flips(p, o, sq)


@inline_kernel
def _can_move(p: np.uint64, o: np.uint64, empty: np.uint64) -> bool:
    while empty != U0:
        sq = lowest_square(empty)
        empty &= empty - U1
        if _try_flips(p, o, sq) != U0:
            return True
    return False


@inline_kernel
def last_flip_count(p: np.uint64, sq: int) -> int:
    """Twice the discs flipped by ``p`` moving on ``sq`` when every other square is full.

    The opponent then owns every square that is not ``p``'s, so each of the four lines
    through ``sq`` is known from ``p``'s bits alone: gather them into a byte (a shift for
    the row, a multiplication for the file and the diagonals, whose squares all lie in
    different files) and look the count up.
    """
    row = sq >> 3
    col = sq & 7
    n = LINE_FLIPS[col, np.int64((p >> np.uint64(8 * row)) & _BYTE)]
    n += LINE_FLIPS[row, np.int64((((p >> np.uint64(col)) & _FILE_A) * _FILE_TO_ROW) >> _S56)]
    n += LINE_FLIPS[col, np.int64(((p & DIAGONAL_9[sq]) * _FILE_A) >> _S56)]
    n += LINE_FLIPS[col, np.int64(((p & DIAGONAL_7[sq]) * _FILE_A) >> _S56)]
    return int(n)


@inline_kernel
def last_move_score(p: np.uint64, sq: int, alpha: int) -> int:
    """Score of the side owning ``p`` when only ``sq`` is empty (every other square that is
    not ``p``'s is the opponent's), fail-soft against ``alpha``.

    When ``p`` cannot play there, the result is at most what it gets if the opponent cannot
    play either; if that already fails low, the opponent's flips are never counted.
    """
    count = popcount(p)
    n = last_flip_count(p, sq)
    if n != 0:
        return 2 * count - 62 + n
    # Nobody plays: the empty square goes to the winner (2c - 63 rounded away from 0).
    score = 2 * count - 62 if count >= 32 else 2 * count - 64
    if score > alpha:
        n = last_flip_count(~p ^ (U1 << sq), sq)
        if n != 0:
            score = 2 * count - 64 - n
    return score


@inline_kernel
def solve_two(
    p: np.uint64, o: np.uint64, alpha: int, beta: int, x1: int, x2: int
) -> tuple[int, int]:
    """(exact score, nodes) with exactly the two empty squares ``x1`` and ``x2``."""
    best = -EG_INF
    f = _try_flips(p, o, x1)
    if f != U0:
        best = -last_move_score(o ^ f, x2, -beta)
        if best >= beta:
            return best, 1
    f = _try_flips(p, o, x2)
    if f != U0:
        value = -last_move_score(o ^ f, x1, -beta)
        if value > best:
            best = value
    if best > -EG_INF:
        return best, 1
    # No move: the opponent plays (scores stay from our side, so it minimises).
    worst = EG_INF
    f = _try_flips(o, p, x1)
    if f != U0:
        worst = last_move_score(p ^ f, x2, alpha)
        if worst <= alpha:
            return worst, 2
    f = _try_flips(o, p, x2)
    if f != U0:
        value = last_move_score(p ^ f, x1, alpha)
        if value < worst:
            worst = value
    if worst < EG_INF:
        return worst, 2
    return final_score(p, o), 2


@inline_kernel
def _quadrant(sq: int) -> int:
    """0-3: the board quadrant of ``sq`` (a1-d4, e1-h4, a5-d8, e5-h8)."""
    return ((sq >> 5) << 1) | ((sq & 7) >> 2)


@inline_kernel
def _three_moves(
    p: np.uint64, o: np.uint64, alpha: int, beta: int, x1: int, x2: int, x3: int
) -> tuple[int, int]:
    """(score, nodes below) of the best move on ``x1``, ``x2``, ``x3`` tried in that order;
    the score is -EG_INF when none of them is a move."""
    nodes = 0
    best = -EG_INF
    for i in range(3):
        if i == 0:
            sq, a, b = x1, x2, x3
        elif i == 1:
            sq, a, b = x2, x1, x3
        else:
            sq, a, b = x3, x1, x2
        f = _try_flips(p, o, sq)
        if f == U0:
            continue
        m = U1 << sq
        value, below = solve_two(o ^ f, p ^ f ^ m, -beta, -alpha, a, b)
        value = -value
        nodes += below
        if value > best:
            best = value
            if value > alpha:
                alpha = value
                if value >= beta:
                    break
    return best, nodes


@kernel
def _solve_three_in_order(
    p: np.uint64, o: np.uint64, alpha: int, beta: int, x1: int, x2: int, x3: int
) -> tuple[int, int]:
    """(exact score, nodes) with the three empty squares tried in the order given."""
    best, nodes = _three_moves(p, o, alpha, beta, x1, x2, x3)
    if best > -EG_INF:
        return best, nodes + 1
    best, below = _three_moves(o, p, -beta, -alpha, x1, x2, x3)  # a pass
    if best > -EG_INF:
        return -best, nodes + below + 2
    return final_score(p, o), nodes + 2


@inline_kernel
def solve_three(
    p: np.uint64, o: np.uint64, alpha: int, beta: int, empty: np.uint64
) -> tuple[int, int]:
    """(exact score, nodes) with exactly the three empty squares ``empty``.

    Parity order: a square alone in its quadrant comes first (with three empties, the
    quadrants hold three odd ones, or one odd and one even, or a single odd one)."""
    x1 = lowest_square(empty)
    empty &= empty - U1
    x2 = lowest_square(empty)
    x3 = lowest_square(empty & (empty - U1))
    q1, q2, q3 = _quadrant(x1), _quadrant(x2), _quadrant(x3)
    # One call site, the order chosen above: a smaller caller.
    if q1 == q2 and q2 != q3:
        x1, x2, x3 = x3, x1, x2  # x3 alone in its quadrant first
    elif q1 == q3 and q1 != q2:
        x1, x2 = x2, x1  # x2 alone first
    return _solve_three_in_order(p, o, alpha, beta, x1, x2, x3)


@kernel
def solve_small(p: np.uint64, o: np.uint64, alpha: int, beta: int, empties: int) -> tuple[int, int]:
    """(exact score, nodes) with 4 or more empties.

    Nodes come back as a value, not through a counter array: every call that passes an
    array atomically updates its reference count, which cost a third of the solver's time.
    """
    nodes = 1
    if alpha >= STABILITY_MIN_ALPHA + STABILITY_ALPHA_PER_EMPTY * empties:
        # The opponent's stable discs bound our result (the deep solver's cutoff).
        ceiling = 64 - 2 * popcount(stable_discs(o, p))
        if ceiling <= alpha:
            return ceiling, nodes
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
            if empties == 4:
                value, below = solve_three(o ^ f, p ^ f ^ m, -beta, -alpha, empty ^ m)
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
