"""The web gateway's cost: what it adds to a read, and how soon a page shows a move.

On a real embedded stack (the gateway, the services and two workers as processes):

* **added latency**: for the standings JSON, a replay (the match page's JSON, every ply's
  position from the rules library) and the native replay export, ``--requests`` loopback
  requests through the gateway (HTTP/1.1, one kept-alive connection, as a browser) and as
  many straight gRPC calls with the SDK, in paired alternation (direct then gateway, then
  gateway then direct...) so drift cancels; the medians and p99s of both and of the
  per-pair difference.
* **move to page**: a live game between two bots that think 150 ms per move, watched by an
  open match page in headless Chromium. For each move, the time from the referee applying
  it (its event's stream entry id: the Redis server's clock, ms) to the page drawing it
  (``Date.now()`` when its move-list entry appears), and, for comparison, to an SDK
  watcher's receiving it over gRPC. Same machine, same clock.

    .venv/bin/python bench/web_latency.py [--requests 300] [--games 2]
"""

from __future__ import annotations

import argparse
import http.client
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis
from arena.clients.sdk import ArenaClient
from arena.services.common.launcher import Launcher
from arena.services.common.protocol import keys
from google.protobuf import json_format, struct_pb2

from arena.v1 import bots_pb2, common_pb2, ladder_pb2, match_pb2, referee_pb2

REPO = Path(__file__).resolve().parents[1]
OTHELLO = common_pb2.GameSpec(kind=common_pb2.GAME_KIND_OTHELLO, variant="standard",
                              board_size=8)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def register(client: ArenaClient, name: str, preset: str, overrides: dict[str, Any]) -> None:
    config = struct_pb2.Struct()
    json_format.ParseDict(overrides, config)
    client.register_bot(bots_pb2.BotSpec(name=name, preset=preset,
                                         builtin=bots_pb2.BuiltinEngine(config=config)),
                        from_preset=preset)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def line(label: str, values: list[float]) -> str:
    return (f"  {label:<24} median {statistics.median(values):7.2f} ms   "
            f"p99 {percentile(values, 0.99):7.2f} ms")


class Gateway:
    """One kept-alive HTTP connection to the gateway."""

    def __init__(self, url: str) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.connection = http.client.HTTPConnection(host, int(port), timeout=30)

    def get(self, path: str) -> bytes:
        self.connection.request("GET", path)
        reply = self.connection.getresponse()
        body = reply.read()
        if reply.status != 200:
            raise RuntimeError(f"GET {path}: {reply.status} {body[:200]!r}")
        return body


def paired(requests: int, direct: Callable[[], object], gateway: Callable[[], object],
           ) -> tuple[list[float], list[float]]:
    for _ in range(5):  # warm both paths (channels, connection, caches)
        direct()
        gateway()
    straight: list[float] = []
    through: list[float] = []
    for index in range(requests):
        order = ((direct, straight), (gateway, through))
        for call, times in order if index % 2 == 0 else order[::-1]:
            started = time.perf_counter()
            call()
            times.append((time.perf_counter() - started) * 1000)
    return straight, through


def added_latency(client: ArenaClient, url: str, ladder_id: str, match_id: str,
                  requests: int) -> None:
    web = Gateway(url)
    cases = {
        "standings JSON": (lambda: client.get_standings(ladder_id),
                           lambda: web.get(f"/api/ladders/{ladder_id}")),
        "replay (match page JSON)": (lambda: client.get_match(match_id),
                                     lambda: web.get(f"/api/matches/{match_id}")),
        "replay export (native)": (
            lambda: client.get_replay(match_id, referee_pb2.REPLAY_FORMAT_NATIVE),
            lambda: web.get(f"/api/matches/{match_id}/export/native")),
    }
    print(f"added latency, {requests} paired loopback requests each:")
    for name, (direct, gateway) in cases.items():
        straight, through = paired(requests, direct, gateway)
        added = [b - a for a, b in zip(straight, through, strict=True)]
        print(f"{name}:")
        print(line("gRPC, SDK direct", straight))
        print(line("through the gateway", through))
        print(line("added (paired)", added))


def move_to_page(client: ArenaClient, stack: Launcher, url: str, games: int) -> None:
    from playwright.sync_api import sync_playwright

    chromium = subprocess.run([str(REPO / "tools" / "install-chromium.sh")], check=True,
                              capture_output=True, text=True).stdout.split()[-1]
    durable = redis.Redis.from_url(stack.redis_url)
    page_delays: list[float] = []
    grpc_delays: list[float] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=FLAGS)
        page = browser.new_page()
        for _ in range(games):
            match = client.create_match(match_pb2.MatchConfig(
                game=OTHELLO, black=common_pb2.BotRef(name="bench-a"),
                white=common_pb2.BotRef(name="bench-b"),
                time_control=common_pb2.TimeControl(move_time_ms=3000)))
            received: dict[int, float] = {}
            watcher = threading.Thread(target=watch, args=(client, match.id, received))
            watcher.start()
            page.goto(f"{url}/matches/{match.id}")
            page.wait_for_selector("body[data-ready='1']")
            page.evaluate(OBSERVE)
            page.wait_for_function(
                "() => /wins|Draw/.test(document.querySelector('.result-line').textContent)",
                timeout=300_000)
            shown: dict[str, float] = page.evaluate("() => window.__shownAt")
            watcher.join()
            applied = applied_at(durable, match.id)
            for ply, at in shown.items():
                record_ply = int(ply) - 1
                if record_ply in applied:
                    page_delays.append(at - applied[record_ply])
            grpc_delays += [at - applied[p] for p, at in received.items() if p in applied]
        browser.close()
    print(f"move applied -> shown, {len(page_delays)} moves of {games} live games "
          "(ms clock: Redis stream ids):")
    print(line("open match page", page_delays) + f"   max {max(page_delays):6.1f} ms")
    print(line("SDK watcher (gRPC)", grpc_delays) + f"   max {max(grpc_delays):6.1f} ms")
    print(f"  slowest five to the page: {sorted(page_delays)[-5:]}")


# When the board first shows a ply (or a later one: a burst is drawn once), by its
# data-ply attribute; plies already on the page when the observer starts are left out.
OBSERVE = """() => {
  window.__shownAt = {};
  const holder = document.querySelector('.board-holder');
  const before = Number(holder.dataset.ply);
  let seen = before;
  new MutationObserver(() => {
    const now = Date.now(), ply = Number(holder.dataset.ply);
    for (let p = seen + 1; p <= ply; p++) window.__shownAt[p] = now;
    seen = Math.max(seen, ply);
  }).observe(holder, {attributes: true, attributeFilter: ['data-ply']});
}"""


def watch(client: ArenaClient, match_id: str, received: dict[int, float]) -> None:
    for event in client.watch_match(match_id):
        if event.WhichOneof("event") == "move":
            received.setdefault(event.move.ply, time.time() * 1000)


def applied_at(durable: Any, match_id: str) -> dict[int, float]:
    applied = {}
    for entry_id, fields in durable.xrange(keys.match(match_id, "events")):
        event = match_pb2.MatchEvent.FromString(fields[b"pb"])
        if event.WhichOneof("event") == "move":
            applied[event.move.ply] = float(entry_id.split(b"-")[0])
    return applied


def run(stack: Launcher, requests: int, games: int) -> None:
    with ArenaClient(registry=stack.target("registry"), referee=stack.target("referee"),
                     ladder=stack.target("ladder"), engine=stack.target("worker"),
                     token=stack.admin_token, home=stack.home) as client:
        for name in ("beginner", "intermediate", "advanced"):
            register(client, f"bench-{name}", f"lab-{name}", {})
        for name in ("bench-a", "bench-b"):
            register(client, name, "arena-fast", {"depth": 60, "time_ms": 150})
        ladder = client.create_ladder(ladder_pb2.LadderConfig(
            game=OTHELLO, format=ladder_pb2.LADDER_FORMAT_ROUND_ROBIN,
            bots=[common_pb2.BotRef(name=f"bench-{n}")
                  for n in ("beginner", "intermediate", "advanced")],
            games_per_pairing=2, opening_suite="othello-balanced",
            time_control=common_pb2.TimeControl(move_time_ms=3000)))
        for _ in client.watch_ladder(ladder.id):
            pass
        match_id = next(iter(client.iter_matches(ladder_id=ladder.id))).id
        url = f"http://{stack.target('web')}"
        added_latency(client, url, ladder.id, match_id, requests)
        move_to_page(client, stack, url, games)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--games", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="arena-web-bench-") as home, \
            Launcher(home=Path(home), workers=2, web=True,
                     env={"ARENA_WARM_GAMES": "othello"}) as stack:
        run(stack, args.requests, args.games)
    return 0


if __name__ == "__main__":
    sys.exit(main())
