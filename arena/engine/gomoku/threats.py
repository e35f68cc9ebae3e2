"""Threat helpers and the VCF solver (victory by continuous fours) for arena-gomoku.

A VCF is a sequence of own fours, each answered by the single forced block, that ends
in a five or in a double threat (open four, or two fives at once). Every attacking
move must be a four, so the defender never has a choice: the search is narrow and a
15-ply VCF is usually found in milliseconds. Failed positions are remembered in a small
hash table keyed by the Zobrist key and the attacker. The solver is one self-recursive
kernel; no two kernels call each other (numba's cache cannot load mutually recursive
kernels), and callers pass it no literal constants (each literal would compile and
cache a second specialisation of it).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from arena.engine.gomoku.board import DIRECTIONS, EMPTY, Cells, Counts, Keys
from arena.engine.gomoku.control import Context, StopArray, poll_stop
from arena.engine.gomoku.patterns import (
    FIVE,
    FOUR,
    OPEN_FOUR,
    Patterns,
    Stats,
    Table,
    best_class,
    play,
    unplay,
)

Moves = npt.NDArray[np.int64]
VcfTable = npt.NDArray[np.uint64]
WHITE_ATTACKS = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True)
def five_cells(pat: Patterns, colour: int, out: Moves) -> int:
    """Every empty cell where ``colour`` would make five (full scan)."""
    count = 0
    for cell in range(pat.shape[2]):
        if best_class(pat, colour, cell) == FIVE:
            out[count] = cell
            count += 1
    return count


@njit(cache=True)
def five_cells_through(pat: Patterns, size: int, colour: int, move: int, out: Moves) -> int:
    """Five points of ``colour`` on the lines through ``move`` made by those lines."""
    count = 0
    x0 = move % size
    y0 = move // size
    for d in range(4):
        for k in range(-4, 5):
            x = x0 + k * DIRECTIONS[d, 0]
            y = y0 + k * DIRECTIONS[d, 1]
            if k != 0 and 0 <= x < size and 0 <= y < size:
                cell = y * size + x
                if pat[colour, d, cell] == FIVE:
                    out[count] = cell
                    count += 1
    return count


@njit(cache=True)
def four_moves(pat: Patterns, cells: Cells, near2: Counts, colour: int, out: Moves) -> int:
    """Cells where ``colour`` makes a four; open fours and double fours first."""
    strong = 0
    count = 0
    for cell in range(cells.shape[0]):
        if cells[cell] != EMPTY or near2[cell] == 0:
            continue
        fours = 0
        opened = False
        for d in range(4):
            cls = pat[colour, d, cell]
            if cls >= FOUR:
                fours += 1
                opened = opened or cls >= OPEN_FOUR
        if fours == 0:
            continue
        out[count] = cell
        if opened or fours >= 2:
            out[count], out[strong] = out[strong], out[count]
            strong += 1
        count += 1
    return count


@njit(cache=True)
def vcf(
    cells: Cells, near1: Counts, near2: Counts, pat: Patterns, stats: Stats, key: Keys,
    table: Table, size: int, attacker: int, plies: int, ply: int, seq: Moves,
    vtable: VcfTable, ctx: Context, stop: StopArray,
) -> int:
    """Length of a VCF for ``attacker`` (to move) within ``plies`` plies, else 0.

    The sequence is written to ``seq[ply:]``: attacker's four, forced block, ...,
    ending with the attacker's winning move.
    """
    if poll_stop(ctx, stop):
        return 0
    defender = 3 - attacker
    buf = np.empty(cells.shape[0], dtype=np.int64)
    if stats[attacker, FIVE] > 0:
        five_cells(pat, attacker, buf)
        seq[ply] = buf[0]
        return 1
    if plies < 3:
        return 0
    slot = np.int64(key[0] & np.uint64(vtable.shape[0] - 1))
    lookup = key[0] ^ (WHITE_ATTACKS if attacker == 2 else np.uint64(0))
    if vtable[slot, 0] == lookup and np.int64(vtable[slot, 1]) >= plies:
        return 0
    if stats[defender, FIVE] > 0:
        # The defender threatens five: only a block that is itself a four keeps the VCF.
        if five_cells(pat, defender, buf) > 1 or best_class(pat, attacker, buf[0]) < FOUR:
            return 0
        count = 1
    else:
        count = four_moves(pat, cells, near2, attacker, buf)
    fives = np.empty(40, dtype=np.int64)
    for i in range(count):
        move = buf[i]
        play(cells, near1, near2, pat, stats, key, table, size, move, attacker)
        threats = five_cells_through(pat, size, attacker, move, fives)
        found = 0
        if threats >= 2:
            seq[ply] = move
            seq[ply + 1] = fives[0]
            seq[ply + 2] = fives[1]  # cells on different lines through move are distinct
            found = 3
        elif threats == 1:
            block = fives[0]
            play(cells, near1, near2, pat, stats, key, table, size, block, defender)
            rest = vcf(
                cells, near1, near2, pat, stats, key, table, size, attacker, plies - 2,
                ply + 2, seq, vtable, ctx, stop,
            )
            unplay(cells, near1, near2, pat, stats, key, table, size, block)
            if rest > 0:
                seq[ply] = move
                seq[ply + 1] = block
                found = rest + 2
        unplay(cells, near1, near2, pat, stats, key, table, size, move)
        if found > 0:
            return found
    vtable[slot, 0] = lookup
    vtable[slot, 1] = np.uint64(plies)
    return 0
