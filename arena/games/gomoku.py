"""Gomoku on a square board, as the referee's reference rules.

Black moves first and the players alternate placing one stone on an empty point.
Rules:

- ``freestyle``: five or more stones in a row (horizontal, vertical or diagonal) win.
- ``exact-five``: exactly five in a row wins; a line of six or more (an overline)
  does not, though the same stone may still win along another line.

A full board without a winning line is a draw. Arena plays 9x9, 15x15 and 19x19
(``STANDARD_SIZES``); the board itself accepts 5..26 so that records from other
programs (Gomocup plays 20x20) can be read.

Points are numbered ``y * size + x`` (x = column, y = row, both 0-based). Two
notations: the board's own, column letter a.. plus row number from 1 (``f13`` is
x 5, y 12; no letter is skipped), and the Gomocup protocol's 0-based ``x,y``.

Text form: ``<size> <rule> <rows> <X|O>`` where rows are ``size`` strings of
``X``/``O``/``-`` (row y = 0 first) joined by ``/``; for example a fresh 9x9 board
is ``9 freestyle ---------/---------/.../--------- X`` (nine rows).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Self

from arena.games.base import (
    Color,
    EmptyMoveStackError,
    IllegalMoveError,
    InvalidMoveError,
    InvalidPositionError,
    Outcome,
    Termination,
    UnknownGameError,
)
from arena.text import shown

RULES = ("freestyle", "exact-five")
STANDARD_SIZES = (9, 15, 19)
MIN_SIZE = 5
MAX_SIZE = 26
WIN_LENGTH = 5

_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_LINE_DIRECTIONS = ((1, 0), (0, 1), (1, 1), (1, -1))
_NAME_RE = re.compile(r"([a-z])([0-9]{1,2})")
_XY_RE = re.compile(r"\s*([0-9]{1,2})\s*,\s*([0-9]{1,2})\s*")
_EMPTY, _BLACK, _WHITE = 0, 1, 2
_SYMBOLS = {_EMPTY: "-", _BLACK: "X", _WHITE: "O"}
_STONES = {"-": _EMPTY, "X": _BLACK, "O": _WHITE}


def _stone(color: Color) -> int:
    return _BLACK if color is Color.BLACK else _WHITE


def check_size(size: object) -> int:
    if not isinstance(size, int) or isinstance(size, bool) or not MIN_SIZE <= size <= MAX_SIZE:
        raise UnknownGameError(
            f"Gomoku board size must be {MIN_SIZE}..{MAX_SIZE}, got {shown(size)}", "board_size")
    return size


def check_rule(rule: object) -> str:
    if rule not in RULES:
        raise UnknownGameError(f"unknown Gomoku rule {shown(rule)}; known: {', '.join(RULES)}",
                               "variant")
    assert isinstance(rule, str)
    return rule


def square_name(move: int, size: int) -> str:
    """``(x 5, y 12)`` -> ``f13``."""
    y, x = divmod(move, size)
    return f"{_LETTERS[x]}{y + 1}"


def parse_square(text: str, size: int) -> int:
    """``f13`` (any case) -> its point index on a ``size`` board. Syntax and bounds only."""
    match = _NAME_RE.fullmatch(text.strip().lower()) if isinstance(text, str) else None
    if match is None:
        raise InvalidMoveError(f"invalid Gomoku move {shown(text)}: expected a letter and a number")
    x, y = _LETTERS.index(match.group(1)), int(match.group(2)) - 1
    if not (0 <= x < size and 0 <= y < size):
        raise InvalidMoveError(f"Gomoku move {shown(text)} is off the {size}x{size} board")
    return y * size + x


def parse_xy(text: str, size: int) -> int:
    """Gomocup ``x,y`` (0-based) -> point index. Syntax and bounds only."""
    match = _XY_RE.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise InvalidMoveError(f"invalid Gomocup move {shown(text)}: expected 'x,y'")
    x, y = int(match.group(1)), int(match.group(2))
    if not (0 <= x < size and 0 <= y < size):
        raise InvalidMoveError(f"Gomocup move {shown(text)} is off the {size}x{size} board")
    return y * size + x


def xy_str(move: int, size: int) -> str:
    """Point index -> Gomocup ``x,y``."""
    y, x = divmod(move, size)
    return f"{x},{y}"


class GomokuBoard:
    """A Gomoku position with its move history; see the module docstring."""

    def __init__(self, size: int = 15, rule: str = "freestyle") -> None:
        self._size = check_size(size)
        self._rule = check_rule(rule)
        self._cells = bytearray(size * size)
        self._turn = Color.BLACK
        self._history: list[int] = []
        self._winner: Color | None = None

    @classmethod
    def from_text(cls, text: str) -> Self:
        if not isinstance(text, str):
            raise InvalidPositionError(f"Gomoku text form must be a string, got {shown(text)}")
        tokens = text.split()
        if len(tokens) != 4 or not tokens[0].isdigit() or len(tokens[0]) > 2:
            raise InvalidPositionError(
                f"Gomoku text form must be '<size> <rule> <rows> <X|O>', got {shown(text)}"
            )
        try:
            board = cls(int(tokens[0]), tokens[1])
        except UnknownGameError as error:
            raise InvalidPositionError(f"{error} in {shown(text)}") from None
        rows = tokens[2].split("/")
        if len(rows) != board._size or any(len(row) != board._size for row in rows):
            raise InvalidPositionError(
                f"Gomoku board of size {board._size} needs {board._size} rows of "
                f"{board._size} points, got {shown(text)}"
            )
        flat = "".join(rows)
        bad = sorted(set(flat) - set(_STONES))
        if bad:
            raise InvalidPositionError(f"impossible point characters {shown(bad)} in {shown(text)}")
        if tokens[3] not in ("X", "O"):
            raise InvalidPositionError(f"side to move must be X or O, got {shown(tokens[3])}")
        board._cells = bytearray(_STONES[ch] for ch in flat)
        board._turn = Color.from_symbol(tokens[3])
        board._check_reachable()
        return board

    def _check_reachable(self) -> None:
        """Stone counts must fit black-first alternation, and only the side that moved
        last may have a winning line (the game stops at the first one)."""
        blacks, whites = self._cells.count(_BLACK), self._cells.count(_WHITE)
        expected = {0: Color.BLACK, 1: Color.WHITE}.get(blacks - whites)
        if expected is not self._turn:
            raise InvalidPositionError(
                f"{blacks} black and {whites} white stones with "
                f"{self._turn.name.lower()} to move is unreachable in {self.to_text()!r}"
            )
        if self._has_winning_line(self._turn):
            raise InvalidPositionError(
                f"the side to move already has a winning line in {self.to_text()!r}"
            )
        if self._has_winning_line(self._turn.other):
            self._winner = self._turn.other

    # --- state -------------------------------------------------------------------------

    @property
    def game(self) -> str:
        return "gomoku"

    @property
    def variant(self) -> str:
        return self._rule

    @property
    def rule(self) -> str:
        return self._rule

    @property
    def size(self) -> int:
        return self._size

    @property
    def num_squares(self) -> int:
        return self._size * self._size

    @property
    def turn(self) -> Color:
        return self._turn

    @property
    def move_stack(self) -> list[int]:
        return list(self._history)

    @property
    def ply(self) -> int:
        return len(self._history)

    def piece_at(self, move: int) -> Color | None:
        self._check_move_syntax(move)
        stone = self._cells[move]
        return None if stone == _EMPTY else Color.BLACK if stone == _BLACK else Color.WHITE

    def stones(self, color: Color) -> list[int]:
        """Points holding ``color``'s stones, ascending."""
        stone = _stone(color)
        return [i for i, cell in enumerate(self._cells) if cell == stone]

    def count(self, color: Color) -> int:
        return self._cells.count(_stone(color))

    # --- rules ---------------------------------------------------------------------------

    def legal_moves(self) -> list[int]:
        if self.is_game_over():
            return []
        return [i for i, cell in enumerate(self._cells) if cell == _EMPTY]

    def is_legal(self, move: int) -> bool:
        return (
            _is_int(move)
            and 0 <= move < len(self._cells)
            and self._cells[move] == _EMPTY
            and not self.is_game_over()
        )

    def check_history(self, history: Sequence[int]) -> None:
        moves_from_empty(self, history)  # its checks, the list unused

    def is_game_over(self) -> bool:
        return self._winner is not None or _EMPTY not in self._cells

    def outcome(self) -> Outcome | None:
        """A win scores 1-0 for the side with the line; a full board is a 0-0 draw."""
        if self._winner is Color.BLACK:
            return Outcome(Color.BLACK, Termination.NORMAL, 1, 0)
        if self._winner is Color.WHITE:
            return Outcome(Color.WHITE, Termination.NORMAL, 0, 1)
        if _EMPTY not in self._cells:
            return Outcome(None, Termination.FULL_BOARD, 0, 0)
        return None

    def push(self, move: int) -> None:
        self._check_move_syntax(move)
        if not self.is_legal(move):
            raise IllegalMoveError(
                f"illegal move {square_name(move, self._size)!r} ({move}): "
                f"{self._why_illegal()} in {self.to_text()!r}"
            )
        self._cells[move] = _stone(self._turn)
        self._history.append(move)
        if self._wins_through(move):
            self._winner = self._turn
        self._turn = self._turn.other

    def pop(self) -> int:
        if not self._history:
            raise EmptyMoveStackError(f"pop from an empty move stack in {self.to_text()!r}")
        move = self._history.pop()
        self._cells[move] = _EMPTY
        self._turn = self._turn.other
        # Play stops at the first winning line, so no earlier position had one.
        self._winner = None
        return move

    def push_str(self, text: str) -> int:
        move = self.parse_move(text)
        self.push(move)
        return move

    def _run_length(self, move: int, dx: int, dy: int) -> int:
        """Length of the line of same-coloured stones through ``move`` along (dx, dy)."""
        size, stone = self._size, self._cells[move]
        y0, x0 = divmod(move, size)
        length = 1
        for sign in (1, -1):
            x, y = x0 + sign * dx, y0 + sign * dy
            while 0 <= x < size and 0 <= y < size and self._cells[y * size + x] == stone:
                length += 1
                x, y = x + sign * dx, y + sign * dy
        return length

    def _is_winning_length(self, length: int) -> bool:
        return length == WIN_LENGTH if self._rule == "exact-five" else length >= WIN_LENGTH

    def _wins_through(self, move: int) -> bool:
        return any(
            self._is_winning_length(self._run_length(move, dx, dy)) for dx, dy in _LINE_DIRECTIONS
        )

    def _has_winning_line(self, color: Color) -> bool:
        stone = _stone(color)
        return any(cell == stone and self._wins_through(i) for i, cell in enumerate(self._cells))

    # --- notation ------------------------------------------------------------------------

    def parse_move(self, text: str) -> int:
        """``f13`` -> point index, checked to be legal here."""
        try:
            move = parse_square(text, self._size)
        except InvalidMoveError as error:
            raise InvalidMoveError(f"{error} (in {self.to_text()!r})") from None
        return self._checked_legal(move, text)

    def parse_xy(self, text: str) -> int:
        """Gomocup ``x,y`` -> point index, checked to be legal here."""
        try:
            move = parse_xy(text, self._size)
        except InvalidMoveError as error:
            raise InvalidMoveError(f"{error} (in {self.to_text()!r})") from None
        return self._checked_legal(move, text)

    def _checked_legal(self, move: int, text: str) -> int:
        if not self.is_legal(move):
            raise IllegalMoveError(
                f"illegal move {shown(text)}: {self._why_illegal()} in {self.to_text()!r}")
        return move

    def _why_illegal(self) -> str:
        """Why a point on the board cannot be played here."""
        return "the game is over" if self.is_game_over() else "the point is occupied"

    def move_to_str(self, move: int) -> str:
        self._check_move_syntax(move)
        return square_name(move, self._size)

    def xy_str(self, move: int) -> str:
        self._check_move_syntax(move)
        return xy_str(move, self._size)

    def to_text(self) -> str:
        size = self._size
        rows = (
            "".join(_SYMBOLS[cell] for cell in self._cells[y * size : (y + 1) * size])
            for y in range(size)
        )
        return f"{size} {self._rule} {'/'.join(rows)} {self._turn.symbol}"

    def copy(self) -> Self:
        board = self.__class__.__new__(self.__class__)
        board._size, board._rule, board._turn = self._size, self._rule, self._turn
        board._cells = bytearray(self._cells)
        board._history = list(self._history)
        board._winner = self._winner
        return board

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GomokuBoard):
            return NotImplemented
        return (self._size, self._rule, self._turn, self._cells) == (
            other._size,
            other._rule,
            other._turn,
            other._cells,
        )

    def __hash__(self) -> int:
        return hash((self._size, self._rule, self._turn, bytes(self._cells)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}.from_text({self.to_text()!r})"

    def __str__(self) -> str:
        size = self._size
        lines = ["   " + " ".join(_LETTERS[:size])]
        for y in range(size):
            row = self._cells[y * size : (y + 1) * size]
            lines.append(f"{y + 1:>2} " + " ".join(_SYMBOLS[cell] for cell in row))
        lines.append(f"{self._turn.name.lower()} to move ({self._rule})")
        return "\n".join(lines)

    def _check_move_syntax(self, move: int) -> None:
        if not _is_int(move) or not 0 <= move < len(self._cells):
            raise InvalidMoveError(
                f"invalid Gomoku move {shown(move)} in {self.to_text()!r}: "
                f"need 0..{len(self._cells) - 1}"
            )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def moves_from_empty(board: GomokuBoard, history: Sequence[int]) -> list[int]:
    """A move list from the empty board that reaches ``board``, ending with ``history``.

    ``history`` holds the last moves played (a suffix of the game, possibly empty).
    Stones that ``history`` does not explain (a custom start position) come first,
    alternating black and white, which reaches the same board: Gomoku positions depend
    only on the stones. Raises ``InvalidPositionError`` if ``history`` cannot end here.
    """
    recent = list(history)
    text = board.to_text()
    if len(set(recent)) != len(recent):
        raise InvalidPositionError(f"history {shown(recent)} repeats a point")
    color = board.turn.other  # walk the history backwards from the side that moved last
    for move in reversed(recent):
        if not _is_int(move) or not 0 <= move < board.num_squares or \
                board.piece_at(move) is not color:
            raise InvalidPositionError(
                f"history move {shown(move)} is not a {color.name.lower()} stone in {shown(text)}")
        color = color.other
    played = set(recent)
    early_black = [s for s in board.stones(Color.BLACK) if s not in played]
    early_white = [s for s in board.stones(Color.WHITE) if s not in played]
    if len(early_black) - len(early_white) not in (0, 1):
        raise InvalidPositionError(
            f"history {shown(recent)} does not end the game in {shown(text)}")
    prefix: list[int] = []
    for index, stone in enumerate(early_black):
        prefix.append(stone)
        if index < len(early_white):
            prefix.append(early_white[index])
    return prefix + recent
