"""The one small interface every game shares, and the values it returns.

A position holds the stones, the side to move and the moves played since it was
created. Moves are plain integers (a square index, plus ``PASS`` in Othello), so
they cross process and numba boundaries untouched. Everything a caller can get
wrong raises a ``ValueError`` subclass whose message quotes the bad input and the
position's one-line text form; a quoted input longer than a line is cut (``shown``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from typing import Protocol, Self, runtime_checkable

from arena.errors import InvalidArgumentError
from arena.text import shown


class Color(IntEnum):
    """The two sides. Black always moves first."""

    BLACK = 0
    WHITE = 1

    @property
    def other(self) -> Color:
        return Color.WHITE if self is Color.BLACK else Color.BLACK

    @property
    def symbol(self) -> str:
        """``X`` for black, ``O`` for white, as in OBF and our text forms."""
        return "X" if self is Color.BLACK else "O"

    @classmethod
    def from_symbol(cls, symbol: str) -> Color:
        if symbol == "X":
            return cls.BLACK
        if symbol == "O":
            return cls.WHITE
        raise InvalidPositionError(f"side to move must be 'X' or 'O', got {shown(symbol)}")


class Termination(StrEnum):
    """Why a game ended.

    ``NORMAL`` and ``FULL_BOARD`` come from the rules themselves; the others are
    decided by whoever runs the game (the referee) and are never returned by a
    position's ``outcome()``.
    """

    NORMAL = "normal"  # Othello: neither side can move. Gomoku: a winning line.
    FULL_BOARD = "full_board"  # Gomoku: the board filled up without a winning line.
    TIMEOUT = "timeout"
    ILLEGAL_MOVE = "illegal_move"
    CRASH = "crash"
    RESIGNATION = "resignation"
    ADJUDICATION = "adjudication"
    ABORTED = "aborted"

    @property
    def is_forfeit(self) -> bool:
        return self in _FORFEITS


_FORFEITS = frozenset(
    {Termination.TIMEOUT, Termination.ILLEGAL_MOVE, Termination.CRASH, Termination.RESIGNATION}
)


@dataclass(frozen=True)
class Outcome:
    """How a game ended.

    ``black_score``/``white_score`` are disc counts in Othello and game points in
    Gomoku (1 for the winner, 0 otherwise). ``empties`` is the number of empty
    squares at the end (Othello only; it feeds the World Othello Federation score).
    """

    winner: Color | None
    termination: Termination
    black_score: int
    white_score: int
    empties: int = 0

    @property
    def is_draw(self) -> bool:
        return self.winner is None

    @property
    def disc_diff(self) -> int:
        """Raw final score: black's discs minus white's discs."""
        return self.black_score - self.white_score

    @property
    def wof_scores(self) -> tuple[int, int]:
        """(black, white) with the empty squares given to the winner, split on a draw.

        This is the World Othello Federation rule; a 33-30 win with one empty square
        counts as 34-30.
        """
        if self.winner is Color.BLACK:
            return self.black_score + self.empties, self.white_score
        if self.winner is Color.WHITE:
            return self.black_score, self.white_score + self.empties
        half = self.empties // 2
        return self.black_score + half, self.white_score + self.empties - half

    @property
    def wof_diff(self) -> int:
        """Black's WOF score minus white's WOF score."""
        black, white = self.wof_scores
        return black - white

    def score_for(self, color: Color) -> int:
        """Raw disc difference from ``color``'s point of view."""
        return self.disc_diff if color is Color.BLACK else -self.disc_diff

    @property
    def result(self) -> str:
        """``1-0`` (black won), ``0-1`` or ``1/2-1/2``."""
        if self.winner is Color.BLACK:
            return "1-0"
        if self.winner is Color.WHITE:
            return "0-1"
        return "1/2-1/2"


class GameError(InvalidArgumentError):
    """Base of the bad-input errors raised by the rules (all are ``ValueError``)."""


class InvalidMoveError(GameError):
    """The move is not well-formed: bad syntax, wrong type, or off the board."""


class IllegalMoveError(GameError):
    """The move is well-formed but the rules forbid it in this position."""


class InvalidPositionError(GameError):
    """A text form or bit pattern that is not a valid position of this game."""


class EmptyMoveStackError(GameError, IndexError):
    """``pop()`` with no move to take back (also an ``IndexError``, as for a list)."""


class UnknownGameError(GameError):
    """A game kind, variant, rule or board size this library does not provide; ``part``
    names which, as ``GameSpec`` does (``kind``, ``variant``, ``board_size``), so that a
    refusal names the field that holds it."""

    def __init__(self, message: str, part: str = "") -> None:
        super().__init__(message)
        self.part = part


@runtime_checkable
class Position(Protocol):
    """What the referee, the engines and the formats need from any game position."""

    @property
    def game(self) -> str:
        """``othello`` or ``gomoku``."""
        ...

    @property
    def variant(self) -> str:
        """The Othello variant or the Gomoku rule."""
        ...

    @property
    def size(self) -> int:
        """Board width (boards are square)."""
        ...

    @property
    def turn(self) -> Color: ...

    @property
    def move_stack(self) -> list[int]:
        """Moves pushed since the position was created (a copy)."""
        ...

    def legal_moves(self) -> list[int]:
        """Legal moves in ascending order; empty when the game is over."""
        ...

    def is_legal(self, move: int) -> bool: ...

    def push(self, move: int) -> None:
        """Play a move; raises ``InvalidMoveError`` or ``IllegalMoveError``."""
        ...

    def pop(self) -> int:
        """Take back the last pushed move and return it."""
        ...

    def is_game_over(self) -> bool: ...

    def check_history(self, history: Sequence[int]) -> None:
        """Raise ``InvalidPositionError`` unless ``history``, the last moves played (the
        end of the game, possibly empty), could have ended in this position."""
        ...

    def outcome(self) -> Outcome | None: ...

    def to_text(self) -> str: ...

    @classmethod
    def from_text(cls, text: str) -> Self: ...

    def copy(self) -> Self: ...

    def parse_move(self, text: str) -> int:
        """Parse a move in this game's notation and check it is legal here."""
        ...

    def move_to_str(self, move: int) -> str: ...
