"""A ladder-like workload through the services vs. the same games in one process.

Round robin of fixed-depth Othello bots, both colours, over a few repeated openings (the
shape of a ladder). Prints:

* in-process time: the same games played with the engines and rules library directly;
* service time with 1 and 2 workers (no shared cache): the arena overhead ratio
  (1 worker / in-process; target <= 1.10) and the scaling ratio (1 worker / 2 workers);
* with the shared transposition cache (2 workers): hit rate and engine time saved
  (target >= 30 % less engine time), and a check that every game is move-for-move the same.

    .venv/bin/python bench/arena_ladder.py [--games 100]
"""

from __future__ import annotations

import argparse
import time

from arena.services.worker.tcache import SharedSearchCache
from arena_common import LADDER_BOTS, config, ladder_plan, register, run_matches, stack

from arena.engine import dispatch
from arena.engine.api import Limits
from arena.games import PASS, new_position
from arena.v1 import match_pb2


def in_process(plan: list[tuple[str, str, list[int]]]) -> tuple[float, list[list[int]]]:
    dispatch.warm_up(["othello"])
    started = time.monotonic()
    games = []
    for black, white, opening in plan:
        position = new_position("othello")
        for move in opening:
            position.push(move)
        moves = []
        while not position.is_game_over():
            legal = position.legal_moves()
            if legal == [PASS]:
                move = PASS
            else:
                bot = LADDER_BOTS[black if position.turn.name == "BLACK" else white]
                move = dispatch.choose_move("othello", position.to_text(), [], bot,
                                            Limits(time_ms=60_000)).move
            position.push(move)
            moves.append(move)
        games.append(moves)
    return time.monotonic() - started, games


def moves_of(matches: list[match_pb2.Match]) -> list[list[int]]:
    return [[r.move.square for r in m.moves] for m in matches]


def engine_ms(matches: list[match_pb2.Match]) -> float:
    return sum(r.search.time_ms for m in matches for r in m.moves if not r.search.cache_hit)


def through_services(plan: list[tuple[str, str, list[int]]], workers: int,
                     shared_cache: bool) -> tuple[float, list[match_pb2.Match], dict[str, float]]:
    env = {"ARENA_SHARED_CACHE": "1" if shared_cache else "0"}
    with stack(workers, env) as running:
        assert running.durable is not None and running.cache is not None
        client = running.durable.client()
        for name, bot in LADDER_BOTS.items():
            register(client, name, bot)
        wall, matches = run_matches(client, [config(b, w, o) for b, w, o in plan])
        stats = SharedSearchCache(running.cache.client()).stats()
    return wall, matches, stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=100)
    args = parser.parse_args()
    plan = ladder_plan(args.games)
    local_s, local_games = in_process(plan)
    print(f"{len(plan)} games, in one process: {local_s:.1f} s")
    one_s, one, _ = through_services(plan, 1, False)
    print(f"services, 1 worker:  {one_s:.1f} s  (arena overhead ratio {one_s / local_s:.2f}x)")
    two_s, two, _ = through_services(plan, 2, False)
    print(f"services, 2 workers: {two_s:.1f} s  (scaling ratio {one_s / two_s:.2f}x)")
    cached_s, cached, stats = through_services(plan, 2, True)
    hits, misses = stats.get("hits", 0.0), stats.get("misses", 0.0)
    saved = 1 - engine_ms(cached) / max(1e-9, engine_ms(two))
    print(f"services, 2 workers, shared cache: {cached_s:.1f} s; hit rate "
          f"{hits / max(1.0, hits + misses):.1%} ({hits:.0f}/{hits + misses:.0f}); engine time "
          f"{engine_ms(two) / 1000:.1f} s -> {engine_ms(cached) / 1000:.1f} s "
          f"({saved:.1%} less)")
    same = moves_of(one) == moves_of(two) == moves_of(cached) == local_games
    print(f"every game move-for-move identical across all four runs: {same}")


if __name__ == "__main__":
    main()
