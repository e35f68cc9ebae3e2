"""Game rules: one small ``Position`` interface, Othello/Reversi and Gomoku behind it.

Callers that do not care which game they hold use the two registry functions:

    >>> board = new_position("othello", "standard")
    >>> position_from_text("othello", board.to_text()) == board
    True
"""

from __future__ import annotations

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
from arena.games.gomoku import STANDARD_SIZES, GomokuBoard
from arena.games.othello import PASS, OthelloBoard

GAMES = ("othello", "gomoku")
OTHELLO_VARIANTS = ("standard", "international")
GOMOKU_RULES = ("freestyle", "exact-five")
GOMOKU_SIZES = STANDARD_SIZES
DEFAULT_GOMOKU_SIZE = 15

__all__ = [
    "GAMES",
    "GOMOKU_RULES",
    "GOMOKU_SIZES",
    "OTHELLO_VARIANTS",
    "PASS",
    "Color",
    "EmptyMoveStackError",
    "GameError",
    "GomokuBoard",
    "IllegalMoveError",
    "InvalidMoveError",
    "InvalidPositionError",
    "OthelloBoard",
    "Outcome",
    "Position",
    "Termination",
    "UnknownGameError",
    "new_position",
    "position_from_text",
]


def new_position(game: str, variant: str | None = None, size: int | None = None) -> Position:
    """The starting position of a game.

    ``variant`` is the Othello variant (default ``standard``) or the Gomoku rule
    (default ``freestyle``); ``size`` must be 8 (or None) for Othello and one of
    ``GOMOKU_SIZES`` (default 15) for Gomoku.
    """
    if game == "othello":
        if size not in (None, 8):
            raise UnknownGameError(f"Othello is played on 8x8, not size {size!r}")
        variant = "standard" if variant is None else variant
        if variant not in OTHELLO_VARIANTS:
            raise UnknownGameError(
                f"unknown Othello variant {variant!r}; known: {list(OTHELLO_VARIANTS)}"
            )
        return OthelloBoard(variant)
    if game == "gomoku":
        size = DEFAULT_GOMOKU_SIZE if size is None else size
        if size not in GOMOKU_SIZES:
            raise UnknownGameError(f"Gomoku size must be one of {GOMOKU_SIZES}, got {size!r}")
        rule = "freestyle" if variant is None else variant
        if rule not in GOMOKU_RULES:
            raise UnknownGameError(f"unknown Gomoku rule {rule!r}; known: {list(GOMOKU_RULES)}")
        return GomokuBoard(size, rule)
    raise UnknownGameError(f"unknown game {game!r}; known: {list(GAMES)}")


def position_from_text(game: str, text: str) -> Position:
    """Parse ``text`` as the one-line text form of a ``game`` position."""
    if game == "othello":
        return OthelloBoard.from_text(text)
    if game == "gomoku":
        return GomokuBoard.from_text(text)
    raise UnknownGameError(f"unknown game {game!r}; known: {list(GAMES)}")
