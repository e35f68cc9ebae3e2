"""The Gomocup (piskvork) protocol: what a manager sends a ``pbrain-*`` Gomoku engine (a
"brain") on its stdin, and what the brain answers on its stdout, one line each.

    manager                  brain
    START 15             ->
                         <-  OK
    INFO timeout_turn 5000   (INFO has no answer; a brain ignores keys it does not know)
    BOARD                ->  a whole position, one stone a line as x,y,field
    7,7,2                ->  field 1: the brain's own stone, 2: the opponent's,
    8,7,1                ->  3: a winning line of a continuous game; in played order
    DONE                 ->
                         <-  MESSAGE depth 4 ev 35 pv 9,7 6,7   (any number of these)
                         <-  9,7                                (the brain's move)

Other commands: ``RECTSTART w,h``, ``BEGIN`` (the brain opens on the empty board), ``TURN
x,y`` (the opponent played; answer a move), ``TAKEBACK x,y``, ``RESTART`` (answer OK),
``END`` (exit, no answer), ``ABOUT`` (answer ``name="...", version="..."``). A brain may
also answer ``ERROR text``, ``UNKNOWN text``, ``DEBUG text`` or ``SUGGEST x,y``.

Coordinates are 0-based ``x,y`` with x the column; Arena's point is ``y * size + x``.
Every value here has ``format_*`` and ``parse_*`` that round-trip; bad lines raise
``ProtocolError`` quoting the line (``BadArguments`` for a known command's bad arguments).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from arena.protocols.errors import ProtocolError
from arena.protocols.report import MAX_NODES, SearchReport, whole

OWN, OPPONENT, WINNING_LINE = 1, 2, 3
MAX_COORDINATE = 999
# INFO rule is a bit set: 1 exactly five, 2 continuous game, 4 renju, 8 caro.
RULE_EXACT_FIVE_BIT, RULE_CONTINUOUS_BIT, RULE_RENJU_BIT, RULE_CARO_BIT = 1, 2, 4, 8
_RULE_CODES = {"freestyle": 0, "exact-five": RULE_EXACT_FIVE_BIT}
# A forced win or loss in n plies is reported as +-(MATE_SCORE - n).
MATE_SCORE = 1_000_000

_XY = r"\s*(\d{1,3})\s*,\s*(\d{1,3})\s*"
_XY_RE = re.compile(_XY)
_STONE_RE = re.compile(_XY + r",\s*(\d)\s*")
_ABOUT_PAIR_RE = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"([^"]*)"\s*')
_INFO_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# --- manager -> brain ------------------------------------------------------------------


@dataclass(frozen=True)
class Start:
    size: int


@dataclass(frozen=True)
class RectStart:
    width: int
    height: int


@dataclass(frozen=True)
class Info:
    key: str
    value: str


@dataclass(frozen=True)
class Stone:
    x: int
    y: int
    field: int


@dataclass(frozen=True)
class Board:
    stones: tuple[Stone, ...] = ()


@dataclass(frozen=True)
class Begin:
    pass


@dataclass(frozen=True)
class Turn:
    x: int
    y: int


@dataclass(frozen=True)
class Takeback:
    x: int
    y: int


@dataclass(frozen=True)
class Restart:
    pass


@dataclass(frozen=True)
class End:
    pass


@dataclass(frozen=True)
class About:
    pass


Command = Start | RectStart | Info | Board | Begin | Turn | Takeback | Restart | End | About
_BARE: dict[str, Command] = {"BEGIN": Begin(), "RESTART": Restart(), "END": End(), "ABOUT": About()}


def format_command(command: Command) -> str:
    """The command's line(s), without the final newline (``BOARD`` spans several)."""
    match command:
        case Start(size):
            return f"START {size}"
        case RectStart(width, height):
            return f"RECTSTART {width},{height}"
        case Info(key, value):
            return f"INFO {key} {value}"
        case Board(stones):
            return "\n".join(["BOARD", *(f"{s.x},{s.y},{s.field}" for s in stones), "DONE"])
        case Turn(x, y):
            return f"TURN {x},{y}"
        case Takeback(x, y):
            return f"TAKEBACK {x},{y}"
    words = [word for word, bare in _BARE.items() if bare == command]
    if not words:
        raise TypeError(f"not a Gomocup command: {command!r}")
    return words[0]


class CommandParser:
    """Reads a brain's input line by line: ``feed`` returns each complete command, and
    ``None`` while a ``BOARD`` block is still open. A bad line raises ``ProtocolError``
    and drops the block it was in."""

    def __init__(self) -> None:
        self._board: list[Stone] | None = None

    def feed(self, line: str) -> Command | None:
        text = line.strip()
        if self._board is not None:
            return self._feed_board(text)
        word, _, rest = text.partition(" ")
        word, rest = word.upper(), rest.strip()
        if word == "BOARD" and not rest:
            self._board = []
            return None
        return _parse_single(word, rest, line)

    def _feed_board(self, text: str) -> Board | None:
        if text.upper() == "DONE":
            stones, self._board = tuple(self._board or ()), None
            return Board(stones)
        match = _STONE_RE.fullmatch(text)
        if match is None or int(match.group(3)) not in (OWN, OPPONENT, WINNING_LINE):
            self._board = None
            raise BadArguments(f"bad BOARD line {text!r}: expected x,y,field (field 1-3)")
        assert self._board is not None
        self._board.append(Stone(int(match.group(1)), int(match.group(2)), int(match.group(3))))
        return None


class BadArguments(ProtocolError):
    """A known command whose arguments the protocol does not allow (``TURN -1,-1``, a
    bad ``BOARD`` line): a brain answers ``ERROR``, where an unknown word gets
    ``UNKNOWN``."""


# What each command takes after its word, for BadArguments (the bare ones take nothing).
_NUMBERS = " (numbers of 0 to 999)"
_ARGUMENTS = {"START": "a size", "RECTSTART": "width,height" + _NUMBERS,
              "INFO": "a key and a value", "TURN": "x,y" + _NUMBERS,
              "TAKEBACK": "x,y" + _NUMBERS}


def _parse_single(word: str, rest: str, line: str) -> Command:
    if word in _BARE and not rest:
        return _BARE[word]
    # A size (the brain judges it); ASCII digits only: '²' is a digit to isdigit, not to int.
    if word == "START" and re.fullmatch(r"[0-9]{1,9}", rest):
        return Start(int(rest))
    if word == "RECTSTART" and _XY_RE.fullmatch(rest):
        width, height = _parse_xy(rest)
        return RectStart(width, height)
    if word == "INFO":
        key, _, value = rest.partition(" ")
        if _INFO_KEY_RE.fullmatch(key):
            return Info(key.lower(), value.strip())
    if word in ("TURN", "TAKEBACK") and _XY_RE.fullmatch(rest):
        x, y = _parse_xy(rest)
        return Turn(x, y) if word == "TURN" else Takeback(x, y)
    if word in _BARE or word == "BOARD":
        raise BadArguments(f"{word} takes nothing after it: {line.strip()!r}")
    if word in _ARGUMENTS:
        raise BadArguments(f"{word} takes {_ARGUMENTS[word]}: {line.strip()!r}")
    raise ProtocolError(f"not a Gomocup command: {line.strip()!r}")


def _parse_xy(text: str) -> tuple[int, int]:
    match = _XY_RE.fullmatch(text)
    if match is None:
        raise ProtocolError(f"expected x,y, got {text!r}")
    return int(match.group(1)), int(match.group(2))


# --- brain -> manager ------------------------------------------------------------------


@dataclass(frozen=True)
class Ok:
    pass


@dataclass(frozen=True)
class MoveReply:
    x: int
    y: int


@dataclass(frozen=True)
class Suggest:
    x: int
    y: int


@dataclass(frozen=True)
class Message:
    text: str


@dataclass(frozen=True)
class Debug:
    text: str


@dataclass(frozen=True)
class Error:
    text: str


@dataclass(frozen=True)
class Unknown:
    text: str


@dataclass(frozen=True)
class AboutReply:
    fields: tuple[tuple[str, str], ...]

    def get(self, key: str) -> str | None:
        return next((value for name, value in self.fields if name == key), None)


Reply = Ok | MoveReply | Suggest | Message | Debug | Error | Unknown | AboutReply
_TEXT_REPLIES: dict[str, type[Message | Debug | Error | Unknown]] = {
    "MESSAGE": Message, "DEBUG": Debug, "ERROR": Error, "UNKNOWN": Unknown,
}


def format_reply(reply: Reply) -> str:
    match reply:
        case Ok():
            return "OK"
        case MoveReply(x, y):
            return f"{x},{y}"
        case Suggest(x, y):
            return f"SUGGEST {x},{y}"
        case AboutReply(fields):
            return ", ".join(f'{key}="{value}"' for key, value in fields)
        case Message(text) | Debug(text) | Error(text) | Unknown(text):
            word = next(w for w, kind in _TEXT_REPLIES.items() if isinstance(reply, kind))
            return f"{word} {text}" if text else word
    raise TypeError(f"not a Gomocup reply: {reply!r}")


def parse_reply(line: str) -> Reply:
    """One line a brain printed; raises ``ProtocolError`` for anything else."""
    text = line.strip()
    if text.upper() == "OK":
        return Ok()
    if _XY_RE.fullmatch(text):
        return MoveReply(*_parse_xy(text))
    word, _, rest = text.partition(" ")
    kind = _TEXT_REPLIES.get(word.upper())
    if kind is not None:
        return kind(rest.strip())
    if word.upper() == "SUGGEST" and _XY_RE.fullmatch(rest):
        return Suggest(*_parse_xy(rest))
    about = _parse_about(text)
    if about is not None:
        return about
    raise ProtocolError(f"not a Gomocup reply: {line.strip()[:200]!r}")


def _parse_about(text: str) -> AboutReply | None:
    fields: list[tuple[str, str]] = []
    for part in _split_about(text):
        match = _ABOUT_PAIR_RE.fullmatch(part)
        if match is None:
            return None
        fields.append((match.group(1), match.group(2)))
    return AboutReply(tuple(fields)) if fields else None


def _split_about(text: str) -> list[str]:
    """``a="x, y", b="z"`` -> ``['a="x, y"', ' b="z"']``: commas inside quotes stay."""
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    for char in text:
        if char == '"':
            quoted = not quoted
        if char == "," and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [part for part in parts if part.strip()]


# --- rules and positions ---------------------------------------------------------------


def rule_code(rule: str) -> int:
    """Arena's rule name -> the INFO rule value (``freestyle`` 0, ``exact-five`` 1)."""
    if rule not in _RULE_CODES:
        raise ProtocolError(f"the Gomocup protocol has no code for rule {rule!r}")
    return _RULE_CODES[rule]


def rule_name(code: int) -> str:
    """The INFO rule value -> Arena's rule name; renju and caro are not Arena rules."""
    if code & (RULE_RENJU_BIT | RULE_CARO_BIT) or code < 0:
        raise ProtocolError(f"INFO rule {code}: renju and caro are not supported")
    return "exact-five" if code & RULE_EXACT_FIVE_BIT else "freestyle"


def point(x: int, y: int, size: int) -> int:
    if not (0 <= x < size and 0 <= y < size):
        raise ProtocolError(f"{x},{y} is off the {size}x{size} board")
    return y * size + x


def board_for(moves: Sequence[int], size: int) -> Board:
    """The ``BOARD`` a brain gets to play the next move after ``moves`` (Black first):
    its own stones (the side to move) are field 1, in played order."""
    mover_parity = len(moves) % 2
    stones = []
    for ply, move in enumerate(moves):
        y, x = divmod(move, size)
        stones.append(Stone(x, y, OWN if ply % 2 == mover_parity else OPPONENT))
    return Board(tuple(stones))


def moves_from_board(board: Board, size: int) -> list[int]:
    """The move list (Black first) a ``BOARD`` describes for the brain that moves next.

    The stones of each side keep their listed order and the two sides alternate, so a
    board sent in played order comes back as exactly that order.
    """
    own = [point(s.x, s.y, size) for s in board.stones if s.field == OWN]
    theirs = [point(s.x, s.y, size) for s in board.stones if s.field == OPPONENT]
    if any(s.field == WINNING_LINE for s in board.stones):
        raise ProtocolError("field 3 (continuous game) is not supported")
    if len(set(own + theirs)) != len(own) + len(theirs):
        raise ProtocolError("BOARD lists a point twice")
    if len(theirs) - len(own) not in (0, 1):
        raise ProtocolError(f"BOARD has {len(own)} own and {len(theirs)} opponent stones: "
                            "the brain cannot be the side to move")
    black, white = (own, theirs) if len(own) == len(theirs) else (theirs, own)
    moves: list[int] = []
    for index, stone in enumerate(black):
        moves.append(stone)
        if index < len(white):
            moves.append(white[index])
    return moves


# --- search information in MESSAGE lines -------------------------------------------------

_DEPTH_WORDS = frozenset({"depth"})
_SCORE_WORDS = frozenset({"ev", "eval", "score"})
_NODE_WORDS = frozenset({"n", "nodes", "node"})
_TIME_WORDS = frozenset({"tm", "time"})
_PV_WORDS = frozenset({"pv", "bestline"})
_NUMBER_RE = re.compile(r"[+-]?\d+(?:\.\d+)?(?:e[+-]?\d+)?")
_MATE_RE = re.compile(r"([+-]?)m(\d{1,9})")
_SUFFIX = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "b": 10**9}
_COUNT_RE = re.compile(r"(\d+(?:\.\d+)?)([kmgb]?)")
_TIME_RE = re.compile(r"(\d+(?:\.\d+)?)(ms|s)?")
_NAMED_POINT_RE = re.compile(r"([a-z])(\d{1,2})")


def format_search_message(report: SearchReport, size: int) -> str:
    """The ``MESSAGE`` text Arena's brain prints before its move (parsed back by
    ``parse_search_message``)."""
    parts = []
    if report.depth is not None:
        parts.append(f"depth {report.depth}")
    if report.score is not None:
        parts.append(f"ev {_format_score(report.score, report.exact)}")
    if report.nodes is not None:
        parts.append(f"n {report.nodes}")
    if report.time_ms is not None:
        parts.append(f"tm {round(report.time_ms)}")
    if report.pv:
        parts.append("pv " + " ".join(f"{m % size},{m // size}" for m in report.pv))
    return " ".join(parts)


def _format_score(score: float, exact: bool) -> str:
    plies = MATE_SCORE - abs(score)
    if exact and 0 <= plies < 1000 and plies == int(plies):
        return f"{'-' if score < 0 else '+'}M{int(plies)}"
    return str(int(score)) if score == int(score) else f"{score:.6g}"


def parse_search_message(text: str, size: int) -> SearchReport | None:
    """Search information in a ``MESSAGE`` text, or ``None`` if it holds none.

    Reads ``key value`` words wherever they are, separated by spaces or ``|``: depth
    (``12`` or ``12-20``), ev/eval/score (a number, or ``+M3`` for a forced win),
    n/nodes/node (``1234``, ``12.5K``, ``3M``), tm/time (``15``, ``15ms``, ``1.2s``) and
    pv/bestline followed by moves (``7,7`` or ``h8``).
    """
    tokens = text.replace("|", " ").lower().split()
    found: dict[str, object] = {}
    index = 0
    while index < len(tokens):
        word = tokens[index]
        value = tokens[index + 1] if index + 1 < len(tokens) else ""
        if word in _PV_WORDS:
            pv, used = _read_pv(tokens[index + 1:], size)
            if pv:
                found["pv"] = tuple(pv)
            index += 1 + used
            continue
        if _read_field(word, value, found):
            index += 2
        else:
            index += 1
    return SearchReport(**found) if found else None  # type: ignore[arg-type]


def _read_field(word: str, value: str, found: dict[str, object]) -> bool:
    if word in _DEPTH_WORDS and re.fullmatch(r"\d{1,9}(-\d{1,9})?", value):
        found["depth"] = int(value.split("-")[0])
    elif word in _SCORE_WORDS and (mate := _MATE_RE.fullmatch(value)):
        sign = -1 if mate.group(1) == "-" else 1
        found["score"] = float(sign * (MATE_SCORE - int(mate.group(2))))
        found["exact"] = True
    elif word in _SCORE_WORDS and _NUMBER_RE.fullmatch(value):
        found["score"] = float(value)
    elif word in _NODE_WORDS and (count := _COUNT_RE.fullmatch(value)):
        found["nodes"] = whole(float(count.group(1)) * _SUFFIX[count.group(2)], MAX_NODES)
    elif word in _TIME_WORDS and (clock := _TIME_RE.fullmatch(value)):
        found["time_ms"] = float(clock.group(1)) * (1000 if clock.group(2) == "s" else 1)
    else:
        return False
    return True


def _read_pv(tokens: list[str], size: int) -> tuple[list[int], int]:
    pv: list[int] = []
    for token in tokens:
        move = _pv_point(token, size)
        if move is None:
            break
        pv.append(move)
    return pv, len(pv)


def _pv_point(token: str, size: int) -> int | None:
    if xy := _XY_RE.fullmatch(token):
        x, y = int(xy.group(1)), int(xy.group(2))
    elif named := _NAMED_POINT_RE.fullmatch(token):
        x, y = ord(named.group(1)) - ord("a"), int(named.group(2)) - 1
    else:
        return None
    return y * size + x if 0 <= x < size and 0 <= y < size else None
