"""The API's edges, as an outsider meets them: bad bytes, absurd sizes, a Redis outage.

No call may end INTERNAL or UNKNOWN; every refusal says what was wrong in a bounded
message; a service that starts while Redis is down waits for it.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
import redis
from arena.clients.sdk import ArenaClient
from arena.services.common.config import Config
from arena.services.common.embedded_redis import EmbeddedRedis, free_port
from arena.services.common.protocol import keys

from arena import errors
from arena.v1 import common_pb2, engine_pb2, ladder_pb2, match_pb2
from tests.support.bots import builtin_bot, match_config
from tests.support.servers import Server, client, first_refusal, metadata, serve

GARBAGE = b"\xff\xff\xff\x01 not a protobuf message"


def _raw(server: Server, method: str, payload: bytes,
         token: str | None) -> grpc.RpcError:
    with grpc.insecure_channel(server.target) as channel:
        call = channel.unary_unary(method)
        with pytest.raises(grpc.RpcError) as caught:
            call(payload, metadata=metadata(token), timeout=10)
    return caught.value


@pytest.fixture
def referee(redis_server: EmbeddedRedis, cache_server: EmbeddedRedis,
            registry_server: Server) -> Iterator[Server]:
    server = serve("referee", Config(redis_url=redis_server.url, cache_url=cache_server.url,
                                     registry=registry_server.target,
                                     service_token="admin-token", max_matches=0))
    yield server
    server.stop()


def test_undecodable_requests_are_invalid_arguments_after_authentication(
        registry_server: Server, referee: Server) -> None:
    for server, method in ((registry_server, "/arena.v1.BotRegistry/GetBot"),
                           (referee, "/arena.v1.Referee/CreateMatch"),
                           (referee, "/arena.v1.Referee/WatchMatch")):
        stranger = _raw(server, method, GARBAGE, None)
        assert stranger.code() == grpc.StatusCode.UNAUTHENTICATED  # learns nothing more
        known = _raw(server, method, GARBAGE, "alice-token")
        assert known.code() == grpc.StatusCode.INVALID_ARGUMENT, method
        assert "not a valid message" in (known.details() or "")


def test_absurd_ids_tokens_and_limits_are_clear_refusals(
        registry_server: Server, referee: Server, peers: ArenaClient) -> None:
    sdk = client(token="alice-token", registry=registry_server.target, referee=referee.target)
    with pytest.raises(errors.NotFoundError) as missing:
        sdk.get_match("x" * 8192)  # an 8 KB id: NOT_FOUND, with a bounded message
    assert len(str(missing.value)) < 1200
    with pytest.raises(errors.InvalidArgumentError, match="page_token"):
        sdk.list_matches(page_token="A" * 100_000)
    with pytest.raises(errors.InvalidArgumentError, match="page_token"):
        sdk.list_bots(page_token="9" * 40)
    with pytest.raises(errors.InvalidArgumentError, match="page_size"):
        sdk.list_matches(page_size=-1)


@pytest.mark.parametrize("letter", ["z", "я", "😀"])
def test_a_refusal_of_many_long_fields_fits_in_a_status(
        registry_server: Server, letter: str) -> None:
    """Eighty unknown config keys of 40 characters made a status whose details (50 field
    violations of about 200 bytes) passed the 8 KB of metadata a gRPC client accepts: the
    caller got 'Stream removed' instead of INVALID_ARGUMENT. In ASCII, in Cyrillic (two
    bytes a letter) and in emoji (four) the refusal arrives, naming the first keys."""
    sdk = client(token="alice-token", registry=registry_server.target)
    config: dict[str, object] = {"evaluator": "arena"}
    config |= {f"k{i:02}{letter * 40}": 1 for i in range(80)}
    with pytest.raises(errors.InvalidArgumentError) as refused:
        builtin_bot(sdk, "many-keys", config)
    shown = refused.value.violations
    assert 1 <= len(shown) <= errors.MAX_VIOLATIONS_REPORTED, shown
    assert shown[0].field.startswith(f"spec.builtin.config.k00{letter}")
    assert "unknown key" in shown[0].description
    assert str(refused.value).startswith("invalid request: spec.builtin.config.k00")


def test_a_page_of_matches_stays_within_the_message_limit(
        registry_server: Server, referee: Server, peers: ArenaClient,
        redis_client: redis.Redis) -> None:
    """Two hundred matches of 16 KB each would not fit in a client's 4 MB: the page stops
    at its byte bound and the next page token carries on, every match seen once."""
    builtin_bot(peers, "lab", {"evaluator": "lab", "look_ahead": 0})
    sdk = client(registry=registry_server.target, referee=referee.target)
    made = {sdk.create_match(match_config("lab", "lab")).id for _ in range(3)}
    for match_id in made:  # give each a long, legal-looking record, as a finished game has
        record = match_pb2.MoveRecord(position_after="x" * 16_000).SerializeToString()
        redis_client.rpush(keys.match(match_id, "moves"), *([record] * 70))
    seen, token, pages = [], "", 0
    with grpc.insecure_channel(referee.target, options=[
            ("grpc.max_receive_message_length", 4 << 20)]) as channel:
        from arena.v1 import referee_pb2, referee_pb2_grpc

        stub = referee_pb2_grpc.RefereeStub(channel)
        while True:
            page = stub.ListMatches(referee_pb2.ListMatchesRequest(
                page=common_pb2.PageRequest(page_size=200, page_token=token)),
                metadata=metadata("admin-token"), timeout=30)
            pages += 1
            seen += [m.id for m in page.matches]
            token = page.next_page_token
            if not token:
                break
    assert sorted(seen) == sorted(made) and pages > 1


def test_analyze_is_bounded_and_only_on_the_analysis_pool(
        redis_server: EmbeddedRedis, cache_server: EmbeddedRedis,
        registry_server: Server) -> None:
    base = Config(redis_url=redis_server.url, cache_url=cache_server.url,
                  registry=registry_server.target, warm_games="othello",
                  analysis_slots=1, analysis_wait_ms=100)
    match_worker = serve("worker", base)
    analyst = serve("worker", base.replace(worker_pool="analysis"))
    try:
        position = common_pb2.Position(game=common_pb2.GameSpec(kind=1), text=(
            "---------------------------OX------XO--------------------------- X"))
        config = {"evaluator": "arena", "depth": 60, "time_ms": 60_000}
        on_match = client(token="alice-token", engine=match_worker.target)
        with pytest.raises(errors.FailedPreconditionError, match="analysis pool"):
            on_match.analyze(position, engine_config=config,
                             limits=common_pb2.SearchLimits(depth=2))
        sdk = client(token="alice-token", engine=analyst.target)
        with pytest.raises(errors.InvalidArgumentError, match="tree_node_budget"):
            sdk.analyze(position, engine_config=config, tree_node_budget=2**31 - 1,
                        limits=common_pb2.SearchLimits(depth=2))
        # Found as an outsider: nodes above the engine's bound were let through and the
        # search's own check refused them in words without the field.
        with pytest.raises(errors.InvalidArgumentError, match=r"limits\.nodes: must be in"):
            sdk.analyze(position, engine_config=config,
                        limits=common_pb2.SearchLimits(nodes=2**63 - 1))
        with pytest.raises(errors.ResourceExhaustedError, match="analyze_time_ms"):
            sdk.analyze(position, engine_config=config,
                        limits=common_pb2.SearchLimits(time_ms=60_000))
        # Found as an outsider: an Othello history was taken whatever it held.
        for history, words in (([999], "history move 999 is neither a square"),
                               ([27, 27], "history plays d4 twice"),
                               ([0], "history move a1 is an empty square")):
            with pytest.raises(errors.InvalidArgumentError, match=f"history: {words}"):
                sdk.analyze(position, engine_config=config, history=history,
                            limits=common_pb2.SearchLimits(depth=2))
        reply = sdk.analyze(position, engine_config=config,
                            limits=common_pb2.SearchLimits(depth=3))
        assert reply.search.depth == 3
        busy = _busy_pool(analyst, position)
        assert busy == grpc.StatusCode.RESOURCE_EXHAUSTED
    finally:
        match_worker.stop()
        analyst.stop()


def _busy_pool(analyst: Server, position: common_pb2.Position) -> grpc.StatusCode:
    """The status of a second Analyze while the one slot runs a long search."""
    from arena.v1 import engine_pb2_grpc

    request = engine_pb2.AnalyzeRequest(position=position,
                                        limits=common_pb2.SearchLimits(time_ms=3000))
    request.engine.config.update({"evaluator": "arena", "depth": 60, "time_ms": 60_000})
    with grpc.insecure_channel(analyst.target) as channel:
        stub = engine_pb2_grpc.EngineStub(channel)
        first = stub.Analyze.future(request, metadata=metadata("admin-token"), timeout=30)
        time.sleep(0.5)
        try:
            stub.Analyze(request, metadata=metadata("admin-token"), timeout=30)
        except grpc.RpcError as exc:
            return exc.code()
        finally:
            first.result()
    return grpc.StatusCode.OK


def _analysis(time_ms: int = 0, depth: int = 0) -> engine_pb2.AnalyzeRequest:
    request = engine_pb2.AnalyzeRequest(position=common_pb2.Position(
        game=common_pb2.GameSpec(kind=1),
        text="---------------------------OX------XO--------------------------- X"),
        limits=common_pb2.SearchLimits(time_ms=time_ms, depth=depth))
    request.engine.config.update({"evaluator": "arena", "depth": 60, "time_ms": 60_000})
    return request


def test_one_user_cannot_hold_the_analysis_pool(
        redis_server: EmbeddedRedis, cache_server: EmbeddedRedis,
        registry_server: Server) -> None:
    """Alice asking for analyses back to back from two loops held the pool's one slot:
    bob's calls waited 2 s, then were refused, most of the time. Now a user has one call
    there at a time (running or waiting; quota analyses_at_once), waiting calls take the
    slot in the order they came, and a call waits as long as its deadline allows."""
    from arena.v1 import engine_pb2_grpc

    analyst = serve("worker", Config(
        redis_url=redis_server.url, cache_url=cache_server.url,
        registry=registry_server.target, warm_games="othello", worker_pool="analysis",
        analysis_slots=1))
    done: list[str] = []
    try:
        with grpc.insecure_channel(analyst.target) as channel:
            stub = engine_pb2_grpc.EngineStub(channel)

            def start(who: str, token: str, time_ms: int = 0, depth: int = 0) -> grpc.Future:
                call = stub.Analyze.future(_analysis(time_ms, depth), metadata=metadata(token),
                                           timeout=14)
                call.add_done_callback(lambda _: done.append(who))
                return call

            first = start("alice", "alice-token", 6000)
            # A deadline that leaves no time to wait is told so at once, not run past; so
            # alice's search holds the slot once such a call is refused (on a busy machine
            # her call may take a moment to arrive: until then the probe is served, and its
            # depth ends it long before its time or its deadline, however busy the machine).
            short, took = first_refusal(
                lambda: stub.Analyze(_analysis(900, depth=1), metadata=metadata("admin-token"),
                                     timeout=1.2), "alice's search never started")
            assert short.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, short
            assert "busy" in (short.details() or "") and took < 1.0
            with pytest.raises(grpc.RpcError) as again:  # her second call at once
                stub.Analyze(_analysis(100), metadata=metadata("alice-token"), timeout=30)
            assert again.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "quota analyses_at_once is 1" in (again.value.details() or "")
            # Bob's search has a depth and no time: it waits out alice's search.
            bob = start("bob", "bob-token", depth=3)
            time.sleep(1.0)  # he is queued before the admin
            admin = start("admin", "admin-token", 100)
            first.result()
            alice = start("alice again", "alice-token", 100)  # behind bob and the admin
            for call in (bob, admin, alice):
                assert call.result().HasField("move")
        # Alice's slot is given back before her reply is sent, so on a busy machine bob's
        # short search may be answered first; the others came after both.
        assert sorted(done[:2]) == ["alice", "bob"]
        assert done[2:] == ["admin", "alice again"]
    finally:
        analyst.stop()


def test_redis_down_is_unavailable_everywhere_and_services_wait_for_it(
        tmp_path: Path) -> None:
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    config = Config(redis_url=url, cache_url=url, registry="127.0.0.1:1",
                    referee="127.0.0.1:1", service_token="admin-token", warm_games="")
    referee = serve("referee", config)
    ladder = serve("ladder", config)
    try:
        sdk = client(referee=referee.target, ladder=ladder.target)
        with pytest.raises(errors.UnavailableError):
            sdk.get_match("any")
        with pytest.raises(errors.UnavailableError):
            sdk.list_ladders()
        with EmbeddedRedis(tmp_path / "late", port=port) as late:  # Redis comes back
            deadline = time.monotonic() + 30
            # The loops that waited for Redis create their consumer groups now.
            while not (late.client().exists(keys.MATCH_STREAM)
                       and late.client().exists(keys.FINISHED_STREAM)):
                assert time.monotonic() < deadline, "a loop never came back to Redis"
                time.sleep(0.1)
            with pytest.raises(errors.NotFoundError):
                sdk.get_match("any")
    finally:
        referee.stop()
        ladder.stop()


def test_a_ladder_too_big_is_refused_before_any_planning(
        redis_server: EmbeddedRedis, registry_server: Server, referee: Server,
        peers: ArenaClient) -> None:
    builtin_bot(peers, "a", {"evaluator": "lab", "look_ahead": 0})
    builtin_bot(peers, "b", {"evaluator": "lab", "look_ahead": 0})
    ladder = serve("ladder", Config(redis_url=redis_server.url, registry=registry_server.target,
                                    referee=referee.target, service_token="admin-token",
                                    quotas='{"user": {"ladder_games": 100}}'))
    try:
        sdk = client(token="alice-token", ladder=ladder.target)
        config = ladder_pb2.LadderConfig(
            game=common_pb2.GameSpec(kind=1), games_per_pairing=3_000_000,
            bots=[common_pb2.BotRef(name="a"), common_pb2.BotRef(name="b")])
        with pytest.raises(errors.InvalidArgumentError, match="limit is 20000"):
            sdk.create_ladder(config)  # the CLI's own 10 s deadline, as before
        config.games_per_pairing = 200
        with pytest.raises(errors.ResourceExhaustedError, match="ladder_games is 100"):
            sdk.create_ladder(config)
        config.games_per_pairing = 2
        first = sdk.create_ladder(config, request_id="mine")
        again = sdk.create_ladder(config, request_id="mine")
        assert first.id == again.id and len(list(sdk.iter_ladders())) == 1
    finally:
        ladder.stop()


def test_the_cli_never_prints_a_traceback_for_absurd_input(tmp_path: Path) -> None:
    deep = tmp_path / "deep.toml"
    deep.write_text('name = "x"\ngame = "othello"\n[builtin]\nconfig = '
                    + "[" * 20_000 + "]" * 20_000 + "\n")
    for args in (("bot", "import", str(deep)),
                 ("analyze", "--preset", "lucy", "--depth", "-3"),
                 ("match", "create", "--black", "a", "--white", "b", "--move-time-ms", "-1")):
        result = subprocess.run([sys.executable, "-m", "arena.clients", *args],
                                capture_output=True, text=True, timeout=60,
                                env={"PATH": "/usr/bin:/bin", "ARENA_HOME": str(tmp_path)})
        assert result.returncode != 0, args
        assert "Traceback" not in result.stderr, result.stderr
        assert "nested too deeply" in result.stderr or "must be 0 or more" in result.stderr
