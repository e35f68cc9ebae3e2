"""One user's calls against another's: how much a flood of expensive reads slows the rest.

On a real embedded stack (registry, referee, ladder; no workers), alice imports
``--matches`` finished Othello games, then runs ``--threads`` loops of
``ListMatches(page_size=200)`` (whole matches, every move: about 150 ms of the referee's
CPU each) from a process of her own for ``--seconds``, while bob lists 20 matches every
0.3 s. Printed: bob's median and worst latency alone and beside alice, their ratio, and
alice's own calls served. Run once per ``--calls-at-once`` value in the same session to
compare (0: no limit, as before the quota existed).

    .venv/bin/python bench/call_fairness.py [--threads 8] [--seconds 20] \\
        [--calls-at-once 2 0]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc
from arena.clients.sdk import ArenaClient
from arena.services.common.launcher import Launcher
from arena.services.common.quotas import UNLIMITED_VALUE

from arena.formats.ggf import ggf_from_moves, write_ggf
from arena.games.othello import OthelloBoard

TOKENS = {"alice-token": {"name": "alice", "role": "user"},
          "bob-token": {"name": "bob", "role": "user"}}
BOB_EVERY_S = 0.3


def random_record(seed: int) -> str:
    board, rng, moves = OthelloBoard(), random.Random(seed), []
    while not board.is_game_over():
        move = rng.choice(board.legal_moves())
        board.push(move)
        moves.append(move)
    return write_ggf(ggf_from_moves(OthelloBoard(), moves, black="b", white="w",
                                    outcome=board.outcome(), times=[0.1] * len(moves)))


def flood(home: str, threads: int, seconds: float) -> None:
    """Alice's loops (run in a process of their own, so that only the server is shared)."""
    import threading

    stop = time.monotonic() + seconds
    served, refused = [0], [0]

    def loop() -> None:
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


def bob_latency(bob: ArenaClient, until: float) -> list[float]:
    times = []
    while time.monotonic() < until:
        started = time.perf_counter()
        bob.list_matches(page_size=20)
        times.append((time.perf_counter() - started) * 1000)
        time.sleep(BOB_EVERY_S)
    return times


def run(calls_at_once: int, matches: int, threads: int, seconds: float) -> None:
    quota = calls_at_once or UNLIMITED_VALUE
    env = {"ARENA_TOKENS": json.dumps(TOKENS),
           "ARENA_QUOTAS": json.dumps({"user": {"calls_at_once": quota}})}
    with tempfile.TemporaryDirectory() as home, \
            Launcher(home=Path(home), workers=0, analysts=0, env=env) as stack:
        with ArenaClient(home=home, token="alice-token") as alice:
            for seed in range(matches):
                alice.import_match(random_record(seed))
        with ArenaClient(home=home, token="bob-token") as bob:
            alone = bob_latency(bob, time.monotonic() + 5)
            hog = subprocess.Popen([sys.executable, __file__, "--flood", home,
                                    "--threads", str(threads), "--seconds", str(seconds)],
                                   stdout=subprocess.PIPE, text=True)
            time.sleep(2)  # alice's loops are running
            beside = bob_latency(bob, time.monotonic() + seconds - 4)
            out, _ = hog.communicate(timeout=seconds + 60)
        stack.stop()
    counts = json.loads(out.strip().splitlines()[-1])
    label = f"calls_at_once {calls_at_once}" if calls_at_once else "no calls_at_once"
    print(f"{label}: bob alone median {statistics.median(alone):6.1f} ms (max "
          f"{max(alone):6.1f}); beside alice x{threads} median "
          f"{statistics.median(beside):6.1f} ms (max {max(beside):6.1f}, {len(beside)} calls): "
          f"{statistics.median(beside) / statistics.median(alone):4.1f}x; alice served "
          f"{counts['served']} calls, refused {counts['refused']}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--calls-at-once", type=int, nargs="+", default=[2, 0])
    parser.add_argument("--flood", metavar="HOME", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.flood:
        flood(args.flood, args.threads, args.seconds)
        return
    for value in args.calls_at_once:
        run(value, args.matches, args.threads, args.seconds)


if __name__ == "__main__":
    main()
