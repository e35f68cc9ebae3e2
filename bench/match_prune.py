"""What retention costs and gives back (``arena match prune``, ``docs/deploy.md``).

On a real stack: plays ``--played`` matches between two Arena bots (their moves carry the
search figures a real match stores) and imports ``--imported`` game records, reading the
durable Redis's memory before and after each; then prunes everything, once as a dry run and
once for real, timing each. Prints the bytes one played and one imported match hold, the
matches examined per second, and the memory given back.

.venv/bin/python bench/match_prune.py [--played 40] [--imported 2000]
"""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime

from arena.services.common.protocol import queues
from arena_common import config, register, run_matches, stack

from arena.v1 import common_pb2

BOT = {"evaluator": "arena", "depth": 4, "time_ms": 600_000, "endgame_empties": 8}
TRANSCRIPT = "f5 d6 c3 d3 c4 f4 f6 f3 e6 e7 d7 c5 b6 d8 c6 c7"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--played", type=int, default=40)
    parser.add_argument("--imported", type=int, default=2000)
    args = parser.parse_args()
    with stack(workers=2) as bench:
        def memory() -> int:
            return queues.memory(bench.client)[0]

        for name in ("prune-a", "prune-b"):
            register(bench, name, BOT)
        empty = memory()
        _, played = run_matches(bench, [config("prune-a", "prune-b", [], seed=n)
                                        for n in range(args.played)])
        after_played = memory()
        plies = sum(len(m.moves) for m in played)
        for _ in range(args.imported):
            bench.sdk.import_match(TRANSCRIPT, variant="standard")
        after_imported = memory()
        print(f"played: {args.played} matches, {plies} moves: "
              f"{(after_played - empty) / args.played / 1024:.1f} KiB a match")
        print(f"imported: {args.imported} records of 16 moves: "
              f"{(after_imported - after_played) / args.imported / 1024:.1f} KiB a match")
        total = args.played + args.imported
        now = datetime.now(UTC)
        for dry in (True, False):
            began = time.perf_counter()
            examined, pruned = bench.sdk.prune_matches(now, dry_run=dry)
            took = time.perf_counter() - began
            assert examined == pruned == total, (examined, pruned, total)
            print(f"prune{' (dry run)' if dry else ''}: {pruned} matches in {took:.2f} s, "
                  f"{pruned / took:.0f} a second")
        print(f"memory: {empty / 2**20:.1f} MiB empty, {after_imported / 2**20:.1f} MiB "
              f"full, {memory() / 2**20:.1f} MiB after the prune")
        assert bench.sdk.list_matches(game=common_pb2.GAME_KIND_OTHELLO).matches == []
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
