"""OBF: one Othello position per line, optionally with scored moves.

    --XXXXX--OOOXX-O-OOOXXOX-OXOXOXXOXXXOXXX--XOXOXX-XXXOOO--OOOOO-- X; G8:+18; H1:+12;

64 squares a1..h8 (``X`` black, ``O`` white, ``-`` empty), a space, the side to move,
then ``MOVE:score;`` pairs (``PA`` for a pass) giving each move's final disc difference
for the side to move. ``%`` starts a comment that runs to the end of the line. When
reading, ``x``/``*`` are accepted for black, ``o`` for white and ``.`` for empty.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from arena.formats.errors import FormatError
from arena.games.base import InvalidMoveError, InvalidPositionError
from arena.games.othello import PASS, OthelloBoard, parse_square, square_name

_BOARD_CHARS = {"X": "X", "x": "X", "*": "X", "O": "O", "o": "O", "-": "-", ".": "-"}
_SCORE_RE = re.compile(r"[+-]?[0-9]{1,3}")


@dataclass(frozen=True)
class ObfPosition:
    """A position, its scored moves in file order, and the line's trailing comment."""

    board: OthelloBoard
    scores: tuple[tuple[int, int], ...] = ()
    comment: str = ""

    def score_of(self, move: int) -> int | None:
        return next((score for m, score in self.scores if m == move), None)

    @property
    def best_score(self) -> int | None:
        return max((score for _, score in self.scores), default=None)


def parse_obf(line: str, line_number: int = 1) -> ObfPosition:
    """Parse one OBF line (a comment-only line is an error here; see ``parse_obf_file``)."""
    if not isinstance(line, str):
        raise FormatError(f"OBF line must be a string, got {type(line).__name__}", line_number)
    body, _, comment = line.partition("%")
    fields = body.split(";")
    board = _parse_board(fields[0], line, line_number)
    scores: list[tuple[int, int]] = []
    offset = len(fields[0]) + 1
    for field in fields[1:]:
        if field.strip():
            scores.append(_parse_scored_move(field, board, line, line_number, offset))
        offset += len(field) + 1
    moves = [move for move, _ in scores]
    if len(set(moves)) != len(moves):
        raise FormatError(f"a move is listed twice in {line!r}", line_number)
    return ObfPosition(board, tuple(scores), comment.strip())


def _parse_board(field: str, line: str, line_number: int) -> OthelloBoard:
    tokens = field.split()
    column = len(field) - len(field.lstrip()) + 1
    if len(tokens) != 2 or len(tokens[0]) != 64:
        raise FormatError(
            f"expected 64 squares and the side to move, got {field.strip()!r}", line_number, column
        )
    squares, side = tokens
    for index, char in enumerate(squares):
        if char not in _BOARD_CHARS:
            raise FormatError(f"bad square character {char!r}", line_number, column + index)
    side_char = _BOARD_CHARS.get(side)
    if side_char not in ("X", "O"):
        raise FormatError(f"bad side to move {side!r}", line_number, column + 65)
    text = "".join(_BOARD_CHARS[c] for c in squares) + " " + side_char
    try:
        return OthelloBoard.from_text(text)
    except InvalidPositionError as error:
        raise FormatError(str(error), line_number, column) from None


def _parse_scored_move(
    field: str, board: OthelloBoard, line: str, line_number: int, offset: int
) -> tuple[int, int]:
    column = offset + len(field) - len(field.lstrip()) + 1
    name, colon, score_text = field.strip().partition(":")
    if not colon or not _SCORE_RE.fullmatch(score_text.strip()):
        raise FormatError(f"expected MOVE:score, got {field.strip()!r}", line_number, column)
    try:
        move = parse_square(name)
    except InvalidMoveError:
        raise FormatError(f"bad move {name!r}", line_number, column) from None
    if not board.is_legal(move):
        raise FormatError(f"move {name!r} is not legal in {board.to_text()!r}", line_number, column)
    return move, int(score_text)


def write_obf(position: ObfPosition) -> str:
    """One OBF line; moves in upper case (``G8:+18;``), passes as ``PA``."""
    if "\n" in position.comment or "\r" in position.comment:
        raise FormatError("an OBF comment must fit on one line")
    if position.board.variant != "standard":
        raise FormatError("OBF holds standard Othello positions only (no variant field)")
    parts = [position.board.to_text() + ";"]
    for move, score in position.scores:
        name = "PA" if move == PASS else square_name(move).upper()
        parts.append(f" {name}:{score:+d};")
    if position.comment:
        parts.append(f" % {position.comment}")
    return "".join(parts)


def parse_obf_file(text: str) -> list[ObfPosition]:
    """Every position of an OBF file; blank and comment-only lines are skipped."""
    if not isinstance(text, str):
        raise FormatError(f"OBF text must be a string, got {type(text).__name__}")
    positions = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.partition("%")[0].strip():
            positions.append(parse_obf(line, number))
    return positions


def write_obf_file(positions: list[ObfPosition]) -> str:
    return "".join(write_obf(position) + "\n" for position in positions)
