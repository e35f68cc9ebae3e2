"""`arena ladder ...` (create, watch, standings, list, cancel) and `arena analyze`."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from arena.clients.common import (
    GAME_MAKING_FIELDS,
    add_adjudication_option,
    add_game_options,
    add_json_flag,
    add_time_options,
    add_usage_command,
    bot_ref_text,
    client_from_args,
    clock_fields,
    enum_name,
    followed,
    game_request,
    game_spec,
    given_text,
    int32,
    int64,
    name_fields,
    non_negative,
    non_negative64,
    parse_bot_ref,
    print_json,
    print_json_line,
    print_usage,
    read_text_file,
    settle_game,
    sprt_line,
    sprt_verdict,
    standing_line,
    standing_lines,
    time_control,
    to_dict,
)
from arena.clients.match_commands import game_label, print_tree, start_of, tree_within
from arena.clients.sdk import ArenaClient

from arena.clock import clock_label
from arena.documents import read_json
from arena.errors import InvalidArgumentError, NotFoundError
from arena.games import GAME_NAMES, Position, game
from arena.openings import (
    MAX_CUSTOM_MOVES,
    MAX_CUSTOM_OPENINGS,
    OpeningMoveError,
    move_words,
    play_opening,
)
from arena.records import match_position
from arena.text import printable
from arena.textboard import (
    count_text,
    move_names,
    progress_bar,
    render_board,
    render_head_to_head,
    render_standings,
)
from arena.v1 import common_pb2, ladder_pb2

DEFAULT_GAMES_PER_PAIRING = 2
LADDER_FORMATS = {
    "round-robin": ladder_pb2.LADDER_FORMAT_ROUND_ROBIN,
    "gauntlet": ladder_pb2.LADDER_FORMAT_GAUNTLET,
}  # SPRT ladders are made by `arena test`


def add_ladder_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    group = sub.add_parser("ladder", help="bot-vs-bot tournaments with ratings",
                           description="Run round robins and gauntlets; read standings.")
    cmds = group.add_subparsers(dest="ladder_command", metavar="COMMAND", required=True)

    create = cmds.add_parser("create", help="schedule a ladder between registered bots")
    create.add_argument("bots", nargs="+",
                        help="bots: NAME[@VERSION] (gauntlet: first = challenger)")
    create.add_argument("--name", default="", help="a label for the ladder")
    create.add_argument("--format", choices=sorted(LADDER_FORMATS), default="round-robin")
    add_ladder_game_options(create)
    create.add_argument("--games-per-pairing", type=int32, default=None,
                        help=f"games per pair of bots, in colour-swapped pairs (default "
                             f"{DEFAULT_GAMES_PER_PAIRING})")
    create.add_argument("--all-openings", action="store_true",
                        help="play every opening of the suite twice per pair of bots")
    create.add_argument("--trees", action="store_true", help="store every move's search tree")
    create.add_argument("--watch", action="store_true",
                        help="show progress, then the standings, once created")
    add_json_flag(create)
    create.set_defaults(func=cmd_create)
    name_fields(create, {**LADDER_FIELDS, "config.format": "--format",
                         "config.games_per_pairing": "--games-per-pairing"})

    watch = cmds.add_parser("watch", help="a progress bar until the ladder ends, then standings")
    watch.add_argument("ladder_id")
    add_json_flag(watch)
    watch.set_defaults(func=cmd_watch)

    standings = cmds.add_parser("standings", help="ratings with intervals, W/D/L, score %%")
    standings.add_argument("ladder_id")
    add_json_flag(standings)
    standings.set_defaults(func=cmd_standings)

    listing = cmds.add_parser("list", help="ladders, newest first")
    listing.add_argument("--limit", type=non_negative, default=20,
                         help="at most this many (0: all)")
    listing.add_argument("--running", action="store_true", help="only the running ones")
    add_json_flag(listing)
    listing.set_defaults(func=cmd_list)

    cancel = cmds.add_parser("cancel", help="cancel the games not yet played")
    cancel.add_argument("ladder_id")
    cancel.set_defaults(func=cmd_cancel)

    add_usage_command(cmds, "ladders use (ladders running)", cmd_usage)

    ratings = cmds.add_parser(
        "ratings", help="the arena's rating list: every ladder game of a game, pooled",
        description="Rate every bot version on the counted games of all ladders of one "
                    "game (its variant and board size) together, by maximum likelihood; "
                    "bots that no games connect are rated in separate pools. A clock "
                    "option keeps the ladders of that clock only (a list per time "
                    "control); the list says which clocks the game's ladders had.")
    add_game_options(ratings, of_bots=False)
    clock = ratings.add_argument_group(
        "clock", "with any of these, only the ladders at this clock count (unset parts: "
                 "0, a move time of 0 is the default 1,000 ms)")
    clock.add_argument("--move-time-ms", type=non_negative, default=None,
                       help="the ladders' limit per move")
    clock.add_argument("--game-time-ms", type=non_negative64, default=None,
                       help="their budget per side (0: none)")
    clock.add_argument("--increment-ms", type=non_negative, default=None,
                       help="their increment per move")
    add_json_flag(ratings)
    ratings.set_defaults(func=cmd_ratings)
    name_fields(ratings, {"game": "", "game.kind": "--game", "game.variant": "--variant",
                          "game.board_size": "--size", "clock": "", **clock_fields("clock")})


# The request fields of a ladder (`ladder create`, `test`) its shared options fill in.
LADDER_FIELDS = {**GAME_MAKING_FIELDS, "config.opening_suite": "--openings",
                 "config.openings": "--openings-file", "config.openings[]": "opening {n}",
                 "config.bots": "the bots", "config.bots[]": "bot {n}", "config.name": "--name"}

SUITES = "othello-balanced[-1..6], international, gomoku-balanced15, gomoku-wide15 or none"


def _opening_suite(counted: bool) -> Callable[[str], str]:
    """``--openings``: a suite's name. A number is refused, with the option that takes a
    count where the command has one (`arena demo --openings` once took a count)."""
    def parse(text: str) -> str:
        if not text.strip().isdigit():
            return text
        count = int(text.strip())
        hint = (f"; {count} openings per pair of bots, each with both colours, is "
                f"--games-per-pairing {2 * count}" if counted else "")
        raise argparse.ArgumentTypeError(
            f"names an opening suite ({SUITES}), got {text!r}{hint}")
    return parse


def add_openings_option(parser: argparse.ArgumentParser | argparse._MutuallyExclusiveGroup,
                        default: str, said: str, counted: bool = True) -> None:
    """``--openings SUITE``; ``counted``: the command also takes ``--games-per-pairing``."""
    parser.add_argument("--openings", type=_opening_suite(counted), default=default,
                        metavar="SUITE",
                        help=f"opening suite: {SUITES} (default: {said}); a suite implies "
                             "its variant and size")


def add_ladder_game_options(parser: argparse.ArgumentParser, counted: bool = True) -> None:
    """The game, openings, clock and adjudication of a ladder: what is left out follows
    from the game (the ladder service fills it in from the game's description).
    ``counted``: the command takes ``--games-per-pairing``."""
    add_game_options(parser)
    openings = parser.add_mutually_exclusive_group()  # a suite, or the ladder's own
    add_openings_option(openings, "",
                        "the game's, e.g. othello-balanced, gomoku-balanced15 on 15x15",
                        counted)
    openings.add_argument("--openings-file", type=Path, default=None, metavar="FILE",
                          help=f"the ladder's own openings instead of a suite: one a line, "
                               f"moves from the start such as 'f5 d6 c3' or 'f5d6c3' ('#' "
                               f"starts a comment, '|' a note: `arena engine openings` "
                               f"writes such files; at most {MAX_CUSTOM_OPENINGS} openings of "
                               f"{MAX_CUSTOM_MOVES} moves; - reads standard input)")
    add_time_options(parser)
    add_adjudication_option(parser)
    parser.add_argument("--seed", type=int64, default=0,
                        help="seed of the openings' order and of each game's own seed (the "
                             "bots' random choices)")


def games_per_pairing(args: argparse.Namespace) -> int:
    """What to ask for: a positive count, or 0 (the API's "every opening twice") only when
    --all-openings says so."""
    if args.all_openings:
        if args.games_per_pairing is not None:
            raise InvalidArgumentError("--all-openings plays every opening of the suite twice: "
                                       "leave out --games-per-pairing")
        return 0
    if args.games_per_pairing is None:
        return DEFAULT_GAMES_PER_PAIRING
    if args.games_per_pairing < 1:
        raise InvalidArgumentError(
            f"--games-per-pairing must be 1 or more, got {args.games_per_pairing}; to play "
            "every opening of the suite twice, use --all-openings")
    return int(args.games_per_pairing)


def rounding_note(asked: int, stored: int) -> str:
    """Why a ladder plays other than the games per pairing asked for ('' if it does not):
    each opening is played twice, colours swapped."""
    if asked == 0:
        return f" ({stored} per pairing: each opening of the suite twice, colours swapped)"
    if stored != asked:
        return (f" ({asked} per pairing rounded up to {stored}: each opening is played "
                "twice, colours swapped)")
    return ""


def own_openings(args: argparse.Namespace) -> list[ladder_pb2.LadderOpening]:
    """``--openings-file``: each line's moves, played out here so that an error names its
    line (the ladder service checks them again)."""
    if args.openings_file is None:
        return []
    path = args.openings_file
    source = "the openings on standard input" if str(path) == "-" else f"openings file {path}"
    spec = game_spec(args)
    openings: list[ladder_pb2.LadderOpening] = []
    for number, line in enumerate(read_text_file(path, "openings").splitlines(), 1):
        if not move_words(line):
            continue
        if len(openings) == MAX_CUSTOM_OPENINGS:
            raise InvalidArgumentError(f"{source}: more than "
                                       f"{MAX_CUSTOM_OPENINGS} openings (line {number})")
        position = game(spec.kind).new_position(spec.variant, spec.board_size)
        try:
            moves = play_opening(position, line)
        except OpeningMoveError as exc:
            raise InvalidArgumentError(f"{source} line {number}, move {exc.number}: "
                                       f"{exc}") from None
        if len(moves) > MAX_CUSTOM_MOVES:
            raise InvalidArgumentError(f"{source} line {number}: more "
                                       f"than {MAX_CUSTOM_MOVES} moves")
        if position.is_game_over():
            raise InvalidArgumentError(f"{source} line {number}: the opening "
                                       "leaves no game to play")
        openings.append(ladder_pb2.LadderOpening(moves=moves))
    if not openings:
        raise InvalidArgumentError(f"{source}: no opening in it (one a line, moves such "
                                   "as 'f5 d6 c3')")
    return openings


def ladder_config(args: argparse.Namespace) -> ladder_pb2.LadderConfig:
    return ladder_pb2.LadderConfig(
        name=args.name, game=game_request(args), bots=[parse_bot_ref(b) for b in args.bots],
        format=LADDER_FORMATS[args.format], games_per_pairing=games_per_pairing(args),
        opening_suite=args.openings, openings=own_openings(args),
        time_control=time_control(args), seed=args.seed,
        capture_trees=args.trees, adjudicate_empties=args.adjudicate_empties,
    )


def cmd_create(args: argparse.Namespace) -> int:
    with client_from_args(args) as client:
        settle_game(client, args, args.bots)
        config = ladder_config(args)
        ladder = client.create_ladder(config)
        if args.json and not args.watch:
            print_json(ladder)
            return 0
        print(f"ladder {ladder.id}: {len(config.bots)} bots, {ladder.games_total} games"
              f"{rounding_note(config.games_per_pairing, ladder.config.games_per_pairing)}")
        if ladder.waiting and not args.watch:  # watching says it first
            print(waiting_line(ladder))
        if args.watch:
            watch_ladder(client, ladder.id)
            print_standings(client.get_standings(ladder.id))
    return 0


def followed_ladder(client: ArenaClient, ladder_id: str) -> Iterator[ladder_pb2.LadderProgress]:
    """The ladder's progress events, the stream opened again after an outage (``followed``:
    an event that says what one seen before said is skipped)."""
    return followed(lambda: client.watch_ladder(ladder_id), _progress_key)


def _progress_key(progress: ladder_pb2.LadderProgress) -> tuple[str, int, int, int, str]:
    """What a progress event says, in a few bytes: it carries the whole ladder, every match
    id included, and ``followed`` keeps the key of each event of a ladder's life."""
    info = progress.ladder
    return (progress.finished_match_id, info.games_done, info.games_void, info.status,
            info.waiting)


def waiting_line(ladder: ladder_pb2.LadderInfo) -> str:
    """``waiting: <why>`` while the ladder's next game cannot be created ('' otherwise)."""
    return f"waiting: {printable(ladder.waiting)}" if ladder.waiting else ""


def watch_ladder(client: ArenaClient, ladder_id: str, out: TextIO | None = None) -> None:
    """A progress bar (games done/total, ETA) until the ladder ends; for an SPRT ladder,
    where its test stands (pairs, LLR, pentanomial). On a terminal the line redraws in
    place; otherwise every change prints one line."""
    out = out or sys.stdout  # looked up now: the stream may have been replaced since import
    started = time.monotonic()
    live = out.isatty()
    last = ""
    waiting = ""
    for progress in followed_ladder(client, ladder_id):
        info = progress.ladder
        if info.waiting != waiting:  # its own line, above the progress
            said = waiting_line(info) or "waiting no more: its games are being created"
            print(("\n" if live and last else "") + said, file=out, flush=True)
            waiting = info.waiting
            last = "" if live else last  # a terminal: the progress line again, below
        if info.config.format == ladder_pb2.LADDER_FORMAT_SPRT:
            line = sprt_line(info)
        else:
            line = progress_bar(info.games_done, info.games_total, time.monotonic() - started)
        if line == last:
            continue
        last = line
        print(("\r" + line) if live else line, end="" if live else "\n", file=out, flush=True)
    if live:
        print(file=out)


def print_standings(standings: ladder_pb2.Standings) -> None:
    ladder = standings.ladder
    status = enum_name(ladder.status, "LADDER_STATUS_", ladder_pb2.LadderStatus)
    label = f" ({ladder.config.name})" if ladder.config.name else ""
    print(f"ladder {ladder.id}{label}: {status}, {games_done_text(ladder)}")
    print(f"played: {conditions_text(ladder.config)}")
    if ladder.ended_because:
        print(f"ended by the arena: {printable(ladder.ended_because)}")
    if ladder.waiting:
        print(waiting_line(ladder))
    if ladder.config.format == ladder_pb2.LADDER_FORMAT_SPRT:
        print(f"SPRT {sprt_line(ladder)}")
        print(f"verdict: {sprt_verdict(ladder)}")
    print(render_standings(standing_lines(standings)))
    played = any(p.wins + p.draws + p.losses for p in standings.head_to_head)
    if played and len(standings.rows) > 2:  # two bots: the table is their head to head
        names = [bot_ref_text(row.bot) for row in standings.rows]
        records = {(bot_ref_text(p.bot_ref), bot_ref_text(p.opponent_ref)):
                   (p.wins, p.draws, p.losses) for p in standings.head_to_head}
        print(f"\nhead to head (wins-draws-losses of the row's bot)\n"
              f"{render_head_to_head(names, records)}")


def cmd_watch(args: argparse.Namespace) -> int:
    with client_from_args(args) as client:
        if args.json:  # one JSON line per progress event, then the standings
            for progress in followed_ladder(client, args.ladder_id):
                print_json_line(progress)
            print_json_line(client.get_standings(args.ladder_id))
            return 0
        watch_ladder(client, args.ladder_id)
        print_standings(client.get_standings(args.ladder_id))
    return 0


def cmd_standings(args: argparse.Namespace) -> int:
    with client_from_args(args) as client:
        standings = client.get_standings(args.ladder_id)
    if args.json:
        print_json(standings)
    else:
        print_standings(standings)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    with client_from_args(args) as client:
        ladders = list(client.iter_ladders(limit=args.limit, running_only=args.running))
    if args.json:
        print_json([to_dict(ladder) for ladder in ladders])
        return 0
    if not ladders:
        print("no running ladders" if args.running else "no ladders")
    for ladder in ladders:
        status = enum_name(ladder.status, "LADDER_STATUS_", ladder_pb2.LadderStatus)
        bots = ", ".join(bot_ref_text(b) for b in ladder.config.bots)
        if ladder.config.format == ladder_pb2.LADDER_FORMAT_SPRT:
            verdict = ladder_pb2.SprtVerdict.Name(ladder.sprt.verdict)
            verdict = verdict.removeprefix("SPRT_VERDICT_").lower().replace("_", " ")
            if verdict == "continue" and ladder.status != ladder_pb2.LADDER_STATUS_RUNNING:
                verdict = "no verdict"  # cancelled, or out of games, before it decided
            bots += f" (SPRT: {verdict})"
        named = f"{ladder.config.name}: " if ladder.config.name else ""
        print(f"{ladder.id}  {status:<9} {ladder.games_done:>4}/{ladder.games_total:<4} "
              f"{named}{bots}")
        if ladder.waiting:
            print(f"    {waiting_line(ladder)}")
    return 0


def cmd_cancel(args: argparse.Namespace) -> int:
    with client_from_args(args) as client:
        ladder = client.cancel_ladder(args.ladder_id)
    status = enum_name(ladder.status, "LADDER_STATUS_", ladder_pb2.LadderStatus)
    print(f"ladder {ladder.id}: {status}, {games_done_text(ladder)}")
    return 0


def conditions_text(config: ladder_pb2.LadderConfig) -> str:
    """What the standings were played under: the game, the openings and the clock."""
    if config.openings:
        openings = f"its own {len(config.openings)} openings"
    elif config.opening_suite in ("", "none"):
        openings = "no openings (every game from the start)"
    else:
        openings = f"openings {config.opening_suite}"
    return f"{game_label(config.game)}, {openings}, {clock_label(config.time_control)}"


def cmd_usage(args: argparse.Namespace) -> int:
    with client_from_args(args) as client:
        usage = client.get_ladder_usage(args.user or "")
    print_usage(usage, "ladders", [
        ("running", usage.running_ladders, usage.running_ladders_limit, "running_ladders")],
        args.json)
    return 0


def games_done_text(ladder: ladder_pb2.LadderInfo) -> str:
    """Games over of the total; how many of them are void (cancelled, or lost to a
    failure: no result); and, for a cancelled ladder, how many never started (a ladder
    schedules its games a few at a time: cancelling voids the scheduled ones)."""
    text = f"{ladder.games_done}/{ladder.games_total} games over"
    if ladder.games_void:
        text += f" ({ladder.games_void} void: no result)"
    unstarted = ladder.games_total - ladder.games_done
    if ladder.status == ladder_pb2.LADDER_STATUS_CANCELLED and unstarted > 0:
        text += f"; {unstarted} never started"
    return text


def cmd_ratings(args: argparse.Namespace) -> int:
    args.game = args.game or GAME_NAMES[0]
    parts = (args.move_time_ms, args.game_time_ms, args.increment_ms)
    clock = None if parts == (None, None, None) else common_pb2.TimeControl(
        move_time_ms=args.move_time_ms or 0, game_time_ms=args.game_time_ms or 0,
        increment_ms=args.increment_ms or 0)
    with client_from_args(args) as client:
        ratings = client.get_ratings(game_request(args), clock)
    if args.json:
        print_json(ratings)
        return 0
    played = game(ratings.game.kind)
    size = ratings.game.board_size
    at = f" at {clock_label(ratings.clock)}" if ratings.HasField("clock") else ""
    print(f"{played.title} {ratings.game.variant} {size}x{size}{at}: "
          f"{count_text(ratings.games, 'game')} from {count_text(ratings.ladders, 'ladder')}")
    if ratings.clocks:
        print("played at: " + "; ".join(
            f"{clock_label(c.clock)} ({count_text(c.games, 'game')}, "
            f"{count_text(c.ladders, 'ladder')})" for c in ratings.clocks))
    if not ratings.rows:
        print("no rated games yet: ladders of this game rate their bots here as they play")
    for pool in range(1, ratings.pools + 1):
        rows = [row for row in ratings.rows if row.pool == pool]
        if ratings.pools > 1:
            print(f"\npool {pool} ({len(rows)} bots; not comparable with the other pools: "
                  "no games connect them)")
        print(render_standings([replace(standing_line(row.standing),
                                        spread=(row.ladders, row.opponents)) for row in rows]))
    return 0


# -- arena analyze --------------------------------------------------------------------------


def add_analyze_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    analyze = sub.add_parser(
        "analyze", help="ask a bot for its move and search on any position (a hint)",
        description="Search a position on an analysis worker with a registered bot (built "
                    "in; or a protocol engine or an external service: given a time, it "
                    "answers with what it reports), a preset or an inline configuration, and "
                    "print the move, score, PV, the engine's notes and optionally the search "
                    "tree.")
    who = analyze.add_mutually_exclusive_group(required=True)
    who.add_argument("--bot", help="registered bot: NAME[@VERSION]")
    who.add_argument("--preset", help="a preset shipped with Arena (see `arena bot presets`)")
    who.add_argument("--config", type=Path, help="JSON file with an engine configuration")
    add_game_options(analyze)
    where = analyze.add_mutually_exclusive_group()
    where.add_argument("--position", type=given_text, default=None,
                       help="position in text form (it says its own variant and size)")
    where.add_argument("--moves", default="", help="moves from the start, e.g. 'f5 d6 c3'")
    where.add_argument("--match", type=given_text, default=None, metavar="MATCH_ID",
                       help="a match's position (played or imported), after --ply moves")
    analyze.add_argument("--ply", type=int32, default=None,
                         help="with --match: after this many moves, as in `match replay` "
                              "(default: the last position with a move to play)")
    analyze.add_argument("--depth", type=non_negative, default=0,
                         help="search depth limit in plies (default 0: none)")
    analyze.add_argument("--time-ms", type=non_negative, default=0,
                         help="search time limit (default 0: your analyze_time_ms quota, at "
                              "most 60000)")
    analyze.add_argument("--nodes", type=non_negative64, default=0,
                         help="search node limit (default 0: none)")
    analyze.add_argument("--tree", type=non_negative, default=0, metavar="NODES",
                         help="also capture and print the search tree within NODES nodes")
    analyze.add_argument("--tree-depth", type=non_negative, default=None,
                         help="print the tree's levels down to this one (0: the root only; "
                              "with --json, its nodes down to it)")
    analyze.add_argument("--seed", type=int64, default=0,
                         help="seed of the bot's random choices (a draw among tied moves)")
    add_json_flag(analyze)
    analyze.set_defaults(func=cmd_analyze)
    name_fields(analyze, {"limits.depth": "--depth", "limits.nodes": "--nodes",
                          "limits.time_ms": "--time-ms", "tree_node_budget": "--tree",
                          "bot_ref": "--bot", "seed": "--seed"})


def _analyze_target(client: ArenaClient,
                    args: argparse.Namespace) -> tuple[common_pb2.GameSpec, Position, list[int]]:
    """The game, position and moves from the start that the options name."""
    if args.match:
        return match_position(client.get_match(args.match), args.ply, "--ply")
    if args.ply is not None:
        raise InvalidArgumentError("--ply goes with --match")
    spec, position = start_of(args, args.position or "")
    return spec, position, play_opening(position, args.moves)  # read as match create's


def _config_file(args: argparse.Namespace) -> dict[str, Any] | None:
    """The engine configuration of ``--config``, if given."""
    if args.config is None:
        return None
    text = read_text_file(args.config, "engine configuration")
    try:
        config = read_json(text)
    except ValueError as exc:
        raise InvalidArgumentError(f"{args.config} is not JSON: {exc}") from None
    if not isinstance(config, dict):
        raise InvalidArgumentError(f"{args.config} must hold a JSON object")
    return config


def _engine_config(client: ArenaClient, args: argparse.Namespace,
                   spec: common_pb2.GameSpec, config: dict[str, Any] | None,
                   ) -> dict[str, Any] | None:
    if config is not None:
        return config
    if args.preset:
        presets = client.list_presets(spec.kind)
        for preset in presets:
            if preset.name == args.preset:
                return dict(to_dict(preset.engine).get("config", {}))
        known = ", ".join(p.name for p in presets)
        other = [p for p in client.list_presets() if p.name == args.preset]
        if other:  # a preset of the other game: say so, not "no such preset"
            raise InvalidArgumentError(
                f"preset {args.preset!r} plays {game(other[0].game).name}, not "
                f"{game(spec.kind).name}; the {game(spec.kind).name} presets: {known}")
        raise NotFoundError(f"no preset {args.preset!r}; known: {known}")
    return None


def cmd_analyze(args: argparse.Namespace) -> int:
    if args.tree_depth is not None and not args.tree:  # it printed no tree, without a word
        raise InvalidArgumentError("--tree-depth goes with --tree NODES (the tree to capture)")
    limits = common_pb2.SearchLimits(depth=args.depth, nodes=args.nodes, time_ms=args.time_ms)
    with client_from_args(args) as client:
        config = _config_file(args)
        settle_game(client, args, [args.bot] if args.bot else [], args.preset or "",
                    (config or {}).get("evaluator"))
        spec, position, history = _analyze_target(client, args)
        config = _engine_config(client, args, spec, config)
        reply = client.analyze(
            common_pb2.Position(game=spec, text=position.to_text()),
            bot=parse_bot_ref(args.bot) if args.bot else None, engine_config=config,
            limits=limits, history=history, tree_node_budget=args.tree, seed=args.seed,
        )
    if args.json:
        if args.tree_depth is not None:  # the levels the text shows, as match tree's
            reply.tree.CopyFrom(tree_within(reply.tree, args.tree_depth))
        print_json(reply)
        return 0
    search = reply.search
    move = reply.move.text or position.move_to_str(reply.move.square)
    pv = " ".join(move_names(position, list(search.pv)))
    print(render_board(position, marks=[reply.move.square], mark="!"))
    facts = [f"best move {move}"]
    if search.HasField("score"):  # a protocol engine may report no score or depth
        facts.append(f"score {search.score:+d}{' (exact)' if search.exact else ''}")
    if search.HasField("depth"):
        facts.append(f"depth {search.depth}")
    if search.nodes:
        facts.append(f"nodes {search.nodes}  nps {search.nps}")
    print("  ".join([*facts, f"time {search.time_ms:.0f} ms"]))
    print(f"pv {pv or move}")
    for note in search.notes:
        print(f"  | {note}")
    if len(search.tied_moves) > 1:
        tied = " ".join(position.move_to_str(square) for square in search.tied_moves)
        print(f"drawn at random (seed {args.seed}) among the tied moves {tied}")
    if reply.tree.nodes:
        print_tree(reply.tree, args.tree_depth, color=False, board=False)
    elif args.tree:  # asked for, and none came back: say why rather than print nothing
        print("no search tree: the move was chosen without a search (an opening or forced "
              "move)" if not search.nodes else "no search tree: the engine stored none")
    return 0

