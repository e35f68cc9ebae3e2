"""GTP (the Go Text Protocol, version 2) as Othello engines speak it: Edax with ``-gtp``,
and GUIs such as Quarry. One command per line from the manager; each answer is a response
that ends with an empty line.

    manager                          engine
    protocol_version             ->  <-  = 2
    name                         ->  <-  = Edax
    boardsize 8                  ->  <-  =               (? unacceptable size: not 8)
    clear_board                  ->  <-  =               the standard start
    play b f5                    ->  <-  =               (? illegal move)
    play w pass                  ->  <-  =               a pass, when White has no move
    genmove w                    ->  <-  = f6            the engine plays it on its board
    quit                         ->  <-  =

A command may start with a numeric id, echoed in its response (``5 genmove b`` -> ``=5
f6``; Edax writes ``= 5 f6``). A failure is ``? text``; a response may run over several
lines (``list_commands``) until the empty line. Also ``version``, ``known_command``,
``list_commands``, ``komi`` (ignored), ``undo``, ``time_settings <main> <byo-yomi time>
<byo-yomi stones>`` and ``time_left <color> <seconds> <stones>`` (whole seconds).

GTP has no way to set up a position: a manager sends ``clear_board`` and replays the game
from the standard start (``continue_game``; ``check_reached`` checks that the moves reach
the position).
Colors are ``b``/``w`` (or ``black``/``white``), vertices ``a1``..``h8`` in any case (column
letter, then row; ``a1`` is the top-left corner as in every Othello notation), and
``pass``. ``genmove`` may also answer ``resign``.

Every value has ``format_*`` and ``parse_*`` that round-trip; bad lines raise
``ProtocolError`` quoting the line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from arena.games import PASS, Color, GameError, OthelloBoard
from arena.protocols.errors import ProtocolError

BOARD_SIZE = 8
RESIGN = -2  # what ``genmove`` answers when the engine gives up (no square)
_VERTEX_RE = re.compile(r"[a-hA-H][1-8]")
_ID_RE = re.compile(r"\d{1,9}")
_RESPONSE_RE = re.compile(r"([=?])(\d{1,9})?(?:\s+(.*))?")
_COLORS = {"b": Color.BLACK, "black": Color.BLACK, "w": Color.WHITE, "white": Color.WHITE}


def vertex_text(move: int) -> str:
    """A move as GTP writes it (``f5``, ``pass``, ``resign``)."""
    if move == PASS:
        return "pass"
    if move == RESIGN:
        return "resign"
    if not 0 <= move < 64:
        raise ProtocolError(f"not an Othello square: {move!r}")
    return "abcdefgh"[move % 8] + str(move // 8 + 1)


def parse_vertex(text: str) -> int:
    """``f5``/``F5`` -> its square, ``pass`` -> ``PASS``, ``resign`` -> ``RESIGN``."""
    word = text.lower()
    if word == "pass":
        return PASS
    if word == "resign":
        return RESIGN
    if not _VERTEX_RE.fullmatch(text):
        raise ProtocolError(f"not an Othello vertex: {text[:40]!r}")
    return "abcdefgh".index(word[0]) + 8 * (int(word[1]) - 1)


def color_text(color: Color) -> str:
    return "b" if color is Color.BLACK else "w"


def parse_color(text: str) -> Color:
    color = _COLORS.get(text.lower())
    if color is None:
        raise ProtocolError(f"not a color: {text[:40]!r}")
    return color


# --- manager -> engine -----------------------------------------------------------------


@dataclass(frozen=True)
class ProtocolVersion:
    pass


@dataclass(frozen=True)
class Name:
    pass


@dataclass(frozen=True)
class Version:
    pass


@dataclass(frozen=True)
class KnownCommand:
    name: str


@dataclass(frozen=True)
class ListCommands:
    pass


@dataclass(frozen=True)
class BoardSize:
    size: int


@dataclass(frozen=True)
class ClearBoard:
    pass


@dataclass(frozen=True)
class Komi:
    komi: float


@dataclass(frozen=True)
class Play:
    color: Color
    move: int  # a square or PASS


@dataclass(frozen=True)
class GenMove:
    color: Color


@dataclass(frozen=True)
class Undo:
    pass


@dataclass(frozen=True)
class TimeSettings:
    main_s: int
    byo_yomi_s: int
    byo_yomi_stones: int


@dataclass(frozen=True)
class TimeLeft:
    color: Color
    seconds: int
    stones: int


@dataclass(frozen=True)
class Quit:
    pass


Command = (ProtocolVersion | Name | Version | KnownCommand | ListCommands | BoardSize
           | ClearBoard | Komi | Play | GenMove | Undo | TimeSettings | TimeLeft | Quit)
_SIMPLE: dict[str, Command] = {
    "protocol_version": ProtocolVersion(), "name": Name(), "version": Version(),
    "list_commands": ListCommands(), "clear_board": ClearBoard(), "undo": Undo(),
    "quit": Quit()}
COMMAND_NAMES = (*_SIMPLE, "known_command", "boardsize", "komi", "play", "genmove",
                 "time_settings", "time_left")


class UnknownCommand(ProtocolError):
    """A well-formed line naming a command this codec does not know."""


def format_command(command: Command, command_id: int | None = None) -> str:
    prefix = "" if command_id is None else f"{command_id} "
    return prefix + _command_words(command)


def _command_words(command: Command) -> str:
    match command:
        case KnownCommand(name):
            return f"known_command {name}"
        case BoardSize(size):
            return f"boardsize {size}"
        case Komi(komi):
            return f"komi {komi:g}"
        case Play(color, move):
            return f"play {color_text(color)} {vertex_text(move)}"
        case GenMove(color):
            return f"genmove {color_text(color)}"
        case TimeSettings(main_s, byo_yomi_s, stones):
            return f"time_settings {main_s} {byo_yomi_s} {stones}"
        case TimeLeft(color, seconds, stones):
            return f"time_left {color_text(color)} {seconds} {stones}"
    for name, simple in _SIMPLE.items():
        if command == simple:
            return name
    raise TypeError(f"not a GTP command: {command!r}")


def clean_line(line: str) -> str:
    """A line as GTP reads it: control characters dropped, tabs as spaces, no comment."""
    kept = "".join(" " if c == "\t" else c for c in line.split("#", 1)[0]
                   if c == "\t" or ord(c) >= 32)
    return kept.strip()


def parse_command(line: str) -> tuple[int | None, Command]:
    """A manager's line -> (its id, the command). ``UnknownCommand`` for a command name
    this codec does not know, ``ProtocolError`` for bad arguments or an empty line."""
    command_id, words = split_id(line)
    if not words:
        raise ProtocolError("empty line")
    head, args = words[0].lower(), words[1:]
    try:
        return command_id, _parse_words(head, args)
    except (ProtocolError, ValueError) as exc:
        if isinstance(exc, UnknownCommand):
            raise
        raise ProtocolError(f"bad GTP command {line.strip()[:200]!r}: {exc}") from None


def split_id(line: str) -> tuple[int | None, list[str]]:
    """The command's id (if it starts with one) and its words."""
    words = clean_line(line).split()
    if words and _ID_RE.fullmatch(words[0]):
        return int(words[0]), words[1:]
    return None, words


def _parse_words(head: str, args: list[str]) -> Command:
    if head in _SIMPLE and not args:
        return _SIMPLE[head]
    if head == "known_command" and len(args) == 1:
        return KnownCommand(args[0])
    if head == "boardsize" and len(args) == 1:
        return BoardSize(_count(args[0], "board size"))
    if head == "komi" and len(args) == 1:
        return Komi(float(args[0]))
    if head == "play" and len(args) == 2:
        move = parse_vertex(args[1])
        if move == RESIGN:
            raise ProtocolError("resign is not a move to play")
        return Play(parse_color(args[0]), move)
    if head == "genmove" and len(args) == 1:
        return GenMove(parse_color(args[0]))
    if head == "time_settings" and len(args) == 3:
        return TimeSettings(*(_count(a, "time setting") for a in args))
    if head == "time_left" and len(args) == 2 + 1:
        return TimeLeft(parse_color(args[0]), _count(args[1], "seconds"),
                        _count(args[2], "stones"))
    if head in COMMAND_NAMES:
        raise ProtocolError(f"wrong arguments for {head}")
    raise UnknownCommand(f"unknown command {head[:40]!r}")


def _count(text: str, what: str) -> int:
    if not _ID_RE.fullmatch(text):
        raise ProtocolError(f"bad {what} {text[:40]!r}")
    return int(text)


# --- engine -> manager -----------------------------------------------------------------


@dataclass(frozen=True)
class Response:
    """``ok``: ``=`` (success) or ``?`` (failure); ``text`` may hold several lines."""

    ok: bool
    text: str = ""
    command_id: int | None = None


def format_response(response: Response) -> str:
    """The response's lines, ending with the empty line that closes it."""
    head = ("=" if response.ok else "?") + (
        "" if response.command_id is None else str(response.command_id))
    lines = response.text.split("\n") if response.text else [""]
    if any(not line.strip() for line in lines[1:]):
        raise ProtocolError(f"a response cannot hold an empty line: {response.text!r}")
    first = f"{head} {lines[0]}".rstrip()
    return "\n".join([first, *lines[1:]]) + "\n\n"


class ResponseReader:
    """Assembles responses from the lines an engine prints: ``feed`` returns the response
    once its closing empty line arrives, else ``None``. ``id_sent``: whether the commands
    carried ids (a bare number after ``=`` is then the id, else it is the text: ``= 2``
    answers ``protocol_version``). Empty lines between responses are skipped; any other
    line that does not start with ``=`` or ``?`` raises ``ProtocolError``."""

    def __init__(self, id_sent: bool = False) -> None:
        self.id_sent = id_sent
        self._head: Response | None = None
        self._more: list[str] = []

    def feed(self, line: str) -> Response | None:
        text = line.rstrip("\r\n")
        if self._head is None:
            if text.strip():
                self._head = parse_response_head(text, self.id_sent)
            return None
        if text.strip():
            self._more.append(text)
            return None
        head, more = self._head, self._more
        self._head, self._more = None, []
        return Response(head.ok, "\n".join([head.text, *more]) if more else head.text,
                        head.command_id)

    @property
    def pending(self) -> bool:
        """True between a response's first line and its closing empty line."""
        return self._head is not None


def parse_response_head(line: str, id_sent: bool = False) -> Response:
    """The first line of a response (see ``ResponseReader``)."""
    match = _RESPONSE_RE.fullmatch(line.strip())
    if match is None:
        raise ProtocolError(f"not a GTP response: {line.strip()[:200]!r}")
    mark, digits, rest = match.group(1), match.group(2), match.group(3) or ""
    if digits and not id_sent:  # "=5 f5": an id nobody sent
        raise ProtocolError(f"a response with an id to a command without one: {line[:200]!r}")
    command_id = int(digits) if digits else None
    if id_sent and command_id is None:  # Edax writes "= 5 f5"
        words = rest.split(None, 1)
        if words and _ID_RE.fullmatch(words[0]):
            command_id, rest = int(words[0]), words[1] if len(words) > 1 else ""
    return Response(mark == "=", rest.strip(), command_id)


def parse_move_response(response: Response) -> int:
    """A successful ``genmove`` answer -> a square, ``PASS`` or ``RESIGN``."""
    words = response.text.split()
    if not response.ok or len(words) != 1:
        raise ProtocolError(f"not a move: {response.text[:200]!r}")
    return parse_vertex(words[0])


# --- games -------------------------------------------------------------------------------


def standard_position(position_text: str) -> OthelloBoard:
    """The position, if GTP can reach it at all: ``ValueError`` for bad text and for
    International Reversi (GTP starts every game from the standard start)."""
    board = OthelloBoard.from_text(position_text)
    if board.variant != "standard":
        raise ValueError(f"a GTP engine cannot play the {board.variant} variant: GTP "
                         "starts every game from the standard start")
    return board


def continue_game(board: OthelloBoard, moves: Sequence[int]) -> list[Command]:
    """The ``play`` commands of ``moves`` (passes included) played on from ``board``,
    which they advance; ``ValueError`` for a move the rules refuse there."""
    commands: list[Command] = []
    try:
        for move in moves:
            commands.append(Play(board.turn, move))
            board.push(move)
    except (GameError, TypeError) as exc:
        raise ValueError(f"the game's moves are not a game from the standard start: "
                         f"{exc}") from None
    return commands


def check_reached(board: OthelloBoard, target: OthelloBoard, moves: int) -> None:
    """``ValueError`` unless replaying the game's ``moves`` moves reached ``target``: the
    position came from a custom start, or with only part of its game."""
    if board != target:
        raise ValueError("a GTP engine can only be given a position reached from the "
                         f"standard start; the game's {moves} moves do not lead to "
                         f"{target.to_text()!r} (a custom start, or only part of the game)")
