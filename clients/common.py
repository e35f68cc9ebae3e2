"""What every `arena` command shares: the client from the global options, JSON output,
argument parsers for bot references and games, and proto-to-text helpers."""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC
from pathlib import Path
from typing import IO, Any, TypeVar

from arena.clients.sdk import ArenaClient
from google.protobuf import json_format
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from arena.argtypes import integer_in
from arena.bots.validation import BOT_REF_FORM, evaluator_game, split_bot_ref, validate_name
from arena.documents import MAX_DOCUMENT_BYTES, decode_text, read_bounded
from arena.errors import ArenaError, InvalidArgumentError, NotFoundError, UnavailableError
from arena.games import GAME_NAMES, GAMES, Position, game
from arena.rpc import INT32_MAX, INT64_MAX
from arena.text import printable, shown
from arena.textboard import StandingLine
from arena.v1 import common_pb2, ladder_pb2, match_pb2, referee_pb2, registry_pb2

Handler = Callable[[argparse.Namespace], int]

COLOR_NAMES = {common_pb2.COLOR_BLACK: "black", common_pb2.COLOR_WHITE: "white"}


def client_from_args(args: argparse.Namespace) -> ArenaClient:
    """An ``ArenaClient`` honouring the global ``--home``/``--registry``/... options."""
    return ArenaClient(
        registry=getattr(args, "registry", None),
        referee=getattr(args, "referee", None),
        ladder=getattr(args, "ladder", None),
        engine=getattr(args, "analysis", None),
        token=getattr(args, "token", None),
        home=getattr(args, "home", None),
        timeout_s=getattr(args, "timeout", None) or 10.0,
        ca_file=getattr(args, "tls_ca", None),
        cert_file=getattr(args, "tls_cert", None),
        key_file=getattr(args, "tls_key", None),
    )


def given_text(text: str) -> str:
    """An argparse type for an option whose absence means something (the usual start, all
    matches, your own usage): a value that is empty or blank is refused rather than read as
    the option left out, as ``--position "$(cat missing.txt)"`` would be."""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty; give a value, or leave the option out")
    return text


MAX_SECONDS = 86_400.0


def seconds(text: str) -> float:
    """An argparse type: a duration in seconds, more than 0 and at most a day. ``float``
    alone takes ``nan``, ``inf`` and ``-1``, which became a deadline already past."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value <= MAX_SECONDS:  # NaN fails this too
        raise argparse.ArgumentTypeError(
            f"must be more than 0 and at most {MAX_SECONDS:g} seconds, got {text}")
    return value


non_negative = integer_in(0, INT32_MAX)  # an int32 field that is 0 or more
non_negative64 = integer_in(0, INT64_MAX)  # the same for an int64 field
int32 = integer_in(-INT32_MAX - 1, INT32_MAX)  # checked further by the command or server
int64 = integer_in(-INT64_MAX - 1, INT64_MAX)


def name_fields(parser: argparse.ArgumentParser, options: dict[str, str]) -> None:
    """Say which option of the command each field of its request comes from (``{"limits.
    depth": "--depth"}``), so that a service's refusal names what the user typed
    (``in_users_words``). A list's element is ``"config.bots[]": "bot {n}"`` (``n`` counted
    from 1); an option of ``""`` drops the field's name where the description says it."""
    parser.set_defaults(field_options=options)


# The request fields the options every game-making command shares fill in.
GAME_FIELDS = {"config.game": "", "config.game.kind": "--game",
               "config.game.variant": "--variant", "config.game.board_size": "--size"}


def clock_fields(message: str) -> dict[str, str]:
    """The fields of the time control at ``message`` (``config.time_control``) that the
    clock options (``--move-time-ms``, ...) fill in."""
    return {f"{message}.{part}": f"--{part.replace('_', '-')}"
            for part in ("move_time_ms", "game_time_ms", "increment_ms")}


GAME_MAKING_FIELDS = {**GAME_FIELDS, **clock_fields("config.time_control"),
                      "config.adjudicate_empties": "--adjudicate-empties",
                      "config.seed": "--seed"}
# A field's name in a description: not part of another word, an option or a quoted value
# (a bot may be named 'game_time_ms').
_FIELD_WORD = re.compile(r"(?<![\w.'\"-])([a-z_]\w*(?:\.\w+)*)(\[(\d+)\])?(?![\w])")


def _option_of(field: str, index: str | None, options: dict[str, str]) -> str | None:
    """The option ``field`` (its element ``index``, if given) comes from, or None."""
    if index is not None:
        element = options.get(f"{field}[]")
        return None if element is None else element.format(n=int(index) + 1)
    if field in options:
        return options[field]
    match = re.fullmatch(r"(.*)\[(\d+)\]", field)
    if match:
        return _option_of(match[1], match[2], options)
    head, dot, rest = field.rpartition(".")
    while dot:  # a field under one an option stands for: the option, then the rest
        if options.get(head):
            return f"{options[head]} {rest}"
        head, dot, tail = head.rpartition(".")
        rest = f"{tail}.{rest}"
    return None


def _in_words(text: str, field: str, options: dict[str, str]) -> str:
    """``text``, the description of what is wrong with ``field``, with each field it names
    as the option it comes from: a field named whole, or by its name beside ``field`` (or
    under it) when that is one no word of English is: ``give game_time_ms too`` of
    ``config.time_control.increment_ms``, ``is already bots[0]`` of ``config.bots[1]``."""

    def option(found: re.Match[str]) -> str:
        word, index = found[1], found[3]
        if not ("_" in word or "." in word or index is not None):
            return found[0]  # a word of English ('variant'), even where a field has its name
        named = _field_named(word, field, options)
        said = None if named is None else _option_of(named, index, options)
        return said or found[0]

    return _FIELD_WORD.sub(option, text)


def _field_named(word: str, field: str, options: dict[str, str]) -> str | None:
    """The field of the request ``word`` names in a description of ``field``: itself, or
    the nearest of that name under ``field`` or beside it or one of its parents; None when
    there is none. Not any field that ends so: an engine's key ``time_ms``, listed in a
    message about its configuration, is no ``limits.time_ms``."""
    if word in options or f"{word}[]" in options:
        return word
    head = field
    while head:
        named = f"{head}.{word}"
        if named in options or f"{named}[]" in options:
            return named
        head = head.rpartition(".")[0]
    return None


def in_users_words(exc: InvalidArgumentError, options: dict[str, str]
                   ) -> InvalidArgumentError:
    """``exc`` with the request's fields it names said as the command's options
    (``name_fields``): ``--tree: must be in 0..200000``, not ``invalid request:
    tree_node_budget: ...``. A field no option stands for is left as it is, and then so is
    the message before the violations."""
    if not exc.violations or not options:
        return exc
    said, whole = [], True
    for violation in exc.violations:
        option = _option_of(violation.field, None, options)
        description = _in_words(violation.description, violation.field, options)
        if option is None:
            whole = False
            said.append(f"{violation.field}: {description}")
        else:
            said.append(f"{option}: {description}" if option else description)
    message = "" if whole and exc.message == "invalid request" else f"{exc.message}: "
    return InvalidArgumentError(message + "; ".join(said))


Group = TypeVar("Group", argparse.ArgumentParser, argparse._MutuallyExclusiveGroup)


class NotAllowedWith(Exception):
    """Two options that contradict each other where no mutually exclusive group can say so
    (one of them contradicts the other only with a certain value, or is fine alone with a
    third): ``arena`` refuses them as it refuses a group's two, in argparse's words, with
    the command's usage and exit status 2. ``option`` is the one the other leaves nothing
    to do, named first as argparse names the one it read second."""

    def __init__(self, option: str, other: str) -> None:
        super().__init__(f"argument {option}: not allowed with argument {other}")


def add_json_flag(parser: Group) -> Group:
    """``--json``; ``parser`` returned, so that a mutually exclusive group can take the
    options that shape the text output, which JSON has no use for (``--no-board``)."""
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")
    return parser


def to_dict(message: Message, zeros: bool = False) -> dict[str, Any]:
    """``message`` as JSON data; ``zeros``: with the fields at 0 or empty too (proto3's JSON
    leaves them out)."""
    return json_format.MessageToDict(message, preserving_proto_field_name=True,
                                     always_print_fields_with_no_presence=zeros)


def print_json(value: Message | dict[str, Any] | list[Any]) -> None:
    data = to_dict(value) if isinstance(value, Message) else value
    print(json.dumps(data, indent=2, sort_keys=False))


def print_json_line(value: Message | dict[str, Any]) -> None:
    data = to_dict(value) if isinstance(value, Message) else value
    print(json.dumps(data), flush=True)


def add_usage_command(commands: argparse._SubParsersAction[argparse.ArgumentParser],
                      what: str, func: Callable[[argparse.Namespace], int]) -> None:
    """`arena match|bot|ladder usage`: what the caller's things (``what``: "matches use
    (bytes stored, ...)") take of their quotas; an admin may ask for another user's."""
    usage = commands.add_parser("usage", help=f"what your {what} of your quotas")
    usage.add_argument("--user", type=given_text, default=None,
                       help="another user's (admins only)")
    add_json_flag(usage)
    usage.set_defaults(func=func)


def print_usage(usage: referee_pb2.Usage | registry_pb2.BotUsage | ladder_pb2.LadderUsage,
                of_what: str,
                rows: Iterable[tuple[str, int, int, str]], as_json: bool) -> None:
    """What a user uses of their quotas, as `arena match usage`, `arena bot usage` and
    `arena ladder usage` show it: ``usage`` as JSON, or a title (whose ``of_what``),
    then a line per quota from ``rows``: its label, what is used, the limit (0: none) and
    the quota's name."""
    if as_json:  # every figure, 0 too: a script reads a key, not its absence
        print_json(to_dict(usage, zeros=True))
        return
    print(f"{printable(usage.user)}'s {of_what}")
    for label, used, limit, quota in rows:
        figure = f"{used:,} (no limit)" if limit == 0 else f"{used:,} of {limit:,} ({quota})"
        print(f"  {label:<14} {figure}")


def parse_bot_ref(text: str) -> common_pb2.BotRef:
    """``name`` (latest version) or ``name@3``; a name no bot could have is refused here,
    in the reference's words, where the services named their request's field
    (``bot.name``, ``bot_name``)."""
    ref = split_bot_ref(text)
    if ref is None:
        raise InvalidArgumentError(f"bad bot reference {shown(text)}: {BOT_REF_FORM}")
    problems = validate_name(ref[0], "name")
    if problems:
        raise InvalidArgumentError(f"bad bot reference {shown(text)}: the name "
                                   f"{problems[0].description}")
    return common_pb2.BotRef(name=ref[0], version=ref[1])


def time_text(stamp: Timestamp) -> str:
    """``2026-12-07T22:24:39+00:00``: a stored time as the CLI shows it (UTC, seconds)."""
    return stamp.ToDatetime(tzinfo=UTC).isoformat(timespec="seconds")


def bot_ref_text(ref: common_pb2.BotRef) -> str:
    return f"{ref.name}@{ref.version}" if ref.version else ref.name


def add_game_options(parser: argparse.ArgumentParser, of_bots: bool = True) -> None:
    """``--game``, ``--variant``, ``--size``. ``--game`` left out is the game of the bots
    or preset the command names (``settle_game``), else the first game (``of_bots``
    False: a command that names no bot, the first game)."""
    variants = "; ".join(f"{g.name}: {'|'.join(g.variants)}" for g in GAMES)
    sizes = "; ".join(f"{g.name}: {', '.join(map(str, g.sizes))}" for g in GAMES)
    default = (f"the one the bots play, else {GAME_NAMES[0]}" if of_bots
               else GAME_NAMES[0])
    parser.add_argument("--game", choices=GAME_NAMES, default=None,
                        help=f"game (default: {default})")
    parser.add_argument("--variant", default=None,
                        help=f"variant, the game's first by default ({variants})")
    parser.add_argument("--size", type=integer_in(1, INT32_MAX), default=None,
                        help=f"board size, the game's usual by default ({sizes})")


def add_time_options(parser: argparse.ArgumentParser) -> None:
    """The clock of a game: ``--move-time-ms``, ``--game-time-ms``, ``--increment-ms``."""
    parser.add_argument("--move-time-ms", type=non_negative, default=1000,
                        help="hard limit per move (default 1000; 0 also means 1000)")
    parser.add_argument("--game-time-ms", type=non_negative64, default=0,
                        help="budget per side (0: none)")
    parser.add_argument("--increment-ms", type=non_negative, default=0,
                        help="added to a side's budget after each of its moves (Fischer; "
                             "needs --game-time-ms)")


def add_adjudication_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--adjudicate-empties", type=non_negative, default=0, metavar="N",
                        help="end each game at N empty squares or fewer with the result of "
                             "perfect play, solved exactly by the referee (Othello, N up "
                             "to 18; default 0: play to the end)")


def time_control(args: argparse.Namespace) -> common_pb2.TimeControl:
    return common_pb2.TimeControl(move_time_ms=args.move_time_ms,
                                  game_time_ms=args.game_time_ms,
                                  increment_ms=args.increment_ms)


def settle_game(client: ArenaClient, args: argparse.Namespace, bots: list[str],
                preset: str = "", evaluator: object = None) -> None:
    """Fill in ``args.game`` when ``--game`` was left out: the game of the first of
    ``bots`` (bot references, asked of the registry), else of ``preset``, else of
    ``evaluator`` (an engine configuration's), else the first game. A bot that is not
    there is the error (no command can run with it, and the game the command's own checks
    would read its input in is only a guess); one that cannot be looked up (no stack)
    settles nothing: the command's own checks or the service's answer then name the
    problem."""
    if args.game is not None:
        return
    plays = evaluator_game(evaluator) if evaluator is not None else None
    args.game = plays.name if plays is not None else GAME_NAMES[0]
    try:
        if bots:
            ref = parse_bot_ref(bots[0])
            args.game = game(client.get_bot(ref.name, ref.version).spec.game).name
        elif preset:
            kinds = [p.game for p in client.list_presets() if p.name == preset]
            args.game = game(kinds[0]).name if kinds else args.game
    except NotFoundError:
        raise
    except ArenaError:
        pass


def game_spec(args: argparse.Namespace) -> common_pb2.GameSpec:
    """The game the options name, defaults filled in (for positions made here)."""
    return game(args.game).spec(args.variant, args.size)


def game_request(args: argparse.Namespace) -> common_pb2.GameSpec:
    """The game as the options give it, for a service to complete: what the user left
    out follows from the rest (an opening suite's variant, the game's defaults)."""
    return common_pb2.GameSpec(kind=game(args.game).kind, variant=args.variant or "",
                               board_size=args.size or 0)


MAX_INPUT_BYTES = MAX_DOCUMENT_BYTES  # a text file the CLI reads: a config, a bot, a record
MAX_TYPED_LINE = 1000  # characters of one line typed at a prompt (play, the navigator)
TOO_LONG_LINE = f"a line of more than {MAX_INPUT_BYTES:,} characters: stopping"


def typed_line(keys: IO[str], out: IO[str], prompt: str) -> str | None:
    """Show ``prompt`` and return the next line typed ('' at the end of input). A line of
    more than ``MAX_TYPED_LINE`` characters (a paste by mistake: no move or command is
    that long) is skipped with a word on ``out`` and the prompt shown again; None for a
    line still without an end after ``MAX_INPUT_BYTES`` (/dev/zero). Piped input is echoed
    after the prompt, so that the transcript reads well, its control characters (a
    terminal's escape sequences) shown as U+FFFD, not sent to the terminal."""
    while True:
        print(prompt, end="", file=out, flush=True)
        line = keys.readline(MAX_TYPED_LINE + 1)
        if len(line.rstrip("\n")) <= MAX_TYPED_LINE:
            if line and not keys.isatty():
                print(printable(line.strip()), file=out, flush=True)
            return line
        length = len(line)
        while not line.endswith("\n"):
            line = keys.readline(1 << 16)
            length += len(line.rstrip("\n"))
            if not line:
                break  # the end of input: said at the next prompt
            if length > MAX_INPUT_BYTES:
                return None
        print(f"a line of {length:,} characters ignored (at most {MAX_TYPED_LINE:,} here)",
              file=out)


def write_output(path: Path, text: str) -> None:
    """``text`` into ``path`` (``refuse_overwrite`` has checked it); what stops the write
    (no such folder, no permission, a folder made meanwhile) said in one line naming it."""
    try:
        path.write_text(text)
    except OSError as exc:
        raise InvalidArgumentError(f"cannot write {path}: {exc.strerror or exc}") from None


def read_text_file(path: Path, what: str) -> str:
    """The text of ``path`` (``-``: standard input), as ``decode_text`` reads it. At most
    ``MAX_INPUT_BYTES`` are read, so ``/dev/zero`` or a huge file by mistake is an error,
    not a hang."""
    source = f"the {what} on standard input" if str(path) == "-" else f"{what} file {path}"
    try:
        if str(path) == "-":  # bytes when it is the process's, text when a caller's
            given = read_bounded(getattr(sys.stdin, "buffer", sys.stdin), MAX_INPUT_BYTES,
                                 source)
        else:
            with open(path, "rb") as handle:
                given = read_bounded(handle, MAX_INPUT_BYTES, source)
    except FileNotFoundError:
        raise InvalidArgumentError(f"no such {what} file: {path}") from None
    except OSError as exc:
        raise InvalidArgumentError(f"cannot read {source}: {exc}") from None
    return decode_text(given, source)


def read_position_file(path: Path, what: str) -> str:
    """The position's text form in ``path`` (``read_text_file``). A file that is blank, or
    longer than any position's text form (a wrong file given by mistake), is refused in
    one line naming it, quoting no more than its first words."""
    text = read_text_file(path, what).strip()
    if not text:
        raise InvalidArgumentError(f"{what} file {path} is empty")
    length, longest = len("".join(text.split())), longest_position_text()
    if length > longest:
        raise InvalidArgumentError(
            f"{what} file {path} holds no position: {length:,} characters where a position's "
            f"text form has at most {longest}; it starts {shown(text[:POSITION_FILE_QUOTED])}")
    return text


POSITION_FILE_QUOTED = 24  # characters of a file that is no position, quoted in its error


@functools.cache
def longest_position_text() -> int:
    """Characters (whitespace aside) in the longest text form of any game's position."""
    return max(len("".join(g.new_position(v, size).to_text().split()))
               for g in GAMES for v in g.variants for size in g.sizes)


Event = TypeVar("Event")
# How long a watch waits for a service that cannot answer (its Redis stalled, it is being
# restarted) since the last event it had, following again every second.
WATCH_OUTAGE_S = 60.0


def followed(follow: Callable[[], Iterable[Event]], key: Callable[[Event], object],
             outage_s: float = WATCH_OUTAGE_S) -> Iterator[Event]:
    """The events of the stream ``follow()`` opens. Once it has sent one, a service that
    answers UNAVAILABLE or cannot be reached is asked again every second, for up to
    ``outage_s`` without an event (said once on stderr). A stream opened again sends what
    it sent before: an event whose ``key`` was seen is skipped."""
    seen: set[object] = set()
    last_event: float | None = None  # time.monotonic() of the latest
    told = False
    while True:
        try:
            for event in follow():
                last_event, told = time.monotonic(), False
                said = key(event)
                if said not in seen:
                    seen.add(said)
                    yield event
            return
        except UnavailableError as exc:
            if last_event is None or time.monotonic() - last_event > outage_s:
                raise
            if not told:
                print(f"({exc}: following again)", file=sys.stderr, flush=True)
                told = True
            time.sleep(1.0)


def position_of(spec: common_pb2.GameSpec, text: str) -> Position:
    return game(spec.kind).position_from_text(text)


def enum_name(value: int, prefix: str, enum: Any) -> str:
    """``MATCH_STATUS_RUNNING`` -> ``running``."""
    name: str = enum.Name(value)
    return name.removeprefix(prefix).lower().replace("_", "-")


def match_status(match: match_pb2.Match) -> str:
    return enum_name(match.status, "MATCH_STATUS_", match_pb2.MatchStatus)


def match_result_text(match: match_pb2.Match) -> str:
    """``1-0 (normal, 40-24)`` (the discs, in a game decided by them), ``0-1 (normal, 98
    moves)`` (Gomoku's stones are no score: the moves, when the match carries them),
    ``1/2-1/2 (...)``, or the status while unfinished."""
    result = match.result
    if result.void:
        why = enum_name(result.termination, "TERMINATION_", match_pb2.Termination)
        return f"void ({why}: {result.detail})" if result.detail else f"void ({why})"
    if match.status != match_pb2.MATCH_STATUS_FINISHED:
        return match_status(match)
    score = {common_pb2.COLOR_BLACK: "1-0", common_pb2.COLOR_WHITE: "0-1"}.get(
        result.winner, "1/2-1/2"
    )
    why = enum_name(result.termination, "TERMINATION_", match_pb2.Termination)
    if _counts_discs(match):
        detail = f"{why}, {result.black_count}-{result.white_count}"
    else:  # a summary (arena match list) has no moves to count
        played = len(match.config.opening) + len(match.moves)
        detail = f"{why}, {played} moves" if match.moves else why
    if result.detail:
        detail += f": {result.detail}"
    return f"{score} ({detail})"


def _counts_discs(match: match_pb2.Match) -> bool:
    """Whether the match's game is decided by discs (true of a game this client does not
    know: its counts are shown as they come)."""
    played = next((g for g in GAMES if g.kind == match.config.game.kind), None)
    return played is None or played.counts_discs


def standing_lines(standings: ladder_pb2.Standings) -> list[StandingLine]:
    return [standing_line(row) for row in standings.rows]


def standing_line(row: ladder_pb2.StandingRow) -> StandingLine:
    return StandingLine(
        rank=row.rank, name=bot_ref_text(row.bot), games=row.games, wins=row.wins,
        draws=row.draws, losses=row.losses, score_pct=row.score_pct, elo=row.elo,
        elo_low=row.elo_low, elo_high=row.elo_high,
    )


def sprt_line(info: ladder_pb2.LadderInfo) -> str:
    """``pairs 12  LLR +1.84 in [-2.94, +2.94]  pentanomial 0 1 4 5 2  W-D-L 15-3-6``."""
    state = info.sprt
    counts = " ".join(str(n) for n in state.pentanomial) or "0 0 0 0 0"
    return (f"pairs {state.pairs:>3}  LLR {state.llr:+.2f} in [{state.lower_bound:+.2f}, "
            f"{state.upper_bound:+.2f}]  pentanomial {counts}  "
            f"W-D-L {state.wins}-{state.draws}-{state.losses}")


def sprt_verdict(info: ladder_pb2.LadderInfo) -> str:
    """The test's outcome in words (or where it stands while it runs)."""
    test, state = info.config.sprt, info.sprt
    new, old = (bot_ref_text(bot) for bot in info.config.bots)
    scored = info.games_done - info.games_void
    played = f"LLR {state.llr:+.2f} after {state.pairs} pairs, {scored} games with a result"
    if state.verdict == ladder_pb2.SPRT_VERDICT_ACCEPT_H1:
        return (f"H1 accepted: {new} is at least {test.elo1:g} Elo stronger than {old} "
                f"({played})")
    if state.verdict == ladder_pb2.SPRT_VERDICT_ACCEPT_H0:
        return (f"H0 accepted: {new} is not {test.elo1:g} Elo stronger than {old} "
                f"(at most {test.elo0:g}; {played})")
    if info.status == ladder_pb2.LADDER_STATUS_RUNNING:
        return f"no verdict yet ({played})"
    if info.status == ladder_pb2.LADDER_STATUS_CANCELLED:
        return f"no verdict: cancelled before the test decided ({played})"
    return f"no verdict within {test.max_games} games ({played})"


def eprint(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
