"""Arena's best bot against a protocol engine, at equal time per move, on a real stack.

A stack (``arena up``'s launcher: Redis, registry, referee, ladder service and one match
worker that offers the catalog's engines) plays a two-bot ladder between a built-in preset
(``arena-pattern`` for Othello, ``arena-gomoku`` for Gomoku) and a catalog engine (NBoard or
Gomocup), both at ``--move-ms`` per move, over the game's balanced openings, each opening
twice with the colours swapped. By default the ladder is an SPRT version test
(``arena test``'s format: it stops when the test decides, or at ``--games``); ``--fixed``
plays all ``--games`` as a round robin. One worker means one search at a time: the two
sides never think at once.

Printed at the end, from the match records:

- each game (opening, colours, result, how it ended), then the built-in bot's score
  (W/D/L and %), its Elo difference with a 95% interval from single games and from the
  colour-swapped pairs (``arena.ratings.score_elo``);
- the SPRT on the pairs (LLR, Wald's bounds, verdict; ``arena.ratings.sprt``), beside the
  ladder service's own state for an SPRT ladder;
- each side's time per move: the time the referee charged (CPU time for both a built-in
  bot and a protocol engine) and the wall time it measured, mean and median, so a reader
  sees the time was equal. Engines that time themselves on the wall clock (Edax, Rapfi)
  get less CPU than their limit on a loaded machine: the load average is printed at the
  start and the end;
- per side, in how many games its search reported a forced win (an exact, positive score)
  and at which move it first did: when the engine proves its win long before the game
  ends, the game was lost early.

.venv/bin/python bench/engine_strength.py --game othello --engine edax \\
    --catalog /path/engines.toml --move-ms 1000 --games 40 [--fixed] [--sprt -20/20]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from tempfile import TemporaryDirectory

from arena.clients.bot_commands import set_config, settings
from arena.clients.sdk import ArenaClient
from arena.services.common.launcher import Launcher
from arena.services.worker.engines import load_catalog

from arena.bots import builtin_config as stored_config
from arena.bots.spec import config_to_struct
from arena.errors import InvalidArgumentError
from arena.games import game
from arena.ratings import ScoreElo, pentanomial, score_elo, sprt, trinomial
from arena.v1 import bots_pb2, common_pb2, ladder_pb2, match_pb2

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CATALOG = ROOT / "services" / "worker" / "engines" / "arena-engines.toml"
KINDS = {"othello": common_pb2.GAME_KIND_OTHELLO, "gomoku": common_pb2.GAME_KIND_GOMOKU}
DEFAULT_BOT = {"othello": "arena-pattern", "gomoku": "arena-gomoku"}
# Gomoku: Arena's 200 openings, so that a run of up to 400 games plays none twice (the 12
# of gomoku-balanced15, the default before 2026-12-04, repeat after 24 games).
DEFAULT_SUITE = {"othello": "othello-balanced", "gomoku": "gomoku-wide15"}
VERDICTS = {ladder_pb2.SPRT_VERDICT_CONTINUE: "continue",
            ladder_pb2.SPRT_VERDICT_ACCEPT_H1: "H1", ladder_pb2.SPRT_VERDICT_ACCEPT_H0: "H0"}
BUILTIN, ENGINE = "builtin", "engine"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", choices=sorted(KINDS), default="othello")
    parser.add_argument("--engine", required=True, help="the catalog entry to play")
    parser.add_argument("--catalog", type=Path, default=DEFAULT_CATALOG,
                        help="engine catalog (TOML; default: Arena's own engines)")
    parser.add_argument("--bot", default="", help="built-in preset (default: arena-pattern "
                                                  "for Othello, arena-gomoku for Gomoku)")
    parser.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                        help="a parameter of the built-in preset, as `arena bot register "
                             "--set` takes it, e.g. --set vct_nodes=200000; given again, "
                             "another")
    parser.add_argument("--move-ms", type=int, default=1000, help="time per move, both sides")
    parser.add_argument("--games", type=int, default=40,
                        help="games to play (the SPRT's maximum; rounded up to even)")
    parser.add_argument("--openings", default="", help="opening suite (default: "
                                                       "othello-balanced / gomoku-wide15)")
    parser.add_argument("--sprt", default="0/5", help="ELO0/ELO1 of the SPRT (the built-in "
                                                      "bot's Elo over the engine)")
    parser.add_argument("--fixed", action="store_true",
                        help="play every game (a round robin) instead of stopping at the "
                             "SPRT's verdict; the SPRT is still computed and printed")
    parser.add_argument("--max-minutes", type=float, default=0.0,
                        help="cancel the games still running after this long and report on "
                             "the finished ones (0: no limit)")
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--in-flight", type=int, default=2,
                        help="games scheduled at once (their moves queue for one worker)")
    parser.add_argument("--keep-games", type=Path, default=None, metavar="FILE",
                        help="also write every game to FILE, one JSON object a line: the "
                             "built-in bot's colour and points, the opening and the moves "
                             "(the stack and its records go when the bench ends)")
    parser.add_argument("--keep-records", type=Path, default=None, metavar="FOLDER",
                        help="also write every game's record (Arena's native replay, "
                             "<match id>.json) to FOLDER: `arena engine train gomoku "
                             "--records FOLDER` trains on them")
    args = parser.parse_args(argv)
    args.bot = args.bot or DEFAULT_BOT[args.game]
    args.openings = args.openings or DEFAULT_SUITE[args.game]
    try:
        elo0, elo1 = (float(x) for x in args.sprt.split("/"))
    except ValueError:
        parser.error(f"--sprt takes ELO0/ELO1, got {args.sprt!r}")
    if elo1 <= elo0:
        parser.error(f"--sprt: ELO1 must be greater than ELO0, got {args.sprt!r}")
    args.elo0, args.elo1 = elo0, elo1
    if args.games < 2 or args.move_ms < 10:
        parser.error("--games must be at least 2 and --move-ms at least 10")
    if args.keep_games is not None and not args.keep_games.parent.is_dir():
        parser.error(f"--keep-games: no folder {str(args.keep_games.parent)!r}")
    if args.keep_records is not None and not args.keep_records.is_dir():
        parser.error(f"--keep-records: no folder {str(args.keep_records)!r}")
    try:  # `arena bot register --set`'s reading: dotted paths, TOML values
        args.settings = settings(args.set)
        args.overrides = set_config(args.set)
    except InvalidArgumentError as exc:
        parser.error(str(exc))
    return args


def preset_overrides(name: str, preset: str, move_ms: int,
                     overrides: dict[str, object]) -> dict[str, object]:
    """What the bot changes in its preset's config: the ``--set`` parameters (the registry
    checks them), and the preset's own time cap, which must not be stricter than the
    match's."""
    presets = game(name).engine().presets
    if preset not in presets:
        raise SystemExit(f"no {name} preset {preset!r}; presets: {', '.join(sorted(presets))}")
    changes = dict(overrides)
    if "time_ms" in presets[preset]:
        changes["time_ms"] = move_ms
    return changes


def at(config: dict[str, object], path: str) -> object:
    """The value at a dotted ``path`` of ``config`` (None if there is none)."""
    value: object = config
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def wait_for_engine(sdk: ArenaClient, engine: str, timeout_s: float = 600) -> None:
    deadline = time.monotonic() + timeout_s
    while not any(e.name == engine and e.workers for e in sdk.list_engines()):
        if time.monotonic() > deadline:
            raise SystemExit(f"no worker offered engine {engine!r} within {timeout_s:.0f} s")
        time.sleep(0.5)


def ladder_info(sdk: ArenaClient, ladder_id: str) -> ladder_pb2.LadderInfo:
    """The ladder's progress. GetStandings also fits the ratings, and its fit can fail on
    a one-sided record (INVALID_ARGUMENT, seen at 49 games of a Gomoku match): the
    ladder list carries the same progress without a fit."""
    try:
        return sdk.get_standings(ladder_id).ladder
    except InvalidArgumentError as exc:
        print(f"  (standings refused: {exc}; reading the ladder list)", flush=True)
        return next(info for info in sdk.iter_ladders() if info.id == ladder_id)


def ladder_matches(sdk: ArenaClient, ladder_id: str) -> list[match_pb2.Match]:
    """The ladder's games in game order (GetStandings' match ids); oldest first where
    GetStandings refuses (the ladder list carries no match ids)."""
    try:
        ids = list(sdk.get_standings(ladder_id).ladder.match_ids)
    except InvalidArgumentError:
        return list(reversed(list(sdk.iter_matches(ladder_id=ladder_id))))
    return [sdk.get_match(match_id) for match_id in ids]


def run_ladder(sdk: ArenaClient, args: argparse.Namespace, names: tuple[str, str]
               ) -> ladder_pb2.LadderInfo:
    fixed = args.fixed
    config = ladder_pb2.LadderConfig(
        name=f"strength-{args.game}", game=common_pb2.GameSpec(kind=KINDS[args.game]),
        bots=[common_pb2.BotRef(name=n) for n in names],
        format=ladder_pb2.LADDER_FORMAT_ROUND_ROBIN if fixed else ladder_pb2.LADDER_FORMAT_SPRT,
        games_per_pairing=args.games if fixed else 0, opening_suite=args.openings,
        time_control=common_pb2.TimeControl(move_time_ms=args.move_ms), seed=args.seed,
        replay_void=True)
    if not fixed:
        config.sprt.CopyFrom(ladder_pb2.SprtConfig(elo0=args.elo0, elo1=args.elo1,
                                                   max_games=args.games))
    info = sdk.create_ladder(config)
    print(f"ladder {info.id}: {info.games_total} games at most, {args.openings} openings, "
          f"{args.move_ms} ms per move", flush=True)
    done = -1
    cancel_at = time.monotonic() + 60 * args.max_minutes if args.max_minutes else math.inf
    while True:
        if time.monotonic() > cancel_at:
            print(f"  {args.max_minutes:g} minutes: cancelling the games still running",
                  flush=True)
            sdk.cancel_ladder(info.id)
            cancel_at = math.inf
        ladder = ladder_info(sdk, info.id)
        if ladder.games_done != done:
            done = ladder.games_done
            test = ladder.sprt
            print(f"  {time.strftime('%H:%M:%S')} {done}/{ladder.games_total} games"
                  + (f", LLR {test.llr:+.2f} over {test.pairs} pairs" if not fixed else "")
                  + f", load {os.getloadavg()[0]:.1f}", flush=True)
        if ladder.status in (ladder_pb2.LADDER_STATUS_FINISHED,
                             ladder_pb2.LADDER_STATUS_CANCELLED):
            return ladder
        time.sleep(2.0)


def builtin_score(match: match_pb2.Match, builtin: str) -> float | None:
    """The built-in bot's points in a finished match (None: no result)."""
    result = match.result
    if match.status != match_pb2.MATCH_STATUS_FINISHED or result.void:
        return None
    black = 1.0 if result.winner == common_pb2.COLOR_BLACK else (
        0.0 if result.winner == common_pb2.COLOR_WHITE else 0.5)
    return black if match.black.name == builtin else 1.0 - black


def moves_of(match: match_pb2.Match, bot: str) -> list[match_pb2.MoveRecord]:
    """The moves ``bot`` was asked for (a forced pass is answered without asking)."""
    return [r for r in match.moves if r.move.text != "pass"
            and (match.black if r.color == common_pb2.COLOR_BLACK else match.white).name == bot]


def first_proven_win(match: match_pb2.Match, bot: str) -> int | None:
    """The move number (1-based, after the opening, as the game lines count) of ``bot``'s
    first move whose search reported a forced win (an exact, positive score)."""
    for number, record in enumerate(match.moves, 1):
        side = match.black if record.color == common_pb2.COLOR_BLACK else match.white
        if side.name == bot and record.search.exact and record.search.score > 0:
            return number
    return None


def fmt_elo(value: float) -> str:
    return f"{value:+.0f}" if math.isfinite(value) else ("+inf" if value > 0 else "-inf")


def fmt_interval(found: ScoreElo) -> str:
    return (f"{fmt_elo(found.elo)} Elo, 95% [{fmt_elo(found.low)}, {fmt_elo(found.high)}] "
            f"(score {100 * found.score:.1f}% +- {100 * 1.959963984540054 * found.stderr:.1f})")


def report(matches: list[match_pb2.Match], names: tuple[str, str],
           ladder: ladder_pb2.LadderInfo, args: argparse.Namespace) -> None:
    builtin, engine = names
    scores: dict[str, float] = {}
    # Per opening, the built-in bot's points as Black and as White, in the ladder's order:
    # the k-th game of an opening with it as Black pairs with the k-th as White (a suite
    # smaller than the match plays each opening in several pairs).
    played: dict[tuple[int, ...], dict[str, list[float]]] = {}
    print("games (the built-in bot's points):")
    for index, match in enumerate(matches, 1):
        points = builtin_score(match, builtin)
        side = "black" if match.black.name == builtin else "white"
        how = match_pb2.Termination.Name(match.result.termination).removeprefix("TERMINATION_")
        shown = "void" if points is None else f"{points:g}"
        detail = f", {match.result.detail}" if match.result.detail else ""
        print(f"  game {index} {match.id}: {builtin} {side}, opening "
              f"{'-'.join(map(str, match.config.opening)) or 'none'}: {shown} ({how.lower()}, "
              f"{len(match.moves)} moves{detail})")
        if points is not None:
            scores[match.id] = points
            sides = played.setdefault(tuple(match.config.opening), {"black": [], "white": []})
            sides[side].append(points)
    values = list(scores.values())
    wins, draws, losses = values.count(1.0), values.count(0.5), values.count(0.0)
    print(f"score of {builtin} against {engine}: {len(values)} games, +{wins} ={draws} "
          f"-{losses}, {100 * sum(values) / max(len(values), 1):.1f}%")
    if values:
        singles = score_elo(trinomial(wins, draws, losses))
        print(f"Elo difference, single games: {fmt_interval(singles)}")
    full = [b + w for sides in played.values()  # a game whose twin has no result: left out
            for b, w in zip(sides["black"], sides["white"], strict=False)]
    counts = pentanomial(full)
    if full:
        print(f"Elo difference, colour-swapped pairs: {fmt_interval(score_elo(counts))}")
    test = sprt(counts, args.elo0, args.elo1)
    print(f"SPRT (H0 {args.elo0:+g} Elo, H1 {args.elo1:+g} Elo, alpha = beta = 0.05) on "
          f"{len(full)} pairs, pentanomial {[round(counts[v]) for v in sorted(counts)]}: "
          f"LLR {test.llr:+.3f}, bounds [{test.lower_bound:.3f}, {test.upper_bound:.3f}], "
          f"verdict {test.decision.value}")
    if ladder.config.format == ladder_pb2.LADDER_FORMAT_SPRT:
        state = ladder.sprt
        print(f"ladder service's SPRT: LLR {state.llr:+.3f} on {state.pairs} pairs, "
              f"verdict {VERDICTS.get(state.verdict, '?')}")
    print("time per move (charged: CPU time; wall: as the referee measured it), ms:")
    for bot in names:
        records = [r for m in matches for r in moves_of(m, bot)]
        charged = [r.charged_ms or r.time_ms for r in records]
        wall = [r.time_ms for r in records]
        if not records:
            print(f"  {bot}: no move")
            continue
        print(f"  {bot}: {len(records)} moves, charged mean {statistics.fmean(charged):.1f} "
              f"median {statistics.median(charged):.1f} max {max(charged)}; wall mean "
              f"{statistics.fmean(wall):.1f} median {statistics.median(wall):.1f}")
    report_proven_wins(matches, names)


def report_proven_wins(matches: list[match_pb2.Match], names: tuple[str, str]) -> None:
    """When each side first saw its win coming: early announcements mean games lost long
    before they ended."""
    print("proven wins (the first move whose search reported a forced win, numbered as in "
          "the game lines):")
    for bot in names:
        found = [n for m in matches if (n := first_proven_win(m, bot)) is not None]
        line = f"  {bot}: {len(found)} of {len(matches)} games"
        if found:
            line += (f", at move {statistics.median(found):g} (median; {min(found)}-"
                     f"{max(found)})")
        print(line)


def keep_games(path: Path, matches: list[match_pb2.Match], builtin: str) -> None:
    with path.open("w") as out:
        for match in matches:
            out.write(json.dumps({
                "match": match.id, "builtin": "black" if match.black.name == builtin else "white",
                "points": builtin_score(match, builtin), "opening": list(match.config.opening),
                "moves": [r.move.square for r in match.moves],
                "termination": match_pb2.Termination.Name(match.result.termination),
            }) + "\n")
    print(f"games written to {path}", flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    catalog = load_catalog(args.catalog)
    spec = catalog.get(args.engine)
    if args.game not in spec.games:
        raise SystemExit(f"engine {args.engine!r} plays {', '.join(spec.games)}, not {args.game}")
    names = (args.bot, args.engine)
    shown = "".join(f" {path}={value}" for path, value in args.settings.items())
    print(f"{args.bot}{shown} (built-in) vs {args.engine} ({spec.protocol}, {args.catalog}), "
          f"{args.game}, {args.move_ms} ms per move; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    env = {"ARENA_SHARED_CACHE": "false", "ARENA_WARM_GAMES": args.game,
           "ARENA_LADDER_IN_FLIGHT": str(args.in_flight)}
    with TemporaryDirectory(prefix="arena-strength-") as home:
        running = Launcher(home=Path(home), workers=1, analysts=0,
                           engines=args.catalog.resolve(), env=env)
        running.start(timeout_s=600)  # a first start may compile the kernels
        try:
            play(running, args, names)
        finally:
            running.stop()
    print(f"load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
          flush=True)


def play(running: Launcher, args: argparse.Namespace, names: tuple[str, str]) -> None:
    with ArenaClient(registry=running.target("registry"), referee=running.target("referee"),
                     ladder=running.target("ladder"), token=running.admin_token) as sdk:
        wait_for_engine(sdk, args.engine)
        kind = KINDS[args.game]
        changes = preset_overrides(args.game, args.bot, args.move_ms, args.overrides)
        try:  # the preset as the bot of its name, which only an admin may register
            version = sdk.register_bot(
                bots_pb2.BotSpec(name=args.bot, game=kind, builtin=bots_pb2.BuiltinEngine(
                    config=config_to_struct(changes))), from_preset=args.bot)
        except InvalidArgumentError as exc:
            raise SystemExit(f"the built-in bot's config was refused: {exc}") from None
        if args.settings:
            stored = stored_config(version.spec)
            print("registered with " + ", ".join(f"{path}={at(stored, path)}"
                                                 for path in args.settings), flush=True)
        sdk.register_bot(bots_pb2.BotSpec(name=args.engine, game=kind,
                                          protocol=bots_pb2.ProtocolEngine(engine=args.engine)))
        started = time.monotonic()
        ladder = run_ladder(sdk, args, names)
        matches = ladder_matches(sdk, ladder.id)
        report(matches, names, ladder, args)
        if args.keep_games is not None:
            keep_games(args.keep_games, matches, args.bot)
        if args.keep_records is not None:
            for match in matches:
                replay = sdk.get_replay(match.id)
                (args.keep_records / f"{match.id}.json").write_text(replay.content)
            print(f"{len(matches)} records written to {args.keep_records}", flush=True)
        print(f"{time.monotonic() - started:.0f} s of play", flush=True)


if __name__ == "__main__":
    main()
