"""`arena demo` (what `make demo` runs): the whole arena, end to end, in one command.

It starts the embedded stack (two Redis servers, registry, referee, ladder, workers),
registers the preset bots through the registry, runs a colour-swapped round robin of
KReversi's Lucy, Madoka, Ryo and Terra, the Reversi lab's Advanced level and
arena-strong over a few openings through the ladder service, shows a progress bar,
prints the standings, saves every game as a replay file and stops everything. The web
gateway runs beside the services: the demo prints its ladder page's address, and with
``--serve`` keeps the stack up after the ladder, for the pages, until Ctrl-C.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from arena.clients.common import non_negative
from arena.clients.ladder_commands import add_openings_option, print_standings, watch_ladder
from arena.clients.sdk import ArenaClient
from arena.services.common.ladder_limits import bot_count_problem, repeated_bots

from arena.argtypes import integer, integer_in
from arena.bots.presets import preset_problem
from arena.errors import AlreadyExistsError, FieldViolation, InvalidArgumentError
from arena.home import arena_home
from arena.openings.suites import UnknownSuiteError, load_suite
from arena.textboard import format_duration
from arena.v1 import bots_pb2, common_pb2, ladder_pb2, referee_pb2

DEMO_BOTS = ("lucy", "madoka", "ryo", "terra", "lab-advanced", "arena-strong")
# Wall time of one game between these bots on one worker, used only to print the
# expected duration. Measured on 2 cores with 2 workers: a 30-game round robin of the
# six demo bots (move limit 1 s) took 82 s, i.e. about 5.5 s per game per worker.
SECONDS_PER_GAME_PER_WORKER = 5.5


def add_demo_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workers", type=integer, default=2,
                        help="engine workers (default 2; at most 4 per core)")
    parser.add_argument("--bots", default=",".join(DEMO_BOTS),
                        help="comma-separated presets to play (default: the six demo bots)")
    parser.add_argument("--games-per-pairing", type=integer_in(1, 1000), default=4,
                        help="games per pair of bots, in colour-swapped pairs (default 4)")
    add_openings_option(parser, "othello-balanced", "othello-balanced")
    parser.add_argument("--move-time-ms", type=non_negative, default=1000,
                        help="hard limit per move; the presets' own depths rule (default 1000)")
    parser.add_argument("--demo-home", type=Path, default=None,
                        help="state folder of the demo stack (default $ARENA_HOME/demo)")
    parser.add_argument("--serve", action="store_true",
                        help="keep the stack and its web pages up after the ladder, "
                             "until Ctrl-C")


def _demo_home(args: argparse.Namespace) -> Path:
    if args.demo_home is not None:
        return Path(args.demo_home).resolve()
    return arena_home(args.home) / "demo"


def register_presets(client: ArenaClient, names: list[str]) -> list[common_pb2.BotRef]:
    """Register each preset as a bot of the same name (reusing one registered before)."""
    refs = []
    for name in names:
        spec = bots_pb2.BotSpec(
            name=name, game=common_pb2.GAME_KIND_OTHELLO, preset=name,
            description=f"the {name} preset", builtin=bots_pb2.BuiltinEngine(),
        )
        try:
            bot = client.register_bot(spec, from_preset=name)
            print(f"  registered {name} v{bot.version}", flush=True)
        except AlreadyExistsError:
            bot = client.get_bot(name)
            print(f"  {name} v{bot.version} already registered", flush=True)
        refs.append(common_pb2.BotRef(name=name, version=bot.version))
    return refs


def save_replays(client: ArenaClient, ladder_id: str, folder: Path) -> list[Path]:
    """Every finished game of the ladder as a native replay file."""
    folder.mkdir(parents=True, exist_ok=True)
    saved = []
    for match in client.iter_matches(ladder_id=ladder_id, summary_only=True):
        replay = client.get_replay(match.id, referee_pb2.REPLAY_FORMAT_NATIVE)
        path = folder / f"{match.id}.json"
        path.write_text(replay.content)
        saved.append(path)
    return saved


def check_demo(args: argparse.Namespace, bots: list[str]) -> str:
    """The Othello variant the demo's openings play (``international``'s own, else the
    standard game); what its ladder could not play is refused before the stack starts (a
    minute or more, with its Redis servers and services, and the presets registered: a
    preset misspelt, one bot, or a Gomoku suite was refused only then, by the services),
    every problem at once. ``--workers 0`` starts a stack no move is played on: the demo
    ended in a traceback there, finding no worker to ask."""
    bad, variant = [], "standard"
    if args.workers < 1:
        bad.append(FieldViolation("--workers", "the demo plays its ladder on workers: 1 or more"))
    if problem := bot_count_problem(len(bots)):  # the ladder service's checks
        bad.append(FieldViolation("--bots", problem))
    twice = sorted({bots[index] for index in repeated_bots(bots)})
    if twice:
        bad.append(FieldViolation("--bots", f"named twice: {', '.join(twice)}"))
    bad += [FieldViolation("--bots", problem) for problem in
            (preset_problem(name, common_pb2.GAME_KIND_OTHELLO) for name in dict.fromkeys(bots))
            if problem]
    try:
        variant = load_suite(args.openings).resolve("othello", "", 8)[0] or variant
    except UnknownSuiteError as exc:
        bad.append(FieldViolation("--openings", str(exc)))
    if bad:
        raise InvalidArgumentError.for_fields(bad)
    return variant


def run_demo(args: argparse.Namespace) -> int:
    from arena.services.common.launcher import Launcher, check_worker_count

    check_worker_count(args.workers, "--workers")
    bots = [name.strip() for name in args.bots.split(",") if name.strip()]
    variant = check_demo(args, bots)
    home = _demo_home(args)
    started = time.monotonic()
    print(f"Starting the embedded stack in {home} "
          f"(2 Redis servers, registry, referee, ladder, {args.workers} workers, web "
          "gateway; the first start on a machine compiles the engines: a few minutes)...",
          flush=True)
    # A few games in flight keep every worker busy, and games then finish one after
    # another (an honest progress bar and ETA) instead of all together at the end.
    in_flight = {"ARENA_LADDER_IN_FLIGHT": str(2 * max(1, args.workers))}
    with Launcher(home=home, workers=args.workers, env=in_flight, web=True) as stack:
        print(stack.describe(), flush=True)
        with ArenaClient(
            registry=stack.target("registry"), referee=stack.target("referee"),
            ladder=stack.target("ladder"), engine=stack.target("worker"),
            token=stack.admin_token, home=home,
        ) as client:
            print("Registering the preset bots...", flush=True)
            refs = register_presets(client, bots)
            ladder = client.create_ladder(ladder_pb2.LadderConfig(
                name="demo round robin",
                game=common_pb2.GameSpec(kind=common_pb2.GAME_KIND_OTHELLO,
                                         variant=variant, board_size=8),
                bots=refs, format=ladder_pb2.LADDER_FORMAT_ROUND_ROBIN,
                games_per_pairing=args.games_per_pairing, opening_suite=args.openings,
                time_control=common_pb2.TimeControl(move_time_ms=args.move_time_ms),
                seed=1,
            ))
            expected = ladder.games_total * SECONDS_PER_GAME_PER_WORKER / max(1, args.workers)
            print(f"Ladder {ladder.id}: round robin of {len(refs)} bots, "
                  f"{args.games_per_pairing} games per pairing = {ladder.games_total} games; "
                  f"expect about {format_duration(expected)} on 2 cores.", flush=True)
            page = f"http://{stack.target('web')}/ladders/{ladder.id}"
            print(f"Watch it in a browser: {page}", flush=True)
            watch_ladder(client, ladder.id)
            print()
            print_standings(client.get_standings(ladder.id))
            folder = home / "replays"
            saved = save_replays(client, ladder.id, folder)
        example = saved[0].name if saved else "<match id>.json"
        print(f"\nSaved {len(saved)} replays in {folder}. Step through one with:\n"
              f"  arena match replay {folder / example}\n"
              f"The games stay in the demo's durable Redis; to browse them there:\n"
              f"  arena up --web --home {home}      (then, in another terminal)\n"
              f"  arena --home {home} match list --ladder {ladder.id}\n"
              f"  arena --home {home} match replay <match id>", flush=True)
        if args.serve:
            serve_until_stopped(page)
        print("Stopping everything...", flush=True)
    print(f"Done in {format_duration(time.monotonic() - started)}.", flush=True)
    return 0


def serve_until_stopped(page: str) -> None:
    """Keep the stack up (for its web pages) until Ctrl-C or SIGTERM."""
    from arena.services.common.server import stop_signals, wait_for

    stop = stop_signals()
    print(f"\nThe ladder's page: {page}\nServing until Ctrl-C.", flush=True)
    wait_for(stop)
