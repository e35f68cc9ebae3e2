"""The NBoard protocol: what the NBoard GUI (or Arena's worker) sends an Othello engine on
its stdin, and what the engine answers, one line each.

    manager                          engine
    nboard 2                     ->
    set depth 6                  ->  <-  set myname Edax6   (optional)
    set game (;GM[Othello]...;)  ->      the position at the end of that GGF game
    ping 1                       ->  <-  pong 1             (everything before is done)
    go                           ->  <-  status thinking
                                     <-  search D3c5 1.50 0 6   (pv, eval, 0, depth)
                                     <-  nodestats 35805 0.02
                                     <-  === D3 1.50 0.02   (the move; eval and time optional)

Also ``set contempt N``, ``move F5/eval/time`` (a move was played), ``hint N`` (send
``search``/``book`` lines for about N moves, then a ``status`` line), ``learn`` (answer
``learned``) and ``quit``. Engines ignore lines they do not understand. Moves are GGF
squares (``F5``, ``d3``; ``PA`` is a pass); a PV is moves written together (``F5d6C3``,
``F5-D6-C3``). Evals are in discs from the mover's side.

Every value here has ``format_*`` and ``parse_*`` that round-trip; bad lines raise
``ProtocolError`` quoting the line.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from arena.formats.errors import FormatError
from arena.formats.ggf import GgfGame, ggf_from_moves, parse_ggf, write_ggf
from arena.games.base import GameError
from arena.games.othello import PASS, OthelloBoard, parse_square
from arena.protocols.errors import ProtocolError
from arena.protocols.report import MAX_NODES, SearchReport, whole

VERSION = 2
_SQUARE_RE = re.compile(r"(?:[a-hA-H][1-8]|[pP][aAsS])")
_NUMBER_RE = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)")
_DEPTH_RE = re.compile(r"(\d+)")


def move_text(move: int) -> str:
    """A square index as the protocol writes it (``F5``, ``PA``)."""
    if move == PASS:
        return "PA"
    return "ABCDEFGH"[move % 8] + str(move // 8 + 1)


def parse_move(text: str) -> int:
    if not _SQUARE_RE.fullmatch(text):
        raise ProtocolError(f"not an Othello move: {text!r}")
    return parse_square(text)


def parse_pv(text: str) -> tuple[int, ...]:
    """``F5d6C3`` or ``F5-D6-C3`` -> square indices."""
    squares = text.replace("-", "")
    if len(squares) % 2 or not squares:
        raise ProtocolError(f"not a PV: {text!r}")
    return tuple(parse_move(squares[i:i + 2]) for i in range(0, len(squares), 2))


def _number(text: str, what: str) -> float:
    if not _NUMBER_RE.fullmatch(text):
        raise ProtocolError(f"bad {what} {text!r}")
    return float(text)


def _format_number(value: float) -> str:
    if not math.isfinite(value):
        raise ProtocolError(f"cannot send {value!r}")
    return f"{value:.2f}"


# --- manager -> engine -----------------------------------------------------------------


@dataclass(frozen=True)
class Hello:
    version: int = VERSION


@dataclass(frozen=True)
class SetDepth:
    depth: int


@dataclass(frozen=True)
class SetGame:
    ggf: str


@dataclass(frozen=True)
class SetContempt:
    contempt: float


@dataclass(frozen=True)
class PlayedMove:
    move: int
    eval: float | None = None
    time: float | None = None


@dataclass(frozen=True)
class Hint:
    count: int


@dataclass(frozen=True)
class Go:
    pass


@dataclass(frozen=True)
class Ping:
    number: int


@dataclass(frozen=True)
class Learn:
    pass


@dataclass(frozen=True)
class Quit:
    pass


Command = Hello | SetDepth | SetGame | SetContempt | PlayedMove | Hint | Go | Ping | Learn | Quit


def format_command(command: Command) -> str:
    match command:
        case Hello(version):
            return f"nboard {version}"
        case SetDepth(depth):
            return f"set depth {depth}"
        case SetGame(ggf):
            return f"set game {ggf}"
        case SetContempt(contempt):
            return f"set contempt {_format_number(contempt)}"
        case PlayedMove(move, evaluation, seconds):
            return f"move {_move_with_numbers(move, evaluation, seconds)}"
        case Hint(count):
            return f"hint {count}"
        case Go():
            return "go"
        case Ping(number):
            return f"ping {number}"
        case Learn():
            return "learn"
        case Quit():
            return "quit"
    raise TypeError(f"not an NBoard command: {command!r}")


def _move_with_numbers(move: int, evaluation: float | None, seconds: float | None) -> str:
    parts = [move_text(move)]
    if evaluation is not None or seconds is not None:
        parts.append("" if evaluation is None else _format_number(evaluation))
    if seconds is not None:
        parts.append(_format_number(seconds))
    return "/".join(parts)


def parse_command(line: str) -> Command:
    """One line a manager sent; ``ProtocolError`` for a line the engine should ignore."""
    words = line.split()
    if not words:
        raise ProtocolError("empty line")
    head, args = words[0].lower(), words[1:]
    if head == "set" and args:
        return _parse_set(args[0].lower(), line.split(None, 2)[2] if len(args) > 1 else "",
                          line)
    if head == "move" and len(args) == 1:
        return PlayedMove(*_parse_move_with_numbers(args[0]))
    if _SQUARE_RE.fullmatch(head) and not args:  # NBoard 1.1 sends a bare move
        return PlayedMove(parse_move(head))
    simple: dict[str, Command] = {"go": Go(), "learn": Learn(), "quit": Quit()}
    if head in simple and not args:
        return simple[head]
    if head in ("nboard", "hint", "ping") and len(args) == 1 and args[0].isdigit():
        number = int(args[0])
        return Hello(number) if head == "nboard" else Hint(number) if head == "hint" else Ping(
            number)
    raise ProtocolError(f"not an NBoard command: {line.strip()[:200]!r}")


def _parse_set(name: str, value: str, line: str) -> Command:
    value = value.strip()
    if name == "depth" and value.isdigit():
        return SetDepth(int(value))
    if name == "game" and value:
        return SetGame(value)
    if name == "contempt" and value:
        return SetContempt(_number(value, "contempt"))
    raise ProtocolError(f"not an NBoard command: {line.strip()[:200]!r}")


def _parse_move_with_numbers(text: str) -> tuple[int, float | None, float | None]:
    parts = text.split("/")
    if len(parts) > 3:
        raise ProtocolError(f"bad move {text!r}: more than move/eval/time")
    numbers = [None if not p else _number(p, "number") for p in parts[1:]] + [None, None]
    return parse_move(parts[0]), numbers[0], numbers[1]


# --- engine -> manager -----------------------------------------------------------------


@dataclass(frozen=True)
class BestMove:
    move: int
    eval: float | None = None
    time: float | None = None


@dataclass(frozen=True)
class Status:
    text: str = ""


@dataclass(frozen=True)
class SearchLine:
    pv: tuple[int, ...]
    eval: float
    depth: int | None = None
    text: str = ""


@dataclass(frozen=True)
class BookLine:
    pv: tuple[int, ...]
    eval: float
    games: int
    depth: int | None = None
    text: str = ""


@dataclass(frozen=True)
class Pong:
    number: int


@dataclass(frozen=True)
class MyName:
    name: str


@dataclass(frozen=True)
class Learned:
    pass


@dataclass(frozen=True)
class NodeStats:
    nodes: float
    seconds: float


Reply = BestMove | Status | SearchLine | BookLine | Pong | MyName | Learned | NodeStats


def format_reply(reply: Reply) -> str:
    match reply:
        case BestMove(move, evaluation, seconds):
            return f"=== {_move_with_numbers(move, evaluation, seconds)}"
        case Status(text):
            return f"status {text}".rstrip()
        case SearchLine(pv, evaluation, depth, text):
            return _pv_line("search", pv, evaluation, "0", depth, text)
        case BookLine(pv, evaluation, games, depth, text):
            return _pv_line("book", pv, evaluation, str(games), depth, text)
        case Pong(number):
            return f"pong {number}"
        case MyName(name):
            return f"set myname {name}"
        case Learned():
            return "learned"
        case NodeStats(nodes, seconds):
            return f"nodestats {nodes:.0f} {_format_number(seconds)}"
    raise TypeError(f"not an NBoard reply: {reply!r}")


def _pv_line(word: str, pv: Sequence[int], evaluation: float, third: str, depth: int | None,
             text: str) -> str:
    """Free text follows the depth, so a line without a depth carries no text."""
    parts = [word, "".join(move_text(m) for m in pv), _format_number(evaluation), third]
    if depth is not None:
        parts += [str(depth), text] if text else [str(depth)]
    return " ".join(parts)


def parse_reply(line: str) -> Reply:
    """One line an engine printed; raises ``ProtocolError`` for anything else."""
    words = line.split()
    if not words:
        raise ProtocolError("empty line")
    head, args = words[0].lower(), words[1:]
    try:
        return _parse_reply_words(head, args, line)
    except (ProtocolError, FormatError, GameError, ValueError) as exc:  # ValueError: int()
        raise ProtocolError(f"bad NBoard reply {line.strip()[:200]!r}: {exc}") from None


def _parse_reply_words(head: str, args: list[str], line: str) -> Reply:
    if head == "===" and args:
        return _parse_best_move(args)
    if head == "status":
        return Status(line.strip()[len("status"):].strip())
    if head in ("search", "book") and len(args) >= 3:
        return _parse_pv_line(head, args)
    if head == "pong" and len(args) == 1 and args[0].isdigit():
        return Pong(int(args[0]))
    if head == "set" and len(args) >= 2 and args[0].lower() == "myname":
        return MyName(line.split(None, 2)[2].strip())
    if head == "learned" and not args:
        return Learned()
    if head == "nodestats" and len(args) == 2:
        return NodeStats(_number(args[0], "node count"), _number(args[1], "time"))
    raise ProtocolError("unknown reply")


def _parse_best_move(args: list[str]) -> BestMove:
    """``=== F5``, ``=== F5/1.5/0.2`` (the protocol page) or ``=== F5 1.50 0.2`` (Edax)."""
    if len(args) == 1:
        move, evaluation, seconds = _parse_move_with_numbers(args[0])
        return BestMove(move, evaluation, seconds)
    if len(args) > 3:
        raise ProtocolError("more than move, eval and time")
    numbers = [_number(a, "number") for a in args[1:]] + [None]
    return BestMove(parse_move(args[0]), numbers[0], numbers[1])


def _parse_pv_line(head: str, args: list[str]) -> SearchLine | BookLine:
    pv = parse_pv(args[0])
    evaluation = _parse_eval(args[1])
    depth = None
    if len(args) >= 4 and (match := _DEPTH_RE.match(args[3])):
        depth = int(match.group(1))
    text = " ".join(args[4:])
    if head == "search":
        return SearchLine(pv, evaluation, depth, text)
    if not args[2].isdigit():
        raise ProtocolError(f"bad game count {args[2]!r}")
    return BookLine(pv, evaluation, int(args[2]), depth, text)


def _parse_eval(text: str) -> float:
    """A number, or the protocol's ``(draw-to-black,draw-to-white)`` pair (its first value)."""
    if text.startswith("(") and text.endswith(")") and "," in text:
        return _number(text[1:-1].split(",")[0].strip(), "eval")
    return _number(text, "eval")


def search_report(replies: Iterable[Reply]) -> SearchReport:
    """What the lines an engine printed for one ``go`` say about its search."""
    report = SearchReport()
    for reply in replies:
        match reply:
            case SearchLine(pv, evaluation, depth, _) | BookLine(pv, evaluation, _, depth, _):
                report = report.updated(SearchReport(depth=depth, score=evaluation, pv=pv))
            case NodeStats(nodes, seconds):
                report = report.updated(SearchReport(nodes=whole(nodes, MAX_NODES),
                                                     time_ms=seconds * 1000))
            case BestMove(move, evaluation, seconds):
                pv = report.pv if report.pv[:1] == (move,) else (move,)
                final = SearchReport(score=evaluation, pv=pv,
                                     time_ms=None if seconds is None else seconds * 1000)
                report = report.updated(final)
    return report


# --- games -------------------------------------------------------------------------------


def game_for(position_text: str) -> str:
    """The GGF game to send with ``set game`` so that the engine plays ``position_text``:
    a game that starts at the position itself. (Sending the moves that led there would
    cost a replay on both sides of every move, and engines look at the position.)"""
    board = OthelloBoard.from_text(position_text)
    return write_ggf(ggf_from_moves(board, [], place="Arena"))


def board_of_game(ggf: str) -> OthelloBoard:
    """The position at the end of a ``set game`` GGF text."""
    try:
        game: GgfGame = parse_ggf(ggf)
    except FormatError as exc:
        raise ProtocolError(f"bad GGF in set game: {exc}") from None
    return game.final_board()
