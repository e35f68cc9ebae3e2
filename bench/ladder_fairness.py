"""One user's many waiting ladders against another user's ladder: how long bob's small
ladder takes alone, and beside hog's ladders held back by hog's own quota.

On a real embedded stack (one worker), hog (``queued_matches`` 2, ``running_matches`` 1,
no limit on creates nor on ``running_ladders``: the pile is what is measured) creates
20-game ladders of two instant bots for ``--seconds``, a new one whenever a game of hers
has made room (a refused create is tried again 10 ms later): her ladders pile up, most of
them waiting for room under her quota. Bob then runs
``--runs`` ladders of 4 games of two instant bots in turn, each timed from CreateLadder to
its finish. Printed: bob's median and worst alone (before hog starts) and beside hog's
ladders, their ratio, and how many of hog's ladders run and wait.

    .venv/bin/python bench/ladder_fairness.py [--seconds 180] [--runs 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path

from arena.clients.sdk import ArenaClient
from arena.services.common.launcher import Launcher

from arena.errors import ResourceExhaustedError
from arena.games import game
from arena.v1 import bots_pb2, common_pb2, ladder_pb2

TOKENS = {"hog-token": {"name": "hog", "role": "user"},
          "bob-token": {"name": "bob", "role": "user"}}
QUOTAS = {"users": {"hog": {"creates_per_minute": 1_000_000, "queued_matches": 2,
                            "running_matches": 1, "running_ladders": 1_000_000}}}
OTHELLO = game("othello").kind
INSTANT = "lab-beginner"


def ladder(black: str, white: str, games: int) -> ladder_pb2.LadderConfig:
    return ladder_pb2.LadderConfig(
        game=common_pb2.GameSpec(kind=OTHELLO), games_per_pairing=games,
        bots=[common_pb2.BotRef(name=black), common_pb2.BotRef(name=white)],
        time_control=common_pb2.TimeControl(move_time_ms=100))


def timed_ladder(bob: ArenaClient) -> float:
    began = time.monotonic()
    made = bob.create_ladder(ladder("b1", "b2", 4))
    while bob.get_standings(made.id).ladder.status == ladder_pb2.LADDER_STATUS_RUNNING:
        time.sleep(0.01)
    return time.monotonic() - began


def timings(bob: ArenaClient, runs: int) -> list[float]:
    return [timed_ladder(bob) for _ in range(runs)]


def hog_loop(home: str, until: float, made: list[int]) -> None:
    with ArenaClient(home=home, token="hog-token") as hog:
        while time.monotonic() < until:
            try:
                hog.create_ladder(ladder("h1", "h2", 20))
                made[0] += 1
            except ResourceExhaustedError:
                time.sleep(0.01)


def shown(label: str, times: list[float]) -> str:
    return f"{label}: median {statistics.median(times):.2f} s, worst {max(times):.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=180)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    env = {"ARENA_TOKENS": json.dumps(TOKENS), "ARENA_QUOTAS": json.dumps(QUOTAS)}
    with tempfile.TemporaryDirectory() as home, \
            Launcher(home=Path(home), workers=1, analysts=0, env=env):
        for token, names in (("hog-token", ("h1", "h2")), ("bob-token", ("b1", "b2"))):
            with ArenaClient(home=home, token=token) as owner:
                for name in names:
                    owner.register_bot(bots_pb2.BotSpec(name=name), from_preset=INSTANT)
        with ArenaClient(home=home, token="bob-token") as bob:
            alone = timings(bob, args.runs)
            print(shown("bob's 4-game ladder alone", alone), flush=True)
            made = [0]
            hog = threading.Thread(target=hog_loop, daemon=True,
                                   args=(home, time.monotonic() + args.seconds, made))
            hog.start()
            hog.join()
            with ArenaClient(home=home, token="hog-token") as hog_client:
                mine = [i for i in hog_client.iter_ladders() if i.owner == "hog"]
            running = [i for i in mine if i.status == ladder_pb2.LADDER_STATUS_RUNNING]
            waiting = sum(1 for i in running if i.waiting)
            print(f"hog made {made[0]} ladders in {args.seconds:.0f} s; {len(running)} run, "
                  f"{waiting} of them waiting for room", flush=True)
            beside = timings(bob, args.runs)
            print(shown("bob's 4-game ladder beside hog's", beside), flush=True)
            print(f"ratio of medians (beside / alone): "
                  f"{statistics.median(beside) / statistics.median(alone):.2f}", flush=True)


if __name__ == "__main__":
    main()
