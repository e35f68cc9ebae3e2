"""What a page of ``ListMatches`` costs in a large arena, through the referee's gRPC API.

On a real stack (no match played): writes ``--matches`` match headers and the all-matches
index straight into the durable Redis, the newest ``--running`` of them running (in their
owner's set of unfinished matches, as a create leaves them) and the others finished, then
times listings the web and the CLI make (medians of ``--rounds``):

- running, 8 a page: the web's "Playing now" when exactly that many run (a full page of a
  rare filter: it used to read the whole index after it, to say whether more followed);
- running, 16 a page: a page the filter cannot fill (it read the whole index, before the
  index of the unfinished matches);
- finished, 50 a page, and every match, 50 and 1 a page;
- finished, 50 a page with their moves (the SDK's default listing; the newest 1,000
  matches have ``--moves`` moves each).

.venv/bin/python bench/match_listing.py [--matches 20000] [--running 8] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

from arena.services.common.protocol import keys
from arena_common import stack

from arena.v1 import common_pb2, match_pb2

RUNNING, FINISHED = match_pb2.MATCH_STATUS_RUNNING, match_pb2.MATCH_STATUS_FINISHED


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=20_000)
    parser.add_argument("--running", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--moves", type=int, default=60)
    args = parser.parse_args()
    moves = [match_pb2.MoveRecord(ply=ply, move=common_pb2.Move(square=ply % 64))
             .SerializeToString() for ply in range(args.moves)]
    with stack(workers=0) as bench:
        pipe = bench.client.pipeline(transaction=False)
        for i in range(args.matches):
            match_id = f"{1_700_000_000_000 + i:013d}-{i:08x}"
            status = RUNNING if i >= args.matches - args.running else FINISHED
            pipe.set(keys.match(match_id), match_pb2.Match(id=match_id, status=status,
                                                           owner="bench").SerializeToString())
            pipe.zadd(keys.ALL_MATCHES, {match_id: 0})
            if status == RUNNING:
                pipe.sadd(keys.user("bench", "active"), match_id)
            if i >= args.matches - 1_000 and args.moves:
                pipe.rpush(keys.match(match_id, "moves"), *moves)
        pipe.execute()
        every = match_pb2.MATCH_STATUS_UNSPECIFIED
        listings = [("running, 8 a page", RUNNING, 8, True),
                    ("running, 16 a page", RUNNING, 16, True),
                    ("finished, 50 a page", FINISHED, 50, True),
                    ("every match, 50 a page", every, 50, True),
                    ("every match, 1 a page", every, 1, True),
                    ("finished, 50 a page with their moves", FINISHED, 50, False)]
        print(f"{args.matches} matches, the newest {args.running} running; "
              f"medians of {args.rounds} calls")
        for name, status, size, summary in listings:
            took, shown = [], 0
            for _ in range(args.rounds):
                began = time.perf_counter()
                page = bench.sdk.list_matches(status=status, page_size=size,
                                              summary_only=summary)
                took.append(time.perf_counter() - began)
                shown = len(page.matches)
            more = "a token" if page.next_page_token else "no token"
            print(f"  {name}: {statistics.median(took) * 1000:.1f} ms "
                  f"({shown} matches, {more})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
