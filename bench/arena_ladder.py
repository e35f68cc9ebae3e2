"""A ladder through the services vs. the same games in one process; the shared cache.

The ladder is planned as the ladder service plans one (``bench/arena_common.ladder_plan``):
a round robin of five fixed-depth bots of ladder strength (KReversi presets at depth 9,
arena-fast at depth 8, lab-advanced; 3-30 ms per move), each opening of the
``othello-balanced`` suite twice per pairing with colours swapped, each game's seed drawn
from the ladder seed, the opening and the two bots. Prints, each a median over ``--repeat``
repetitions:

* in one process: the same games with the engines and the rules library called directly
  (configs validated once, as a worker does), and the engine time they took;
* services (embedded Redis, 1 referee) with 1 and 2 workers, shared cache off: the arena
  overhead ratio (1 worker / in process; target <= 1.10) and the scaling ratio
  (1 worker / 2 workers);
* services with 2 workers and the shared transposition cache, the way a ladder is used:
  a ladder of four of the bots on a cold cache, then ``--newcomer`` joins and the ladder is
  re-run with all five on the same openings and seed (the pairings of the first four replay
  their games, now from the cache): hit rate and engine time with vs. without the cache for
  each ladder and overall (target >= 30 % less engine time with repeated openings);
* whether every game was move-for-move identical in every run (it must be).

The speed of this machine drifts by 10-20 % over minutes (the same searches in one process,
run back to back, took 22.9 and 27.9 s), more than the overhead being measured. So the
three ways of playing take turns on slices of ``--chunk`` games (in one process, 1 worker,
2 workers, then the reverse order for the next slice), with both stacks kept up
throughout, and each repetition's ratios compare the sums over the same slices. The run
also prints what the ratio would be if the worker's searches had run exactly as fast as
the in-process ones (its time outside the searches added to the in-process wall time).

    .venv/bin/python bench/arena_ladder.py [--games 100] [--repeat 1] [--chunk 20]
                                           [--newcomer ryo-d9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from contextlib import AbstractContextManager
from pathlib import Path
from typing import NamedTuple

from arena.services.common.launcher import Launcher
from arena.services.common.protocol.tcache import SharedSearchCache
from arena.services.referee.runner import seed_for_ply
from arena_common import (
    LADDER_BOTS,
    MOVE_TIME_MS,
    Bench,
    Game,
    config,
    games_per_pairing,
    ladder_plan,
    register,
    run_matches,
    stack,
)

from arena.engine.api import Limits
from arena.games import OTHELLO, PASS, Color, new_position
from arena.v1 import match_pb2

Moves = list[list[int]]


class Round(NamedTuple):
    """Some games played one way: wall time, the games' moves, engine time, CPU by process."""

    wall_s: float
    games: Moves
    engine_s: float
    cpu: dict[str, float]
    matches: list[match_pb2.Match]  # through the services (empty in one process)

    @property
    def plies(self) -> int:
        return sum(len(g) for g in self.games)


def _sum(rounds: list[Round]) -> Round:
    cpu: dict[str, float] = {}
    for r in rounds:
        for name, seconds in r.cpu.items():
            cpu[name] = cpu.get(name, 0.0) + seconds
    return Round(sum(r.wall_s for r in rounds), [g for r in rounds for g in r.games],
                 sum(r.engine_s for r in rounds), cpu, [m for r in rounds for m in r.matches])


def in_process(plan: list[Game]) -> Round:
    """The games played by calling the engines and the rules library directly."""
    started, cpu = time.monotonic(), time.process_time()
    games, engine = [], 0.0
    othello = OTHELLO.engine()
    bots = {name: othello.prepare(config) for name, config in LADDER_BOTS.items()}
    for game in plan:
        position = new_position("othello")
        for move in game.opening:
            position.push(move)
        moves: list[int] = []
        while not position.is_game_over():
            if position.legal_moves() == [PASS]:
                move = PASS
            else:
                bot = bots[game.black if position.turn is Color.BLACK else game.white]
                result = othello.choose_move(
                    bot, position.to_text(), [*game.opening, *moves],
                    Limits(time_ms=MOVE_TIME_MS), seed=seed_for_ply(game.seed, len(moves)))
                move, engine = result.move, engine + result.elapsed_ms / 1000
            position.push(move)
            moves.append(move)
        games.append(moves)
    wall = time.monotonic() - started
    return Round(wall, games, engine, {"bench": time.process_time() - cpu}, [])


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


def _stack_cpu(running: Launcher) -> dict[str, float]:
    """CPU seconds of every process of the stack: services, workers, both Redis servers."""
    pids = {name: process.pid for name, process in running.processes.items()}
    for name, server in (("redis", running.durable), ("redis-cache", running.cache)):
        if server is not None and server.pid is not None:
            pids[name] = server.pid
    return {name: _cpu_seconds(pid) for name, pid in pids.items() if pid is not None}


class Services:
    """A running stack with the ladder's bots registered; plays slices of a plan on it."""

    def __init__(self, bench: Bench) -> None:
        self.bench = bench
        self.client = bench.client
        for name, bot in LADDER_BOTS.items():
            register(bench, name, bot)

    def cpu(self) -> dict[str, float]:
        return _stack_cpu(self.bench.running)

    def play(self, plan: list[Game]) -> Round:
        before = self.cpu()
        wall_s, matches = run_matches(
            self.bench, [config(g.black, g.white, g.opening, seed=g.seed) for g in plan])
        after = self.cpu()
        return Round(wall_s, moves_of(matches), engine_ms(matches, False) / 1000,
                     {k: after[k] - before[k] for k in after}, matches)


def _services(workers: int, shared_cache: bool) -> AbstractContextManager[Bench]:
    return stack(workers, {"ARENA_SHARED_CACHE": "1" if shared_cache else "0"})


class Repetition(NamedTuple):
    local: Round
    one: Round
    two: Round
    idle_cpu: float  # CPU the two idle stacks used while the in-process slices ran


def interleaved(plan: list[Game], chunk: int, one: Services, two: Services) -> Repetition:
    """The plan played in one process, with 1 and with 2 workers, slice by slice, taking
    turns (ABC, then CBA) so that the machine's drift hits all three alike."""
    played: dict[str, list[Round]] = {"local": [], "one": [], "two": []}
    idle = 0.0
    for index, start in enumerate(range(0, len(plan), chunk)):
        part = plan[start:start + chunk]
        order = ["local", "one", "two"]
        for way in order if index % 2 == 0 else order[::-1]:
            if way == "local":
                before = sum(one.cpu().values()) + sum(two.cpu().values())
                played[way].append(in_process(part))
                idle += sum(one.cpu().values()) + sum(two.cpu().values()) - before
            else:
                played[way].append((one if way == "one" else two).play(part))
    return Repetition(_sum(played["local"]), _sum(played["one"]), _sum(played["two"]), idle)


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


def _outside_ms(played: Round) -> float:
    """Wall time outside the searches, per ply (ms)."""
    return 1000 * (played.wall_s - played.engine_s) / max(1, played.plies)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=100, help="at least this many games")
    parser.add_argument("--repeat", type=int, default=1, help="repetitions (medians)")
    parser.add_argument("--chunk", type=int, default=20,
                        help="games per slice; the three ways take turns slice by slice")
    parser.add_argument("--newcomer", default="ryo-d9", choices=list(LADDER_BOTS),
                        help="the bot that joins the ladder for its re-run")
    args = parser.parse_args()
    names = list(LADDER_BOTS)
    per_pairing = games_per_pairing(args.games, len(names))
    plan = ladder_plan(names, per_pairing)
    before = ladder_plan([n for n in names if n != args.newcomer], per_pairing)
    openings = len({tuple(g.opening) for g in plan})
    print(f"{len(plan)} games: {len(LADDER_BOTS)} bots round robin, {openings} openings, each "
          f"twice per pairing, in slices of {args.chunk}; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    OTHELLO.engine().warm_up()
    reps: list[Repetition] = []
    reference: Moves = []
    differing: dict[str, int] = {}
    with _services(1, False) as one_stack, _services(2, False) as two_stack:
        one, two = Services(one_stack), Services(two_stack)
        for _ in range(args.repeat):
            rep = interleaved(plan, args.chunk, one, two)
            reps.append(rep)
            reference = reference or rep.local.games
            for name, played in (("in process", rep.local), ("1 worker", rep.one),
                                 ("2 workers", rep.two)):
                differing[name] = differing.get(name, 0) + _differing(played.games, reference)
            # The engine time the worker reported tells a slower search (machine noise,
            # caches shared with the referee and Redis) from time spent outside the engine.
            print(f"  run: in process {rep.local.wall_s:.1f} s (engine {rep.local.engine_s:.1f}"
                  f" s), 1 worker {rep.one.wall_s:.1f} s (engine {rep.one.engine_s:.1f} s), "
                  f"2 workers {rep.two.wall_s:.1f} s: overhead "
                  f"{rep.one.wall_s / rep.local.wall_s:.3f}x; outside the searches "
                  f"{_outside_ms(rep.local):.2f} vs {_outside_ms(rep.one):.2f} ms per ply; idle "
                  f"stacks {rep.idle_cpu:.1f} s CPU; load {os.getloadavg()[0]:.1f}", flush=True)
    local_s = statistics.median(r.local.wall_s for r in reps)
    one_s = statistics.median(r.one.wall_s for r in reps)
    two_s = statistics.median(r.two.wall_s for r in reps)
    overhead = statistics.median(r.one.wall_s / r.local.wall_s for r in reps)
    # Had the worker's searches run exactly as fast as the in-process ones: what the
    # services themselves add, free of the machine's drift between the two runs.
    same_search = statistics.median(
        (r.local.wall_s + (r.one.wall_s - r.one.engine_s) - (r.local.wall_s - r.local.engine_s))
        / r.local.wall_s for r in reps)
    scaling = statistics.median(r.one.wall_s / r.two.wall_s for r in reps)
    moves = sum(len(g) for g in reference)
    print(f"in one process:      {local_s:6.1f} s  ({1000 * local_s / max(1, moves):.1f} ms "
          f"per ply over {moves} plies)")
    print(f"services, 1 worker:  {one_s:6.1f} s  (arena overhead ratio {overhead:.3f}x, median "
          f"over {len(reps)} repetitions; {same_search:.3f}x with the in-process search times)")
    print(f"services, 2 workers: {two_s:6.1f} s  (scaling ratio {scaling:.2f}x)")
    middle = sorted(reps, key=lambda r: r.one.wall_s / r.local.wall_s)[len(reps) // 2]
    _cpu_line("1 worker", middle.one.cpu, middle.local.cpu["bench"])
    _cpu_line("2 workers", middle.two.cpu, middle.local.cpu["bench"])
    print(f"shared cache, 2 workers: a ladder of {len(names) - 1} bots ({len(before)} games), "
          f"then {args.newcomer} joins and it is re-run ({len(plan)} games), on one cache:")
    with _services(2, True) as cache_stack:
        cached = Services(cache_stack)
        first, rerun = cached.play(before), cached.play(plan)
        cache_redis = cache_stack.running.cache
        assert cache_redis is not None  # the launcher's embedded cache Redis
        print(f"    cache counters: {SharedSearchCache(cache_redis.client()).stats()}")
    _cache_line("ladder, cold cache    ", first.matches, first.wall_s)
    _cache_line(f"re-run with {args.newcomer}", rerun.matches, rerun.wall_s)
    _cache_line("both                  ", [*first.matches, *rerun.matches],
                first.wall_s + rerun.wall_s)
    differing["cache, ladder"] = _differing(first.games, _reference_for(before, plan, reference))
    differing["cache, re-run"] = _differing(rerun.games, reference)
    print("games that differ from the first in-process run (must all be 0): "
          + ", ".join(f"{name} {count}" for name, count in differing.items()))


if __name__ == "__main__":
    main()
