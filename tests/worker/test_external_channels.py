"""A worker's connections to external bots are bounded: an outsider registered 150 bots
(or one bot's address spelled 120 ways: ``127.0.0.1:0007000``) and each match worker kept
a connection to every one of them for good, 75 more open files each."""

from __future__ import annotations

from contextlib import ExitStack

from arena.services.common.egress import EgressPolicy
from arena.services.worker.bots import BotRunner

from arena.bots.validation import canonical_address
from arena.engine.api import StopFlag
from arena.games import new_position
from arena.v1 import bots_pb2, common_pb2, engine_pb2
from tests.conftest import TEST_BOTS
from tests.support.bots import OTHELLO, bot_server, first_legal


def _job(address: str) -> engine_pb2.MoveJob:
    spec = bots_pb2.BotSpec(name="remote", game=OTHELLO,
                            external=bots_pb2.ExternalEngine(address=address))
    return engine_pb2.MoveJob(
        job_id="j", match_id="m", game=OTHELLO, bot=bots_pb2.BotVersion(spec=spec, version=1),
        position=common_pb2.Position(game=common_pb2.GameSpec(kind=OTHELLO),
                                     text=new_position("othello").to_text()),
        time_budget_ms=2000)


def _played(runner: BotRunner, address: str) -> None:
    answer = runner.run(_job(address), StopFlag())
    assert answer.result.HasField("move"), answer.result


def test_one_address_spelled_many_ways_is_one_connection() -> None:
    runner = BotRunner(egress=EgressPolicy.parse(TEST_BOTS))
    try:
        with bot_server(first_legal) as address:
            host, port = address.rsplit(":", 1)
            for spelling in (address, f"{host}:0{port}", f"{host}:000{port}"):
                _played(runner, spelling)
            assert runner.channels_open == 1
    finally:
        runner.close()


def test_connections_no_call_uses_are_closed_past_the_bound() -> None:
    runner = BotRunner(egress=EgressPolicy.parse(TEST_BOTS), idle_channels=2)
    try:
        with ExitStack() as stack:
            addresses = [stack.enter_context(bot_server(first_legal)) for _ in range(5)]
            for address in addresses:
                _played(runner, address)
                assert runner.channels_open <= 2
            _played(runner, addresses[-1])  # the most recent are kept: still 2
            assert runner.channels_open == 2
    finally:
        runner.close()


def test_an_address_is_stored_in_one_spelling() -> None:
    assert canonical_address("127.0.0.1:0007000") == "127.0.0.1:7000"
    assert canonical_address("Bots.Example.ORG:0443") == "bots.example.org:443"
    assert canonical_address("[0:0:0:0:0:0:0:1]:7000") == "[::1]:7000"
    assert canonical_address("[2001:DB8::A]:7000") == "[2001:db8::a]:7000"
