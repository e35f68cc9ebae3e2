"""Board kernels against the reference rules (arena.games.gomoku) on random games."""

from __future__ import annotations

import random

import numpy as np
import pytest

from arena.engine.gomoku.board import (
    ZOBRIST,
    candidates,
    is_win,
    place,
    position_key,
    remove,
)
from arena.engine.gomoku.position import GomokuPositionError, position_from_moves
from arena.games.base import Color
from arena.games.gomoku import GomokuBoard

RULE_IDS = {"freestyle": 0, "exact-five": 1}


def near_cells(board: GomokuBoard, radius: int) -> list[int]:
    """Empty cells within Chebyshev ``radius`` of a stone, from the reference board."""
    size = board.size
    stones = board.stones(Color.BLACK) + board.stones(Color.WHITE)
    found = set()
    for stone in stones:
        sy, sx = divmod(stone, size)
        for cell in range(size * size):
            if board.piece_at(cell) is not None:
                continue
            cy, cx = divmod(cell, size)
            if max(abs(cx - sx), abs(cy - sy)) <= radius:
                found.add(cell)
    return sorted(found)


def random_game(size: int, rule: str, rng: random.Random) -> list[int]:
    """Moves mostly next to earlier stones so that lines and wins happen."""
    board = GomokuBoard(size, rule)
    moves: list[int] = []
    close: set[int] = set()  # empty cells next to a stone
    while not board.is_game_over():
        if close and rng.random() < 0.9:
            move = rng.choice(sorted(close))
        else:
            move = rng.choice(board.legal_moves())
        board.push(move)
        moves.append(move)
        close.discard(move)
        y0, x0 = divmod(move, size)
        for y in range(max(0, y0 - 1), min(size, y0 + 2)):
            for x in range(max(0, x0 - 1), min(size, x0 + 2)):
                if y * size + x not in moves:
                    close.add(y * size + x)
    return moves


@pytest.mark.parametrize("size", [9, 15, 19])
@pytest.mark.parametrize("rule", ["freestyle", "exact-five"])
def test_win_detection_and_candidates_match_reference(size: int, rule: str) -> None:
    rng = random.Random(size * 7 + len(rule))
    for _game in range(3 if size < 19 else 1):
        moves = random_game(size, rule, rng)
        board = GomokuBoard(size, rule)
        cells = np.zeros(size * size, dtype=np.int8)
        near1 = np.zeros(size * size, dtype=np.int16)
        near2 = np.zeros(size * size, dtype=np.int16)
        out = np.zeros(size * size, dtype=np.int64)
        for ply, move in enumerate(moves):
            place(cells, near1, near2, size, move, 1 + ply % 2)
            board.push(move)
            outcome = board.outcome()
            won = outcome is not None and outcome.winner is not None
            assert is_win(cells, size, move, RULE_IDS[rule]) == won, board.to_text()
            if ply % 5 == 0 or won:
                assert out[: candidates(cells, near1, out)].tolist() == near_cells(board, 1)
                assert out[: candidates(cells, near2, out)].tolist() == near_cells(board, 2)
        # Undo everything: counts must return to zero.
        for move in reversed(moves):
            remove(cells, near1, near2, size, move)
        assert not cells.any() and not near1.any() and not near2.any()


def test_overline_wins_freestyle_only() -> None:
    size = 15
    for rule, expected in (("freestyle", True), ("exact-five", False)):
        cells = np.zeros(size * size, dtype=np.int8)
        near1 = np.zeros(size * size, dtype=np.int16)
        near2 = np.zeros(size * size, dtype=np.int16)
        for x in (0, 1, 2, 4, 5):
            place(cells, near1, near2, size, 7 * size + x, 1)
        place(cells, near1, near2, size, 7 * size + 3, 1)
        assert is_win(cells, size, 7 * size + 3, RULE_IDS[rule]) == expected


def test_exact_five_in_another_direction_still_wins() -> None:
    size = 15
    cells = np.zeros(size * size, dtype=np.int8)
    near1 = np.zeros(size * size, dtype=np.int16)
    near2 = np.zeros(size * size, dtype=np.int16)
    for x in (1, 2, 3, 5, 6):  # a six through (4, 7) on the row
        place(cells, near1, near2, size, 7 * size + x, 1)
    for y in (3, 4, 5, 6):  # and exactly five on the column
        place(cells, near1, near2, size, y * size + 4, 1)
    place(cells, near1, near2, size, 7 * size + 4, 1)
    assert is_win(cells, size, 7 * size + 4, 1)


def test_position_key_depends_on_stones_and_colours() -> None:
    a = position_from_moves(15, "freestyle", [112, 113])
    b = position_from_moves(15, "freestyle", [113, 112])
    c = position_from_moves(15, "freestyle", [112, 113, 0, 1])
    keys = {int(position_key(p.cells, ZOBRIST)) for p in (a, b, c)}
    assert len(keys) == 3
    same = position_from_moves(15, "freestyle", [0, 1, 112, 113])
    assert position_key(same.cells, ZOBRIST) == position_key(c.cells, ZOBRIST)


@pytest.mark.parametrize(
    ("size", "rule", "moves"),
    [
        (10, "freestyle", []),
        (15, "renju", []),
        (15, "freestyle", [0, 0]),
        (15, "freestyle", [225]),
        (15, "freestyle", [-1]),
        (15, "freestyle", ["a1"]),
        (15, "freestyle", [0, 15, 1, 16, 2, 17, 3, 18, 4]),  # the last move won
        (15, "freestyle", [0, 15, 1, 16, 2, 17, 3, 18, 4, 19]),  # play after a win
    ],
)
def test_bad_move_lists_raise_value_errors(size: int, rule: str, moves: list[int]) -> None:
    with pytest.raises(GomokuPositionError):
        position_from_moves(size, rule, moves)
