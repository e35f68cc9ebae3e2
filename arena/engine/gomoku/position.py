"""The Python side of a position: validated move list in, kernel arrays out."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arena.engine.gomoku.board import (
    BLACK,
    EMPTY,
    RULES,
    SIZES,
    WHITE,
    Cells,
    Counts,
    is_win,
    place,
)


class GomokuPositionError(ValueError):
    """A move list that does not describe a game still in progress."""


@dataclass
class Position:
    size: int
    rule: int
    cells: Cells
    near1: Counts
    near2: Counts
    moves: list[int]

    @property
    def to_move(self) -> int:
        return BLACK if len(self.moves) % 2 == 0 else WHITE

    @property
    def is_full(self) -> bool:
        return len(self.moves) == self.size * self.size


def move_name(size: int, move: int) -> str:
    """``f13`` style: column letter from ``a``, then the row counted from 1."""
    return f"{chr(ord('a') + move % size)}{move // size + 1}"


def position_from_moves(size: int, rule: str, moves: list[int]) -> Position:
    """Replay ``moves`` (Black first) on an empty board, refusing finished or bad games."""
    if size not in SIZES:
        raise GomokuPositionError(f"board size {size!r} is not one of {SIZES}")
    if rule not in RULES:
        raise GomokuPositionError(f"rule {rule!r} is not one of {sorted(RULES)}")
    cells = np.zeros(size * size, dtype=np.int8)
    near1 = np.zeros(size * size, dtype=np.int16)
    near2 = np.zeros(size * size, dtype=np.int16)
    colour = BLACK
    for ply, move in enumerate(moves):
        if isinstance(move, bool) or not isinstance(move, int | np.integer):
            raise GomokuPositionError(f"move {move!r} at ply {ply} is not an integer")
        if not 0 <= move < size * size:
            raise GomokuPositionError(f"move {move} at ply {ply} is off the {size}x{size} board")
        if cells[move] != EMPTY:
            raise GomokuPositionError(f"move {move_name(size, int(move))} at ply {ply} is taken")
        place(cells, near1, near2, size, int(move), colour)
        if is_win(cells, size, int(move), RULES[rule]):
            if ply != len(moves) - 1:
                raise GomokuPositionError(f"the game was already won at ply {ply}")
            raise GomokuPositionError("the game is over: the last move won")
        colour = BLACK + WHITE - colour
    if len(moves) == size * size:
        raise GomokuPositionError("the game is over: the board is full")
    return Position(size, RULES[rule], cells, near1, near2, [int(m) for m in moves])
