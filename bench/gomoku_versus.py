"""Games of an arena-gomoku preset against a protocol engine, kept as records to train on.

    python bench/gomoku_versus.py --engine rapfi-n30000 --catalog /path/engines.toml \\
        --games 1100 --seed 7 --nodes 60000 --jobs 2 --output FOLDER

Self-play positions (``arena engine train gomoku --games``) are not the positions Arena's
bots meet: against a strong engine the evaluation reads its games' positions far worse
(arena/engine/gomoku/README.md). These games are made to be trained on, with a teacher's
labels: ``arena engine train gomoku --records FOLDER --teacher NAME ...``.

Game ``g`` starts from one of the balanced openings (``--openings``: the 12 of
``gomoku-balanced15``, or the 200 of ``gomoku-wide15``) with ``--random-moves`` random
moves on top, each on an empty cell within two of a stone, and the built-in bot takes
Black or White; all three are drawn from ``random.Random(f"{seed}:{g}")``. The bot
(``--bot``, an arena-gomoku preset) searches ``--nodes`` nodes a move, and the engine
plays by its catalog limits (bound it by nodes, as Rapfi's ``max_node``, to make it
deterministic) within ``--engine-ms`` a move. A game ends at a five or a full board
(freestyle 15x15) and is written as ``FOLDER/g<seed>-<g>.psq``. ``--jobs`` processes
play the games, each every ``jobs``-th one with an engine process of its own (an engine
that keeps its hash table between games, as Rapfi does, plays each game the same for
the same ``--jobs``). Printed: the bot's score against the engine.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from arena.services.worker.engines.catalog import load_catalog
from arena.services.worker.engines.client import PlayLimits
from arena.services.worker.engines.failures import EngineFailure
from arena.services.worker.engines.pool import EnginePool

from arena.engine.api import MAX_NODES, Limits
from arena.engine.gomoku import choose_move
from arena.engine.gomoku.config import ARENA_GOMOKU, PRESETS
from arena.errors import ArenaError
from arena.formats.psq import psq_from_moves, write_psq
from arena.games import GomokuBoard
from arena.openings import UnknownSuiteError, load_suite

SIZE = 15
NEAR = 2  # a random move lies within this many cells of a stone, in both directions


def start(seed: int, game: int, random_moves: int, suite: str = "gomoku-balanced15"
          ) -> tuple[list[int], int]:
    """Game ``game``'s opening and the bot's colour (0 Black, 1 White)."""
    rng = random.Random(f"{seed}:{game}")
    opening = list(rng.choice(load_suite(suite).openings).moves)
    colour = rng.randrange(2)
    for _ in range(random_moves):
        taken = set(opening)
        near = sorted({y * SIZE + x for m in opening
                       for y in range(m // SIZE - NEAR, m // SIZE + NEAR + 1)
                       for x in range(m % SIZE - NEAR, m % SIZE + NEAR + 1)
                       if 0 <= y < SIZE and 0 <= x < SIZE} - taken)
        opening.append(rng.choice(near))
    return opening, colour


def play_stripe(args: argparse.Namespace, first: int, stop: Any) -> list[tuple[int, float]]:
    """Games ``first``, ``first + jobs``, ...: (game, the bot's points) of each; ``stop``
    (an event shared by the stripes) is set when one fails, and ends the others after
    their current game."""
    spec = load_catalog(args.catalog).get(args.engine)
    pool = EnginePool(capacity=1)
    bot = PRESETS[args.bot]
    limits, engine_limits = Limits(nodes=args.nodes), PlayLimits(move_time_ms=args.engine_ms)
    results = []
    try:
        for game in range(first, args.games, args.jobs):
            if stop.is_set():
                break
            moves, colour = start(args.seed, game, args.random_moves, args.openings)
            board = GomokuBoard(SIZE, "freestyle")
            for move in moves:
                board.push(move)
            while not board.is_game_over():
                if len(moves) % 2 == colour:
                    move = choose_move(SIZE, "freestyle", moves, bot, limits).move
                else:
                    try:
                        move = pool.play(spec, board.to_text(), tuple(moves),
                                         engine_limits).move
                    except EngineFailure as exc:  # as text: it does not cross processes
                        stop.set()
                        raise ValueError(f"game {game}: {exc.report()}") from None
                board.push(move)
                moves.append(move)
            outcome = board.outcome()
            assert outcome is not None
            points = 0.5 if outcome.winner is None else float(outcome.winner.value == colour)
            (args.output / f"g{args.seed}-{game:05}.psq").write_text(
                write_psq(psq_from_moves(SIZE, moves)))
            results.append((game, points))
    finally:
        pool.close()
    return results


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine", required=True, help="the catalog's engine to play")
    parser.add_argument("--catalog", required=True, help="engine catalog (TOML)")
    parser.add_argument("--output", type=Path, required=True, help="folder for the records")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bot", default="arena-gomoku-board", help="arena-gomoku preset")
    parser.add_argument("--nodes", type=int, default=60_000, help="the bot's nodes a move")
    parser.add_argument("--engine-ms", type=int, default=10_000,
                        help="the engine's time a move (bound it by nodes instead)")
    parser.add_argument("--openings", default="gomoku-balanced15",
                        help="the 15x15 suite the openings are drawn from (%(default)s; "
                             "gomoku-wide15: 200)")
    parser.add_argument("--random-moves", type=int, default=2, help="after the opening")
    parser.add_argument("--jobs", type=int, default=1, help="processes playing the games")
    args = parser.parse_args(argv)
    presets = sorted(n for n, c in PRESETS.items() if c["evaluator"] == ARENA_GOMOKU)
    problems = [
        (args.bot not in presets, f"--bot must be one of {', '.join(presets)}"),
        (not 1 <= args.games <= 100_000, "--games must be in 1..100000"),
        (not 1 <= args.nodes <= MAX_NODES, f"--nodes must be in 1..{MAX_NODES}"),
        (not 1 <= args.engine_ms <= 600_000, "--engine-ms must be in 1..600000"),
        # more could make a five before the game starts
        (not 0 <= args.random_moves <= 4, "--random-moves must be in 0..4"),
        (not 1 <= args.jobs <= 64, "--jobs must be in 1..64"),
    ]
    for bad, message in problems:
        if bad:
            parser.error(message)
    try:
        suite = load_suite(args.openings)
        suite.resolve("gomoku", "freestyle", SIZE)
    except UnknownSuiteError as exc:
        parser.error(f"--openings: {exc}")
    if suite.game != "gomoku":
        parser.error(f"--openings must be a 15x15 Gomoku suite (gomoku-balanced15, "
                     f"gomoku-wide15), got {args.openings!r}")
    try:
        spec = load_catalog(args.catalog).get(args.engine)
    except ArenaError as exc:
        parser.error(str(exc))
    if "gomoku" not in spec.games:
        parser.error(f"engine {args.engine!r} plays {', '.join(spec.games)}, not gomoku")
    try:
        args.output.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        parser.error(f"--output {str(args.output)!r}: {exc.strerror or exc}")
    args.jobs = min(args.jobs, args.games)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    with multiprocessing.Manager() as manager, ProcessPoolExecutor(args.jobs) as workers:
        stop = manager.Event()
        stripes = [workers.submit(play_stripe, args, first, stop) for first in range(args.jobs)]
        try:
            results = sorted(r for stripe in stripes for r in stripe.result())
        except ValueError as exc:  # the games written so far stay
            print(f"gomoku_versus.py: error: {args.engine}: {exc}", file=sys.stderr)
            return 1
    points = sum(p for _g, p in results)
    print(f"{len(results)} games of {args.bot} ({args.nodes} nodes a move) against "
          f"{args.engine} written to {args.output}: the bot scored {points:g}/{len(results)} "
          f"({100 * points / len(results):.1f} %) in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
