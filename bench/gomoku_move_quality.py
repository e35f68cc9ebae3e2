"""How good arena-gomoku's moves are, judged by a teacher engine, for variants of its preset.

    python bench/gomoku_move_quality.py GAMES.jsonl --teacher rapfi-n100000 \\
        --catalog /path/engines.toml --teacher-scale 200 --move-ms 300 \\
        --variant "" --variant "leaf_fours=0,reduce_after=0" [--every 2 --limit 400]

Positions: in the games of ``GAMES.jsonl`` (what ``bench/engine_strength.py --keep-games``
wrote), every ``--every``-th position where the built-in bot was to move, at most
``--limit`` in all. Each ``--variant`` is the ``arena-gomoku`` preset with its
comma-separated ``KEY=VALUE`` items (read as ``arena bot register --set`` reads them; an
empty one is the preset itself; ``move_ms=N`` gives it its own time a move); it chooses a
move in every position, ``--move-ms`` on the searching thread's CPU clock (or to
``--depth``, which does not depend on the machine). The teacher (a catalog engine, as for
``arena engine train gomoku --teacher``) judges the position after each move, each
distinct position once. The bot's chance after a move is ``sigmoid(-score /
teacher_scale)`` (the opponent is to move): 0 when the teacher proves the opponent's win
(or a five is left open), 1 when the move made five or the teacher proves the opponent
lost, 0.5 when it filled the board (``gomoku_losses.decided``).

Printed: per variant, its mean chance and the number of positions where it chose
another move than the first variant; then each other variant's mean difference from the
first, position by position, with its standard error. The same positions are judged for
every variant, so their own spread (won and lost positions) cancels out: per move, this
sees differences that a match would need hundreds of games to show. It measures the
moves, not the games: a better mean is not yet a better score.
"""

from __future__ import annotations

import argparse
import math
import statistics
from typing import Any

from arena.clients.bot_commands import set_config
from arena.services.worker.engines.teacher import catalog_teacher
from gomoku_losses import (
    chance_after,
    decided,
    parse_teacher_args,
    read_games,
    teacher_parser,
)

from arena.bots.presets import merge_config
from arena.engine.api import Limits
from arena.engine.gomoku import PRESETS, choose_move, validate_config, warm_up
from arena.engine.gomoku.train import SIZE, teacher_position
from arena.errors import InvalidArgumentError

PRESET = "arena-gomoku"


def parse_args() -> argparse.Namespace:
    parser = teacher_parser(__doc__.split("\n")[0])
    parser.add_argument("--move-ms", type=int, default=300, help="each variant's time a move")
    parser.add_argument("--depth", type=int, default=0,
                        help="search this depth instead of --move-ms (0: time)")
    parser.add_argument("--variant", action="append", required=True, metavar="KEY=VALUE,...",
                        help="the preset with these settings (empty: as it is); the first is "
                             "the reference; given again, another")
    parser.add_argument("--every", type=int, default=2, help="every n-th of the bot's moves")
    parser.add_argument("--limit", type=int, default=400, help="at most this many positions")
    args = parse_teacher_args(parser)
    if min(args.move_ms, args.every, args.limit) < 1 or args.depth < 0:
        parser.error("--move-ms, --every and --limit must be at least 1, --depth at least 0")
    args.limits = search_limits(parser, args.depth, args.move_ms)
    return args


def search_limits(parser: argparse.ArgumentParser, depth: int, move_ms: int) -> Limits:
    """``--depth`` if given, else ``--move-ms`` of the searching thread's CPU clock;
    ``parser.error`` for a limit the engine refuses."""
    try:
        return Limits(depth=depth) if depth else Limits(time_ms=move_ms, clock="cpu")
    except ValueError as exc:
        parser.error(str(exc))


def variant_limits(text: str, limits: Limits) -> tuple[str, Limits]:
    """The variant without its ``move_ms=N`` item, and its limits: that time a move on the
    CPU clock (what more time is worth, move by move), else ``limits``; ``SystemExit`` if
    refused."""
    items = [item for item in text.split(",") if item.strip()]
    times = [item for item in items if item.strip().startswith("move_ms=")]
    if times:
        try:
            limits = Limits(time_ms=int(times[-1].split("=", 1)[1]), clock="cpu")
        except ValueError as exc:
            raise SystemExit(f"--variant {text!r}: move_ms: {exc}") from None
    return ",".join(item for item in items if item not in times), limits


def variant_config(text: str) -> dict[str, object]:
    """The preset with the variant's ``KEY=VALUE`` items; ``SystemExit`` if refused."""
    items = [item for item in text.split(",") if item.strip()]
    try:
        config = merge_config(PRESETS[PRESET], set_config(items))
    except InvalidArgumentError as exc:
        raise SystemExit(f"--variant {text!r}: {exc}") from None
    violations = validate_config(config)
    if violations:
        raise SystemExit(f"--variant {text!r}: " + "; ".join(map(str, violations)))
    return config


def positions(games: list[dict[str, Any]], every: int, limit: int) -> list[list[int]]:
    """The move lists before every ``every``-th move of the built-in bot in each game
    (games in progress there: ``read_games`` checked every game)."""
    found: list[list[int]] = []
    for game in games:
        opening = list(game["opening"])
        moves = opening + list(game["moves"])
        parity = 0 if game["builtin"] == "black" else 1  # Black plays the even plies
        plies = [ply for ply in range(len(opening), len(moves)) if ply % 2 == parity]
        found += [moves[:ply] for ply in plies[::every]]
    return found[:limit]


def main() -> None:
    args = parse_args()
    games = read_games(args.games)
    configs = {}
    for text in args.variant:
        rest, limits = variant_limits(text, args.limits)
        configs[text] = (variant_config(rest), limits)
    try:
        teacher = catalog_teacher(args.catalog, args.teacher, "gomoku", args.teacher_ms)
    except ValueError as exc:
        raise SystemExit(str(exc)) from None
    asked = positions(games, args.every, args.limit)
    if not asked:
        raise SystemExit(f"{args.games}: no position where the built-in bot was to move")
    limit = f"depth {args.depth}" if args.depth else f"{args.move_ms} ms a move"
    print(f"{len(asked)} positions of the built-in bot from {len(games)} games; {limit}; "
          f"judged by {args.teacher}", flush=True)
    warm_up()
    chance: dict[tuple[int, ...], float] = {}
    chosen: dict[str, list[int]] = {}
    for text, (config, limits) in configs.items():
        chosen[text] = [choose_move(SIZE, "freestyle", moves, config, limits).move
                        for moves in asked]
        after = [(*moves, move) for moves, move in zip(asked, chosen[text], strict=True)]
        new = [line for line in dict.fromkeys(after) if line not in chance]
        known = {line: decided(list(line)) for line in new}
        chance |= {line: c for line, c in known.items() if c is not None}
        judge = [line for line, c in known.items() if c is None]
        try:
            judgements = teacher.judge([teacher_position(list(line)) for line in judge], 1)
        except ValueError as exc:
            raise SystemExit(f"the teacher {args.teacher}: {exc}") from None
        for line, judgement in zip(judge, judgements, strict=True):
            chance[line] = chance_after(judgement, args.teacher_scale)
        mean = statistics.fmean(chance[line] for line in after)
        other = sum(a != b for a, b in zip(chosen[text], chosen[args.variant[0]], strict=True))
        print(f"  {text or PRESET!r}: mean chance {100 * mean:.2f}%, "
              f"{other} moves other than the first variant's", flush=True)
    reference = args.variant[0]
    base = [chance[(*m, c)] for m, c in zip(asked, chosen[reference], strict=True)]
    for text in args.variant[1:]:
        mine = [chance[(*m, c)] for m, c in zip(asked, chosen[text], strict=True)]
        diff = [a - b for a, b in zip(mine, base, strict=True)]
        error = statistics.stdev(diff) / math.sqrt(len(diff)) if len(diff) > 1 else math.nan
        print(f"{text or PRESET!r} - {reference or PRESET!r}: {100 * statistics.fmean(diff):+.2f}"
              f" points of chance a move, standard error {100 * error:.2f}")


if __name__ == "__main__":
    main()
