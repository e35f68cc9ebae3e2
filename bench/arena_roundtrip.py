"""Move round trip overhead (referee -> worker -> referee) with a trivial bot.

Plays games of a one-ply bot through a real embedded stack (1 referee, 1 worker), one game
at a time, and reports per move the time between consecutive recorded moves minus the
engine's own search time: the referee publishing the job, the worker taking it, posting
``started`` and the answer, the referee waking, judging and recording it. Figures come from
Redis server timestamps (ms resolution; the means of the three legs are still exact on
average over hundreds of moves):

* to ``started``: from the previous move's record to the worker's ``started`` entry
  (referee: next position, job, XADD; worker: XREADGROUP wake-up, parse, ply check);
* worker: ``started`` to ``result`` minus the engine's search time (bot preparation,
  cache probe, result posting);
* referee: ``result`` to the move's record (wake-up, judging, the ledger script).

    .venv/bin/python bench/arena_roundtrip.py [--games 6] [--runs 3] [--bot lab-beginner]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
from typing import Any

from arena.services.common.protocol import keys
from arena_common import config, register, run_matches, stack

from arena.engine.othello import PRESETS
from arena.v1 import match_pb2


def _ms(entry_id: bytes) -> int:
    return int(entry_id.split(b"-")[0])


def legs(client: Any, match: match_pb2.Match) -> list[tuple[float, float, float, float]]:
    """Per move after the first: (total overhead, to started, worker, referee) in ms."""
    recorded: dict[int, tuple[int, float]] = {}
    for entry_id, fields in client.xrange(keys.match(match.id, "events")):
        event = match_pb2.MatchEvent.FromString(fields[b"pb"])
        if event.WhichOneof("event") == "move":
            recorded[event.move.ply] = (_ms(entry_id), event.move.search.time_ms)
    started: dict[int, int] = {}
    answered: dict[int, int] = {}
    # (Before started entries had their own stream they were in the result stream.)
    for key in (keys.match(match.id, "started"), keys.match(match.id, "results")):
        for entry_id, fields in client.xrange(key):
            target = started if fields[b"kind"] == b"started" else answered
            target.setdefault(int(fields[b"ply"]), _ms(entry_id))
    out: list[tuple[float, float, float, float]] = []
    for before, ply in itertools.pairwise(sorted(recorded)):
        if ply != before + 1 or ply not in started or ply not in answered:
            continue  # a pass in between: the referee played it without a worker
        at, search = recorded[ply]
        total = at - recorded[before][0] - search
        out.append((total, started[ply] - recorded[before][0],
                    answered[ply] - started[ply] - search, at - answered[ply]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=6, help="games per run")
    parser.add_argument("--runs", type=int, default=3, help="fresh stacks; medians reported")
    parser.add_argument("--bot", default="lab-beginner", help="an Othello preset")
    args = parser.parse_args()
    runs: list[list[tuple[float, float, float, float]]] = []
    for _ in range(args.runs):
        with stack(workers=1) as bench:
            register(bench, "bot", dict(PRESETS[args.bot]))
            configs = [config("bot", "bot", []) for _ in range(args.games + 1)]
            run_matches(bench, configs[:1])  # warm the processes
            matches = [run_matches(bench, [c])[1][0] for c in configs[1:]]
            runs.append([leg for m in matches for leg in legs(bench.client, m)])
    print(f"move round trip overhead, bot {args.bot}, 1 referee + 1 worker, one game at a "
          f"time; {args.runs} runs of {args.games} games, median of the runs' figures:")
    names = ("total", "to started", "worker", "referee")
    for index, name in enumerate(names):
        figures = []
        for samples in runs:
            values = sorted(s[index] for s in samples)
            p99 = values[min(len(values) - 1, int(len(values) * 0.99))]
            figures.append((statistics.median(values), p99, statistics.fmean(values)))
        p50, p99, mean = (statistics.median(f[i] for f in figures) for i in range(3))
        print(f"  {name:<11} p50 {p50:6.2f} ms   p99 {p99:6.2f} ms   mean {mean:6.2f} ms"
              f"   ({sum(len(s) for s in runs)} moves)" if index == 0 else
              f"  {name:<11} mean {mean:6.2f} ms")


if __name__ == "__main__":
    main()
