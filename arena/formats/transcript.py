"""Othello move transcripts: ``f5d6c3d3c4...``.

Squares are written as letter + digit (either case). Passes may be omitted (the
parser inserts a pass wherever the side to move has none) or written explicitly as
``pass``, ``PA`` or ``PS``. Whitespace between moves is ignored. A transcript is read
from a start position (the standard start by default), so the international opening
and custom starts work the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from arena.formats.errors import FormatError
from arena.games.othello import PASS, OthelloBoard, square_name

PassStyle = Literal["omit", "pass", "PA"]

_PASS_TOKENS = ("pass", "pa", "ps")


def parse_transcript(text: str, start: OthelloBoard | None = None) -> list[int]:
    """The moves of ``text`` played from ``start``, with every pass made explicit."""
    if not isinstance(text, str):
        raise FormatError(f"transcript must be a string, got {type(text).__name__}")
    board = OthelloBoard() if start is None else OthelloBoard.from_text(start.to_text())
    moves: list[int] = []
    offset = 0
    while offset < len(text):
        if text[offset].isspace():
            offset += 1
            continue
        move, length = _read_token(text, offset)
        if move != PASS:
            while board.legal_moves() == [PASS]:  # an omitted pass
                board.push(PASS)
                moves.append(PASS)
        if not board.is_legal(move):
            raise FormatError.at(
                text,
                offset,
                f"illegal move {text[offset : offset + length]!r} in {board.to_text()!r}",
            )
        board.push(move)
        moves.append(move)
        offset += length
    return moves


def _read_token(text: str, offset: int) -> tuple[int, int]:
    lowered = text[offset : offset + 4].lower()
    for token in _PASS_TOKENS:
        if lowered.startswith(token):
            return PASS, len(token)
    pair = lowered[:2]
    if len(pair) == 2 and pair[0] in "abcdefgh" and pair[1] in "12345678":
        return (int(pair[1]) - 1) * 8 + "abcdefgh".index(pair[0]), 2
    raise FormatError.at(text, offset, f"expected a square a1..h8 or a pass, got {pair!r}")


def write_transcript(
    moves: Iterable[int], *, passes: PassStyle = "omit", uppercase: bool = False
) -> str:
    """Write ``moves`` as a transcript. With ``passes="omit"`` a trailing pass cannot
    be read back (nothing follows it to show it was forced); use an explicit style to
    keep every move."""
    parts: list[str] = []
    for move in moves:
        if not isinstance(move, int) or isinstance(move, bool) or not 0 <= move <= PASS:
            raise FormatError(f"cannot write move {move!r}: need 0..63 or PASS (64)")
        if move == PASS:
            if passes != "omit":
                parts.append(passes)
            continue
        name = square_name(move)
        parts.append(name.upper() if uppercase else name)
    return "".join(parts)


def replay_transcript(text: str, start: OthelloBoard | None = None) -> OthelloBoard:
    """The position after playing ``text`` from ``start``, with its move stack."""
    board = OthelloBoard() if start is None else start.copy()
    for move in parse_transcript(text, board):
        board.push(move)
    return board
