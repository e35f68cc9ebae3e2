"""GGF, the game record format of the Generic Game Server, also read and written by Edax.

    (;GM[Othello]PC[Arena]DT[2024.01.02_03:04:05.UTC]PB[alpha]PW[beta]TY[8]RE[+4.000]
    BO[8 -------- -------- -------- ---O*--- ---*O--- -------- -------- -------- *]
    B[F5//0.5]W[d6/-1.25/0.75]B[PA];)

A game is ``(;`` + properties ``NAME[value]`` + ``;)``. ``BO`` is the start position:
the board width, 64 squares row by row (``*`` black, ``O`` white, ``-`` empty, spaces
allowed between rows) and the side to move (``*``/``O``). ``B[...]``/``W[...]`` are moves
with an optional evaluation and time in seconds: ``move/eval/time``, either part may be
empty; ``PA`` is a pass. ``RE`` is the result from black's point of view, e.g.
``+4.000`` or ``-64.000:t``; it is kept verbatim (a margin that is no finite number,
``+inf`` or ``+1e400``, is refused, and so is one other than the board's where the moves end
the game). ``TY``, the game type, is ``8`` (plain 8x8) or absent: a variant (komi, a
random start, anti, synchro) is refused. Every other property (PB, PW, DT, PC, TI, RB, RW,
...) is kept in order as a tag, TY and RE too. Inside a value ``\\]`` and ``\\\\``
escape a bracket and a backslash.

Arena addition: ``VA[international]`` marks the international Reversi opening, which
GGF cannot otherwise express. Readers that do not know it ignore it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from arena.formats.errors import FormatError
from arena.formats.replay import outcome_text
from arena.games.base import Color, InvalidMoveError, InvalidPositionError, Outcome, Termination
from arena.games.othello import PASS, OthelloBoard, parse_square, square_name

_NAME_RE = re.compile(r"[A-Za-z]+")
_STRUCTURAL = frozenset({"GM", "BO", "VA", "B", "W"})
_FORFEIT_SUFFIX = {Termination.TIMEOUT: ":t", Termination.RESIGNATION: ":r"}
# RE's margin, as much of it as float() reads (an exponent, inf, nan: each refused unless
# finite); what follows it (':t') is not the number's.
_MARGIN_RE = re.compile(
    r"\s*([+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:e[+-]?[0-9]+)?"
    r"|(?:inf(?:inity)?|nan)(?![a-z])))", re.IGNORECASE | re.ASCII)


@dataclass(frozen=True)
class GgfMove:
    """One move: the square (or ``PASS``), who played it, and the optional search
    evaluation and thinking time in seconds that GGF attaches to it."""

    move: int
    color: Color
    eval: float | None = None
    time: float | None = None


@dataclass(frozen=True)
class GgfGame:
    start: OthelloBoard
    moves: tuple[GgfMove, ...] = ()
    tags: tuple[tuple[str, str], ...] = ()

    def tag(self, name: str) -> str | None:
        return next((value for key, value in self.tags if key == name), None)

    @property
    def black(self) -> str:
        return self.tag("PB") or ""

    @property
    def white(self) -> str:
        return self.tag("PW") or ""

    @property
    def result(self) -> str | None:
        return self.tag("RE")

    def result_score(self) -> float | None:
        """Black's final margin from ``RE`` (``+4.000:t`` -> 4.0), if it has one."""
        match = _MARGIN_RE.match(self.result or "")
        return float(match.group(1)) if match else None

    def final_board(self) -> OthelloBoard:
        board = self.start.copy()
        for move in self.moves:
            board.push(move.move)
        return board


# --- reading ---------------------------------------------------------------------------


def parse_ggf(text: str) -> GgfGame:
    """Exactly one game."""
    games = parse_ggf_games(text)
    if len(games) != 1:
        raise FormatError(f"expected one GGF game, found {len(games)}")
    return games[0]


def parse_ggf_games(text: str) -> list[GgfGame]:
    """Every game in ``text`` (GGS and Edax write several per file)."""
    if not isinstance(text, str):
        raise FormatError(f"GGF text must be a string, got {type(text).__name__}")
    games = []
    offset = _skip_space(text, 0)
    while offset < len(text):
        if not text.startswith("(;", offset):
            raise FormatError.at(text, offset, "expected '(;' to start a GGF game")
        properties, offset = _read_properties(text, offset + 2)
        games.append(_build_game(text, properties))
        offset = _skip_space(text, offset)
    return games


def _skip_space(text: str, offset: int) -> int:
    while offset < len(text) and text[offset].isspace():
        offset += 1
    return offset


def _read_properties(text: str, offset: int) -> tuple[list[tuple[str, str, int]], int]:
    """Properties up to the closing ``;)`` as (name, value, offset of the name)."""
    properties: list[tuple[str, str, int]] = []
    while True:
        offset = _skip_space(text, offset)
        if text.startswith(";)", offset):
            return properties, offset + 2
        match = _NAME_RE.match(text, offset)
        if match is None:
            raise FormatError.at(text, offset, "expected a property name or ';)'")
        start, offset = offset, match.end()
        if not text.startswith("[", offset):
            raise FormatError.at(text, offset, f"expected '[' after {match.group()!r}")
        value, offset = _read_value(text, offset + 1)
        properties.append((match.group().upper(), value, start))


def _read_value(text: str, offset: int) -> tuple[str, int]:
    chars: list[str] = []
    while offset < len(text):
        char = text[offset]
        if char == "]":
            return "".join(chars), offset + 1
        if char == "\\" and offset + 1 < len(text):
            offset += 1
            char = text[offset]
        chars.append(char)
        offset += 1
    raise FormatError.at(text, offset, "unterminated property value (missing ']')")


def _build_game(text: str, properties: list[tuple[str, str, int]]) -> GgfGame:
    values = {name: (value, offset) for name, value, offset in reversed(properties)}
    game, game_at = values.get("GM", ("", 0))
    if game.strip().lower() != "othello":
        raise FormatError.at(text, game_at, f"GM[{game}] is not Othello")
    variant = "standard"
    if "VA" in values:
        variant, variant_at = values["VA"]
        if variant not in ("standard", "international"):
            raise FormatError.at(text, variant_at, f"unknown variant VA[{variant}]")
    tags = tuple((name, value) for name, value, _ in properties if name not in _STRUCTURAL)
    _check_board_type(text, values)
    start = _parse_bo(text, *values["BO"], variant) if "BO" in values else OthelloBoard(variant)
    record = GgfGame(start, _replay_moves(text, properties, start), tags)
    _check_result(text, values, record)
    return record


def _check_board_type(text: str, values: dict[str, tuple[str, int]]) -> None:
    """GGS's game type is the board's size, then a letter for each variant played (``8k``
    komi, ``8r`` a random start, ``8a`` anti, ``s8`` synchro); Arena reads none of those."""
    board_type, at = values.get("TY", ("8", 0))
    if board_type != "8":
        raise FormatError.at(text, at,
                             f"TY[{board_type}]: only plain 8x8 Othello (TY[8]) is supported")


def _check_result(text: str, values: dict[str, tuple[str, int]], game: GgfGame) -> None:
    """RE's margin is a finite number, and the board's own when the moves end the game (with
    the empty squares to the winner, as GGS writes it, or without); a game they do not end
    may have any result (a forfeit, an adjudication)."""
    result, at = values.get("RE", ("", 0))
    match = _MARGIN_RE.match(result)
    if match is None:
        return
    margin = float(match.group(1))
    if not math.isfinite(margin):
        raise FormatError.at(text, at, f"RE[{result}]: number {match.group(1)!r} is not finite")
    outcome = game.final_board().outcome()
    if outcome is not None and margin not in (outcome.wof_diff, outcome.disc_diff):
        said = "a draw" if margin == 0 else (f"{'black' if margin > 0 else 'white'} wins by "
                                             f"{abs(margin):g}")
        raise FormatError.at(text, at, f"RE[{result}]: the record says {said}; its "
                                       f"{len(game.moves)} moves give {outcome_text(outcome)}")


def _parse_bo(text: str, value: str, at: int, variant: str) -> OthelloBoard:
    tokens = value.split()
    body = "".join(tokens[1:])
    if not tokens or tokens[0] != "8" or len(body) != 65:
        raise FormatError.at(text, at, f"BO[{value}] is not '8', 64 squares and the side to move")
    mapping = {"*": "X", "X": "X", "x": "X", "O": "O", "o": "O", "-": "-", ".": "-"}
    if any(c not in mapping for c in body) or mapping[body[64]] == "-":
        raise FormatError.at(text, at, f"BO[{value}] has an impossible character")
    board_text = "".join(mapping[c] for c in body[:64]) + " " + mapping[body[64]]
    if variant == "international":
        board_text += " international"
    try:
        return OthelloBoard.from_text(board_text)
    except InvalidPositionError as error:
        raise FormatError.at(text, at, str(error)) from None


def _replay_moves(
    text: str, properties: list[tuple[str, str, int]], start: OthelloBoard
) -> tuple[GgfMove, ...]:
    board = start.copy()
    moves = []
    for name, value, at in properties:
        if name not in ("B", "W"):
            continue
        move = _parse_move_value(text, value, at, Color.BLACK if name == "B" else Color.WHITE)
        if move.color is not board.turn and board.legal_moves() == [PASS]:
            # Some writers leave out forced passes; make them explicit.
            moves.append(GgfMove(PASS, board.turn))
            board.push(PASS)
        if move.color is not board.turn:
            raise FormatError.at(text, at, f"{name}[{value}] played out of turn")
        if not board.is_legal(move.move):
            raise FormatError.at(text, at, f"illegal move {name}[{value}] in {board.to_text()!r}")
        board.push(move.move)
        moves.append(move)
    return tuple(moves)


# A move's time is kept in milliseconds in a 32-bit field: about 24 days.
MAX_MOVE_SECONDS = (2**31 - 1) // 1000


def _parse_move_value(text: str, value: str, at: int, color: Color) -> GgfMove:
    parts = value.split("/")
    if len(parts) > 3:
        raise FormatError.at(text, at, f"move value {value!r} has more than move/eval/time")
    try:
        move = parse_square(parts[0])
    except InvalidMoveError:
        raise FormatError.at(text, at, f"bad move {parts[0]!r}") from None
    numbers = [_parse_number(text, part, at) for part in parts[1:]] + [None, None]
    seconds = numbers[1]
    if seconds is not None and not 0 <= seconds <= MAX_MOVE_SECONDS:
        raise FormatError.at(text, at, f"time {parts[2].strip()!r} of {value!r} must be "
                                       f"0..{MAX_MOVE_SECONDS:,} seconds")
    return GgfMove(move, color, numbers[0], seconds)


def _parse_number(text: str, part: str, at: int) -> float | None:
    if not part.strip():
        return None
    try:
        number = float(part)
    except ValueError:
        raise FormatError.at(text, at, f"bad number {part!r} in a move") from None
    if not math.isfinite(number):
        raise FormatError.at(text, at, f"number {part!r} is not finite")
    return number


# --- writing ---------------------------------------------------------------------------


def write_ggf(game: GgfGame) -> str:
    """One game on one line, as GGS writes it."""
    parts = ["(;GM[Othello]"]
    for name, value in game.tags:
        if not _NAME_RE.fullmatch(name) or name.upper() != name or name in _STRUCTURAL:
            raise FormatError(f"cannot write tag {name!r}: need an upper-case non-move name")
        parts.append(f"{name}[{_escape(value)}]")
    if game.start.variant != "standard":
        parts.append(f"VA[{game.start.variant}]")
    parts.append(f"BO[{_write_bo(game.start)}]")
    for move in game.moves:
        parts.append(_write_move(move))
    parts.append(";)")
    return "".join(parts)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("]", "\\]")


def _write_bo(board: OthelloBoard) -> str:
    squares = board.to_text()[:64].replace("X", "*")
    rows = " ".join(squares[row * 8 : row * 8 + 8] for row in range(8))
    return f"8 {rows} {'*' if board.turn is Color.BLACK else 'O'}"


def _write_move(move: GgfMove) -> str:
    name = "PA" if move.move == PASS else square_name(move.move).upper()
    fields = [name]
    if move.eval is not None or move.time is not None:
        fields.append(_format_number(move.eval))
    if move.time is not None:
        fields.append(_format_number(move.time))
    return f"{'B' if move.color is Color.BLACK else 'W'}[{'/'.join(fields)}]"


def _format_number(number: float | None) -> str:
    if number is None:
        return ""
    if not math.isfinite(number):
        raise FormatError(f"cannot write {number!r} in a GGF move")
    text = repr(float(number))
    return text[:-2] if text.endswith(".0") else text


def ggf_result(outcome: Outcome) -> str:
    """``RE`` for an outcome: black's margin with empties to the winner (``+4.000``), also
    for an adjudicated game (its moves do not reach the end: ``+8.000`` after them is the
    adjudicated margin); a forfeit scores 64 for the winner with ``:t`` (time) or ``:r``
    (other) appended."""
    if outcome.termination in (Termination.NORMAL, Termination.FULL_BOARD,
                               Termination.ADJUDICATION):
        return f"{outcome.wof_diff:+d}.000"
    margin = 0 if outcome.winner is None else 64 if outcome.winner is Color.BLACK else -64
    return f"{margin:+d}.000{_FORFEIT_SUFFIX.get(outcome.termination, ':r')}"


def ggf_from_moves(
    start: OthelloBoard,
    moves: Sequence[int],
    *,
    black: str = "",
    white: str = "",
    outcome: Outcome | None = None,
    evals: Sequence[float | None] | None = None,
    times: Sequence[float | None] | None = None,
    date: str | None = None,
    place: str = "Arena",
) -> GgfGame:
    """A GGF game from a start position and the moves played (times in seconds)."""
    board = start.copy()
    records = []
    for index, move in enumerate(moves):
        evaluation = evals[index] if evals is not None else None
        seconds = times[index] if times is not None else None
        records.append(GgfMove(move, board.turn, evaluation, seconds))
        board.push(move)
    tags = [("PC", place)] + ([("DT", date)] if date else [])
    tags += [("PB", black), ("PW", white), ("TY", "8")]
    if outcome is not None:
        tags.append(("RE", ggf_result(outcome)))
    return GgfGame(OthelloBoard.from_text(start.to_text()), tuple(records), tuple(tags))
