"""arena-gomoku's incremental position against a fresh one and the reference rules.

Random games are played stone by stone with ``play`` and taken back with ``unplay``; at
every step the kept line classes, stats, threat summaries (with the cells' codes) and
candidate moves must equal those of a position built from scratch (``setup``), and the
candidates must be the empty cells within distance 2 of a stone, per the rules library.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from arena.engine.gomoku.board import EXACT_FIVE, FREESTYLE
from arena.engine.gomoku.patterns import (
    CLASSES,
    CODE_BITS,
    FIVE,
    FOUR,
    OPEN_FOUR,
    ST_CANDIDATES,
    ST_KEY,
    ST_LIST,
    ST_STATS,
    ST_THREAT,
    THREAT_CODE,
    THREAT_STEP,
    build_table,
    play,
    setup,
    unplay,
)

from .test_board import near_cells, random_game

RULES = {"freestyle": FREESTYLE, "exact-five": EXACT_FIVE}


def reference_classes(cells: np.ndarray, size: int, table: np.ndarray) -> np.ndarray:
    """Every class read afresh from the stones: ten neighbours per line, base 3."""
    pat = np.zeros((3, 4, size * size), dtype=np.int8)
    for cell in np.flatnonzero(cells == 0).tolist():
        x0, y0 = cell % size, cell // size
        for d, (dx, dy) in enumerate(((1, 0), (0, 1), (1, 1), (1, -1))):
            for colour in (1, 2):
                index = 0
                for i, k in enumerate([-5, -4, -3, -2, -1, 1, 2, 3, 4, 5]):
                    x, y = x0 + k * dx, y0 + k * dy
                    stone = cells[y * size + x] if 0 <= x < size and 0 <= y < size else -1
                    code = 0 if stone == 0 else (1 if stone == colour else 2)
                    index += code * 3**i
                pat[colour, d, cell] = table[index]
    return pat


def reference_stats(pat: np.ndarray) -> list[int]:
    """Per colour: (cell, direction) pairs per class."""
    stats = [0] * CLASSES
    for colour in (1, 2):
        stats += np.bincount(pat[colour].ravel(), minlength=CLASSES).tolist()
    return stats


def snapshot(cells: np.ndarray, pat: np.ndarray, st: np.ndarray) -> dict[str, object]:
    n = cells.shape[0]
    candidates = sorted(st[ST_LIST : ST_LIST + st[ST_CANDIDATES]].tolist())
    return {
        "cells": cells.tolist(),
        "classes": pat.tolist(),
        "stats": st[ST_STATS : ST_STATS + 3 * CLASSES].tolist(),
        "key": int(st[ST_KEY]),
        "candidates": candidates,
        "threats": [st[ST_THREAT + c * 361 : ST_THREAT + c * 361 + n].tolist() for c in (0, 1)],
    }


@pytest.mark.parametrize("size", [9, 15, 19])
@pytest.mark.parametrize("rule", ["freestyle", "exact-five"])
def test_incremental_position_equals_a_fresh_one(size: int, rule: str) -> None:
    from arena.games.gomoku import GomokuBoard

    rng = random.Random(size * 31 + len(rule))
    moves = random_game(size, rule, rng)
    cells, pat, st, table = setup(size, RULES[rule], [])
    board = GomokuBoard(size, rule)
    history = []
    for ply, move in enumerate(moves):
        play(cells, pat, st, table, move, 1 + ply % 2)
        board.push(move)
        history.append(snapshot(cells, pat, st))
        if ply % 3 == 0 or ply == len(moves) - 1:
            # Stones in another order give the same position.
            fresh = setup(size, RULES[rule], _reordered(moves[: ply + 1]))
            assert snapshot(*fresh[:3]) == history[-1]
            assert history[-1]["candidates"] == near_cells(board, 2)
            assert (pat == reference_classes(cells, size, table)).all()
            assert history[-1]["stats"] == reference_stats(pat)
            classes = pat[1:].astype(np.int64)  # [colour - 1, direction, cell]
            shifts = (CODE_BITS * np.arange(4))[:, None]
            summaries = THREAT_STEP[classes].sum(axis=1) + (  # over directions
                (classes << shifts).sum(axis=1) << THREAT_CODE)
            assert history[-1]["threats"] == summaries.tolist()
    for ply in range(len(moves) - 1, 0, -1):
        unplay(cells, pat, st, table, moves[ply])
        assert snapshot(cells, pat, st) == history[ply - 1]


def _reordered(moves: list[int]) -> list[int]:
    """The same stones, each colour's in reverse order (still Black first)."""
    black, white = moves[0::2][::-1], moves[1::2][::-1]
    out: list[int] = []
    for i, stone in enumerate(black):
        out.append(stone)
        if i < len(white):
            out.append(white[i])
    return out


def test_classes_see_overlines_under_exact_five() -> None:
    free, exact = build_table(FREESTYLE), build_table(EXACT_FIVE)
    # Black X X X _ X X on row 7, White far away: the gap makes six.
    black = [7 * 15 + x for x in (2, 3, 4, 6, 7)]
    white = [0, 2, 4, 6, 8]
    moves = [m for pair in zip(black, white, strict=True) for m in pair]
    for table, expected in ((free, FIVE), (exact, None)):
        pat = setup(15, FREESTYLE if table is free else EXACT_FIVE, moves)[1]
        gap = 7 * 15 + 5
        if expected is None:
            assert pat[1, 0, gap] < FOUR  # no five, and no four that could become one there
        else:
            assert pat[1, 0, gap] == expected
    # An open four made by exactly-five stones stays an open four under both rules.
    moves = [7 * 15 + 5, 0, 7 * 15 + 6, 2, 7 * 15 + 7]
    for rule in (FREESTYLE, EXACT_FIVE):
        pat = setup(15, rule, moves)[1]
        assert pat[1, 0, 7 * 15 + 8] == OPEN_FOUR
