"""Static evaluators, configured by an int64 parameter vector (no code per bot).

Every evaluator answers from the point of view of the side to move (``p``), so the search
can negate it (negamax). ``color`` is the colour of ``p`` (0 black, 1 white); only the lab's
evaluator, which scores White minus Black, needs it.

Parameter vector layout (``params[0]`` picks the evaluator):

* KREVERSI: 3 x 64 position tables (begin, middle, end), use-table flag, mobility weight per
  phase, stable-disc score, force-pass score, mobility-counts-flips flag.
* LAB: nothing else.
* ARENA: pairs (begin weight, end weight) for each term in ``ARENA_TERMS``.
* PATTERN: stage table and trained weight blocks (``patterns.py``).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from arena.engine.othello._jit import U0, U1, kernel, lowest_square, popcount
from arena.engine.othello.bitboard import final_value, flips, get_moves, potential_mobility
from arena.engine.othello.patterns import PATTERN, pattern_eval

KREVERSI = 0
LAB = 1
ARENA = 2
# PATTERN = 3: trained pattern tables per game stage (``patterns.py``).

# KReversi layout offsets.
KR_TABLES = 1  # begin at 1, middle at 65, end at 129
KR_USE_TABLE = 193
KR_MOBILITY = 194  # begin, middle, end
KR_STABLE = 197
KR_FORCE_PASS = 198
KR_MOBILITY_FLIPS = 199
KR_SIZE = 200
KREVERSI_WIN = 1_000_000

LAB_SIZE = 1
LAB_WIN = 10_000

ARENA_TERMS = (
    "mobility",
    "potential_mobility",
    "corner",
    "x_square",
    "c_square",
    "stability",
    "parity",
    "disc",
)
ARENA_SIZE = 1 + 2 * len(ARENA_TERMS)
ARENA_WIN = 1_000_000

_ROW1 = np.uint64(0x00000000000000FF)
_ROW8 = np.uint64(0xFF00000000000000)
_FILE_A = np.uint64(0x0101010101010101)
_FILE_H = np.uint64(0x8080808080808080)
_X_SQUARES = (9, 14, 49, 54)  # b2, g2, b7, g7
_CORNER_OF_X = (0, 7, 56, 63)
_C_SQUARES = (1, 8, 6, 15, 48, 57, 55, 62)  # b1 a2, g1 h2, a7 b8, h7 g8
_CORNER_OF_C = (0, 0, 7, 7, 56, 56, 63, 63)


@kernel
def _staircase(own: np.uint64, row0: int, drow: int, col0: int, dcol: int) -> np.uint64:
    """Own discs made stable by a run-shaped block anchored in one corner.

    A disc is stable when its four lines are anchored: row ``k``'s run from the corner may
    be one shorter than row ``k-1``'s, unless that row was full (its diagonal is off-board).
    """
    stable = U0
    limit = 8
    for k in range(8):
        row = row0 + k * drow
        run = 0
        while run < limit:
            sq = row * 8 + col0 + run * dcol
            if not (own >> np.uint64(sq)) & U1:
                break
            stable |= U1 << sq
            run += 1
        if run == 0:
            break
        limit = 8 if run == 8 else run - 1
        if limit == 0:
            break
    return stable


@kernel
def stable_discs(own: np.uint64, other: np.uint64) -> np.uint64:
    """Discs of ``own`` that can never flip: corner staircases plus discs on full edges."""
    stable = U0
    if own & U1:
        stable |= _staircase(own, 0, 1, 0, 1)
    if (own >> np.uint64(7)) & U1:
        stable |= _staircase(own, 0, 1, 7, -1)
    if (own >> np.uint64(56)) & U1:
        stable |= _staircase(own, 7, -1, 0, 1)
    if (own >> np.uint64(63)) & U1:
        stable |= _staircase(own, 7, -1, 7, -1)
    full = own | other
    for edge in (_ROW1, _ROW8, _FILE_A, _FILE_H):
        if full & edge == edge:
            stable |= own & edge
    return stable


@kernel
def _table_sum(bits: np.uint64, params: npt.NDArray[np.int64], base: int) -> int:
    total = 0
    while bits != U0:
        sq = lowest_square(bits)
        bits &= bits - U1
        total += params[base + sq]
    return total


@kernel
def _flippable(p: np.uint64, o: np.uint64, moves: np.uint64) -> int:
    """Sum over the legal moves of the discs each would flip (KReversi's 'mobility')."""
    total = 0
    while moves != U0:
        sq = lowest_square(moves)
        moves &= moves - U1
        total += popcount(flips(p, o, sq))
    return total


@kernel
def kreversi_phase(discs: int) -> int:
    """KReversi's BoardPhase: <= 20 discs begin (0), <= 40 middle (1), else end (2)."""
    if discs <= 20:
        return 0
    if discs <= 40:
        return 1
    return 2


@kernel
def kreversi_eval(p: np.uint64, o: np.uint64, params: npt.NDArray[np.int64]) -> int:
    mp = get_moves(p, o)
    mo = get_moves(o, p)
    if mp == U0 and mo == U0:
        diff = popcount(p) - popcount(o)
        return KREVERSI_WIN if diff > 0 else -KREVERSI_WIN if diff < 0 else 0
    phase = kreversi_phase(popcount(p | o))
    score = 0
    if params[KR_USE_TABLE] != 0:
        base = KR_TABLES + 64 * phase
        score += _table_sum(p, params, base) - _table_sum(o, params, base)
    if mo == U0:
        score += params[KR_FORCE_PASS]
    elif mp == U0:
        score -= params[KR_FORCE_PASS]
    weight = params[KR_STABLE]
    if weight != 0:
        score += weight * (popcount(stable_discs(p, o)) - popcount(stable_discs(o, p)))
    weight = params[KR_MOBILITY + phase]
    if weight != 0:
        if params[KR_MOBILITY_FLIPS] != 0:
            score += weight * (_flippable(p, o, mp) - _flippable(o, p, mo))
        else:
            score += weight * (popcount(mp) - popcount(mo))
    return score


@kernel
def lab_eval(p: np.uint64, o: np.uint64, color: int) -> int:
    """The lab's EvaluateTest (White minus Black), turned to the side to move's view."""
    white = p if color == 1 else o
    black = o if color == 1 else p
    corners = np.uint64(0x8100000000000081)
    edges = (_ROW1 | _ROW8 | _FILE_A | _FILE_H) & ~corners
    inner = ~(_ROW1 | _ROW8 | _FILE_A | _FILE_H)
    value = 100 * (popcount(white & corners) - popcount(black & corners))
    value += 10 * (popcount(white & edges) - popcount(black & edges))
    value += popcount(white & inner) - popcount(black & inner)
    if get_moves(p, o) == U0 and get_moves(o, p) == U0:
        score = popcount(white) - popcount(black)
        if score > 0:
            value += LAB_WIN
        elif score < 0:
            value -= LAB_WIN
    return value if color == 1 else -value


@kernel
def _taper(params: npt.NDArray[np.int64], term: int, discs: int) -> int:
    begin = int(params[1 + 2 * term])
    end = int(params[2 + 2 * term])
    return (begin * (64 - discs) + end * (discs - 4)) // 60


@kernel
def _square_pattern(p: np.uint64, o: np.uint64, empty: np.uint64) -> tuple[int, int, int]:
    """Corner difference, and X-/C-square differences next to still-empty corners."""
    corners = popcount(p & np.uint64(0x8100000000000081)) - popcount(
        o & np.uint64(0x8100000000000081)
    )
    xs = 0
    for i in range(4):
        if (empty >> np.uint64(_CORNER_OF_X[i])) & U1:
            sq = np.uint64(_X_SQUARES[i])
            xs += int((p >> sq) & U1) - int((o >> sq) & U1)
    cs = 0
    for i in range(8):
        if (empty >> np.uint64(_CORNER_OF_C[i])) & U1:
            sq = np.uint64(_C_SQUARES[i])
            cs += int((p >> sq) & U1) - int((o >> sq) & U1)
    return corners, xs, cs


@kernel
def arena_eval(p: np.uint64, o: np.uint64, params: npt.NDArray[np.int64]) -> int:
    mp = get_moves(p, o)
    mo = get_moves(o, p)
    if mp == U0 and mo == U0:
        return final_value(p, o, ARENA_WIN)
    discs = popcount(p | o)
    empty = ~(p | o)
    score = _taper(params, 0, discs) * (popcount(mp) - popcount(mo))
    score += _taper(params, 1, discs) * (
        potential_mobility(o, empty) - potential_mobility(p, empty)
    )
    corners, xs, cs = _square_pattern(p, o, empty)
    score += _taper(params, 2, discs) * corners
    score += _taper(params, 3, discs) * xs
    score += _taper(params, 4, discs) * cs
    score += _taper(params, 5, discs) * (
        popcount(stable_discs(p, o)) - popcount(stable_discs(o, p))
    )
    parity = 1 if (64 - discs) % 2 == 1 else -1
    score += _taper(params, 6, discs) * parity
    score += _taper(params, 7, discs) * (popcount(p) - popcount(o))
    return score


@kernel
def evaluate(p: np.uint64, o: np.uint64, color: int, params: npt.NDArray[np.int64]) -> int:
    """Dispatch on ``params[0]``: the static value for the side to move."""
    kind = params[0]
    if kind == KREVERSI:
        return kreversi_eval(p, o, params)
    if kind == LAB:
        return lab_eval(p, o, color)
    if kind == PATTERN:
        return pattern_eval(p, o, params)
    return arena_eval(p, o, params)
