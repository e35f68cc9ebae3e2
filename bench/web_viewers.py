"""What people watching in a browser cost the games: a ladder's pace with and without them.

On a real embedded stack (the services, two workers, the web gateway), a ladder of two
fast bots (the lab's beginner, 5 ms a move) plays while ``--viewers`` clients, each from an
address of its own, do what a ladder page does: reload the standings and the ladder's 200
latest games every 0.5 s (with ``--live``, each also keeps the page's live stream of
the ladder open). Printed, for ``--rounds`` alternating windows of ``--seconds``
with and without the viewers: games played, the reads served, and the CPU share of the
referee, ladder service and gateway; then the median ratio of games with viewers to
games without. To compare with another version, run it there too (a worktree).

    .venv/bin/python bench/web_viewers.py [--viewers 30] [--seconds 15] [--rounds 3] [--live]
"""

from __future__ import annotations

import argparse
import http.client
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path

from arena.clients.sdk import ArenaClient
from arena.services.common.launcher import Launcher

from arena.v1 import bots_pb2, common_pb2, ladder_pb2


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def viewers(web: str, ladder_id: str, count: int, seconds: float, live: bool) -> int:
    host, port = web.rsplit(":", 1)
    stop = time.monotonic() + seconds
    served = [0] * count

    def follow(index: int) -> None:
        """The page's live stream of the ladder, read until the window ends."""
        connection = http.client.HTTPConnection(host, int(port), timeout=5,
                                                source_address=(f"127.0.1.{index + 1}", 0))
        connection.request("GET", f"/api/ladders/{ladder_id}/events")
        reply = connection.getresponse()
        while time.monotonic() < stop:
            try:
                reply.read1(65536)
            except TimeoutError:
                continue
        connection.close()

    def view(index: int) -> None:
        if live:
            threading.Thread(target=follow, args=(index,), daemon=True).start()
        connection = http.client.HTTPConnection(host, int(port), timeout=60,
                                                source_address=(f"127.0.1.{index + 1}", 0))
        while time.monotonic() < stop:
            for path in (f"/api/ladders/{ladder_id}",
                         f"/api/matches?ladder={ladder_id}&limit=200"):
                connection.request("GET", path)
                reply = connection.getresponse()
                reply.read()
                served[index] += reply.status == 200
            time.sleep(0.5)

    threads = [threading.Thread(target=view, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(served)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--viewers", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--live", action="store_true",
                        help="each viewer also keeps the page's live stream open")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home, \
            Launcher(home=Path(home), workers=2, analysts=0, web=True,
                     env={"ARENA_WARM_GAMES": "othello"}) as stack:
        sdk = ArenaClient(home=home, token=stack.admin_token)
        for name in ("pace-a", "pace-b"):
            sdk.register_bot(bots_pb2.BotSpec(name=name, preset="lab-beginner"),
                             from_preset="lab-beginner")
        ladder = sdk.create_ladder(ladder_pb2.LadderConfig(
            name="pace", game=common_pb2.GameSpec(kind=common_pb2.GAME_KIND_OTHELLO),
            bots=[common_pb2.BotRef(name="pace-a"), common_pb2.BotRef(name="pace-b")],
            games_per_pairing=5000, time_control=common_pb2.TimeControl(move_time_ms=5)))
        pids = {role: stack.processes[name].pid for role, name in
                (("referee", "referee"), ("ladder", "ladder"), ("web", "web"))}
        web = stack.target("web")
        time.sleep(5)  # the ladder is under way
        ratios = []
        for _ in range(args.rounds):
            games = {}
            for watched in (False, True):
                done = sdk.get_standings(ladder.id).ladder.games_done
                cpu = {role: cpu_seconds(pid) for role, pid in pids.items() if pid}
                began = time.monotonic()
                reads = (viewers(web, ladder.id, args.viewers, args.seconds, args.live)
                         if watched else 0)
                if not watched:
                    time.sleep(args.seconds)
                took = time.monotonic() - began
                games[watched] = sdk.get_standings(ladder.id).ladder.games_done - done
                share = ", ".join(f"{role} {(cpu_seconds(pid) - cpu[role]) / took:.2f}"
                                  for role, pid in pids.items() if pid)
                label = f"{args.viewers} viewers" if watched else "no viewers"
                print(f"  {label:>11}: {games[watched]:4d} games, {reads:5d} reads; CPU "
                      f"{share}", flush=True)
            ratios.append(games[True] / max(1, games[False]))
        print(f"games with viewers / without: median {statistics.median(ratios):.2f} "
              f"({', '.join(f'{r:.2f}' for r in ratios)})")
        sdk.cancel_ladder(ladder.id)
        sdk.close()


if __name__ == "__main__":
    main()
