"""A ladder whose next game the referee refuses says why (``LadderInfo.waiting``): in
CreateLadder's answer, GetStandings, ListLadders, WatchLadder and the `arena` command, until
a game is created again or the ladder ends. Real registry, referee (with quotas) and ladder
service on real Redis; the referee runs no match, so the tests decide when games end."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import grpc
import pytest
import redis
from arena.clients.sdk import ArenaClient
from arena.services.common.config import Config
from arena.services.common.embedded_redis import EmbeddedRedis
from arena.services.common.peers import BotVersions
from arena.services.common.protocol import keys
from arena.services.common.protocol.ladders import MAX_WAITING_CHARS, LadderStore
from arena.services.ladder.follower import FollowerConfig
from arena.services.ladder.ladders import Ladders

from arena.v1 import common_pb2, ladder_pb2, ladder_pb2_grpc, match_pb2
from tests.ladder.conftest import (
    WHITE,
    LadderServer,
    Peers,
    create_ladder,
    finish_match,
    metadata,
    register_bots,
    standings,
    start_ladder_server,
    wait_for,
)
from tests.support.servers import ADMIN_TOKEN, Server, client, serve

OTHELLO = common_pb2.GAME_KIND_OTHELLO
QUEUED = 2  # alice's queued_matches quota
FULL = f"quota queued_matches is {QUEUED}; the request asks for {QUEUED + 1}"
# Alice's match_bytes in the tests of deletions. A ladder game's header takes about 214
# bytes until it is played (no referee runs it here) and the imported RECORD about 660: with
# the record stored, three or so of the ladder's games fit and the next waits; deleting the
# record makes room for about three more.
ROOM = 1500
RECORD = "f5 d6 c3 d3 c4"
REPO = str(Path(__file__).resolve().parents[2])


@dataclass
class Stack:
    peers: Peers
    ladder: LadderServer

    def alice(self) -> ArenaClient:
        return client("alice-token", registry=self.peers.registry.target,
                      referee=self.peers.referee.target)

    def addresses(self) -> list[str]:
        return [f"--registry={self.peers.registry.target}",
                f"--referee={self.peers.referee.target}",
                f"--ladder={self.ladder.server.target}", "--token", "alice-token",
                "--timeout", "30"]


@pytest.fixture
def stack(registry_server: Server, redis_server: EmbeddedRedis, cache_server: EmbeddedRedis,
          peers: ArenaClient) -> Iterator[Stack]:
    """A referee that lets alice have ``QUEUED`` unfinished matches; a ladder service that
    checks its running ladders every 0.2 s (the default is 30 s)."""
    yield from _stack(registry_server, redis_server, cache_server, peers, 0.2)


@pytest.fixture
def unchecked_stack(registry_server: Server, redis_server: EmbeddedRedis,
                    cache_server: EmbeddedRedis, peers: ArenaClient) -> Iterator[Stack]:
    """The same, with a ladder service that checks its running ladders only at its start
    (then every 10 minutes): what moves a waiting ladder on is the finished matches."""
    yield from _stack(registry_server, redis_server, cache_server, peers, 600.0)


@pytest.fixture
def bytes_stack(registry_server: Server, redis_server: EmbeddedRedis,
                cache_server: EmbeddedRedis, peers: ArenaClient) -> Iterator[Stack]:
    """Alice's ``match_bytes`` is ``ROOM`` (and her unfinished matches are not bounded
    here); the ladder service checks its running ladders only at its start."""
    yield from _stack(registry_server, redis_server, cache_server, peers, 600.0,
                      {"match_bytes": ROOM})


def _stack(registry_server: Server, redis_server: EmbeddedRedis, cache_server: EmbeddedRedis,
           peers: ArenaClient, reconcile_every_s: float,
           alice: dict[str, int] | None = None) -> Iterator[Stack]:
    quota = {"queued_matches": QUEUED} if alice is None else alice
    config = Config(redis_url=redis_server.url, cache_url=cache_server.url,
                    registry=registry_server.target, max_matches=0, service_token=ADMIN_TOKEN,
                    quotas=json.dumps({"users": {"alice": quota}}))
    referee = serve("referee", config)
    ladder_peers = Peers(registry_server, referee, redis_server.url, cache_server.url)
    ladder = start_ladder_server(ladder_peers, FollowerConfig(
        consumer="ladder-test", block_ms=50, reconcile_every_s=reconcile_every_s))
    register_bots(peers, OTHELLO, "ann", "ben")
    try:
        yield Stack(ladder_peers, ladder)
    finally:
        ladder.stop()
        referee.stop()


def _config(games: int) -> ladder_pb2.LadderConfig:
    return ladder_pb2.LadderConfig(
        name="held", game=common_pb2.GameSpec(kind=OTHELLO),
        bots=[common_pb2.BotRef(name="ann"), common_pb2.BotRef(name="ben")],
        games_per_pairing=games, time_control=common_pb2.TimeControl(move_time_ms=50), seed=3)


def _other_match(stack: Stack) -> str:
    """A match of alice's outside the ladder: it stays queued (no referee runs it)."""
    with stack.alice() as alice:
        return alice.create_match(match_pb2.MatchConfig(
            game=common_pb2.GameSpec(kind=OTHELLO), black=common_pb2.BotRef(name="ann"),
            white=common_pb2.BotRef(name="ben"),
            time_control=common_pb2.TimeControl(move_time_ms=50))).id


def _listed(ladder: LadderServer, ladder_id: str) -> ladder_pb2.LadderInfo:
    listing = ladder.stub.ListLadders(ladder_pb2.ListLaddersRequest(), timeout=10,
                                      metadata=metadata())
    return next(info for info in listing.ladders if info.id == ladder_id)


def _waiting_entries(redis_client: redis.Redis, ladder_id: str) -> list[bytes]:
    entries = redis_client.xrange(keys.ladder(ladder_id, "progress"))
    return [fields[b"waiting"] for _id, fields in entries if b"waiting" in fields]


def test_a_ladder_held_back_by_the_owners_quota_says_so_until_it_goes_on(
    stack: Stack, redis_client: redis.Redis
) -> None:
    other = _other_match(stack)
    # Its first game is created (alice's second unfinished match); the second is refused.
    info = create_ladder(stack.ladder, _config(2))
    assert info.status == ladder_pb2.LADDER_STATUS_RUNNING and len(info.match_ids) == 1
    assert info.waiting == FULL
    assert standings(stack.ladder, info.id).ladder.waiting == FULL
    assert _listed(stack.ladder, info.id).waiting == FULL

    # Every round refuses it again; what it stores is written once.
    ladders = stack.peers.ladders(redis_client)
    for _ in range(3):
        assert ladders.schedule(info.id) == 0
    assert _waiting_entries(redis_client, info.id) == [FULL.encode()]

    events: queue.Queue[ladder_pb2.LadderProgress | None] = queue.Queue()
    stream = stack.ladder.stub.WatchLadder(ladder_pb2.WatchLadderRequest(ladder_id=info.id),
                                           timeout=60, metadata=metadata())

    def read() -> None:
        try:
            for progress in stream:
                events.put(progress)
        except grpc.RpcError:
            pass
        events.put(None)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    first = events.get(timeout=10)
    assert first is not None and first.ladder.waiting == FULL

    # Alice's other match ends: the ladder creates its second game by itself, and no
    # longer waits, though it still runs.
    with stack.alice() as alice:
        alice.cancel_match(other, "not needed")
    cleared = events.get(timeout=20)
    assert cleared is not None and not cleared.finished_match_id
    assert cleared.ladder.waiting == ""
    assert cleared.ladder.status == ladder_pb2.LADDER_STATUS_RUNNING
    now = standings(stack.ladder, info.id).ladder
    assert len(now.match_ids) == 2 and now.waiting == ""
    assert _listed(stack.ladder, info.id).waiting == ""
    assert _waiting_entries(redis_client, info.id) == [FULL.encode(), b""]

    for match_id in now.match_ids:
        finish_match(redis_client, match_id, WHITE)
    seen = []
    while (event := events.get(timeout=20)) is not None:
        seen.append(event)
    assert seen[-1].ladder.status == ladder_pb2.LADDER_STATUS_FINISHED
    assert all(event.ladder.waiting == "" for event in seen)
    assert standings(stack.ladder, info.id).ladder.waiting == ""


@pytest.mark.parametrize("ends", ["cancelled", "played"])
def test_a_waiting_ladder_goes_on_when_any_match_of_its_owner_ends(
    unchecked_stack: Stack, redis_client: redis.Redis, ends: str
) -> None:
    """Held back by a match of alice's outside it, the ladder creates its next game as soon
    as that match ends, however it ends: not at the service's next check of every ladder.
    A match of bob's ending does not touch it."""
    stack = unchecked_stack
    other = _other_match(stack)
    info = create_ladder(stack.ladder, _config(2))
    assert info.waiting == FULL and len(info.match_ids) == 1
    ladders = stack.peers.ladders(redis_client)
    assert ladders.store.waiting_of({"alice"}) == [info.id]
    assert ladders.store.waiting_of({"bob"}) == []
    if ends == "cancelled":
        with stack.alice() as alice:
            alice.cancel_match(other, "not needed")
    else:
        finish_match(redis_client, other, WHITE)
    wait_for(lambda: len(standings(stack.ladder, info.id).ladder.match_ids) == 2)
    now = standings(stack.ladder, info.id).ladder
    assert now.waiting == "" and now.status == ladder_pb2.LADDER_STATUS_RUNNING
    assert ladders.store.waiting_of({"alice"}) == []
    # Ended, it leaves the waiting ladders whatever it waited for.
    stack.ladder.stub.CancelLadder(ladder_pb2.CancelLadderRequest(ladder_id=info.id),
                                   timeout=10, metadata=metadata())
    assert redis_client.hgetall(keys.WAITING_LADDERS) == {}


@pytest.mark.parametrize("makes_room", ["delete", "prune"])
def test_a_ladder_waiting_on_match_bytes_goes_on_when_its_owner_deletes_matches(
    bytes_stack: Stack, redis_client: redis.Redis, makes_room: str
) -> None:
    """Deleting or pruning matches gives their bytes back, and the ladder service hears of
    it on the finished-matches stream: a ladder held back by its owner's match_bytes
    creates its next games within seconds, though the service checks its running ladders
    only every 10 minutes. (Before, it went on only at that check.)"""
    stack = bytes_stack
    with stack.alice() as alice:
        record = alice.import_match(RECORD)  # finished as stored: no finished-match entry
    info = create_ladder(stack.ladder, _config(16))
    made = len(info.match_ids)
    assert 1 <= made < 16, info
    assert info.waiting.startswith(f"quota match_bytes is {ROOM:,}: alice's matches take "), (
        info.waiting)
    assert stack.peers.ladders(redis_client).store.waiting_of({"alice"}) == [info.id]
    with stack.alice() as alice:
        if makes_room == "delete":
            alice.delete_match(record.id)
        else:  # the ladder's games are not over: only the record goes
            assert alice.prune_matches(datetime.now(UTC) + timedelta(minutes=1)) == (
                made + 1, 1)
    wait_for(lambda: len(standings(stack.ladder, info.id).ladder.match_ids) > made)
    now = standings(stack.ladder, info.id).ladder
    assert now.status == ladder_pb2.LADDER_STATUS_RUNNING
    # Still more games than room: it waits again, for the same reason.
    assert now.waiting.startswith(f"quota match_bytes is {ROOM:,}"), now.waiting
    # What told it is one entry for the call, which is no finished match: the arena's
    # status counts none (none finished).
    told = [fields for _id, fields in redis_client.xrange(keys.FINISHED_STREAM)]
    assert told == [{b"owner": b"alice", b"deleted": b"1"}]
    with stack.alice() as alice:
        assert alice.get_status().matches_finished == 0
    stack.ladder.stub.CancelLadder(ladder_pb2.CancelLadderRequest(ladder_id=info.id),
                                   timeout=10, metadata=metadata())


def test_a_ladder_whose_first_game_is_refused_leaves_its_request_id_free(
    stack: Stack, redis_client: redis.Redis
) -> None:
    """A ladder whose first game the referee refuses is forgotten, and so is its
    request_id: sent again once there is room (the web form keeps its key), the request
    made a ladder; the key named the forgotten one, so it got NOT_FOUND (and, changed,
    ALREADY_EXISTS for a ladder that is not there)."""
    others = [_other_match(stack) for _ in range(QUEUED)]
    with pytest.raises(grpc.RpcError) as refused:
        create_ladder(stack.ladder, _config(2), request_id="form-1")
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert redis_client.zcard(keys.ALL_LADDERS) == 0
    with stack.alice() as alice:
        alice.cancel_match(others[0], "not needed")
    info = create_ladder(stack.ladder, _config(4), request_id="form-1")
    assert info.status == ladder_pb2.LADDER_STATUS_RUNNING and len(info.match_ids) == 1
    assert create_ladder(stack.ladder, _config(4), request_id="form-1").id == info.id


def test_an_ended_ladder_waits_for_nothing(stack: Stack, redis_client: redis.Redis) -> None:
    other = _other_match(stack)
    info = create_ladder(stack.ladder, _config(4))
    assert info.waiting == FULL
    cancelled = stack.ladder.stub.CancelLadder(ladder_pb2.CancelLadderRequest(
        ladder_id=info.id), timeout=10, metadata=metadata())
    assert cancelled.status == ladder_pb2.LADDER_STATUS_CANCELLED and cancelled.waiting == ""
    # A round after it, with room for the game it had claimed, neither waits nor creates
    # that game (a round created it: a match of a cancelled ladder, played for nothing).
    with stack.alice() as alice:
        alice.cancel_match(other)
    ladders = stack.peers.ladders(redis_client)
    assert ladders.schedule(info.id) == 0
    assert redis_client.hget(keys.ladder(info.id), "waiting") is None
    assert standings(stack.ladder, info.id).ladder.waiting == ""
    assert _listed(stack.ladder, info.id).waiting == ""
    assert standings(stack.ladder, info.id).ladder.match_ids == info.match_ids


def test_what_a_ladder_waits_for_is_one_bounded_printable_line(
    stack: Stack, redis_client: redis.Redis
) -> None:
    info = create_ladder(stack.ladder, _config(2))
    assert info.waiting == ""  # both games fit alice's quota
    store = LadderStore(redis_client)
    told = "referee said:\n\x1b[2J" + "x" * 1000
    assert store.set_waiting(info.id, "alice", told)
    kept = store.get(info.id).waiting
    assert len(kept) == MAX_WAITING_CHARS and kept.startswith("referee said: \ufffd[2Jxxx")
    assert kept.endswith("…") and kept.isprintable()
    assert not store.set_waiting(info.id, "alice", told)  # the same: nothing written
    assert len(_waiting_entries(redis_client, info.id)) == 1


# --- the `arena` command ------------------------------------------------------------------


def _arena(stack: Stack, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    from arena.clients.cli import main

    capsys.readouterr()
    code = main([*stack.addresses(), *args])
    captured = capsys.readouterr()
    assert code == 0, captured.err + captured.out
    return captured.out


def test_the_arena_command_shows_why_a_ladder_waits(
    stack: Stack, redis_client: redis.Redis, capsys: pytest.CaptureFixture[str],
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in [n for n in os.environ if n.startswith("ARENA_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("ARENA_HOME", str(tmp_path))
    other = _other_match(stack)
    made = _arena(stack, capsys, "ladder", "create", "ann", "ben", "--games-per-pairing", "2",
                  "--move-time-ms", "50")
    assert f"waiting: {FULL}" in made.splitlines()
    ladder_id = made.split()[1].rstrip(":")
    assert f"waiting: {FULL}" in _arena(stack, capsys, "ladder", "standings", ladder_id)
    listed = _arena(stack, capsys, "ladder", "list").splitlines()
    assert listed[0].startswith(ladder_id) and listed[1].strip() == f"waiting: {FULL}"
    as_json = json.loads(_arena(stack, capsys, "ladder", "standings", ladder_id, "--json"))
    assert as_json["ladder"]["waiting"] == FULL
    assert json.loads(_arena(stack, capsys, "ladder", "list", "--json"))[0]["waiting"] == FULL
    assert _arena(stack, capsys, "ladder", "list", "--running").splitlines() == listed

    # `arena ladder watch`, a process of its own: the reason, then that it is over.
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update(ARENA_HOME=str(tmp_path), PYTHONPATH=REPO)
    watch = subprocess.Popen([sys.executable, "-m", "arena.clients", *stack.addresses(),
                              "ladder", "watch", ladder_id], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert watch.stdout is not None
        for line in watch.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    try:
        assert lines.get(timeout=60) == f"waiting: {FULL}"
        with stack.alice() as alice:
            alice.cancel_match(other, "not needed")
        wait_for(lambda: len(standings(stack.ladder, ladder_id).ladder.match_ids) == 2, 20)
        for match_id in standings(stack.ladder, ladder_id).ladder.match_ids:
            finish_match(redis_client, match_id, WHITE)
        shown = []
        while (line := lines.get(timeout=60)) is not None:
            shown.append(line)
        assert watch.wait(timeout=30) == 0, watch.stderr.read() if watch.stderr else ""
    finally:
        if watch.poll() is None:
            watch.kill()
            watch.wait()
    over = shown.index("waiting no more: its games are being created")
    assert not any(line.startswith("waiting: ") for line in shown)
    assert not any("2/2" in line for line in shown[:over])  # said before the games ended
    assert "finished, 2/2 games over" in "\n".join(shown)
    assert "waiting" not in _arena(stack, capsys, "ladder", "standings", ladder_id)
    assert _arena(stack, capsys, "ladder", "list", "--running") == "no running ladders\n"


def _refused_creates() -> float:
    """CreateMatch calls the referees of this process refused for a quota, as their
    metrics count them."""
    from prometheus_client import REGISTRY

    found = REGISTRY.get_sample_value("grpc_server_handled_total", {
        "grpc_service": "arena.v1.Referee", "grpc_method": "CreateMatch", "grpc_type": "unary",
        "grpc_code": "RESOURCE_EXHAUSTED"})
    return found or 0.0


def test_a_users_many_waiting_ladders_cost_one_refusal_a_round_not_one_each(
        ladder_peers: Peers, registry_server: Server, redis_server: EmbeddedRedis,
        cache_server: EmbeddedRedis, peers: ArenaClient, redis_client: redis.Redis) -> None:
    """After each of her games, the ladder service tried every waiting ladder of its owner
    and the referee refused each (her quota was as full as before): with a few hundred
    waiting ladders (one user re-creating ladders as room came) another user's 4-game ladder
    took 3-4 s instead of 0.5 s, and it grew with her count. Now the first refusal stops the
    round for her; the room a finished game frees goes to her oldest waiting ladder."""
    register_bots(peers, OTHELLO, "ann", "ben")
    sdk = ladder_peers.client()
    made = Ladders(LadderStore(redis_client), sdk, BotVersions(sdk), in_flight=1)
    ids = [made.create(_config(4), "alice").id for _ in range(12)]  # one game in flight each
    config = Config(redis_url=redis_server.url, cache_url=cache_server.url,
                    registry=registry_server.target, max_matches=0, service_token=ADMIN_TOKEN,
                    quotas=json.dumps({"users": {"alice": {"queued_matches": 12}}}))
    referee = serve("referee", config)  # her 12 games fill her quota there
    try:
        full_sdk = client(registry=registry_server.target, referee=referee.target)
        ladders = Ladders(LadderStore(redis_client), full_sdk, BotVersions(full_sdk),
                          in_flight=2)
        before = _refused_creates()
        assert ladders.schedule_each(ids) == 0  # each asks for a second game: refused
        assert _refused_creates() - before == 12  # none was waiting yet: each was tried
        assert sorted(ladders.store.waiting_of({"alice"})) == sorted(ids)
        # One of her games ends: the service schedules that ladder and her waiting ones.
        first_game = ladders.store.games(ids[5])[0]
        finish_match(redis_client, first_game, WHITE)
        before = _refused_creates()
        assert ladders.schedule_each([ids[5], *ladders.store.waiting_of({"alice"})]) == 1
        assert _refused_creates() - before == 1
        # The room went to her oldest waiting ladder; the others still wait, as they said.
        assert len(ladders.store.games(ids[0])) == 2
        assert all(len(ladders.store.games(i)) == 1 for i in ids[1:] if i != ids[5])
        assert sorted(ladders.store.waiting_of({"alice"})) == sorted(ids[1:])
        for ladder_id in ids:
            ladders.end(ladder_id, "alice")
    finally:
        referee.stop()


def _usage(ladder: LadderServer, token: str = "alice-token") -> tuple[str, int, int]:
    usage = ladder.stub.GetUsage(ladder_pb2.GetLadderUsageRequest(), timeout=10,
                                 metadata=metadata(token))
    return usage.user, usage.running_ladders, usage.running_ladders_limit


def test_a_user_runs_at_most_running_ladders_at_once(
        ladder_peers: Peers, peers: ArenaClient, redis_client: redis.Redis) -> None:
    """A user could keep any number of ladders running: each new one took its first game
    once a game of theirs had made room, so over hours one user held tens of thousands,
    every one read at each reconcile round. Now ``running_ladders`` bounds them; a ladder
    that ends (cancelled, finished) makes room, and other users are not counted."""
    register_bots(peers, OTHELLO, "ann", "ben")
    config = ladder_peers.config().replace(
        quotas=json.dumps({"users": {"alice": {"running_ladders": 2}}}))
    server = serve("ladder", config, follower=FollowerConfig(consumer="ladder-test",
                                                              block_ms=50))
    channel = grpc.insecure_channel(server.target)
    ladder = LadderServer(server, channel, ladder_pb2_grpc.LadderStub(channel))
    try:
        first, second = (create_ladder(ladder, _config(2)) for _ in range(2))
        with pytest.raises(grpc.RpcError) as refused:
            create_ladder(ladder, _config(2))
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "quota running_ladders is 2" in str(refused.value.details())
        assert len(standings(ladder, first.id).ladder.match_ids) == 2  # nothing else moved
        create_ladder(ladder, _config(2), token="bob-token")  # bob's are his own
        ladder.stub.CancelLadder(ladder_pb2.CancelLadderRequest(ladder_id=first.id),
                                 timeout=10, metadata=metadata())
        third = create_ladder(ladder, _config(2))
        with pytest.raises(grpc.RpcError):
            create_ladder(ladder, _config(2))
        for match_id in standings(ladder, second.id).ladder.match_ids:  # it plays out
            finish_match(redis_client, match_id, WHITE)
        wait_for(lambda: standings(ladder, second.id).ladder.status
                 == ladder_pb2.LADDER_STATUS_FINISHED)
        fourth = create_ladder(ladder, _config(2))
        assert {third.status, fourth.status} == {ladder_pb2.LADDER_STATUS_RUNNING}
        assert _usage(ladder) == ("alice", 2, 2)  # what she is told she runs
        assert _usage(ladder, "bob-token") == ("bob", 1, 50)
    finally:
        ladder.stop()


def test_a_ladder_whose_bot_is_retired_ends_and_says_why(
        stack: Stack, peers: ArenaClient, redis_client: redis.Redis,
        capsys: pytest.CaptureFixture[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A retired bot enters no new match, so its ladder's next game was refused at every
    round and the ladder stayed running for ever (`watch` never returned), holding a
    `running_ladders` place of its owner's, which another user's retirement could take.
    Now the arena cancels it, its games not over void, and says why."""
    for name in [n for n in os.environ if n.startswith("ARENA_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("ARENA_HOME", str(tmp_path))
    suffix = os.urandom(3).hex()
    cal, dee = f"cal-{suffix}", f"dee-{suffix}"
    register_bots(peers, OTHELLO, cal, dee)
    config = _config(8)
    del config.bots[:]
    config.bots.extend([common_pb2.BotRef(name=cal), common_pb2.BotRef(name=dee)])
    made = create_ladder(stack.ladder, config)  # two games made: alice's queue is full
    assert len(made.match_ids) == QUEUED
    peers.retire_bot(dee)
    finish_match(redis_client, made.match_ids[0], WHITE)  # room: the next game is refused
    wait_for(lambda: standings(stack.ladder, made.id).ladder.status
             == ladder_pb2.LADDER_STATUS_CANCELLED)
    ladder = standings(stack.ladder, made.id).ladder
    why = f"bot '{dee}' is retired: its games cannot be played"
    assert ladder.ended_because == why and not ladder.waiting
    assert (ladder.games_done, ladder.games_void) == (2, 1)  # one played, one cancelled
    assert stack.ladder.stub.GetUsage(ladder_pb2.GetLadderUsageRequest(), timeout=10,
                                      metadata=metadata()).running_ladders == 0
    assert f"ended by the arena: {why}" in _arena(stack, capsys, "ladder", "standings", made.id)
