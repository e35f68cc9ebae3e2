"""Game rules: one small ``Position`` interface, Othello/Reversi and Gomoku behind it.

What each game is (names, variants, sizes, defaults, its engine) is described once, in
``arena.games.catalog``. Callers that do not care which game they hold use:

    >>> board = new_position("othello", "standard")
    >>> position_from_text("othello", board.to_text()) == board
    True
"""

from __future__ import annotations

from typing import NamedTuple

from arena.games.base import (
    Color,
    EmptyMoveStackError,
    GameError,
    IllegalMoveError,
    InvalidMoveError,
    InvalidPositionError,
    Outcome,
    Position,
    Termination,
    UnknownGameError,
)
from arena.games.catalog import (
    GAME_NAMES,
    GAMES,
    GOMOKU,
    OTHELLO,
    Game,
    GameKind,
    game,
    game_of,
    game_of_text,
)
from arena.games.gomoku import GomokuBoard
from arena.games.othello import PASS, OthelloBoard

__all__ = [
    "GAMES",
    "GAME_NAMES",
    "GOMOKU",
    "OTHELLO",
    "PASS",
    "Color",
    "EmptyMoveStackError",
    "Game",
    "GameError",
    "GameKind",
    "GomokuBoard",
    "IllegalMoveError",
    "InvalidMoveError",
    "InvalidPositionError",
    "MoveFault",
    "OthelloBoard",
    "Outcome",
    "Position",
    "Termination",
    "UnknownGameError",
    "game",
    "game_of",
    "game_of_text",
    "move_fault",
    "new_position",
    "position_from_text",
]


def new_position(name: str | Game, variant: str | None = None,
                 size: int | None = None) -> Position:
    """The starting position of the game called ``name`` (defaults: the game's own)."""
    return game(name).new_position(variant, size)


def position_from_text(name: str | Game, text: str) -> Position:
    """Parse ``text`` as the one-line text form of a position of the game ``name``."""
    return game(name).position_from_text(text)


class MoveFault(NamedTuple):
    """Why a bot's answer may not be played: ``illegal`` (a square of the board that the
    rules refuse here) or else no square of the board at all; ``reason`` says which."""

    illegal: bool
    reason: str


def move_fault(position: Position, square: int | None) -> MoveFault | None:
    """None if ``square`` may be played in ``position``; else why not (``None``: the answer
    named no move). The one judgement of a move a bot answered, wherever it is asked (the
    referee's, an analyst's)."""
    if square is None:
        return MoveFault(False, "the answer holds no move")
    if not 0 <= square < game_of(position).num_moves(position.size):
        return MoveFault(False, f"move {square} is not a square of this board")
    if not position.is_legal(square):
        return MoveFault(True, f"{position.move_to_str(square)} ({square}) is illegal in "
                               f"{position.to_text()!r}")
    return None
