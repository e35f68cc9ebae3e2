"""Control of a shared arena: cancelling running matches, quotas, admission in turn.

Each test reproduces a finding of a probe against a shared stack: nobody could stop a
running match, one user could queue without limit and hold every worker.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest
import redis
from arena.clients.sdk import ArenaClient
from arena.services.common.config import Config
from arena.services.common.embedded_redis import EmbeddedRedis
from arena.services.common.peers import BotVersions
from arena.services.common.protocol import keys
from arena.services.common.protocol.ledger import Ledger
from arena.services.common.protocol.matches import MatchStore, new_match_id
from arena.services.common.protocol.requests import CreateRequest
from arena.services.common.quotas import UNLIMITED, Quota
from arena.services.referee.loop import RefereeLoop
from arena.services.referee.runner import GameState, MatchRunner
from arena.services.worker.bots import BotRunner
from arena.services.worker.consumer import WorkerLoop
from prometheus_client import REGISTRY

from arena import errors
from arena.engine.othello import PRESETS
from arena.v1 import bot_service_pb2, common_pb2, engine_pb2, match_pb2
from tests.conftest import FAST, TEST_BOTS, Loops
from tests.support.bots import (
    bot_server,
    builtin_bot,
    external_bot,
    first_legal,
    match_config,
    wait_finished,
)
from tests.support.servers import Server, client, serve

THINKER = {**PRESETS["arena-strong"], "time_ms": 20_000}  # one move takes the clock's whole


@pytest.fixture
def referee(redis_server: EmbeddedRedis, cache_server: EmbeddedRedis,
            registry_server: Server) -> Iterator[Callable[..., Server]]:
    """Referee servers (no match loop: max_matches 0) with the given quotas."""
    started: list[Server] = []

    def start(quotas: str = "") -> Server:
        server = serve("referee", Config(
            redis_url=redis_server.url, cache_url=cache_server.url,
            registry=registry_server.target, service_token="admin-token", max_matches=0,
            quotas=quotas))
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def _sdk(server: Server, registry: Server, token: str) -> ArenaClient:
    return client(token=token, referee=server.target, registry=registry.target)


def _statuses(store: MatchStore, ids: list[str]) -> list[int]:
    return [store.header(i).status for i in ids]


def test_a_running_match_is_cancelled_at_once_and_its_search_stopped(
        redis_client: redis.Redis, loops: Loops, peers: ArenaClient,
        registry_server: Server, referee: Callable[..., Server]) -> None:
    loops(referees=1, workers=1)
    builtin_bot(peers, "thinker", THINKER)
    alice = _sdk(referee(), registry_server, "alice-token")
    bob = _sdk(referee(), registry_server, "bob-token")
    match = alice.create_match(match_config("thinker", "thinker", move_time_ms=20_000))
    store = MatchStore(redis_client)
    deadline = time.monotonic() + 30
    while not redis_client.xlen(keys.match(match.id, "started")):
        assert time.monotonic() < deadline, "the first search never started"
        time.sleep(0.05)
    with pytest.raises(errors.PermissionDeniedError):
        bob.cancel_match(match.id)  # neither the creator nor a bot's owner
    began = time.monotonic()
    cancelled = alice.cancel_match(match.id, "changed my mind")
    assert cancelled.status == match_pb2.MATCH_STATUS_CANCELLED
    assert cancelled.result.void and cancelled.result.detail == "changed my mind"
    assert cancelled.result.termination == match_pb2.TERMINATION_CANCELLED
    # The worker notices within a heartbeat and stops searching: it answers nothing, the
    # job is acknowledged, and the worker is free long before the move's 20 s were up.
    while redis_client.xpending(keys.MOVE_STREAM, keys.WORKER_GROUP)["pending"]:
        assert time.monotonic() - began < 10, "the search was not stopped"
        time.sleep(0.05)
    assert not [f for _, f in redis_client.xrange(keys.match(match.id, "results"))
                if f[b"kind"] == b"result"]
    assert store.header(match.id).status == match_pb2.MATCH_STATUS_CANCELLED
    assert alice.cancel_match(match.id).status == match_pb2.MATCH_STATUS_CANCELLED  # again
    quick = alice.create_match(match_config("thinker", "thinker", move_time_ms=200))
    assert wait_finished(redis_client, quick.id, 60).status == match_pb2.MATCH_STATUS_FINISHED
    with pytest.raises(errors.FailedPreconditionError):
        alice.cancel_match(quick.id)


def test_a_bot_owner_who_cancels_withdraws_the_bot_and_loses(
        redis_client: redis.Redis, loops: Loops, peers: ArenaClient,
        registry_server: Server, referee: Callable[..., Server]) -> None:
    """Bob's bot plays in alice's match. Were bob's cancel a void game, he could call off
    each game his bot was losing and keep every loss out of the ratings: it withdraws his
    bot, which loses by resignation. Alice, the match's creator, still calls games off."""
    loops(referees=1, workers=1)
    builtin_bot(peers, "thinker", THINKER)
    builtin_bot(client(token="bob-token", registry=registry_server.target), "bobs", THINKER)
    alice = _sdk(referee(), registry_server, "alice-token")
    bob = _sdk(referee(), registry_server, "bob-token")
    for black, white, loser in (("thinker", "bobs", "WHITE"), ("bobs", "thinker", "BLACK")):
        match = alice.create_match(match_config(black, white, move_time_ms=20_000))
        deadline = time.monotonic() + 30
        while not redis_client.xlen(keys.match(match.id, "started")):
            assert time.monotonic() < deadline, "the first search never started"
            time.sleep(0.05)
        ended = bob.cancel_match(match.id, "stop")
        result = ended.result
        assert ended.status == match_pb2.MATCH_STATUS_FINISHED and not result.void
        assert result.termination == match_pb2.TERMINATION_RESIGNATION
        assert common_pb2.Color.Name(result.forfeited) == f"COLOR_{loser}"
        assert result.winner not in (result.forfeited, common_pb2.COLOR_UNSPECIFIED)
        assert result.detail == f"{loser.lower()} withdrawn by its owner bob: stop"
        assert wait_finished(redis_client, match.id, 10).result == result  # as stored
        with pytest.raises(errors.FailedPreconditionError):
            alice.cancel_match(match.id)  # finished: it stands
    called_off = alice.create_match(match_config("thinker", "bobs", move_time_ms=20_000))
    assert alice.cancel_match(called_off.id).result.void


def test_retiring_a_bot_can_cancel_its_matches(
        redis_client: redis.Redis, redis_server: EmbeddedRedis, cache_server: EmbeddedRedis,
        peers: ArenaClient, registry_server: Server, referee: Callable[..., Server]) -> None:
    ref = referee()
    registry = serve("registry", Config(redis_url=redis_server.url, referee=ref.target,
                                        service_token="admin-token"))
    try:
        alice = _sdk(ref, registry, "alice-token")
        for name in ("keep", "drop"):  # alice's bots and matches; no referee loop runs
            builtin_bot(client(token="alice-token", registry=registry.target), name,
                        {"evaluator": "lab", "look_ahead": 0})
        kept = alice.create_match(match_config("keep", "keep"))
        dropped = [alice.create_match(match_config("drop", "keep")) for _ in range(2)]
        alice.retire_bot("drop", cancel_matches=True)
        with pytest.raises(errors.FailedPreconditionError, match="retired"):
            alice.create_match(match_config("drop@1", "keep"))  # pinned: still refused
        # Bob's bot in alice's match: retiring it withdraws it, as bob's cancel would.
        bob = _sdk(ref, registry, "bob-token")
        builtin_bot(client(token="bob-token", registry=registry.target), "bobs",
                    {"evaluator": "lab", "look_ahead": 0})
        withdrawn = alice.create_match(match_config("keep", "bobs"))
        with pytest.raises(errors.PermissionDeniedError, match="as alice"):
            bob.cancel_match(withdrawn.id, as_user="alice")  # only services and admins
        bob.retire_bot("bobs", cancel_matches=True)
    finally:
        registry.stop()
    store = MatchStore(redis_client)
    assert _statuses(store, [m.id for m in dropped]) == [match_pb2.MATCH_STATUS_CANCELLED] * 2
    assert store.header(kept.id).status == match_pb2.MATCH_STATUS_PENDING
    result = store.header(withdrawn.id).result
    assert (result.termination, result.forfeited) == (match_pb2.TERMINATION_RESIGNATION,
                                                       common_pb2.COLOR_WHITE)
    assert result.detail == "white withdrawn by its owner bob: bot bobs retired"


def test_retiring_a_bot_cancels_the_matches_its_running_ones_held_back(
        redis_client: redis.Redis, redis_server: EmbeddedRedis, bots: BotVersions,
        peers: ArenaClient, loops: Loops, new_match: Callable[..., match_pb2.Match],
        referee: Callable[..., Server]) -> None:
    """`arena bot retire --cancel-matches` cancelled the bot's running matches, then listed
    its pending ones: each cancel freed a place of the owner's running_matches, a parked
    match of the bot took it and was running, not pending, when the list was read (an
    outsider's three pending matches all played on with the retired bot)."""
    loops(referees=0, workers=1)
    capped = RefereeLoop(redis_server.client(), bots, "capped", FAST,
                         quota_of=lambda owner: Quota(running_matches=1)).start()
    ref = referee()
    registry = serve("registry", Config(redis_url=redis_server.url, referee=ref.target,
                                        service_token="admin-token"))
    try:
        with bot_server(_sleepy) as address:
            external_bot(peers, "sleepy", address)
            ids = [new_match(match_config("sleepy", "sleepy", move_time_ms=5000), "alice").id
                   for _ in range(4)]
            deadline = time.monotonic() + 20
            while redis_client.zcard(keys.user("alice", "parked")) < 3:
                assert time.monotonic() < deadline, "the matches were not parked"
                time.sleep(0.05)
            _sdk(ref, registry, "admin-token").retire_bot("sleepy", cancel_matches=True)
            store = MatchStore(redis_client)
            assert _statuses(store, ids) == [match_pb2.MATCH_STATUS_CANCELLED] * 4
    finally:
        capped.stop(5)
        registry.stop()


def test_a_user_gets_quota_errors_that_name_the_limit(
        peers: ArenaClient, registry_server: Server, referee: Callable[..., Server]) -> None:
    builtin_bot(peers, "lab", {"evaluator": "lab", "look_ahead": 0})
    quotas = ('{"user": {"queued_matches": 2, "move_time_ms": 5000, "creates_per_minute": 4},'
              ' "users": {"bob": {"queued_matches": 10}}}')
    server = referee(quotas)
    alice = _sdk(server, registry_server, "alice-token")
    with pytest.raises(errors.ResourceExhaustedError, match="move_time_ms is 5000"):
        alice.create_match(match_config("lab", "lab", move_time_ms=60_000))
    alice.create_match(match_config("lab", "lab"))
    alice.create_match(match_config("lab", "lab"))
    with pytest.raises(errors.ResourceExhaustedError, match="queued_matches is 2"):
        alice.create_match(match_config("lab", "lab"))
    with pytest.raises(errors.ResourceExhaustedError, match="creates_per_minute is 4"):
        alice.create_match(match_config("lab", "lab"))  # the fifth call this minute
    bob = _sdk(server, registry_server, "bob-token")
    assert bob.create_match(match_config("lab", "lab")).owner == "bob"
    root = _sdk(server, registry_server, "admin-token")
    for _ in range(6):  # admins have no quota
        root.create_match(match_config("lab", "lab", move_time_ms=600_000))
    # not even one that int32 would cap: a game budget is int64 (it was refused as over
    # "quota game_time_ms is 2147483647")
    long_game = match_config("lab", "lab")
    long_game.time_control.game_time_ms = 2**33
    assert root.create_match(long_game).config.time_control.game_time_ms == 2**33


def test_a_retried_create_with_the_same_key_makes_one_match(
        peers: ArenaClient, registry_server: Server, referee: Callable[..., Server],
        redis_client: redis.Redis) -> None:
    builtin_bot(peers, "lab", {"evaluator": "lab", "look_ahead": 0})
    alice = _sdk(referee(), registry_server, "alice-token")
    first = alice.create_match(match_config("lab", "lab"), request_id="attempt-1")
    again = alice.create_match(match_config("lab", "lab"), request_id="attempt-1")
    other = alice.create_match(match_config("lab", "lab"), request_id="attempt-2")
    assert first.id == again.id != other.id
    assert redis_client.xlen(keys.MATCH_STREAM) == 2


def test_a_key_used_again_for_another_match_is_refused_and_creates_nothing(
        peers: ArenaClient, registry_server: Server, referee: Callable[..., Server],
        redis_client: redis.Redis) -> None:
    """A request_id used again for other bots answered with the first match, as if the
    one asked for had been made; now ALREADY_EXISTS names the match the key made."""
    builtin_bot(peers, "lab", {"evaluator": "lab", "look_ahead": 0})
    builtin_bot(peers, "lab-2", {"evaluator": "lab", "look_ahead": 1})
    alice = _sdk(referee(), registry_server, "alice-token")
    first = alice.create_match(match_config("lab", "lab"), request_id="attempt-1")
    for other in (match_config("lab", "lab-2"), match_config("lab", "lab", move_time_ms=99)):
        with pytest.raises(errors.AlreadyExistsError) as refused:
            alice.create_match(other, request_id="attempt-1")
        assert str(refused.value) == (f"request_id 'attempt-1' already made match {first.id} "
                                      "with different settings; use a new request_id")
    assert redis_client.xlen(keys.MATCH_STREAM) == 1
    assert [m.id for m in alice.iter_matches()] == [first.id]
    assert alice.create_match(match_config("lab", "lab"), request_id="attempt-1").id == first.id


def test_the_create_script_itself_refuses_a_key_another_request_used(
        redis_client: redis.Redis) -> None:
    """The referee reads the key before it checks a request, but two requests with one key
    may both find it free (sent at once): the script that records the key with the match
    refuses the second. A key recorded before digests were kept (the id alone) serves
    its id to any request until it expires."""
    store = MatchStore(redis_client)

    def made(black: str, request_id: str) -> tuple[match_pb2.Match, CreateRequest]:
        match = match_pb2.Match(id=new_match_id(), owner="alice",
                                config=match_config(black, "lab"))
        return match, CreateRequest.of("match", "alice", request_id, match.config)

    first, second = made("lab", "race"), made("lab-2", "race")
    assert store.create(*first) == first[0].id
    assert store.create(*made("lab", "race")) == first[0].id
    with pytest.raises(errors.AlreadyExistsError, match=f"already made match {first[0].id} "):
        store.create(*second)
    assert not redis_client.exists(keys.match(second[0].id))
    assert redis_client.xlen(keys.MATCH_STREAM) == 1
    redis_client.set(keys.request("match", "alice", "old"), first[0].id, ex=60)
    assert store.create(*made("lab-2", "old")) == first[0].id


def test_one_users_flood_runs_in_turn_while_another_users_match_starts_at_once(
        redis_client: redis.Redis, redis_server: EmbeddedRedis, bots: BotVersions,
        peers: ArenaClient, loops: Loops, new_match: Callable[..., match_pb2.Match]) -> None:
    """alice may run one match at a time: her four matches play one after another, in the
    order she made them, and bob's match does not wait behind them."""
    loops(referees=0, workers=2)
    referee = RefereeLoop(redis_server.client(), bots, "capped", FAST,
                          quota_of=lambda owner: Quota(running_matches=1) if owner == "alice"
                          else UNLIMITED).start()
    seen: dict[str, set[int]] = {}
    stop = threading.Event()

    def slow(request: bot_service_pb2.GetMoveRequest) -> bot_service_pb2.GetMoveResponse:
        time.sleep(0.05)
        return first_legal(request)

    try:
        with bot_server(slow) as address:
            external_bot(peers, "slow", address)
            store = MatchStore(redis_client)
            flood = [new_match(match_config("slow", "slow", move_time_ms=2000), "alice").id
                     for _ in range(4)]
            watcher = threading.Thread(target=_watch, args=(store, flood, seen, stop))
            watcher.start()
            bob = new_match(match_config("slow", "slow", move_time_ms=2000), "bob").id
            deadline = time.monotonic() + 15
            while store.header(bob).status == match_pb2.MATCH_STATUS_PENDING:
                assert time.monotonic() < deadline, "bob's match waited behind alice's"
                time.sleep(0.05)
            assert sum(s == match_pb2.MATCH_STATUS_FINISHED for s in _statuses(store, flood)) < 4
            done = [wait_finished(redis_client, match_id, 120) for match_id in flood]
            stop.set()
            watcher.join(5)
    finally:
        stop.set()
        referee.stop(5)
    assert max(len(running) for running in seen.values()) == 1  # never two of alice's
    finished = sorted(done, key=lambda m: m.finished_at.ToNanoseconds())
    assert [m.id for m in finished] == flood  # in the order she made them
    assert redis_client.scard(keys.user("alice", "running")) == 0
    assert redis_client.zcard(keys.user("alice", "parked")) == 0


def _watch(store: MatchStore, ids: list[str], seen: dict[str, set[int]],
           stop: threading.Event) -> None:
    """Sample which of ``ids`` run at once, every 20 ms, until ``stop``."""
    index = 0
    while not stop.is_set():
        running = {i for i, match_id in enumerate(ids)
                   if store.header(match_id).status == match_pb2.MATCH_STATUS_RUNNING}
        seen[str(index)] = running
        index += 1
        time.sleep(0.02)


def test_cancelled_parked_matches_pass_their_turn_on(
        redis_client: redis.Redis, redis_server: EmbeddedRedis, bots: BotVersions,
        peers: ArenaClient, loops: Loops, new_match: Callable[..., match_pb2.Match],
        registry_server: Server, referee: Callable[..., Server]) -> None:
    loops(referees=0, workers=1)
    capped = RefereeLoop(redis_server.client(), bots, "capped", FAST,
                         quota_of=lambda owner: Quota(running_matches=1)).start()
    try:
        builtin_bot(peers, "lab", {"evaluator": "lab", "look_ahead": 0})
        with bot_server(_sleepy) as address:
            external_bot(peers, "sleepy", address)
            first = new_match(match_config("sleepy", "sleepy", move_time_ms=5000), "alice")
            parked = [new_match(match_config("lab", "lab"), "alice") for _ in range(3)]
            store = MatchStore(redis_client)
            deadline = time.monotonic() + 20
            while redis_client.zcard(keys.user("alice", "parked")) < 3:
                assert time.monotonic() < deadline, "the matches were not parked"
                time.sleep(0.05)
            root = _sdk(referee(), registry_server, "admin-token")
            # `arena status` counts them (they were in no figure: acknowledged, not held).
            shown = root.get_status()
            assert (shown.matches_running, shown.matches.lag, shown.matches_waiting) == (1, 0, 3)
            root.cancel_match(parked[0].id)
            root.cancel_match(first.id)  # its slot passes over the cancelled one
            for match in parked[1:]:
                assert wait_finished(redis_client, match.id, 60).result.termination == \
                    match_pb2.TERMINATION_NORMAL
    finally:
        capped.stop(5)
    assert store.header(parked[0].id).status == match_pb2.MATCH_STATUS_CANCELLED


def test_parked_matches_start_in_the_order_they_were_made(
        redis_client: redis.Redis, peers: ArenaClient,
        new_match: Callable[..., match_pb2.Match]) -> None:
    """Each match's own referee thread admits it, so a later match may be parked before an
    earlier one (the flood test saw alice's fourth match run before her third): the slot
    still goes to the oldest. A list of parked jobs stored by an older Arena is kept, first."""
    builtin_bot(peers, "lab", {"evaluator": "lab", "look_ahead": 0})
    made = [new_match(match_config("lab", "lab"), "alice") for _ in range(5)]
    ledger = Ledger(redis_client)
    older = [engine_pb2.MatchJob(match_id=m.id).SerializeToString() for m in made[3:]]
    redis_client.rpush(keys.user("alice", "parked"), *older)

    assert ledger.admit(made[0], 1, "0-1", 0) == "run"
    assert ledger.admit(made[2], 1, "0-2", 0) == "parked"
    assert ledger.admit(made[1], 1, "0-3", 0) == "parked"
    by_id, running, handed = {m.id: m for m in made}, made[0], []
    for _ in range(4):  # the running match ends, the one handed on runs
        ledger.finish(_cancelled(running), None)
        job = redis_client.xrevrange(keys.MATCH_STREAM, count=1)[0][1][b"pb"]
        running = by_id[engine_pb2.MatchJob.FromString(job).match_id]
        handed.append(running.id)
        assert ledger.admit(running, 1, "0-4", 0) == "run"
    assert handed == [m.id for m in (made[3], made[4], made[1], made[2])]
    assert redis_client.zcard(keys.user("alice", "parked")) == 0


def test_the_first_of_a_flood_runs_first_however_slow_its_thread(
        redis_client: redis.Redis, redis_server: EmbeddedRedis, bots: BotVersions,
        peers: ArenaClient, loops: Loops, new_match: Callable[..., match_pb2.Match],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The referee reads a queued flood at once and starts a thread per match; each thread
    used to admit its match, so on a busy machine the first slot went to whichever thread
    ran first. Here the first match's thread is slow to load its game (as a thread that the
    machine does not schedule for a while)."""
    builtin_bot(peers, "lab", {"evaluator": "lab", "look_ahead": 0})
    loops(referees=0, workers=2)
    flood = [new_match(match_config("lab", "lab"), "alice").id for _ in range(3)]
    load = MatchRunner.load

    def slow_first(runner: MatchRunner, match_id: str) -> GameState:
        if match_id == flood[0]:
            time.sleep(0.5)
        return load(runner, match_id)

    monkeypatch.setattr(MatchRunner, "load", slow_first)
    referee = RefereeLoop(redis_server.client(), bots, "capped", FAST,
                          quota_of=lambda owner: Quota(running_matches=1)).start()
    try:
        done = [wait_finished(redis_client, match_id, 120) for match_id in flood]
    finally:
        referee.stop(5)
    finished = sorted(done, key=lambda m: m.finished_at.ToNanoseconds())
    assert [m.id for m in finished] == flood


def _cancelled(match: match_pb2.Match) -> match_pb2.Match:
    finished = match_pb2.Match()
    finished.CopyFrom(match)
    finished.status = match_pb2.MATCH_STATUS_CANCELLED
    return finished


def _sleepy(request: bot_service_pb2.GetMoveRequest) -> bot_service_pb2.GetMoveResponse:
    time.sleep(1.0)
    return first_legal(request)


def test_the_worker_never_dials_a_private_address_it_was_not_allowed(
        redis_client: redis.Redis, redis_server: EmbeddedRedis, cache_server: EmbeddedRedis,
        peers: ArenaClient, registry_server: Server, loops: Loops,
        new_match: Callable[..., match_pb2.Match]) -> None:
    """The registry refuses a loopback bot by default; one registered under a looser policy
    is refused again by a worker at connect time, which never dials it and tells the owner
    only that it was unreachable."""
    strict = serve("registry", Config(redis_url=redis_server.url))
    calls: list[int] = []

    def counted(request: bot_service_pb2.GetMoveRequest) -> bot_service_pb2.GetMoveResponse:
        calls.append(1)
        return first_legal(request)

    try:
        with bot_server(counted) as address:
            with pytest.raises(errors.InvalidArgumentError, match="ARENA_EXTERNAL_ALLOW"):
                external_bot(client(registry=strict.target), "sneaky", address)
            # An IPv6 address carrying a private IPv4 one (NAT64, 6to4, IPv4-compatible) was
            # taken for public: Python's is_global judges the IPv6 prefix alone.
            for hostile in ("169.254.169.254:80", "10.0.0.1:6379", "[::1]:22",
                            "[64:ff9b::7f00:1]:80", "[64:ff9b::a00:1]:6379",
                            "[2002:7f00:1::]:80", "[::127.0.0.1]:6379"):
                with pytest.raises(errors.InvalidArgumentError, match=r"private|loopback"):
                    external_bot(client(registry=strict.target), "sneaky", hostile)
            external_bot(peers, "sneaky", address)  # the tests' registry allows loopback
            builtin_bot(peers, "lab", {"evaluator": "lab", "look_ahead": 0})
            worker = WorkerLoop(redis_server.client(), None, "strict", FAST,
                                BotRunner(grace_ms=FAST.grace_ms)).start()
            try:
                loops(referees=1, workers=0)
                match = wait_finished(
                    redis_client, new_match(match_config("sneaky", "lab")).id, 60)
            finally:
                worker.stop(5)
    finally:
        strict.stop()
    assert match.result.termination == match_pb2.TERMINATION_BOT_UNREACHABLE
    assert match.result.detail == "MOVE_ERROR_BOT_UNREACHABLE: unreachable"
    assert calls == []
    assert TEST_BOTS.startswith("127.")  # the looser policy the other tests use


def test_a_refused_address_never_says_what_a_name_resolves_to(
        redis_server: EmbeddedRedis) -> None:
    """A name that resolves to a refused address was answered with the address ("localhost
    resolves to 127.0.0.1", and in a Compose network "redis resolves to 10.0.3.7"), and a
    name that does not resolve with the resolver's error: any user mapped the arena's own
    network by registering bots. Both are refused in the same words now."""
    strict = serve("registry", Config(redis_url=redis_server.url))
    try:
        told = []
        for address in ("localhost:7000", "no-such-host.invalid:7000"):
            with pytest.raises(errors.InvalidArgumentError) as refused:
                external_bot(client(registry=strict.target), "probe", address)
            (violation,) = refused.value.violations
            assert violation.field == "spec.external.address"
            told.append(violation.description.replace(address.split(":")[0], "HOST"))
        assert told[0] == told[1], told
        assert "127.0.0.1" not in told[0] and "::1" not in told[0]
        assert "resolve" in told[0] and "ARENA_EXTERNAL_ALLOW" in told[0]
    finally:
        strict.stop()


def _finished(termination: str, metric: str = "arena_matches_finished_total") -> float:
    return REGISTRY.get_sample_value(metric, {"termination": termination}) or 0.0


def test_cancelled_and_withdrawn_matches_are_counted_as_finished(
        peers: ArenaClient, registry_server: Server, referee: Callable[..., Server]) -> None:
    """A cancellation writes the match's result too: the metrics count it like any other
    end (they counted only the games a referee's match thread ended, so started matches
    never added up to the finished and running ones)."""
    builtin_bot(peers, "thinker", THINKER)
    builtin_bot(client(token="bob-token", registry=registry_server.target), "bobs", THINKER)
    server = referee()  # no match loop: the matches stay pending
    alice = _sdk(server, registry_server, "alice-token")
    bob = _sdk(server, registry_server, "bob-token")
    before = (_finished("cancelled"), _finished("resignation"),
              _finished("resignation", "arena_forfeits_total"))
    called_off = alice.create_match(match_config("thinker", "bobs"))
    withdrawn = alice.create_match(match_config("thinker", "bobs"))
    alice.cancel_match(called_off.id)
    alice.cancel_match(called_off.id)  # again: it was counted once
    assert bob.cancel_match(withdrawn.id).result.termination == (
        match_pb2.TERMINATION_RESIGNATION)
    after = (_finished("cancelled"), _finished("resignation"),
             _finished("resignation", "arena_forfeits_total"))
    assert [a - b for a, b in zip(after, before, strict=True)] == [1, 1, 1]
