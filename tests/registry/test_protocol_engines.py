"""Protocol bots at the registry: an engine must be offered by live workers (what they
advertise in Redis with their heartbeat), and a version pins the engine's checksum."""

from __future__ import annotations

import time

import grpc
import pytest
import redis
from arena.services.common.protocol import keys, workers

from arena.bots.spec import config_to_struct
from arena.rpc import field_violations
from arena.v1 import bots_pb2, common_pb2, engine_pb2, registry_pb2
from tests.registry.conftest import Registry
from tests.support.bots import advertise

OTHELLO, GOMOKU = common_pb2.GAME_KIND_OTHELLO, common_pb2.GAME_KIND_GOMOKU
EDAX_1, EDAX_2, RAPFI = "a" * 64, "b" * 64, "c" * 64


def edax(checksum: str = EDAX_1) -> engine_pb2.EngineOffer:
    return engine_pb2.EngineOffer(name="edax", protocol="nboard", games=[OTHELLO],
                                  checksum=checksum, description="Edax 4.6")


def rapfi() -> engine_pb2.EngineOffer:
    return engine_pb2.EngineOffer(name="rapfi", protocol="gomocup", games=[GOMOKU],
                                  checksum=RAPFI)


def protocol_spec(name: str = "p", engine: str = "edax", kind: int = OTHELLO,
                  checksum: str = "", **options: object) -> bots_pb2.BotSpec:
    return bots_pb2.BotSpec(name=name, game=kind, protocol=bots_pb2.ProtocolEngine(
        engine=engine, checksum=checksum, options=config_to_struct(dict(options))))


def refusal(registry: Registry, spec: bots_pb2.BotSpec) -> tuple[list[str], str]:
    """Register ``spec``: INVALID_ARGUMENT, nothing stored; the fields and the message."""
    with pytest.raises(grpc.RpcError) as caught:
        registry.register(spec)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value.details()
    with pytest.raises(grpc.RpcError) as missing:
        registry.call("GetBot", registry_pb2.GetBotRequest(bot=common_pb2.BotRef(name=spec.name)))
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND
    return [v.field for v in field_violations(caught.value)], caught.value.details() or ""


def test_a_version_pins_the_checksum_live_workers_offer(
        registry: Registry, redis_client: redis.Redis) -> None:
    advertise(redis_client, "w1", edax(), rapfi())
    advertise(redis_client, "w2", edax())
    bot = registry.register(protocol_spec(depth=10))
    assert bot.spec.protocol.checksum == EDAX_1
    assert bot.spec.protocol.engine == "edax"
    listed = registry.call("ListEngines", registry_pb2.ListEnginesRequest())
    assert isinstance(listed, registry_pb2.ListEnginesResponse)
    assert [(e.name, e.workers, e.checksum) for e in listed.engines] == [
        ("edax", 2, EDAX_1), ("rapfi", 1, RAPFI)]
    gomoku = registry.call("ListEngines", registry_pb2.ListEnginesRequest(game=GOMOKU))
    assert [e.name for e in gomoku.engines] == ["rapfi"]  # type: ignore[attr-defined]

    # The binary changes on every worker: the old version keeps its checksum, an update
    # pins the new one (a new version, never a silent change to old results).
    redis_client.delete(keys.worker("w1"), keys.worker("w2"))
    advertise(redis_client, "w1", edax(EDAX_2))
    updated = registry.call("UpdateBot", registry_pb2.UpdateBotRequest(
        name="p", spec=protocol_spec(depth=10)))
    assert isinstance(updated, bots_pb2.BotVersion)
    assert (updated.version, updated.spec.protocol.checksum) == (2, EDAX_2)
    assert updated.evaluator_hash != bot.evaluator_hash
    assert updated.content_hash != bot.content_hash
    first = registry.call("GetBot", registry_pb2.GetBotRequest(
        bot=common_pb2.BotRef(name="p", version=1)))
    assert first.spec.protocol.checksum == EDAX_1  # type: ignore[attr-defined]


def test_an_engine_nobody_offers_is_refused_with_what_is_offered(
        registry: Registry, redis_client: redis.Redis) -> None:
    fields, details = refusal(registry, protocol_spec())
    assert fields == ["spec.protocol.engine"]
    assert "no live worker offers engine 'edax' (offered for othello: none" in details
    advertise(redis_client, "w1", rapfi(), engine_pb2.EngineOffer(
        name="zebra", protocol="nboard", games=[OTHELLO], checksum=EDAX_2))
    fields, details = refusal(registry, protocol_spec())
    assert "(offered for othello: zebra;" in details


def test_a_bot_with_no_game_plays_its_engine_s_game(
        registry: Registry, redis_client: redis.Redis) -> None:
    """``arena bot register --name r --engine rapfi``: the catalog says what it plays."""
    advertise(redis_client, "w1", edax(), rapfi(), engine_pb2.EngineOffer(
        name="both", protocol="gtp", games=[OTHELLO, GOMOKU], checksum=EDAX_2))
    assert registry.register(protocol_spec("r", engine="rapfi", kind=0)).spec.game == GOMOKU
    assert registry.register(protocol_spec("e", kind=0)).spec.game == OTHELLO
    fields, details = refusal(registry, protocol_spec("b", engine="both", kind=0))
    assert fields == ["spec.game"] and "engine 'both' plays gomoku, othello: say which" in details
    assert registry.register(protocol_spec("b", engine="both", kind=GOMOKU)).spec.game == GOMOKU
    fields, details = refusal(registry, protocol_spec("n", engine="nobody", kind=0))
    assert fields == ["spec.protocol.engine"] and "no live worker offers engine 'nobody'" in details


def test_a_worker_that_stopped_beating_offers_nothing(
        registry: Registry, redis_client: redis.Redis) -> None:
    """Registered while the worker's last beat lives; refused once it has expired. (With a
    300 ms beat the first registration itself came too late on a busy machine: the beat
    lasts 2 s here, and the test waits for its expiry in Redis.)"""
    advertise(redis_client, "w1", edax(), ttl_ms=2000)
    assert registry.register(protocol_spec("early")).spec.protocol.checksum == EDAX_1
    deadline = time.monotonic() + 10
    while redis_client.exists(keys.worker("w1")):
        assert time.monotonic() < deadline, "the worker's beat did not expire"
        time.sleep(0.05)
    assert refusal(registry, protocol_spec("late"))[0] == ["spec.protocol.engine"]


def test_engine_game_checksum_and_options_are_checked(
        registry: Registry, redis_client: redis.Redis) -> None:
    advertise(redis_client, "w1", edax(), rapfi())
    fields, details = refusal(registry, protocol_spec(engine="rapfi"))
    assert fields == ["spec.protocol.engine"] and "plays gomoku, not othello" in details
    fields, details = refusal(registry, protocol_spec(checksum=EDAX_2))
    assert fields == ["spec.protocol.checksum"] and EDAX_1 in details
    assert refusal(registry, protocol_spec(checksum="not hex"))[0] == [
        "spec.protocol.checksum"]
    assert refusal(registry, protocol_spec(depth=999))[0] == ["spec.protocol.options.depth"]
    assert refusal(registry, protocol_spec(hash_mb=64))[0] == [
        "spec.protocol.options.hash_mb"]
    assert refusal(registry, protocol_spec(engine="rapfi", kind=GOMOKU, timeout_turn=5))[0] == [
        "spec.protocol.options.timeout_turn"]  # the worker sets the time itself
    # An INFO value is written on the engine's input: one printable line, bounded. An
    # escape, a line separator Python splits at or a megabyte of text is refused.
    for bad in ("a\nSTART 20", "a\x1b[2J", "a\u2028b", "x" * 1001):
        assert refusal(registry, protocol_spec(engine="rapfi", kind=GOMOKU, folder=bad))[0] == [
            "spec.protocol.options.folder"], bad
    # A number a JSON number cannot keep was kept changed (99999999999999999999 as 1e+20).
    for huge in (10**20, -(2**53), float("inf"), float("nan")):
        fields, details = refusal(registry, protocol_spec(engine="rapfi", kind=GOMOKU,
                                                          hash_size=huge))
        assert fields == ["spec.protocol.options.hash_size"] and "within" in details, huge
    assert registry.register(protocol_spec("info", engine="rapfi", kind=GOMOKU,
                                           folder="x" * 1000, hash_mb=64,
                                           max_node=2**53 - 1)).version == 1
    assert refusal(registry, protocol_spec(engine="Bad Name"))[0] == ["spec.protocol.engine"]


def test_two_builds_on_live_workers_must_be_told_apart(
        registry: Registry, redis_client: redis.Redis) -> None:
    advertise(redis_client, "w1", edax(EDAX_1))
    advertise(redis_client, "w2", edax(EDAX_2))
    advertise(redis_client, "w3", edax(EDAX_2))
    fields, details = refusal(registry, protocol_spec())
    assert fields == ["spec.protocol.checksum"]
    assert f"{EDAX_2} on 2 workers" in details and f"{EDAX_1} on 1 worker" in details
    pinned = registry.register(protocol_spec(checksum=EDAX_1))
    assert pinned.spec.protocol.checksum == EDAX_1


def test_analysts_offers_are_counted_apart_and_play_no_match(
        registry: Registry, redis_client: redis.Redis) -> None:
    """Analysts load the catalog too (a protocol bot can be analysed) and say so; an engine
    only analysts offer is listed with no match worker, and a bot of it is refused: no
    worker would play its matches."""
    advertise(redis_client, "w1", edax())
    advertise(redis_client, "analyst-1", edax(), rapfi(), pool="analysis")
    listed = registry.call("ListEngines", registry_pb2.ListEnginesRequest())
    assert isinstance(listed, registry_pb2.ListEnginesResponse)
    assert [(e.name, e.workers, e.analysts) for e in listed.engines] == [
        ("edax", 1, 1), ("rapfi", 0, 1)]
    fields, details = refusal(registry, protocol_spec(name="g", engine="rapfi", kind=GOMOKU))
    assert fields == ["spec.protocol.engine"]
    assert "no live worker offers engine 'rapfi'" in details
    assert registry.register(protocol_spec()).spec.protocol.checksum == EDAX_1


def test_list_engines_refuses_an_unknown_game(registry: Registry) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        registry.call("ListEngines", registry_pb2.ListEnginesRequest(game=77))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "77" in (caught.value.details() or "")


def test_options_are_those_of_the_offered_engines_protocol(
        registry: Registry, redis_client: redis.Redis) -> None:
    """An Othello engine may speak NBoard or GTP: its options are checked against the
    protocol the workers say it speaks, not the game's usual one."""
    gtp = engine_pb2.EngineOffer(name="edax-gtp", protocol="gtp", games=[OTHELLO],
                                 checksum=EDAX_2)
    advertise(redis_client, "w1", edax(), gtp)
    bot = registry.register(protocol_spec("g", engine="edax-gtp", clock=True))
    assert bot.spec.protocol.checksum == EDAX_2
    fields, message = refusal(registry, protocol_spec("g2", engine="edax-gtp", depth=10))
    assert fields == ["spec.protocol.options.depth"], message
    fields, message = refusal(registry, protocol_spec("n", engine="edax", clock=True))
    assert fields == ["spec.protocol.options.clock"], message
    fields, _ = refusal(registry, protocol_spec("n2", engine="edax", depth=999))
    assert fields == ["spec.protocol.options.depth"]


def test_a_retried_registration_is_answered_though_its_engine_went(
        registry: Registry, redis_client: redis.Redis) -> None:
    """The first call registered the bot and its answer was lost; by the retry, the only
    worker offering the engine had stopped. The retry was judged like a new bot and
    refused (no live worker offers 'edax'); it gets the bot the first call registered."""
    advertise(redis_client, "w1", edax())
    first = registry.register(protocol_spec("lost-answer"), request_id="reg-edax")
    workers.retire(redis_client, "w1")
    assert refusal(registry, protocol_spec("fresh"))[0] == ["spec.protocol.engine"]
    assert registry.register(protocol_spec("lost-answer"), request_id="reg-edax") == first
