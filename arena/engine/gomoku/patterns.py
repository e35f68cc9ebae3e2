"""Line patterns for arena-gomoku, kept up to date incrementally.

For every empty cell, colour and direction we store the class of the line that a stone
of that colour would make there: five, open four (two ways to five), four (one way),
open three (one move from an open four), three (one move from a four), open two, two,
none. Classes come from a table indexed by the ten neighbours along the line (5 each
way, coded empty / own / blocked), so overlines are seen and exact-five works. The
table is built once by a kernel, from the strongest classes down.

``stats[colour, class]`` counts (cell, direction) pairs per class, and
``stats[colour, VALUE]`` sums a weight per pair: the static evaluation reads them in
O(1), and "does the opponent threaten five?" is one lookup.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from arena.engine.gomoku.board import (
    DIRECTIONS,
    EMPTY,
    EXACT_FIVE,
    FREESTYLE,
    ZOBRIST,
    Cells,
    Counts,
    Keys,
    place,
    remove,
)

NONE, TWO, OPEN_TWO, THREE, OPEN_THREE, FOUR, OPEN_FOUR, FIVE = range(8)
VALUE = 8
HALF = 5  # neighbours read each way
TABLE_SIZE = 3**10
_CENTRE = HALF

# Evaluation weight of one (cell, direction) pattern.
EVAL_WEIGHT = np.array([0, 2, 6, 8, 30, 30, 120, 400], dtype=np.int64)

Patterns = npt.NDArray[np.int8]
Stats = npt.NDArray[np.int64]
Table = npt.NDArray[np.int8]


@njit(cache=True)
def _run_through_centre(line: npt.NDArray[np.int64]) -> int:
    length = 1
    i = _CENTRE - 1
    while i >= 0 and line[i] == 1:
        length += 1
        i -= 1
    i = _CENTRE + 1
    while i < 2 * HALF + 1 and line[i] == 1:
        length += 1
        i += 1
    return length


@njit(cache=True)
def _is_five(line: npt.NDArray[np.int64], rule: int) -> bool:
    length = _run_through_centre(line)
    return length == 5 or (length > 5 and rule == FREESTYLE)


@njit(cache=True)
def build_table(rule: int) -> Table:
    """Class of every neighbourhood (codes 0 empty, 1 own, 2 blocked) for ``rule``."""
    table = np.zeros(TABLE_SIZE, dtype=np.int8)
    line = np.zeros(2 * HALF + 1, dtype=np.int64)
    powers = np.array([3**i for i in range(2 * HALF)], dtype=np.int64)
    # Filling an empty neighbour raises the index, so going down visits successors first.
    for index in range(TABLE_SIZE - 1, -1, -1):
        rest = index
        for i in range(2 * HALF):
            pos = i if i < HALF else i + 1
            line[pos] = rest % 3
            rest //= 3
        line[_CENTRE] = 1
        if _is_five(line, rule):
            table[index] = FIVE
            continue
        fives = 0
        best = NONE
        for i in range(2 * HALF):
            pos = i if i < HALF else i + 1
            if line[pos] != 0:
                continue
            line[pos] = 1
            if _is_five(line, rule):
                fives += 1
            line[pos] = 0
            after = table[index + powers[i]]
            if after == OPEN_FOUR:
                best = max(best, OPEN_THREE)
            elif after == FOUR:
                best = max(best, THREE)
            elif after == OPEN_THREE:
                best = max(best, OPEN_TWO)
            elif after == THREE:
                best = max(best, TWO)
        if fives >= 2:
            table[index] = OPEN_FOUR
        elif fives == 1:
            table[index] = FOUR
        else:
            table[index] = best
    return table


_TABLES: dict[int, Table] = {}


def table_for(rule: int) -> Table:
    if rule not in _TABLES:
        _TABLES[rule] = build_table(rule)
    return _TABLES[rule]


@njit(cache=True)
def _line_indexes(cells: Cells, size: int, cell: int, dx: int, dy: int) -> tuple[int, int]:
    """Table indexes of the line through ``cell`` for black and for white."""
    x0 = cell % size
    y0 = cell // size
    black = 0
    white = 0
    power = 1
    for i in range(2 * HALF):
        k = i - HALF if i < HALF else i - HALF + 1
        x = x0 + k * dx
        y = y0 + k * dy
        if 0 <= x < size and 0 <= y < size:
            value = cells[y * size + x]
            if value == 1:
                black += power
                white += 2 * power
            elif value == 2:
                black += 2 * power
                white += power
        else:
            black += 2 * power
            white += 2 * power
        power *= 3
    return black, white


@njit(cache=True)
def _set_pattern(pat: Patterns, stats: Stats, colour: int, d: int, cell: int, cls: int) -> None:
    old = pat[colour, d, cell]
    if old != cls:
        stats[colour, old] -= 1
        stats[colour, VALUE] -= EVAL_WEIGHT[old]
        stats[colour, cls] += 1
        stats[colour, VALUE] += EVAL_WEIGHT[cls]
        pat[colour, d, cell] = cls


@njit(cache=True)
def _refresh_cell(
    cells: Cells, pat: Patterns, stats: Stats, table: Table, size: int, cell: int, d: int
) -> None:
    if cells[cell] != EMPTY:
        _set_pattern(pat, stats, 1, d, cell, NONE)
        _set_pattern(pat, stats, 2, d, cell, NONE)
        return
    black, white = _line_indexes(cells, size, cell, DIRECTIONS[d, 0], DIRECTIONS[d, 1])
    _set_pattern(pat, stats, 1, d, cell, table[black])
    _set_pattern(pat, stats, 2, d, cell, table[white])


@njit(cache=True)
def _refresh_around(
    cells: Cells, pat: Patterns, stats: Stats, table: Table, size: int, move: int
) -> None:
    x0 = move % size
    y0 = move // size
    for d in range(4):
        dx = DIRECTIONS[d, 0]
        dy = DIRECTIONS[d, 1]
        for k in range(-HALF, HALF + 1):
            x = x0 + k * dx
            y = y0 + k * dy
            if 0 <= x < size and 0 <= y < size:
                _refresh_cell(cells, pat, stats, table, size, y * size + x, d)


@njit(cache=True)
def play(
    cells: Cells, near1: Counts, near2: Counts, pat: Patterns, stats: Stats,
    key: Keys, table: Table, size: int, move: int, colour: int,
) -> None:
    """Place a stone and bring neighbour counts, patterns, stats and key up to date."""
    place(cells, near1, near2, size, move, colour)
    key[0] ^= ZOBRIST[colour, move]
    _refresh_around(cells, pat, stats, table, size, move)


@njit(cache=True)
def unplay(
    cells: Cells, near1: Counts, near2: Counts, pat: Patterns, stats: Stats,
    key: Keys, table: Table, size: int, move: int,
) -> None:
    key[0] ^= ZOBRIST[cells[move], move]
    remove(cells, near1, near2, size, move)
    _refresh_around(cells, pat, stats, table, size, move)


@njit(cache=True)
def refresh_all(cells: Cells, pat: Patterns, stats: Stats, table: Table, size: int) -> None:
    """Compute every pattern from scratch (after setting up a position)."""
    for cell in range(size * size):
        for d in range(4):
            _refresh_cell(cells, pat, stats, table, size, cell, d)


@njit(cache=True)
def best_class(pat: Patterns, colour: int, cell: int) -> int:
    best = NONE
    for d in range(4):
        best = max(best, pat[colour, d, cell])
    return best


@njit(cache=True)
def count_class(pat: Patterns, colour: int, cell: int, cls: int) -> int:
    """How many of the four directions at ``cell`` reach at least ``cls``."""
    n = 0
    for d in range(4):
        if pat[colour, d, cell] >= cls:
            n += 1
    return n


def new_pattern_state(size: int) -> tuple[Patterns, Stats]:
    pat = np.zeros((3, 4, size * size), dtype=np.int8)
    stats = np.zeros((3, VALUE + 1), dtype=np.int64)
    stats[1, NONE] = stats[2, NONE] = 4 * size * size
    return pat, stats


RULE_IDS = (FREESTYLE, EXACT_FIVE)
