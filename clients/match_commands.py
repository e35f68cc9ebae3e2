"""`arena match ...`: create, watch, show, replay, tree, export, import, delete, list."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from arena.clients.common import (
    COLOR_NAMES,
    GAME_MAKING_FIELDS,
    add_adjudication_option,
    add_game_options,
    add_json_flag,
    add_time_options,
    add_usage_command,
    bot_ref_text,
    client_from_args,
    followed,
    game_spec,
    given_text,
    int32,
    int64,
    match_result_text,
    match_status,
    name_fields,
    non_negative,
    parse_bot_ref,
    position_of,
    print_json,
    print_json_line,
    print_usage,
    read_position_file,
    read_text_file,
    settle_game,
    time_control,
    time_text,
    to_dict,
    write_output,
)
from arena.clients.navigator import Navigator

from arena.argtypes import integer
from arena.clock import clock_label, game_time_left_ms
from arena.documents import refuse_overwrite
from arena.engine.api import TreeNode
from arena.errors import InvalidArgumentError, NotFoundError
from arena.formats import Replay
from arena.games import GAME_NAMES, GAMES, PASS, GameError, Position, game
from arena.openings import play_opening
from arena.records import configured_start, native_replay, read_record
from arena.textboard import legal_marks, move_names, render_board, render_tree
from arena.v1 import common_pb2, match_pb2, referee_pb2

FORMATS = {
    "native": referee_pb2.REPLAY_FORMAT_NATIVE,
    "ggf": referee_pb2.REPLAY_FORMAT_GGF,
    "transcript": referee_pb2.REPLAY_FORMAT_TRANSCRIPT,
    "psq": referee_pb2.REPLAY_FORMAT_PSQ,
}
STATUSES = {
    name: getattr(match_pb2, f"MATCH_STATUS_{name.upper()}")
    for name in ("pending", "running", "finished", "cancelled")
}
RECORD_SUFFIXES = (".json", ".ggf", ".txt", ".psq")  # what `match export` names its files
NODE_KINDS: dict[int, Any] = {
    common_pb2.NODE_KIND_MAX: "max", common_pb2.NODE_KIND_MIN: "min",
    common_pb2.NODE_KIND_LEAF: "leaf",
}


def add_match_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    group = sub.add_parser("match", help="create, watch and study matches",
                           description="Create, watch and study bot-vs-bot matches.")
    cmds = group.add_subparsers(dest="match_command", metavar="COMMAND", required=True)

    create = cmds.add_parser("create", help="queue a match between two registered bots")
    create.add_argument("--black", required=True, help="bot playing black: NAME[@VERSION]")
    create.add_argument("--white", required=True, help="bot playing white: NAME[@VERSION]")
    add_game_options(create)
    start = create.add_mutually_exclusive_group()
    start.add_argument("--start", type=given_text, default=None,
                       help="custom start position (text form)")
    start.add_argument("--start-file", type=Path, help="file holding the start position")
    create.add_argument("--opening", default="", help="moves played first, e.g. 'f5 d6 c3'")
    add_time_options(create)
    add_adjudication_option(create)
    create.add_argument("--trees", action="store_true", help="store every move's search tree")
    create.add_argument("--tree-budget", type=non_negative, default=0,
                        help="nodes per stored tree")
    create.add_argument("--seed", type=int64, default=0,
                        help="seed of the bots' random choices (each move's is derived from "
                             "it and the ply)")
    create.add_argument("--watch", action="store_true", help="watch the match once created")
    add_json_flag(create)
    create.set_defaults(func=cmd_create)
    name_fields(create, {**GAME_MAKING_FIELDS, "config.black": "--black",
                         "config.white": "--white", "config.start_position": "the start position",
                         "config.opening": "--opening", "config.opening[]": "--opening move {n}",
                         "config.tree_node_budget": "--tree-budget"})

    watch = cmds.add_parser("watch", help="follow a match move by move until it ends")
    watch.add_argument("match_id")
    add_json_flag(watch.add_mutually_exclusive_group()).add_argument(
        "--no-board", action="store_true", help="moves only, no boards")
    watch.set_defaults(func=cmd_watch)

    show = cmds.add_parser("show", help="a match's players, result, moves and final board")
    show.add_argument("match_id")
    add_json_flag(show)
    show.set_defaults(func=cmd_show)

    replay = cmds.add_parser(
        "replay", help="step through a match or a game record (n/p/f/l/q or a ply)",
        description="Step through a game: a match id (fetched from the referee) or a game "
                    "record file of any format Arena exports (a native replay as saved by "
                    "`arena play` or `match export`, GGF, a transcript, PSQ). Interactive "
                    "on stdin unless --ply or --all is given.")
    replay.add_argument("source", help="match id or game record file ('-': standard input)")
    _add_record_options(replay)
    printed = replay.add_mutually_exclusive_group()
    printed.add_argument("--ply", type=integer,
                       help="print the board at this ply and exit (with --json: that ply's)")
    printed.add_argument("--all", action="store_true", help="print every ply and exit")
    add_json_flag(replay)
    replay.set_defaults(func=cmd_replay)

    imported = cmds.add_parser(
        "import", help="store a game record as a finished match (native, ggf, transcript, psq)",
        description="Store a game record as a finished match of yours, to browse, analyse "
                    "and export like any other. The referee replays every move through the "
                    "rules first. Its players name no registered bot: they keep the "
                    "record's names, with no version.")
    imported.add_argument("file", type=Path, help="the record ('-': standard input)")
    _add_record_options(imported)
    add_json_flag(imported)
    imported.set_defaults(func=cmd_import)
    name_fields(imported, {"content": "the record", "variant": "--variant",
                           "format": "--format"})

    tree = cmds.add_parser("tree", help="the search tree behind one move (if it was stored)")
    tree.add_argument("match_id")
    tree.add_argument("--ply", type=int32, required=True,
                      help="the move's number (1 = the first move, an opening's counted), "
                           "as in `match replay`")
    tree.add_argument("--depth", type=non_negative, default=None,
                      help="show the levels down to this one (0: the root only; with "
                           "--json, the nodes down to it)")
    add_json_flag(tree.add_mutually_exclusive_group()).add_argument(
        "--color", action="store_true", help="highlight the PV in bold (the default on a "
                                             "terminal)")
    tree.set_defaults(func=cmd_tree)

    export = cmds.add_parser("export", help="write a match record (native, ggf, transcript, psq)")
    export.add_argument("match_id")
    export.add_argument("--format", choices=sorted(FORMATS), default="native")
    export.add_argument("-o", "--output", type=Path, help="file to write (default: stdout)")
    export.add_argument("--force", action="store_true", help="overwrite the file")
    export.set_defaults(func=cmd_export)

    cancel = cmds.add_parser("cancel", help="stop a pending or running match at once: "
                             "its creator calls it off (void, no result); the owner of one "
                             "of its bots withdraws that bot (it loses by resignation)")
    cancel.add_argument("match_id")
    cancel.add_argument("--reason", default="", help="said in the match's result")
    add_json_flag(cancel)
    cancel.set_defaults(func=cmd_cancel)
    name_fields(cancel, {"reason": "--reason"})

    delete = cmds.add_parser("delete", help="delete a finished match")
    delete.add_argument("match_id")
    delete.set_defaults(func=cmd_delete)

    prune = cmds.add_parser(
        "prune", help="forget your finished matches recorded before a time (admins: "
                      "everyone's, the arena's retention)",
        description="Forget (as `match delete` does) every finished match of yours (an "
                    "admin: of anyone) recorded and ended before a time, giving its bytes "
                    "back to your match_bytes quota. A ladder's games go together, once all "
                    "of them are over and ended before that time.")
    when = prune.add_mutually_exclusive_group(required=True)
    when.add_argument("--older-than", type=age, metavar="AGE",
                      help="recorded more than this long ago: 30d, 12h, 90m")
    when.add_argument("--before", type=moment, metavar="TIME",
                      help="recorded before this time: 2026-10-01 or 2026-10-01T12:00:00Z "
                           "(UTC unless it says otherwise)")
    prune.add_argument("--keep-ladder-games", action="store_true",
                       help="keep every ladder's games (their pages list them)")
    prune.add_argument("--dry-run", action="store_true",
                       help="count what would be forgotten; forget nothing")
    add_json_flag(prune)
    prune.set_defaults(func=cmd_prune)

    add_usage_command(cmds, "matches use (bytes stored, matches queued and running)",
                      cmd_usage)

    listing = cmds.add_parser("list", help="match history, newest first")
    listing.add_argument("--bot", type=given_text, default=None,
                         help="only matches of this bot: NAME, or NAME@VERSION for one version")
    # Its own name: the option every command takes, --ladder HOST:PORT, is the ladder
    # service's address (this one wrote its id there).
    listing.add_argument("--ladder", dest="ladder_id", type=given_text, default=None,
                         help="only matches of this ladder")
    listing.add_argument("--status", choices=sorted(STATUSES), help="only this status")
    listing.add_argument("--game", choices=GAME_NAMES)
    listing.add_argument("--limit", type=non_negative, default=20,
                         help="at most this many (0: all)")
    add_json_flag(listing)
    listing.set_defaults(func=cmd_list)


# -- create / watch ------------------------------------------------------------------------


def start_of(args: argparse.Namespace, start: str,
             origin: str = "") -> tuple[common_pb2.GameSpec, Position]:
    """The game and start position the options give: a ``--start`` position says its own
    variant and size, and options that contradict it are refused. ``origin`` names where
    ``start`` was read (a file), for its errors."""
    if not start:
        spec = game_spec(args)
        return spec, game(spec.kind).new_position(spec.variant, spec.board_size)
    try:
        position = game(args.game).position_from_text(start)
    except GameError as exc:
        said = f"{origin}: {exc}" if origin else str(exc)
        raise InvalidArgumentError(said + _of_another_game(args.game, start)) from None
    for option, given, actual in (("--variant", args.variant, position.variant),
                                  ("--size", args.size, position.size)):
        if given is not None and given != actual:
            raise InvalidArgumentError(
                f"{option} {given} contradicts the start position ({actual}); "
                f"leave {option} out or use a {given} position")
    return game(args.game).spec(position.variant, position.size), position


def _of_another_game(name: str, text: str) -> str:
    """``'; that is a Gomoku position, ...'`` when ``text`` is a position of a game other
    than ``name``'s, else nothing."""
    for other in GAMES:
        if other.name == name:
            continue
        try:
            other.position_from_text(text)
        except GameError:
            continue
        article = "an" if other.title[0] in "AEIOU" else "a"
        return (f"; that is {article} {other.title} position, and the game here is "
                f"{game(name).title} (--game, or the game of the bot or preset named)")
    return ""


def _match_config(args: argparse.Namespace) -> match_pb2.MatchConfig:
    if args.tree_budget and not args.trees:  # the match stored no trees, without a word
        raise InvalidArgumentError("--tree-budget goes with --trees (the trees to store)")
    start, origin = args.start or "", ""
    if args.start_file is not None:
        start = read_position_file(args.start_file, "start position")
        origin = f"start position file {args.start_file}"
    spec, position = start_of(args, start, origin)
    opening = play_opening(position, args.opening)
    return match_pb2.MatchConfig(
        game=spec, black=parse_bot_ref(args.black), white=parse_bot_ref(args.white),
        start_position=start, opening=opening,
        time_control=time_control(args),
        capture_trees=args.trees, tree_node_budget=args.tree_budget, seed=args.seed,
        adjudicate_empties=args.adjudicate_empties,
    )


def cmd_create(args: argparse.Namespace) -> int:
    with client_from_args(args) as client:
        settle_game(client, args, [args.black, args.white])
        match = client.create_match(_match_config(args))
        if args.json and not args.watch:
            print_json(match)
        else:
            print(f"match {match.id}: {bot_ref_text(match.black)} (black) vs "
                  f"{bot_ref_text(match.white)} (white), {match_status(match)}")
        if args.watch:
            return _watch(client, match.id, args.json, board=True)
    return 0


def cmd_watch(args: argparse.Namespace) -> int:
    with client_from_args(args) as client:
        return _watch(client, args.match_id, args.json, board=not args.no_board)


def match_event_key(event: match_pb2.MatchEvent) -> tuple[str, int]:
    """What an event is about: the start, the end, or the move or pass of one ply."""
    kind = event.WhichOneof("event") or ""
    return kind, getattr(event, kind).ply if kind in ("move", "pass") else -1


def _watch(client: Any, match_id: str, as_json: bool, board: bool) -> int:
    position = None  # before the move being printed: it names the PV's moves
    for event in followed(lambda: client.watch_match(match_id), match_event_key):
        if as_json:
            print_json_line(event)
            continue
        kind = event.WhichOneof("event")
        if kind == "started":
            match = event.started.match
            print(f"match {match.id}: {bot_ref_text(match.black)} (black) vs "
                  f"{bot_ref_text(match.white)} (white)", flush=True)
            if match.start_position:
                position = position_of(match.config.game, match.start_position)
        elif kind == "move":
            record = event.move
            print(f"{record.ply + 1:>3}. {COLOR_NAMES.get(record.color, '?')} "
                  f"{record.move.text or record.move.square} "
                  f"({_search_text(record, position)})", flush=True)
            for note in record.search.notes:
                print(f"     | {note}", flush=True)
            if record.position_after and position is not None:
                position = position_of_like(position, record.position_after)
                if board:
                    print(render_board(position, last_move=record.move.square), flush=True)
        elif kind == "pass":
            passed = getattr(event, "pass")  # `pass` is a Python keyword
            print(f"{passed.ply + 1:>3}. {COLOR_NAMES.get(passed.color, '?')} has no move "
                  "and passes", flush=True)
            if position is not None:  # the next move's PV is read after the pass
                position.push(PASS)
        elif kind == "ended":
            match = client.get_match(match_id)
            print(f"result: {match_result_text(match)}", flush=True)
    return 0


def _search_text(record: match_pb2.MoveRecord, before: Position | None) -> str:
    """``312 ms, score +4, depth 6, nodes 18234, pv f5 d6 c3``: what the bot's search
    reported (the PV by name when the position before the move is known)."""
    search = record.search
    info = f"{record.time_ms} ms"
    if search.HasField("score"):
        info += f", score {search.score:+d}"
    if search.HasField("depth"):
        info += f", depth {search.depth}"
    if search.nodes:
        info += f", nodes {search.nodes}"
    if search.pv:
        names = move_names(before, list(search.pv)) if before is not None else []
        info += ", pv " + " ".join(names or [str(square) for square in search.pv])
    if len(search.tied_moves) > 1:
        info += f", drawn among {len(search.tied_moves)} tied moves"
    if search.cache_hit:
        info += ", from the shared cache"
    return info



def position_of_like(previous: Any, text: str) -> Any:
    """Parse ``text`` as a position of the same game as ``previous``."""
    return type(previous).from_text(text)


# -- show / list / delete -------------------------------------------------------------------


def cmd_show(args: argparse.Namespace) -> int:
    with client_from_args(args) as client:
        match = client.get_match(args.match_id)
    if args.json:
        print_json(match)
        return 0
    spec = match.config.game
    print(f"match    {match.id}")
    print(f"game     {game_label(spec)}")
    print(f"black    {bot_ref_text(match.black)}")
    print(f"white    {bot_ref_text(match.white)}")
    print(f"status   {match_result_text(match)}")
    print(f"created  {time_text(match.created_at)}")
    if match.finished_at.ToNanoseconds():
        print(f"finished {time_text(match.finished_at)}")
    if match.imported_from:
        print(f"imported from a {match.imported_from} record (its players name no bot)")
    if match.HasField("origin"):
        print(f"played   {origin_text(match.origin)}")
    if match.config.ladder_id:
        print(f"ladder   {match.config.ladder_id}")
    # a record states no clock: the default 1,000 ms would be a clock it never had
    print(f"clock    {'none (a game record)' if match.imported_from else clock_text(match)}")
    if match.config.opening:  # played before the bots' moves (an opening suite's, --opening)
        start = configured_start(match.config)
        print(f"opening  {' '.join(start.move_to_str(move) for move in match.config.opening)}")
    print(f"moves    {' '.join(m.move.text or str(m.move.square) for m in match.moves) or '-'}")
    if match.moves and match.moves[-1].position_after:
        final = position_of(spec, match.moves[-1].position_after)
        print(render_board(final, last_move=match.moves[-1].move.square))
    return 0


def origin_text(origin: match_pb2.RecordOrigin) -> str:
    """``on 2003.01.02_03:04:05.UTC at NIOS``: where and when an imported record says its
    game was played, as it wrote them."""
    said = (("on", origin.date), ("at", origin.place))
    return " ".join(f"{word} {value}" for word, value in said if value)


def clock_text(match: match_pb2.Match) -> str:
    """``1,000 ms a move`` and, with a game budget, the budget, its increment and what
    each side has left of it after the moves played (the referee's figure)."""
    tc = match.config.time_control
    text = clock_label(tc)
    if tc.game_time_ms <= 0:
        return text
    left = [game_time_left_ms(tc, match.moves, color)
            for color in (common_pb2.COLOR_BLACK, common_pb2.COLOR_WHITE)]
    return f"{text}; left: black {left[0]:,} ms, white {left[1]:,} ms"


def game_label(spec: common_pb2.GameSpec) -> str:
    return f"{game(spec.kind).name} {spec.variant} {spec.board_size}x{spec.board_size}"


def cmd_list(args: argparse.Namespace) -> int:
    if args.bot:
        parse_bot_ref(args.bot)  # a reference no bot could have, said as the others are
    filters: dict[str, Any] = {"bot_name": args.bot or "", "ladder_id": args.ladder_id or "",
                               "summary_only": True}
    if args.status:
        filters["status"] = STATUSES[args.status]
    if args.game:
        filters["game"] = game(args.game).kind
    with client_from_args(args) as client:
        matches = list(client.iter_matches(limit=args.limit, **filters))
        if not matches and args.bot:  # a name mistyped is no bot's, not a bot with no games
            ref = parse_bot_ref(args.bot)
            client.get_bot(ref.name, ref.version)
        if not matches and args.ladder_id:  # nor an id mistyped a ladder's
            client.get_standings(args.ladder_id)
    if args.json:
        print_json([to_dict(m) for m in matches])
        return 0
    if not matches:
        print("no matches")
        return 0
    rows = [("id", "black", "white", "result")] + [
        (m.id, bot_ref_text(m.black), bot_ref_text(m.white), match_result_text(m))
        for m in matches]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        print(f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]:<{widths[2]}}  {row[3]}")
    return 0


def cmd_cancel(args: argparse.Namespace) -> int:
    with client_from_args(args) as client:
        match = client.cancel_match(args.match_id, args.reason)
    if args.json:
        print_json(match)
    else:
        status = match_pb2.MatchStatus.Name(match.status).removeprefix("MATCH_STATUS_").lower()
        withdrawn = match.status == match_pb2.MATCH_STATUS_FINISHED
        print(f"match {match.id}: {status}" + (f" ({match.result.detail})" if withdrawn else ""))
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    with client_from_args(args) as client:
        client.delete_match(args.match_id)
    print(f"deleted match {args.match_id}")
    return 0


def cmd_usage(args: argparse.Namespace) -> int:
    with client_from_args(args) as client:
        usage = client.get_usage(args.user or "")
    print_usage(usage, "matches", [
        ("stored bytes", usage.match_bytes, usage.match_bytes_limit, "match_bytes"),
        ("unfinished", usage.unfinished_matches, usage.unfinished_matches_limit,
         "queued_matches"),
        ("running", usage.running_matches, usage.running_matches_limit, "running_matches")],
        args.json)
    return 0


AGE_UNITS = {"d": 86_400, "h": 3_600, "m": 60}
MAX_AGE_DAYS = 100 * 366


def age(text: str) -> timedelta:
    """An argparse type: ``30d``, ``12h``, ``90m``, at most a hundred years."""
    number, unit = text.strip()[:-1], text.strip()[-1:].lower()
    if unit not in AGE_UNITS or not number.isascii() or not number.isdigit():
        raise argparse.ArgumentTypeError(f"not an age like 30d, 12h or 90m: {text!r}")
    seconds = int(number) * AGE_UNITS[unit]
    if seconds > MAX_AGE_DAYS * AGE_UNITS["d"]:
        raise argparse.ArgumentTypeError(f"more than a hundred years: {text!r}")
    return timedelta(seconds=seconds)


def moment(text: str) -> datetime:
    """An argparse type: an ISO 8601 date or time after 1970, UTC unless it says otherwise."""
    try:
        value = datetime.fromisoformat(text.strip())
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a date or time like 2026-10-01 or 2026-10-01T12:00:00Z: {text!r}") from None
    except OverflowError:  # a time zone that takes it past year 1 or 9999
        raise argparse.ArgumentTypeError(f"must be after 1970 and before 9999: {text!r}") \
            from None
    if value <= datetime(1970, 1, 1, tzinfo=UTC):
        raise argparse.ArgumentTypeError(f"must be after 1970: {text!r}")
    return value


def cmd_prune(args: argparse.Namespace) -> int:
    before = args.before or datetime.now(UTC) - args.older_than
    with client_from_args(args) as client:
        examined, pruned = client.prune_matches(before, args.keep_ladder_games, args.dry_run)
    if args.json:
        print_json({"before": before.isoformat(), "examined": examined, "pruned": pruned,
                    "dry_run": args.dry_run})
    else:
        verb = "would forget" if args.dry_run else "forgot"
        print(f"{verb} {pruned} of the {examined} matches recorded before "
              f"{before.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC")
    return 0


# -- replay / export / import / tree --------------------------------------------------------


def _add_record_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=sorted(FORMATS), default=None,
                        help="the record's format (default: recognised from its text)")
    parser.add_argument("--variant", default="",
                        help="Othello variant or Gomoku rule, for records that cannot say it "
                             "(transcripts, PSQ; default: the game's first)")


def _record_file(path: Path) -> str:
    return read_text_file(path, "game record")


def load_replay(args: argparse.Namespace, source: str) -> Replay:
    """A game record if ``source`` names a file (``-``: standard input), otherwise a match
    fetched from the referee. A path that exists but is no file (a folder, ``/dev/null``)
    is read as a file, so the error names it instead of saying there is no match so
    called; so is one no match id could be (with a ``.`` or a ``/``: 'no such game record
    file', not 'no match')."""
    path = Path(source)
    if path.exists() or path.suffix in RECORD_SUFFIXES or source == "-" or any(
            char in source for char in "./"):
        return read_record(_record_file(path), args.format or "", args.variant)[1]
    with client_from_args(args) as client:
        return native_replay(client.get_match(source))


def cmd_import(args: argparse.Namespace) -> int:
    content = _record_file(args.file)
    fmt = FORMATS[args.format] if args.format else referee_pb2.REPLAY_FORMAT_UNSPECIFIED
    with client_from_args(args) as client:
        match = client.import_match(content, fmt, args.variant)
    if args.json:
        print_json(match)
        return 0
    plies = len(match.config.opening) + len(match.moves)  # a native record keeps its opening
    print(f"imported match {match.id} ({match.imported_from}, {game_label(match.config.game)}, "
          f"{plies} moves): {bot_ref_text(match.black)} (black) vs "
          f"{bot_ref_text(match.white)} (white), {match_result_text(match)}")
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    navigator = Navigator.of(load_replay(args, args.source))
    if args.ply is not None:
        try:
            navigator.go(args.ply)
        except ValueError as exc:
            raise InvalidArgumentError(str(exc)) from None
    if args.json:
        print_json(replay_json(navigator, None if args.ply is None else [args.ply]))
        return 0
    if args.all:
        print(navigator.header())
        for frame in navigator.frames():
            print(frame + "\n")
        return 0
    if args.ply is not None:
        print(navigator.header())
        print(navigator.frame())
        return 0
    navigator.interact()
    return 0


def replay_json(navigator: Navigator, only: list[int] | None = None) -> dict[str, Any]:
    """The game as JSON: its players and result, and each ply's position and move (of the
    plies ``only`` lists, when given)."""
    replay = navigator.replay
    plies = []
    for ply in range(navigator.last_ply + 1) if only is None else only:
        position = navigator.positions[ply]
        entry: dict[str, Any] = {"ply": ply, "position": position.to_text()}
        if ply:
            record = replay.moves[ply - 1]
            entry |= {"move": record.move,
                      "move_text": navigator.positions[ply - 1].move_to_str(record.move),
                      "time_ms": record.time_ms, "score": record.score, "depth": record.depth}
        plies.append(entry)
    outcome = navigator.positions[-1].outcome()
    return {"game": replay.game, "variant": replay.variant, "size": replay.size,
            "black": replay.black, "white": replay.white, "forfeit": replay.forfeit,
            "result": None if outcome is None else outcome.result, "plies": plies}


def cmd_export(args: argparse.Namespace) -> int:
    if args.output is not None:
        refuse_overwrite(args.output, args.force, "-o/--output")
    with client_from_args(args) as client:
        replay = client.get_replay(args.match_id, FORMATS[args.format])
    if args.output is None:
        print(replay.content, end="" if replay.content.endswith("\n") else "\n")
        return 0
    write_output(args.output, replay.content)
    print(f"wrote {args.output} ({args.format})")
    return 0


def tree_nodes(tree: common_pb2.SearchTree) -> list[TreeNode]:
    return [
        TreeNode(id=n.id, parent=n.parent, move=n.move, depth=n.depth, alpha=n.alpha,
                 beta=n.beta, score=n.score, kind=NODE_KINDS.get(n.kind, "leaf"),
                 cutoff=n.cutoff, pv=n.pv)
        for n in tree.nodes
    ]


def tree_within(tree: common_pb2.SearchTree, depth: int | None) -> common_pb2.SearchTree:
    """``tree`` with the nodes down to level ``depth`` below its root (all if None): what
    --depth shows as text (``render_tree``), for --json (which printed every node, --depth
    unread). Level by level from the root, each node's children looked up once."""
    if depth is None:
        return tree
    children: dict[int, list[int]] = {}
    for node in tree.nodes:
        children.setdefault(node.parent, []).append(node.id)
    kept_ids: set[int] = set()
    level = [node.id for node in tree.nodes if node.parent < 0]
    for _ in range(depth + 1):  # --depth may be 2**31 - 1: it ends with the tree
        if not level:
            break
        kept_ids.update(level)
        level = [kid for node_id in level for kid in children.get(node_id, ())]
    kept = common_pb2.SearchTree()
    kept.CopyFrom(tree)
    del kept.nodes[:]
    kept.nodes.extend(node for node in tree.nodes if node.id in kept_ids)
    return kept


def print_tree(tree: common_pb2.SearchTree, depth: int | None, color: bool,
               board: bool = True) -> None:
    root = position_of(tree.root.game, tree.root.text)
    if board:
        print(render_board(root, marks=legal_marks(root)))
    print(render_tree(tree_nodes(tree), root.move_to_str, max_depth=depth, color=color,
                      truncated=tree.truncated))


def _no_tree(match: match_pb2.Match, move: int) -> str:
    """Why move ``move`` (counted from 1 with the opening's, as --ply is) of ``match`` has
    no tree."""
    opening = len(match.config.opening)
    played = opening + len(match.moves)
    if move > played:
        return f"match {match.id} has {played} moves: --ply takes 1..{played}"
    if move <= opening:
        return (f"move {move} of match {match.id} is its opening's, played before the bots' "
                f"with no search: the bots' moves are {opening + 1}..{played}")
    if match.imported_from:
        return (f"match {match.id} was imported from a {match.imported_from} record, which "
                "holds no search trees (a match played here stores them when created with "
                "--trees)")
    if not match.config.capture_trees:
        return (f"match {match.id} stored no search trees (a match stores them when created "
                "with --trees)")
    return (f"match {match.id} has no search tree for move {move} (a pass, a move played "
            "without a search such as a forced reply, an answer from the shared cache, an "
            "external bot's or a protocol engine's move has none)")


def cmd_tree(args: argparse.Namespace) -> int:
    if args.ply < 1:
        raise InvalidArgumentError(f"--ply counts moves from 1, got {args.ply}")
    with client_from_args(args) as client:
        # --ply counts the opening's moves, as `match replay` does; the API, the bots' own
        # from 0 (the tree of replay's move 4 after a 3-move opening was move 7's).
        match = client.get_match(args.match_id)  # NOT_FOUND itself for an unknown match
        opening = len(match.config.opening)
        if not opening < args.ply <= opening + len(match.moves):
            raise NotFoundError(_no_tree(match, args.ply))
        try:
            tree = client.get_search_tree(args.match_id, args.ply - 1 - opening)
        except NotFoundError:
            raise NotFoundError(_no_tree(match, args.ply)) from None
    if args.json:
        print_json(tree_within(tree, args.depth))
        return 0
    print(f"search tree of match {args.match_id}, move {args.ply}")
    print_tree(tree, args.depth, args.color or sys.stdout.isatty())
    return 0
