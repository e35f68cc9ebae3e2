"""`arena status` counts the moves waiting on the protocol engines' streams: a real referee
serving GetStatus from a real Redis, and the command line reading it, as text and JSON."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from arena.services.common.config import Config
from arena.services.common.embedded_redis import EmbeddedRedis
from arena.services.common.protocol import keys, referees, workers
from arena.services.common.protocol.keys import (
    ENGINE_STREAMS,
    MATCH_STREAM,
    MOVE_STREAM,
    REFEREE_GROUP,
    WORKER_GROUP,
)

from arena.v1 import status_pb2
from tests.support.servers import ADMIN_TOKEN, Server, client, serve

RAPFI = keys.engine_stream("rapfi", "ab" * 32)
EDAX = keys.engine_stream("edax", "cd" * 32)
WAITING_S = 60  # how long the oldest move, on Rapfi's stream, has waited


@pytest.fixture
def referee(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> Iterator[Server]:
    server = serve("referee", Config(redis_url=redis_server.url))
    try:
        yield server
    finally:
        server.stop()


def queue_moves(client: redis.Redis) -> None:
    """One move waiting on the common stream; on Rapfi's, two waiting (the older for a
    minute) and one taken by a worker; on Edax's, one taken. What the workers' group reads,
    as the referee writes jobs and the workers take them."""
    now_ms = int(time.time() * 1000)
    for stream in (MOVE_STREAM, RAPFI, EDAX):
        client.xgroup_create(stream, WORKER_GROUP, id="0", mkstream=True)
    client.sadd(ENGINE_STREAMS, RAPFI, EDAX)  # as the workers announce their streams
    client.xadd(RAPFI, {"pb": b"running"}, id=f"{now_ms - WAITING_S * 1000 - 1000}-0")
    client.xadd(RAPFI, {"pb": b"waiting"}, id=f"{now_ms - WAITING_S * 1000}-0")
    client.xadd(RAPFI, {"pb": b"waiting"}, id=f"{now_ms - 1000}-0")
    client.xadd(EDAX, {"pb": b"running"})
    client.xreadgroup(WORKER_GROUP, "worker-1", {RAPFI: ">"}, count=1)
    client.xreadgroup(WORKER_GROUP, "worker-2", {EDAX: ">"}, count=1)
    client.xadd(MOVE_STREAM, {"pb": b"waiting"})


def status(server: Server, home: Path, *options: str) -> str:
    env = dict(os.environ, ARENA_HOME=str(home), ARENA_REFEREE=server.target,
               ARENA_TOKEN=ADMIN_TOKEN)
    done = subprocess.run([sys.executable, "-m", "arena.clients", "status", *options],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr + done.stdout
    return done.stdout


def figures(queue: dict[str, str], *names: str) -> tuple[int, ...]:
    """A QueueStatus's figures as JSON has them (int64 as text; zeros left out)."""
    return tuple(int(queue.get(name, 0)) for name in names)


def test_the_move_queue_counts_the_engine_streams(
        referee: Server, redis_client: redis.Redis, tmp_path: Path) -> None:
    """With moves waiting only on engine streams (``group_pending`` and
    ``oldest_waiting_seconds`` in /metrics), `arena status` said `move queue: 0 waiting, 0
    running`: it read the common stream alone."""
    queue_moves(redis_client)
    shown = json.loads(status(referee, tmp_path, "--json"))["arena"]
    moves = shown["moves"]
    assert figures(moves, "lag", "pending", "length") == (3, 2, 5)
    assert moves["stream"] == MOVE_STREAM
    [oldest_ms] = figures(moves, "oldest_waiting_ms")
    assert WAITING_S * 1000 <= oldest_ms < (WAITING_S + 30) * 1000
    engines = {queue["stream"]: queue for queue in shown.get("engine_moves", [])}
    assert sorted(engines) == [EDAX, RAPFI]
    assert figures(engines[RAPFI], "lag", "pending", "length") == (2, 1, 3)
    assert figures(engines[EDAX], "lag", "pending", "length") == (0, 1, 1)
    # each names its engine and build, so that no client parses stream names
    assert [(q["engine"], q["build"]) for q in (engines[EDAX], engines[RAPFI])] == [
        ("edax", "cd" * 8), ("rapfi", "ab" * 8)]
    assert "engine" not in moves and "build" not in moves
    # The screen says what the JSON says.
    screen = status(referee, tmp_path).splitlines()
    at = next(i for i, line in enumerate(screen) if line.startswith("move queue:"))
    line = screen[at]
    assert line.startswith("move queue: 3 waiting, 2 running, oldest waiting 6"), line
    assert line.endswith("; 0 dead letters")
    # and which engines' moves those are: a line for each build with moves (sorted)
    assert screen[at + 1] == "  engine edax (cdcdcdcdcdcd): 0 waiting, 1 running"
    assert screen[at + 2].startswith("  engine rapfi (abababababab): 2 waiting, 1 running, "
                                     "oldest waiting 6"), screen[at + 2]
    assert not screen[at + 3].startswith("  engine")


def test_a_job_handed_back_waits_from_when_it_first_queued(
        referee: Server, redis_client: redis.Redis, tmp_path: Path) -> None:
    """A job a worker hands back (its owner's fair share, its call slots) goes to the end
    of its stream as a new entry, which names the entry it first was (``queued``): the
    oldest wait counted from the new entry, so a job handed back again and again looked
    young however long it waited. Here it waited a minute, behind a job of a second."""
    now_ms = int(time.time() * 1000)
    redis_client.xgroup_create(MOVE_STREAM, WORKER_GROUP, id="0", mkstream=True)
    redis_client.xadd(MOVE_STREAM, {"pb": b"waiting"}, id=f"{now_ms - 1000}-0")
    redis_client.xadd(MOVE_STREAM, {"pb": b"handed back",
                                    "queued": f"{now_ms - WAITING_S * 1000}-0"})
    moves = json.loads(status(referee, tmp_path, "--json"))["arena"]["moves"]
    assert figures(moves, "lag") == (2,)
    [oldest_ms] = figures(moves, "oldest_waiting_ms")
    assert WAITING_S * 1000 <= oldest_ms < (WAITING_S + 30) * 1000, oldest_ms


def test_a_user_is_not_shown_the_machines(
        redis_server: EmbeddedRedis, redis_client: redis.Redis, tmp_path: Path) -> None:
    """Any token was shown every worker's host and process id and the registry's address
    (an outsider's `arena status --json` as alice); the admin still sees them, and a user
    sees the rest as before."""
    server = serve("referee", Config(redis_url=redis_server.url, registry="127.0.0.1:9"))
    try:
        with redis_client.pipeline() as pipe:
            workers.advertise(pipe, status_pb2.WorkerInfo(
                worker_id="worker-1", host="db-7.internal", pid=4242, pool="match"))
            pipe.execute()
        for token, shown in ((ADMIN_TOKEN, True), ("alice-token", False)):
            with client(token, referee=server.target) as sdk:
                seen = sdk.get_status()
            [worker] = seen.workers
            assert worker.worker_id == "worker-1" and worker.pool == "match"
            assert (worker.host, worker.pid) == (("db-7.internal", 4242) if shown else ("", 0))
            [registry] = seen.services
            assert registry.address == ("127.0.0.1:9" if shown else ""), token
    finally:
        server.stop()


def test_a_referee_waiting_for_matches_stays_up(redis_server: EmbeddedRedis,
                                               redis_client: redis.Redis,
                                               tmp_path: Path) -> None:
    """'up' was read from the match group, where Redis 6 counts a consumer idle from its
    last read that returned an entry: a referee waiting for work showed 'silent'
    `match_idle_ms` after its last match, and one that never took a match was not listed.
    Now each referee says it is present, with its matches' heartbeat."""
    server = serve("referee", Config(redis_url=redis_server.url, match_idle_ms=1000))
    try:
        time.sleep(3.0)  # a presence lasts 3 beats of 0.5 s here: refreshed, not just made
        shown = json.loads(status(server, tmp_path, "--json"))["arena"]
        screen = status(server, tmp_path).splitlines()
    finally:
        server.stop()
    (alive,) = shown["referees"]
    assert alive.get("up") and not alive.get("running")
    assert f"referees: {alive['name']} up (0 running)" in screen
    assert alive["name"] not in referees.present(redis_client)  # it left as it stopped


def test_a_gone_referee_shows_the_matches_it_left(redis_server: EmbeddedRedis,
                                                 redis_client: redis.Redis,
                                                 tmp_path: Path) -> None:
    """A referee that died holding a match: GONE, with how long it has been silent and
    the match it holds until another referee takes it over (a minute here)."""
    redis_client.xgroup_create(MATCH_STREAM, REFEREE_GROUP, id="0", mkstream=True)
    redis_client.xadd(MATCH_STREAM, {"pb": b"a match"})
    redis_client.xreadgroup(REFEREE_GROUP, "referee-gone", {MATCH_STREAM: ">"}, count=1)
    server = serve("referee", Config(redis_url=redis_server.url, match_idle_ms=60_000))
    try:
        time.sleep(1.0)
        shown = json.loads(status(server, tmp_path, "--json"))["arena"]
        screen = status(server, tmp_path).splitlines()
    finally:
        server.stop()
    by_name = {r["name"]: r for r in shown["referees"]}
    gone = by_name.pop("referee-gone")
    assert not gone.get("up") and int(gone["running"]) == 1 and int(gone["idle_ms"]) >= 1000
    ((name, alive),) = by_name.items()
    assert alive.get("up")
    (line,) = [line for line in screen if line.startswith("referees: ")]
    assert f"{name} up (0 running)" in line
    assert re.search(r"referee-gone GONE \(silent \d+\.\d s, matches held: 1\)", line), line


def test_a_restarted_referee_shows_its_earlier_runs_matches_awaiting_takeover(
        redis_server: EmbeddedRedis, redis_client: redis.Redis, tmp_path: Path) -> None:
    """`arena up` restarts a referee under its name: until a referee took over the match its
    earlier run held (`match_idle_ms` later), status showed it up and running that match,
    which nothing ran. Now each run says when it started, and a match held under its name
    since before then is awaiting takeover, not running; one it took since is running."""
    redis_client.xgroup_create(MATCH_STREAM, REFEREE_GROUP, id="0", mkstream=True)
    redis_client.xadd(MATCH_STREAM, {"pb": b"a match"})
    # the earlier run of "referee" took a match, then died
    redis_client.xreadgroup(REFEREE_GROUP, "referee", {MATCH_STREAM: ">"}, count=1)
    server = serve("referee", Config(redis_url=redis_server.url, instance="referee",
                                     match_idle_ms=60_000))
    try:
        with redis_client.pipeline(transaction=True) as pipe:  # one the new run took:
            pipe.xadd(MATCH_STREAM, {"pb": b"another"})      # atomic, so its own blocked
            pipe.xreadgroup(REFEREE_GROUP, "referee", {MATCH_STREAM: ">"}, count=1)  # read
            pipe.execute()                                     # does not drop it first
        shown = json.loads(status(server, tmp_path, "--json"))["arena"]
        screen = status(server, tmp_path).splitlines()
    finally:
        server.stop()
    (restarted,) = shown["referees"]
    assert restarted["name"] == "referee" and restarted.get("up")
    assert int(restarted["running"]) == 1  # not 2: the earlier run's match is not running
    assert int(restarted.get("awaiting_takeover", 0)) == 1
    assert ("referees: referee up (1 running, 1 left by its run before a restart, awaiting "
            "takeover)") in screen


def consumers(client: redis.Redis) -> list[str]:
    """The match group's consumers, by name."""
    found: Any = client.xinfo_consumers(MATCH_STREAM, REFEREE_GROUP)
    return [c["name"].decode() for c in found]


def test_gone_referees_leave_the_list_once_they_hold_nothing(redis_server: EmbeddedRedis,
                                                            redis_client: redis.Redis,
                                                            tmp_path: Path) -> None:
    """Each referee reads the match group under a name of its own, and a name stayed in
    the group for good: after a few restarts `arena status` listed as many GONE referees,
    holding nothing. A referee now removes the others that are gone and hold no match; one
    holding a match stays listed until its match is taken over."""
    redis_client.xgroup_create(MATCH_STREAM, REFEREE_GROUP, id="0", mkstream=True)
    redis_client.xadd(MATCH_STREAM, {"pb": b"a match"})
    redis_client.xreadgroup(REFEREE_GROUP, "referee-holding", {MATCH_STREAM: ">"}, count=1)
    redis_client.xgroup_createconsumer(MATCH_STREAM, REFEREE_GROUP, "referee-restarted")
    server = serve("referee", Config(redis_url=redis_server.url, match_idle_ms=60_000))
    try:
        deadline = time.monotonic() + 10  # its first look comes as it starts
        while time.monotonic() < deadline and "referee-restarted" in consumers(redis_client):
            time.sleep(0.1)
        shown = json.loads(status(server, tmp_path, "--json"))["arena"]
    finally:
        server.stop()
    names = sorted(r["name"] for r in shown["referees"])
    assert "referee-restarted" not in names and len(names) == 2, names
    assert "referee-holding" in names
