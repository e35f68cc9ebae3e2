"""Shared helpers of the arena benchmarks: an embedded stack, bots, matches, a ladder plan."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from tempfile import TemporaryDirectory

import redis
from arena.services.common.stack import Stack
from arena.services.referee.matches import FINISHED_STATES, MatchStore, create_match
from arena.services.registry.store import BotStore

from arena.bots.spec import config_to_struct, new_version
from arena.v1 import bots_pb2, common_pb2, match_pb2

# Fixed-depth bots (no clock decides a move), so every run plays the very same games.
LADDER_BOTS: dict[str, dict[str, object]] = {
    "arena-d6": {"evaluator": "arena", "depth": 6, "time_ms": 60_000, "endgame_empties": 12},
    "arena-d5": {"evaluator": "arena", "depth": 5, "time_ms": 60_000, "endgame_empties": 10},
    "kreversi-d5": {"evaluator": "kreversi", "depth": {"begin": 5, "middle": 5, "end": 5}},
    "lab-advanced": {"evaluator": "lab", "look_ahead": 3},
}
OPENINGS = [[19, 18], [19, 20], [19, 34], [37, 45], [26, 20]]  # d3c3, d3e3, d3c5, f5f6, c4e3


def register(client: redis.Redis, name: str, config: dict[str, object]) -> None:
    spec = bots_pb2.BotSpec(name=name, game=common_pb2.GAME_KIND_OTHELLO,
                            builtin=bots_pb2.BuiltinEngine(config=config_to_struct(config)))
    BotStore(client).create(new_version(spec, 1, "bench", datetime.now(UTC)))


def ladder_plan(games: int) -> list[tuple[str, str, list[int]]]:
    """Round robin with both colours over repeated openings, cycled up to ``games``."""
    pairs = [(a, b) for a, b in itertools.permutations(LADDER_BOTS, 2)]
    schedule = [(a, b, opening) for opening in OPENINGS for a, b in pairs]
    return list(itertools.islice(itertools.cycle(schedule), games))


def config(black: str, white: str, opening: list[int], move_time_ms: int = 60_000,
           seed: int = 1) -> match_pb2.MatchConfig:
    return match_pb2.MatchConfig(
        game=common_pb2.GameSpec(kind=common_pb2.GAME_KIND_OTHELLO),
        black=common_pb2.BotRef(name=black), white=common_pb2.BotRef(name=white),
        opening=opening, seed=seed,
        time_control=common_pb2.TimeControl(move_time_ms=move_time_ms))


def run_matches(client: redis.Redis, configs: list[match_pb2.MatchConfig],
                timeout_s: float = 3600) -> tuple[float, list[match_pb2.Match]]:
    """Create every match at once and wait for all; returns wall seconds and the matches."""
    started = time.monotonic()
    ids = [create_match(client, c, "bench").id for c in configs]
    store = MatchStore(client)
    deadline = started + timeout_s
    pending = set(ids)
    while pending and time.monotonic() < deadline:
        pending = {i for i in pending if store.header(i).status not in FINISHED_STATES}
        time.sleep(0.05)
    if pending:
        raise TimeoutError(f"{len(pending)} matches did not finish")
    return time.monotonic() - started, [store.get(i) for i in ids]


@contextmanager
def stack(workers: int, env: dict[str, str] | None = None) -> Iterator[Stack]:
    with TemporaryDirectory(prefix="arena-bench-") as home:
        running = Stack(home=Path(home), workers=workers,
                        extra_env={"ARENA_WARM_GAMES": "othello", **(env or {})})
        with running:
            yield running
