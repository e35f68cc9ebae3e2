"""The cost of metrics and logging on the move round trip (referee -> worker -> referee).

Two embedded stacks run side by side (1 referee + 1 worker each, a one-ply bot):

* **on**: every process serves /metrics (scraped every ``--scrape-s`` seconds, as a
  Prometheus would) and logs JSON at INFO, one line per move in the referee and one in
  the worker;
* **off**: no endpoint, logs at WARNING (no per-move line). The counters are still counted
  in memory (they cannot be switched off): their cost is measured apart, per move, below.

The stacks take turns game by game (on, off, off, on, ...), so the machine's drift hits
both alike; each pair of slices gives a ratio of the mean round trips (Redis timestamps
have 1 ms resolution: means are exact on average, medians are not), and the figure is
the median of those ratios. The round trip per move is measured as in
``arena_roundtrip.py``: from Redis server timestamps, minus the engine's own time.
Tracing is off in both (its off path is one test of a global: measured below too).

    .venv/bin/python bench/arena_observability.py [--pairs 8] [--games 2]
"""

from __future__ import annotations

import argparse
import statistics
import threading
import timeit
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from tempfile import TemporaryDirectory

import redis
from arena.clients.sdk import ArenaClient
from arena.services.common import tracing
from arena.services.common.launcher import Launcher
from arena_common import Bench, config, register, run_matches
from arena_roundtrip import legs

from arena.engine.othello import PRESETS
from arena.v1 import bots_pb2, common_pb2, engine_pb2

ON = {"ARENA_LOG_FORMAT": "json", "ARENA_LOG_LEVEL": "INFO"}
OFF = {"ARENA_LOG_FORMAT": "json", "ARENA_LOG_LEVEL": "WARNING"}


@contextmanager
def observed_stack(metrics: bool, env: dict[str, str]) -> Iterator[Bench]:
    with TemporaryDirectory(prefix="arena-bench-") as home:
        running = Launcher(home=Path(home), workers=1, metrics=metrics,
                           env={"ARENA_WARM_GAMES": "othello", **env})
        with running, ArenaClient(registry=running.target("registry"),
                                  referee=running.target("referee"),
                                  token=running.admin_token) as sdk:
            client = redis.Redis.from_url(running.redis_url)
            try:
                yield Bench(running, sdk, client)
            finally:
                client.close()


def scrape_forever(bench: Bench, every_s: float, stop: threading.Event) -> None:
    addresses = bench.running.manifest().get("metrics", {})
    assert isinstance(addresses, dict)
    while not stop.wait(every_s):
        for address in addresses.values():
            with urllib.request.urlopen(f"http://{address}/metrics", timeout=10) as reply:
                reply.read()


def overheads(bench: Bench, games: int) -> list[float]:
    configs = [config("bot", "bot", [], seed=i + 1) for i in range(games)]
    matches = [run_matches(bench, [c])[1][0] for c in configs]
    return [leg[0] for m in matches for leg in legs(bench.client, m)]


def instrumentation_cost_us() -> dict[str, float]:
    """Microseconds per move of the always-on counting, and of tracing's off path."""
    from arena.services.referee import telemetry as referee
    from arena.services.worker import telemetry as worker
    from arena.services.worker.bots import BotAnswer

    bot = bots_pb2.BotVersion(spec=bots_pb2.BotSpec(name="b"), version=1)
    job = engine_pb2.MoveJob(job_id="m/1/x", match_id="m", ply=1, bot=bot,
                             game=common_pb2.GAME_KIND_OTHELLO)
    answer = BotAnswer(engine_pb2.MoveResult(worker_id="w"), probed=True)
    answer.result.search.time_ms = 3.0
    import logging

    logging.getLogger().setLevel(logging.WARNING)  # the off stack's level

    def worker_move() -> None:
        span = worker.taken(job, 1, False)
        with worker.searching(span, job):
            pass
        worker.started("1-0", "2-0", 0.0002)
        with worker.posting(span):
            pass
        worker.answered(job, answer, span)

    def referee_move() -> None:
        referee.job_built(job)
        referee.published(job)
        with referee.judging(job), referee.recording(job):
            pass

    assert not tracing.enabled()
    runs = 20_000
    return {name: min(timeit.repeat(call, number=runs, repeat=5)) / runs * 1e6
            for name, call in (("worker counters per move", worker_move),
                               ("referee counters per move", referee_move),
                               ("tracing off: start_move", lambda: tracing.start_move(job)))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=8, help="on/off pairs of game slices")
    parser.add_argument("--games", type=int, default=2, help="games per slice")
    parser.add_argument("--scrape-s", type=float, default=2.0, help="scrape interval (on)")
    parser.add_argument("--bot", default="lab-beginner", help="an Othello preset")
    args = parser.parse_args()
    stop = threading.Event()
    with ExitStack() as stacks:
        on = stacks.enter_context(observed_stack(True, ON))
        off = stacks.enter_context(observed_stack(False, OFF))
        for bench in (on, off):
            register(bench, "bot", dict(PRESETS[args.bot]))
            run_matches(bench, [config("bot", "bot", [])])  # warm the processes
        scraper = threading.Thread(target=scrape_forever, args=(on, args.scrape_s, stop),
                                   daemon=True)
        scraper.start()
        ratios, all_on, all_off = [], [], []
        for index in range(args.pairs):
            order = (on, off) if index % 2 == 0 else (off, on)
            got = {id(b): overheads(b, args.games) for b in order}
            ratios.append(statistics.fmean(got[id(on)]) / statistics.fmean(got[id(off)]))
            all_on += got[id(on)]
            all_off += got[id(off)]
        stop.set()
    print(f"move round trip, bot {args.bot}, 1 referee + 1 worker per stack, one game at a "
          f"time; {args.pairs} on/off pairs of {args.games} games")
    print(f"  off: p50 {statistics.median(all_off):.2f} ms  mean "
          f"{statistics.fmean(all_off):.2f} ms  ({len(all_off)} moves)")
    print(f"  on:  p50 {statistics.median(all_on):.2f} ms  mean "
          f"{statistics.fmean(all_on):.2f} ms  ({len(all_on)} moves)")
    pairs = ", ".join(f"{r:.3f}" for r in ratios)
    print(f"  on/off ratio of the mean round trips per pair: median "
          f"{statistics.median(ratios):.3f} (pairs: {pairs})")
    print("always-on counting and tracing's off path (in process, best of 5):")
    for name, micros in instrumentation_cost_us().items():
        print(f"  {name:<28} {micros:6.2f} us")


if __name__ == "__main__":
    main()
