"""A ladder through the services vs. the same games in one process; the shared cache.

The ladder is planned as the ladder service plans one (``bench/arena_common.ladder_plan``):
a round robin of five fixed-depth bots of ladder strength (KReversi presets at depth 9,
arena-fast at depth 8, lab-advanced; 3-30 ms per move), each opening of the
``othello-balanced`` suite twice per pairing with colours swapped, each game's seed drawn
from the ladder seed, the opening and the two bots. Prints, each a median over ``--repeat``
interleaved repetitions:

* in one process: the same games with the engines and the rules library called directly
  (configs validated once, as a worker does), and the engine time they took;
* services (embedded Redis, 1 referee) with 1 and 2 workers, shared cache off: the arena
  overhead ratio (1 worker / in process, the median of each repetition's pair; target
  <= 1.10) and the scaling ratio
  (1 worker / 2 workers);
* services with 2 workers and the shared transposition cache, the way a ladder is used:
  a ladder of four of the bots on a cold cache, then ``--newcomer`` joins and the ladder is
  re-run with all five on the same openings and seed (the pairings of the first four replay
  their games, now from the cache): hit rate and engine time with vs. without the cache for
  each ladder and overall (target >= 30 % less engine time with repeated openings);
* whether every game was move-for-move identical in every run (it must be).

    .venv/bin/python bench/arena_ladder.py [--games 100] [--repeat 1] [--newcomer ryo-d9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path
from typing import NamedTuple

from arena.services.common.stack import Stack
from arena.services.referee.runner import seed_for_ply
from arena.services.worker.tcache import SharedSearchCache
from arena_common import (
    LADDER_BOTS,
    MOVE_TIME_MS,
    Game,
    config,
    games_per_pairing,
    ladder_plan,
    register,
    run_matches,
    stack,
)

from arena.engine import dispatch
from arena.engine.api import Limits
from arena.games import PASS, Color, new_position
from arena.v1 import match_pb2

Moves = list[list[int]]


def in_process(plan: list[Game]) -> tuple[float, Moves, float, float]:
    """Wall seconds, the games' moves, the engine time (ms) and the CPU seconds."""
    dispatch.warm_up(["othello"])
    started, cpu = time.monotonic(), time.process_time()
    games, engine_ms = [], 0.0
    for game in plan:
        position = new_position("othello")
        for move in game.opening:
            position.push(move)
        moves: list[int] = []
        while not position.is_game_over():
            if position.legal_moves() == [PASS]:
                move = PASS
            else:
                bot = LADDER_BOTS[game.black if position.turn is Color.BLACK else game.white]
                result = dispatch.choose_move(
                    "othello", position.to_text(), [*game.opening, *moves], bot,
                    Limits(time_ms=MOVE_TIME_MS), seed=seed_for_ply(game.seed, len(moves)),
                    validated=True)
                move, engine_ms = result.move, engine_ms + result.elapsed_ms
            position.push(move)
            moves.append(move)
        games.append(moves)
    return time.monotonic() - started, games, engine_ms, time.process_time() - cpu


def moves_of(matches: list[match_pb2.Match]) -> Moves:
    return [[r.move.square for r in m.moves] for m in matches]


def engine_ms(matches: list[match_pb2.Match], hits: bool) -> float:
    """Engine time of the searches run (hits=False) or answered from the cache (True);
    a hit's time is the time its original search took."""
    return sum(r.search.time_ms for m in matches for r in m.moves
               if r.search.cache_hit == hits and r.move.square != PASS)


def searches(matches: list[match_pb2.Match], hits: bool) -> int:
    return sum(1 for m in matches for r in m.moves
               if r.search.cache_hit == hits and r.move.square != PASS)


def _cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _stack_cpu(running: Stack) -> dict[str, float]:
    """CPU seconds of every process of the stack: services, workers, both Redis servers."""
    pids = {child.name: child.process.pid for child in running.children}
    for name, server in (("redis", running.durable), ("redis-cache", running.cache)):
        process = getattr(server, "_process", None)
        if process is not None:
            pids[name] = process.pid
    return {name: _cpu_seconds(pid) for name, pid in pids.items()}


class Round(NamedTuple):
    wall_s: float
    matches: list[match_pb2.Match]
    cpu: dict[str, float]  # CPU seconds per process of the stack during the round


def through_services(plans: list[list[Game]], workers: int, shared_cache: bool
                     ) -> list[Round]:
    """Plays the ladders one after the other on one stack (one cache)."""
    env = {"ARENA_SHARED_CACHE": "1" if shared_cache else "0"}
    out = []
    with stack(workers, env) as running:
        assert running.durable is not None and running.cache is not None
        client = running.durable.client()
        for name, bot in LADDER_BOTS.items():
            register(client, name, bot)
        for plan in plans:
            before = _stack_cpu(running)
            wall_s, matches = run_matches(
                client, [config(g.black, g.white, g.opening, seed=g.seed) for g in plan])
            after = _stack_cpu(running)
            out.append(Round(wall_s, matches, {k: after[k] - before[k] for k in after}))
        stats = SharedSearchCache(running.cache.client()).stats()
    if shared_cache:
        print(f"    cache counters: {stats}")
    return out


def _cache_line(label: str, matches: list[match_pb2.Match], wall_s: float) -> None:
    hit, miss = searches(matches, True), searches(matches, False)
    run_ms, saved_ms = engine_ms(matches, False), engine_ms(matches, True)
    needed_ms = run_ms + saved_ms
    print(f"  {label}: {wall_s:6.1f} s; hit rate {hit / max(1, hit + miss):6.1%} "
          f"({hit}/{hit + miss}); engine time {needed_ms / 1000:6.1f} s without the cache "
          f"-> {run_ms / 1000:6.1f} s with it ({saved_ms / max(1e-9, needed_ms):.1%} less)")


def _differing(games: Moves, reference: Moves) -> int:
    return sum(1 for a, b in zip(games, reference, strict=True) if a != b)


def _key(game: Game) -> tuple[str, str, tuple[int, ...]]:
    return game.black, game.white, tuple(game.opening)


def _reference_for(plan: list[Game], full: list[Game], reference: Moves) -> Moves:
    """The reference games of ``plan``, a sub-ladder of ``full``: the ladder service plans
    each game of the sub-ladder exactly as the same game of the full one (same seed)."""
    by_key = {_key(g): (g.seed, moves) for g, moves in zip(full, reference, strict=True)}
    out = []
    for game in plan:
        seed, moves = by_key[_key(game)]
        assert seed == game.seed, f"{_key(game)} has another seed in the larger ladder"
        out.append(moves)
    return out


def _cpu_line(label: str, cpu: dict[str, float], local_cpu: float) -> None:
    total = sum(cpu.values())
    parts = ", ".join(f"{name} {seconds:.1f}" for name, seconds in sorted(cpu.items())
                      if seconds >= 0.05)
    print(f"  CPU, {label}: {total:6.1f} s ({parts}); {total / local_cpu:.3f}x the "
          f"in-process CPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=100, help="at least this many games")
    parser.add_argument("--repeat", type=int, default=1, help="repetitions (medians)")
    parser.add_argument("--newcomer", default="ryo-d9", choices=list(LADDER_BOTS),
                        help="the bot that joins the ladder for its re-run")
    args = parser.parse_args()
    names = list(LADDER_BOTS)
    per_pairing = games_per_pairing(args.games, len(names))
    plan = ladder_plan(names, per_pairing)
    before = ladder_plan([n for n in names if n != args.newcomer], per_pairing)
    openings = len({tuple(g.opening) for g in plan})
    print(f"{len(plan)} games: {len(LADDER_BOTS)} bots round robin, {openings} openings, each "
          f"twice per pairing; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    local, one, two, local_cpu = [], [], [], []
    reference: Moves = []
    differing: dict[str, int] = {}
    for _ in range(args.repeat):  # interleaved, so a change in machine load hits all three
        local_s, local_games, local_engine, cpu_s = in_process(plan)
        one_run = through_services([plan], 1, False)[0]
        two_run = through_services([plan], 2, False)[0]
        local.append(local_s)
        local_cpu.append(cpu_s)
        one.append(one_run)
        two.append(two_run)
        reference = reference or local_games
        for name, games in (("in process", local_games), ("1 worker", moves_of(one_run.matches)),
                            ("2 workers", moves_of(two_run.matches))):
            differing[name] = differing.get(name, 0) + _differing(games, reference)
        # The engine time the worker reported tells a slower search (machine noise, caches
        # shared with the referee and Redis) from time spent outside the engine.
        print(f"  run: in process {local_s:.1f} s (engine {local_engine / 1000:.1f} s, CPU "
              f"{cpu_s:.1f} s), 1 worker {one_run.wall_s:.1f} s (engine "
              f"{engine_ms(one_run.matches, False) / 1000:.1f} s), 2 workers "
              f"{two_run.wall_s:.1f} s; load {os.getloadavg()[0]:.1f}", flush=True)
    local_s, cpu_s = statistics.median(local), statistics.median(local_cpu)
    one_s = statistics.median(r.wall_s for r in one)
    two_s = statistics.median(r.wall_s for r in two)
    moves = sum(len(g) for g in reference)
    print(f"in one process:      {local_s:6.1f} s  ({1000 * local_s / max(1, moves):.1f} ms "
          f"per ply over {moves} plies)")
    # Each repetition's services run is timed right after its in-process run: the median
    # of those paired ratios is what machine drift between repetitions affects least.
    paired = statistics.median(r.wall_s / s for r, s in zip(one, local, strict=True))
    print(f"services, 1 worker:  {one_s:6.1f} s  (arena overhead ratio {paired:.3f}x: median "
          f"of the {len(one)} paired runs; {one_s / local_s:.3f}x of the medians)")
    print(f"services, 2 workers: {two_s:6.1f} s  (scaling ratio {one_s / two_s:.2f}x)")
    _cpu_line("1 worker", one[len(one) // 2].cpu, cpu_s)
    _cpu_line("2 workers", two[len(two) // 2].cpu, cpu_s)
    print(f"shared cache, 2 workers: a ladder of {len(names) - 1} bots ({len(before)} games), "
          f"then {args.newcomer} joins and it is re-run ({len(plan)} games), on one cache:")
    first, rerun = through_services([before, plan], 2, True)
    _cache_line("ladder, cold cache    ", first.matches, first.wall_s)
    _cache_line(f"re-run with {args.newcomer}", rerun.matches, rerun.wall_s)
    _cache_line("both                  ", [*first.matches, *rerun.matches],
                first.wall_s + rerun.wall_s)
    differing["cache, ladder"] = _differing(moves_of(first.matches),
                                            _reference_for(before, plan, reference))
    differing["cache, re-run"] = _differing(moves_of(rerun.matches), reference)
    print("games that differ from the first in-process run (must all be 0): "
          + ", ".join(f"{name} {count}" for name, count in differing.items()))


if __name__ == "__main__":
    main()
