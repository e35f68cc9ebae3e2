"""One user's calls against another's: how much a flood of expensive reads slows the rest.

On a real embedded stack (registry, referee, ladder, the web gateway; no workers), alice
imports ``--matches`` finished Othello games, then runs ``--threads`` loops of
``ListMatches(page_size=200)`` (whole matches, every move: about 150 ms of the referee's
CPU each) from a process of her own for ``--seconds``, while bob lists 20 matches every
0.3 s. Then the same through the web gateway: a client at 127.0.0.3 loops over
``/api/matches?limit=200`` while another viewer (127.0.0.1) asks for 20 (the limits vary,
101..200 and 20..49 in turn, so that no answer is shared: ``web/shared.py``; a parameter
the address does not take is refused). Printed: the
other's median and worst latency alone and beside the flood, their ratio, and the
flood's own requests served. Run once per ``--calls-at-once`` value in the same session to
compare: it is the users' ``calls_at_once`` quota and the gateway's
``ARENA_WEB_CALLS_PER_VIEWER`` (0: no limit, as before either existed).

    .venv/bin/python bench/call_fairness.py [--threads 8] [--seconds 20] \\
        [--calls-at-once 2 0]
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import grpc
from arena.clients.sdk import ArenaClient
from arena.services.common.launcher import Launcher
from arena.services.common.quotas import UNLIMITED_VALUE

from arena.formats.ggf import ggf_from_moves, write_ggf
from arena.games.othello import OthelloBoard

TOKENS = {"alice-token": {"name": "alice", "role": "user"},
          "bob-token": {"name": "bob", "role": "user"}}
EVERY_S = 0.3  # between the other's calls
FLOOD_ADDRESS = "127.0.0.3"
QUESTIONS = itertools.count()  # varies the limit: no answer shared (web/shared.py)


def random_record(seed: int) -> str:
    board, rng, moves = OthelloBoard(), random.Random(seed), []
    while not board.is_game_over():
        move = rng.choice(board.legal_moves())
        board.push(move)
        moves.append(move)
    return write_ggf(ggf_from_moves(OthelloBoard(), moves, black="b", white="w",
                                    outcome=board.outcome(), times=[0.1] * len(moves)))


def http_get(web: str, source: str) -> Callable[[str], int]:
    """GET on one kept-alive connection from the loopback address ``source``."""
    host, port = web.rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=60,
                                            source_address=(source, 0))

    def get(path: str) -> int:
        connection.request("GET", path)
        reply = connection.getresponse()
        reply.read()
        return reply.status
    return get


def flood(home: str, web: str, threads: int, seconds: float) -> None:
    """The flood's loops (in a process of their own, so that only the server is shared):
    alice's gRPC calls, or (``web``) one client's requests to the gateway."""
    stop = time.monotonic() + seconds
    served, refused = [0], [0]

    def loop() -> None:
        if web:
            get = http_get(web, FLOOD_ADDRESS)
            while time.monotonic() < stop:  # a question not asked in the last second
                ok = get(f"/api/matches?limit={200 - next(QUESTIONS) % 100}") == 200
                served[0] += ok
                refused[0] += not ok
            return
        with ArenaClient(home=home, token="alice-token") as alice:
            while time.monotonic() < stop:
                try:
                    alice.list_matches(page_size=200)
                    served[0] += 1
                except grpc.RpcError:
                    refused[0] += 1
                    time.sleep(0.05)

    loops = [threading.Thread(target=loop) for _ in range(threads)]
    for each in loops:
        each.start()
    for each in loops:
        each.join()
    print(json.dumps({"served": served[0], "refused": refused[0]}))


def latencies(call: Callable[[], object], until: float) -> list[float]:
    times = []
    while time.monotonic() < until:
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
        time.sleep(EVERY_S)
    return times


def compare(label: str, call: Callable[[], object], flood_args: list[str], threads: int,
            seconds: float) -> None:
    alone = latencies(call, time.monotonic() + 5)
    hog = subprocess.Popen([sys.executable, __file__, "--threads", str(threads),
                            "--seconds", str(seconds), *flood_args],
                           stdout=subprocess.PIPE, text=True)
    time.sleep(2)  # the flood's loops are running
    beside = latencies(call, time.monotonic() + seconds - 4)
    out, _ = hog.communicate(timeout=seconds + 60)
    counts = json.loads(out.strip().splitlines()[-1])
    print(f"  {label}: alone median {statistics.median(alone):6.1f} ms (max "
          f"{max(alone):6.1f}); beside the flood x{threads} median "
          f"{statistics.median(beside):6.1f} ms (max {max(beside):6.1f}, {len(beside)} "
          f"calls): {statistics.median(beside) / statistics.median(alone):4.1f}x; the "
          f"flood served {counts['served']}, refused {counts['refused']}", flush=True)


def run(calls_at_once: int, matches: int, threads: int, seconds: float) -> None:
    env = {"ARENA_TOKENS": json.dumps(TOKENS),
           "ARENA_QUOTAS": json.dumps(
               {"user": {"calls_at_once": calls_at_once or UNLIMITED_VALUE}}),
           "ARENA_WEB_CALLS_PER_VIEWER": str(calls_at_once or 100_000)}
    print(f"calls_at_once and ARENA_WEB_CALLS_PER_VIEWER {calls_at_once or 'unlimited'}:",
          flush=True)
    with tempfile.TemporaryDirectory() as home, \
            Launcher(home=Path(home), workers=0, analysts=0, env=env, web=True) as stack:
        with ArenaClient(home=home, token="alice-token") as alice:
            for seed in range(matches):
                alice.import_match(random_record(seed))
        with ArenaClient(home=home, token="bob-token") as bob:
            compare("gRPC, bob's list of 20 beside alice's lists of 200",
                    lambda: bob.list_matches(page_size=20),
                    ["--flood", home], threads, seconds)
        web = stack.target("web")
        get = http_get(web, "127.0.0.1")
        compare("web, a viewer's list of 20 beside another's lists of 200",
                lambda: get(f"/api/matches?limit={20 + next(QUESTIONS) % 30}"),
                ["--flood", home, "--web", web],
                threads, seconds)
        stack.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--calls-at-once", type=int, nargs="+", default=[2, 0])
    parser.add_argument("--flood", metavar="HOME", help=argparse.SUPPRESS)
    parser.add_argument("--web", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.flood:
        flood(args.flood, args.web, args.threads, args.seconds)
        return
    for value in args.calls_at_once:
        run(value, args.matches, args.threads, args.seconds)


if __name__ == "__main__":
    main()
