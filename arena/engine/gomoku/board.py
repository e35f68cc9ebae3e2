"""Gomoku board kernels: stones, neighbour counts, win detection, position keys.

A position is a flat ``int8`` array of ``size * size`` cells indexed ``y * size + x``
holding ``EMPTY``, ``BLACK`` or ``WHITE``. Beside it the kernels keep two ``int16``
arrays counting the stones within Chebyshev radius 1 and 2 of every cell, updated on
each placement and removal, so the candidate moves (empty cells near a stone) never
need a rescan of the stones.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

import arena.engine.numba_cache  # noqa: F401  (where numba caches the kernels below)

EMPTY = 0
BLACK = 1
WHITE = 2

FREESTYLE = 0
EXACT_FIVE = 1
RULES = {"freestyle": FREESTYLE, "exact-five": EXACT_FIVE}
SIZES = (9, 15, 19)
MAX_CELLS = 19 * 19

# Line directions (dx, dy): horizontal, vertical, diagonal, anti-diagonal.
DIRECTIONS = np.array([[1, 0], [0, 1], [1, 1], [1, -1]], dtype=np.int64)

Cells = npt.NDArray[np.int8]
Counts = npt.NDArray[np.int16]
Keys = npt.NDArray[np.int64]


def zobrist_table() -> Keys:
    """Random keys per (colour, cell); a fixed seed keeps keys stable across processes.

    Non-negative int64 (63 random bits), so keys live in the kernels' int64 arrays.
    """
    rng = np.random.default_rng(0x6F6D6F6B75)
    keys = rng.integers(0, 2**63, size=(3, MAX_CELLS), dtype=np.int64)
    keys[EMPTY, :] = 0
    return keys


ZOBRIST = zobrist_table()


@njit(cache=True)
def other(colour: int) -> int:
    return 3 - colour


@njit(cache=True)
def place(cells: Cells, near1: Counts, near2: Counts, size: int, move: int, colour: int) -> None:
    """Put ``colour`` on the empty cell ``move`` and update the neighbour counts."""
    cells[move] = colour
    _add_near(near1, near2, size, move, 1)


@njit(cache=True)
def remove(cells: Cells, near1: Counts, near2: Counts, size: int, move: int) -> None:
    """Take the stone off ``move`` (the inverse of ``place``)."""
    cells[move] = EMPTY
    _add_near(near1, near2, size, move, -1)


@njit(cache=True)
def _add_near(near1: Counts, near2: Counts, size: int, move: int, delta: int) -> None:
    x0 = move % size
    y0 = move // size
    for y in range(max(0, y0 - 2), min(size, y0 + 3)):
        for x in range(max(0, x0 - 2), min(size, x0 + 3)):
            near2[y * size + x] += delta
            if abs(x - x0) <= 1 and abs(y - y0) <= 1:
                near1[y * size + x] += delta


@njit(cache=True)
def run_length(cells: Cells, size: int, move: int, dx: int, dy: int) -> int:
    """Length of the run of the stone colour at ``move`` along (dx, dy), both ways."""
    colour = cells[move]
    x0 = move % size
    y0 = move // size
    count = 1
    for sign in (1, -1):
        x = x0 + sign * dx
        y = y0 + sign * dy
        while 0 <= x < size and 0 <= y < size and cells[y * size + x] == colour:
            count += 1
            x += sign * dx
            y += sign * dy
    return count


@njit(cache=True)
def is_win(cells: Cells, size: int, move: int, rule: int) -> bool:
    """Whether the stone just placed on ``move`` completes a winning line.

    Freestyle: five or more in a row. Exact-five: exactly five in some direction (an
    overline in one direction does not spoil an exact five in another).
    """
    for d in range(4):
        length = run_length(cells, size, move, DIRECTIONS[d, 0], DIRECTIONS[d, 1])
        if length == 5 or (length > 5 and rule == FREESTYLE):
            return True
    return False


@njit(cache=True)
def candidates(cells: Cells, near: Counts, out: npt.NDArray[np.int64]) -> int:
    """Write the empty cells with a stone nearby (``near`` > 0) into ``out``, ascending.

    ``near`` is ``near1`` or ``near2``, for radius 1 or 2. Returns the count.
    """
    count = 0
    for cell in range(cells.shape[0]):
        if cells[cell] == EMPTY and near[cell] > 0:
            out[count] = cell
            count += 1
    return count


@njit(cache=True)
def position_key(cells: Cells, keys: Keys) -> int:
    """Zobrist key of the stones (the side to move follows from the stone count)."""
    key = 0
    for cell in range(cells.shape[0]):
        if cells[cell] != EMPTY:
            key ^= keys[cells[cell], cell]
    return key
