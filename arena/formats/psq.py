"""PSQ, the Gomoku game record of Piskvork (the Gomocup tournament manager).

    Piskvorky 15x15, 0:0, 0
    8,8,1200
    9,9,950
    ...
    pbrain-alpha.exe
    pbrain-beta.exe
    -1

The header gives the board width and height, the two players' levels (0 for an
engine run by the manager) and a 0/1 flag; then one ``x,y,time`` line per move with
1-based coordinates and the thinking time in milliseconds, Black first. Whatever
follows the moves (engine names, an error code, a result line) is kept verbatim as
the trailer; a line that begins with two numbers is a move, though, and is refused when
it is not ``x,y,time``. The rule is not stored in the file, so the parser is told it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from arena.formats.errors import FormatError
from arena.games.base import GameError
from arena.games.gomoku import GomokuBoard
from arena.text import digits_hint, shown

# Numbers are ASCII digits only: Python's \d also takes other scripts' digits (Arabic-Indic,
# full-width), which Piskvork never writes.
_HEADER_RE = re.compile(r"\s*Piskvorky (\d{1,3})x(\d{1,3}), (-?\d{1,3}):(-?\d{1,3}), (\d{1,3})\s*",
                        re.ASCII)
_MOVE_RE = re.compile(r"\s*(\d{1,3}),(\d{1,3})(?:,(\d{1,9}))?\s*", re.ASCII)
# What a move line looks like, in range or not, in any script's digits (a record whose header
# is missing starts with one).
_MOVE_LIKE_RE = re.compile(r"\s*[-+]?\d+\s*,\s*[-+]?\d+\s*(?:,\s*[-+]?\d+\s*)?")
# A line that begins with two numbers (apart by a comma or spaces) is a move whatever follows
# them ('9,9,x', '9,9,1.5', '9 9 0'): the trailer begins with a name or a single number
# ('-1'), and reading such a line as its start made the later moves player names. A line of
# one number and a word ('1,Freestyle', a result line) still begins the trailer.
_MOVE_START_RE = re.compile(r"\s*[-+]?\d+(?:\.\d*)?\s*(?:,|\s)\s*[-+]?\d")
# A header under another first word (a misspelt or translated one).
_HEADER_LIKE_RE = re.compile(r"\s*\S+\s+\d+\s*x\s*\d+\s*,.*")
PSQ_HEADER = "Piskvorky <w>x<h>, <a>:<b>, <flag>"


@dataclass(frozen=True)
class PsqMove:
    """A move with 0-based ``x``/``y`` (the file stores them 1-based)."""

    x: int
    y: int
    time_ms: int = 0


@dataclass(frozen=True)
class PsqGame:
    size: int
    moves: tuple[PsqMove, ...] = ()
    rule: str = "freestyle"
    levels: tuple[int, int] = (0, 0)
    flag: int = 0
    trailer: tuple[str, ...] = ()

    def move_indices(self) -> list[int]:
        return [move.y * self.size + move.x for move in self.moves]

    def final_board(self) -> GomokuBoard:
        board = GomokuBoard(self.size, self.rule)
        for move in self.move_indices():
            board.push(move)
        return board


def psq_lookalike(text: str) -> str | None:
    """The first line of text that does not start with PSQ's header but looks like PSQ all
    the same (a header with another first word, or a move), else ``None``."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first if _HEADER_LIKE_RE.fullmatch(first) or _MOVE_LIKE_RE.fullmatch(first) else None


def parse_psq(text: str, rule: str = "freestyle") -> PsqGame:
    if not isinstance(text, str):
        raise FormatError(f"PSQ text must be a string, got {type(text).__name__}")
    lines = text.splitlines()
    header = _HEADER_RE.fullmatch(lines[0]) if lines else None
    if header is None:
        raise FormatError(f"expected '{PSQ_HEADER}'{digits_hint(lines[0] if lines else '')}",
                          1, 1)
    width, height, level_a, level_b, flag = (int(g) for g in header.groups())
    if width != height:
        raise FormatError(f"only square boards are supported, got {width}x{height}", 1, 11)
    try:
        board = GomokuBoard(width, rule)
    except GameError as error:
        raise FormatError(str(error), 1, 11) from None
    moves = []
    number = 1
    for number, line in enumerate(lines[1:], start=2):
        match = _MOVE_RE.fullmatch(line)
        if match is None:
            if _MOVE_START_RE.match(line):
                raise FormatError(f"move {shown(line.strip())} is not 'x,y,time' with x and y in "
                                  f"1..{width} and a time of 0..999999999 ms"
                                  f"{digits_hint(line)}", number, 1)
            break
        moves.append(_play(board, match, line, number))
    else:
        number = len(lines) + 1
    trailer = lines[number - 1 :]
    while trailer and not trailer[-1].strip():
        trailer = trailer[:-1]
    return PsqGame(width, tuple(moves), rule, (level_a, level_b), flag, tuple(trailer))


def _play(board: GomokuBoard, match: re.Match[str], line: str, number: int) -> PsqMove:
    x, y = int(match.group(1)) - 1, int(match.group(2)) - 1
    if not (0 <= x < board.size and 0 <= y < board.size):
        raise FormatError(
            f"move {line.strip()!r} is off the {board.size}x{board.size} board", number, 1
        )
    move = y * board.size + x
    if not board.is_legal(move):
        raise FormatError(f"illegal move {line.strip()!r} in {board.to_text()!r}", number, 1)
    board.push(move)
    return PsqMove(x, y, int(match.group(3) or 0))


def write_psq(game: PsqGame) -> str:
    if game.trailer and _MOVE_START_RE.match(game.trailer[0]):
        raise FormatError(f"trailer line {game.trailer[0]!r} would read back as a move")
    if any("\n" in line or "\r" in line for line in game.trailer):
        raise FormatError("a PSQ trailer line may not contain a line break")
    lines = [f"Piskvorky {game.size}x{game.size}, {game.levels[0]}:{game.levels[1]}, {game.flag}"]
    lines += [f"{move.x + 1},{move.y + 1},{move.time_ms}" for move in game.moves]
    lines += list(game.trailer)
    return "\n".join(lines) + "\n"


def psq_from_moves(
    size: int,
    moves: Sequence[int],
    *,
    rule: str = "freestyle",
    times_ms: Sequence[int] | None = None,
    names: tuple[str, str] | None = None,
) -> PsqGame:
    """A PSQ record of ``moves`` (point indices); ``names`` become the trailer, as
    Piskvork writes them in tournaments, followed by the error code 0."""
    records = tuple(
        PsqMove(move % size, move // size, times_ms[i] if times_ms is not None else 0)
        for i, move in enumerate(moves)
    )
    trailer = (*names, "0") if names is not None else ()
    return PsqGame(size, records, rule, (0, 0), 0, trailer)
