"""What the ladder service reads, in a large arena, to list ladders and to go over the
running ones (its follower's round, every ``ladder_reconcile_s``).

On a real stack (no game played): writes ``--ladders`` ladders straight into the durable
Redis, the newest ``--running`` of them running (in the running ladders' index and their
owner's set, as a create leaves them) and the others finished, then times (medians of
``--rounds``):

- the round's list of running ladders (``LadderStore.running_ids``, what the follower's
  round reconciles and schedules);
- ``ListLadders`` through the API: the running ones, 50 a page; every ladder, the first
  page of 50 and the page after it (its token).

.venv/bin/python bench/ladder_listing.py [--ladders 20000] [--running 8] [--rounds 21]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from arena.clients.sdk import ArenaClient
from arena.services.common.protocol import keys
from arena.services.common.protocol.ladders import LadderStore
from arena_common import stack

from arena.v1 import common_pb2, ladder_pb2

RUNNING, FINISHED = ladder_pb2.LADDER_STATUS_RUNNING, ladder_pb2.LADDER_STATUS_FINISHED


def _median_ms(call: Callable[[], object], rounds: int) -> float:
    took = []
    for _ in range(rounds):
        began = time.perf_counter()
        call()
        took.append(time.perf_counter() - began)
    return statistics.median(took) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ladders", type=int, default=20_000)
    parser.add_argument("--running", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=21)
    args = parser.parse_args()
    config = ladder_pb2.LadderConfig(
        name="bench", game=common_pb2.GameSpec(kind=common_pb2.GAME_KIND_OTHELLO),
        bots=[common_pb2.BotRef(name="a", version=1), common_pb2.BotRef(name="b", version=1)],
        games_per_pairing=2)
    with stack(workers=0) as bench:
        pipe = bench.client.pipeline(transaction=False)
        for i in range(args.ladders):
            made = 1_700_000_000_000 + i
            ladder_id = f"L{made:013d}-{i:08x}"
            running = i >= args.ladders - args.running
            info = ladder_pb2.LadderInfo(id=ladder_id, config=config, owner="bench",
                                         games_total=2)
            pipe.hset(keys.ladder(ladder_id), mapping={
                "info": info.SerializeToString(), "status": RUNNING if running else FINISHED,
                "games_total": 2, "games_planned": 2, "games_done": 0 if running else 2,
                "games_void": 0, "next_game": 2})
            pipe.zadd(keys.ALL_LADDERS, {ladder_id: made})
            if running:
                pipe.zadd(keys.RUNNING_LADDERS, {ladder_id: made})
                pipe.sadd(keys.user("bench", "ladders"), ladder_id)
        pipe.execute()
        store = LadderStore(bench.client)
        print(f"{args.ladders} ladders, the newest {args.running} running; "
              f"medians of {args.rounds} calls")
        found = len(store.running_ids())
        print(f"  the round's running ladders: "
              f"{_median_ms(store.running_ids, args.rounds):.2f} ms ({found} ladders)")
        with ArenaClient(ladder=bench.running.target("ladder"),
                         token=bench.running.admin_token) as sdk:
            first = sdk.list_ladders(page_size=50)
            rows: list[tuple[str, Callable[[], ladder_pb2.ListLaddersResponse]]] = [
                ("running, 50 a page", lambda: sdk.list_ladders(page_size=50,
                                                                running_only=True)),
                ("every ladder, 50 a page", lambda: sdk.list_ladders(page_size=50)),
                ("every ladder, the second page of 50", lambda: sdk.list_ladders(
                    page_size=50, page_token=first.next_page_token)),
            ]
            for name, call in rows:
                shown = len(call().ladders)
                print(f"  {name}: {_median_ms(call, args.rounds):.2f} ms ({shown} ladders)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
