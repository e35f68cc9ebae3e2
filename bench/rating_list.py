"""The arena's rating list (``services/ladder/ratings.py``) over many ladders: prints the
time of a first read, of a read with nothing new, and of a read after one more game.

    .venv/bin/python bench/rating_list.py [--ladders 2000] [--bots 200] [--games 12]

An embedded Redis holds ``--ladders`` Othello ladders of 4 bots each, drawn from ``--bots``
bot versions, each ladder with ``--games`` results counted through the ladder store's own
script (the stronger bot of a game wins more often: each bot has a hidden strength), and
one ladder left running. The list is read in this process, as the ladder service reads it,
with one BLAS thread as the service has (``OPENBLAS_NUM_THREADS`` set outside overrides it).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: as the ladder service

import argparse
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from tempfile import TemporaryDirectory

import redis
from arena.services.common.embedded_redis import EmbeddedRedis
from arena.services.common.protocol.ladders import RUNNING, LadderStore, ResultRecord
from arena.services.ladder.ratings import RatingList

from arena.v1 import common_pb2, ladder_pb2

OTHELLO = common_pb2.GameSpec(kind=common_pb2.GAME_KIND_OTHELLO, variant="standard",
                              board_size=8)
BOTS_PER_LADDER = 4


def _ladder(store: LadderStore, index: int, bots: list[int], games: int) -> str:
    info = ladder_pb2.LadderInfo(
        id=f"L{index:013d}-bench", status=RUNNING, games_total=games,
        config=ladder_pb2.LadderConfig(game=OTHELLO, bots=[
            common_pb2.BotRef(name=f"bot-{bot:04d}", version=1) for bot in bots]))
    store.create(info, index)
    return info.id


def _game(store: LadderStore, ladder_id: str, index: int, strengths: list[float],
          rng: random.Random) -> None:
    black, white = rng.sample(range(BOTS_PER_LADDER), 2)
    edge = strengths[black] - strengths[white]
    roll = rng.random()
    score = 1.0 if roll < 0.45 + edge else (0.5 if roll < 0.55 + edge else 0.0)
    match_id = f"{ladder_id}-{index}"
    store.record_game(ladder_id, index, match_id)
    store.count(ladder_id, match_id, ResultRecord(black, white, score))


def _median_ms(runs: int, call: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def run(ladders: int, bots: int, games: int, seed: int) -> None:
    rng = random.Random(seed)
    strength = [rng.uniform(-0.2, 0.2) for _ in range(bots)]
    with TemporaryDirectory() as folder, EmbeddedRedis(Path(folder), "durable") as server:
        client = redis.Redis.from_url(server.url)
        store = LadderStore(client)
        started = time.perf_counter()
        for index in range(ladders):
            drawn = rng.sample(range(bots), BOTS_PER_LADDER)
            ladder_id = _ladder(store, index, drawn, games)
            for game in range(games):
                _game(store, ladder_id, game, [strength[b] for b in drawn], rng)
        open_bots = rng.sample(range(bots), BOTS_PER_LADDER)
        running = _ladder(store, ladders, open_bots, 10_000)
        print(f"{ladders} ladders of {BOTS_PER_LADDER} of {bots} bots, {games} games each "
              f"({ladders * games} games), filled in {time.perf_counter() - started:.1f} s")

        first = RatingList(store)
        cold = _median_ms(1, lambda: first.ratings(OTHELLO))
        warm = _median_ms(20, lambda: first.ratings(OTHELLO))
        played = iter(range(10_000))

        def after_a_game() -> object:
            _game(store, running, next(played), [strength[b] for b in open_bots], rng)
            started = time.perf_counter()
            first.ratings(OTHELLO)
            return time.perf_counter() - started

        moved = statistics.median(after_a_game() for _ in range(10)) * 1000
        rated = first.ratings(OTHELLO)
        print(f"rated {len(rated.rows)} bots in {rated.pools} pool(s) from {rated.games} games")
        print(f"first read (every ladder's game and results)  {cold:9.2f} ms")
        print(f"nothing new (median of 20)                    {warm:9.2f} ms")
        print(f"after one more game (median of 10)            {moved:9.2f} ms")
        client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ladders", type=int, default=2000)
    parser.add_argument("--bots", type=int, default=200)
    parser.add_argument("--games", type=int, default=12)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    run(args.ladders, args.bots, args.games, args.seed)


if __name__ == "__main__":
    main()
