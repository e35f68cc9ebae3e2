"""Move round trip overhead (referee -> worker -> referee) with a trivial bot.

Plays games of a one-ply bot through a real embedded stack (1 referee, 1 worker) and
reports, per move, the time between consecutive recorded moves minus the engine's own
search time: publishing the job, the worker taking it, posting the answer, the referee
judging and recording it. Figures are from Redis server timestamps (ms resolution).

    .venv/bin/python bench/arena_roundtrip.py [--games 6]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
from typing import Any

from arena.services.referee.matches import events_key
from arena_common import config, register, run_matches, stack

from arena.v1 import match_pb2


def overheads(client: Any, match: match_pb2.Match) -> list[float]:
    stamps: list[tuple[int, float]] = []
    for entry_id, fields in client.xrange(events_key(match.id)):
        event = match_pb2.MatchEvent.FromString(fields[b"pb"])
        if event.WhichOneof("event") == "move":
            stamps.append((int(entry_id.split(b"-")[0]), event.move.search.time_ms))
    return [(b - a) - search for (a, _), (b, search) in itertools.pairwise(stamps)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=6)
    args = parser.parse_args()
    with stack(workers=1) as running:
        assert running.durable is not None
        client = running.durable.client()
        register(client, "trivial", {"evaluator": "lab", "look_ahead": 0})
        configs = [config("trivial", "trivial", []) for _ in range(args.games)]
        run_matches(client, configs[:1])  # warm the processes
        matches = [run_matches(client, [c])[1][0] for c in configs[1:] or configs]
        samples = sorted(x for m in matches for x in overheads(client, m))
    p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))]
    print(f"move round trip overhead over {len(samples)} moves (1 referee, 1 worker, "
          f"one game at a time):")
    print(f"  p50 {statistics.median(samples):.2f} ms   p99 {p99:.2f} ms   "
          f"mean {statistics.fmean(samples):.2f} ms")


if __name__ == "__main__":
    main()
