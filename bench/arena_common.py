"""Shared helpers of the arena benchmarks: an embedded stack, bots, matches, a ladder plan."""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryDirectory

import redis
from arena.clients.sdk import ArenaClient
from arena.services.common.launcher import Launcher
from arena.services.common.protocol.matches import FINISHED_STATES, MatchStore
from arena.services.ladder.schedule import even_games, pairings, plan_games

from arena.bots.spec import config_to_struct
from arena.engine.othello import PRESETS
from arena.openings import load_suite, select_openings
from arena.v1 import bots_pb2, common_pb2, ladder_pb2, match_pb2


def _kreversi(preset: str, depth: int) -> dict[str, object]:
    """A KReversi preset searching ``depth`` - 1 plies in every phase, with no clock."""
    bot = copy.deepcopy(PRESETS[preset])
    bot["depth"] = {"begin": depth, "middle": depth, "end": depth}
    bot["time_limit_s"] = 60  # the most KReversi allows; moves take < 0.5 s
    return bot


# Ladder-strength bots at fixed depths (no clock ever decides a move, so every run plays the
# very same games): 10-30 ms per move on one core, except the weak lab-advanced (~3 ms),
# as a ladder has its weaker entrants. The KReversi ones keep their random tie rule: their
# first plies depend on each game's seed, as in a real ladder.
LADDER_BOTS: dict[str, dict[str, object]] = {
    "arena-d8": {**copy.deepcopy(PRESETS["arena-fast"]), "depth": 8, "time_ms": 600_000,
                 "endgame_empties": 14},
    "madoka-d9": _kreversi("madoka", 9),
    "terra-d9": _kreversi("terra", 9),
    "ryo-d9": _kreversi("ryo", 9),
    "lab-advanced": dict(PRESETS["lab-advanced"]),
}
MOVE_TIME_MS = 600_000
LADDER_SEED = 20240601


@dataclass
class Bench:
    """A running stack, reached as a client would (the SDK) plus its durable Redis (to
    watch matches end without loading the services)."""

    running: Launcher
    sdk: ArenaClient
    client: redis.Redis


def register(bench: Bench, name: str, config: dict[str, object]) -> None:
    spec = bots_pb2.BotSpec(name=name, game=common_pb2.GAME_KIND_OTHELLO,
                            builtin=bots_pb2.BuiltinEngine(config=config_to_struct(config)))
    bench.sdk.register_bot(spec)


@dataclass(frozen=True)
class Game:
    black: str
    white: str
    opening: list[int]
    seed: int


def ladder_plan(names: list[str], games_per_pairing: int, seed: int = LADDER_SEED
                ) -> list[Game]:
    """A round robin of ``names`` (bots of LADDER_BOTS, registered as version 1) planned
    exactly as the ladder service plans one: ``games_per_pairing`` / 2 openings of the
    ``othello-balanced`` suite, each twice per pairing with colours swapped, and each
    game's seed from the ladder seed, the opening and the two bot versions."""
    per_pairing = even_games(games_per_pairing, 0)
    openings = select_openings(load_suite("othello-balanced"), per_pairing // 2, seed)
    planned = plan_games([f"{name}@1" for name in names],
                         ladder_pb2.LADDER_FORMAT_ROUND_ROBIN, per_pairing, openings, seed)
    return [Game(names[g.black], names[g.white], list(g.opening.moves), g.seed)
            for g in planned]


def games_per_pairing(games: int, bots: int) -> int:
    """Games per pairing for a round robin of ``bots`` to play at least ``games`` games."""
    pairs = len(pairings(bots, ladder_pb2.LADDER_FORMAT_ROUND_ROBIN))
    return even_games(-(-games // pairs), 0)


def config(black: str, white: str, opening: list[int], move_time_ms: int = MOVE_TIME_MS,
           seed: int = 1) -> match_pb2.MatchConfig:
    return match_pb2.MatchConfig(
        game=common_pb2.GameSpec(kind=common_pb2.GAME_KIND_OTHELLO),
        black=common_pb2.BotRef(name=black), white=common_pb2.BotRef(name=white),
        opening=opening, seed=seed,
        time_control=common_pb2.TimeControl(move_time_ms=move_time_ms))


def run_matches(bench: Bench, configs: list[match_pb2.MatchConfig],
                timeout_s: float = 3600) -> tuple[float, list[match_pb2.Match]]:
    """Create every match at once and wait for all; returns wall seconds and the matches.

    Waits on one match at a time, in creation order (they finish roughly in that order):
    one status read per 20 ms. Polling every pending match would load the machine that
    plays them (100 reads per poll, on the Redis and the cores the services use).
    """
    started = time.monotonic()
    ids = [bench.sdk.create_match(c).id for c in configs]
    store = MatchStore(bench.client)
    deadline = started + timeout_s
    for match_id in ids:
        while store.header(match_id).status not in FINISHED_STATES:
            if time.monotonic() > deadline:
                raise TimeoutError(f"match {match_id} and later ones did not finish")
            time.sleep(0.02)
    return time.monotonic() - started, [store.get(i) for i in ids]


@contextmanager
def stack(workers: int, env: dict[str, str] | None = None) -> Iterator[Bench]:
    with TemporaryDirectory(prefix="arena-bench-") as home:
        running = Launcher(home=Path(home), workers=workers,
                           env={"ARENA_WARM_GAMES": "othello", **(env or {})})
        with running, ArenaClient(registry=running.target("registry"),
                                  referee=running.target("referee"),
                                  token=running.admin_token) as sdk:
            client = redis.Redis.from_url(running.redis_url)
            try:
                yield Bench(running, sdk, client)
            finally:
                client.close()
