"""An external bot (a gRPC BotService somewhere) is analysed like the other kinds: a real
analyst process asks the bot's real server for its move, through the egress policy, and
judges the answer as the referee judges a match's. Every way the bot can fail is a clear
error naming it, never INTERNAL or UNKNOWN, and never an illegal move handed out as a hint.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from arena.clients.sdk import ArenaClient
from arena.services.common.launcher import Launcher

from arena.errors import FailedPreconditionError, InvalidArgumentError, ResourceExhaustedError
from arena.games import game
from arena.v1 import bot_service_pb2, bots_pb2, common_pb2, engine_pb2, engine_pb2_grpc
from tests.support.bots import (
    OTHELLO,
    bot_server,
    crash,
    first_legal,
    illegal,
    late,
    no_move,
)
from tests.support.servers import metadata
from tests.support.stacks import arena_command, stack_channel
from tests.support.stacks import stack_client as user_client
from tests.system.conftest import stack_client

OPENING = ("f5", "d6", "c3")


@pytest.fixture
def analyst(services: Launcher) -> Launcher:
    """The registry (``services``) and one analyst, whose egress policy lets it reach the
    loopback (``FAST_ENV``); alice is a user of it (one analysis at a time)."""
    services.env["ARENA_TOKENS"] = json.dumps({"alice-token": {"name": "alice",
                                                               "role": "user"}})
    services.spawn("analyst", "analyst-1", timeout_s=300)
    return services


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port nothing listens on (bound, never listening, for the test's time)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def _position(*moves: str) -> tuple[common_pb2.Position, list[int]]:
    board = game(OTHELLO).new_position()
    history = []
    for name in moves:
        history.append(board.parse_move(name))
        board.push(history[-1])
    return common_pb2.Position(game=common_pb2.GameSpec(kind=OTHELLO),
                               text=board.to_text()), history


def _external(sdk: ArenaClient, name: str, address: str) -> None:
    sdk.register_bot(bots_pb2.BotSpec(name=name, game=OTHELLO,
                                      external=bots_pb2.ExternalEngine(address=address)))


def _analyze(sdk: ArenaClient, name: str, time_ms: int = 2000,
             **extra: Any) -> engine_pb2.AnalyzeResponse:
    """Ask bot ``name`` about the position after ``OPENING`` (``extra``: more of the call)."""
    position, history = _position(*OPENING)
    extra.setdefault("limits", common_pb2.SearchLimits(time_ms=time_ms))
    return sdk.analyze(position, bot=common_pb2.BotRef(name=name), history=history, **extra)


def test_an_external_bot_answers_an_analysis_as_it_answers_a_match(analyst: Launcher) -> None:
    seen: list[bot_service_pb2.GetMoveRequest] = []
    lock = threading.Lock()

    def recording(request: bot_service_pb2.GetMoveRequest) -> bot_service_pb2.GetMoveResponse:
        with lock:
            seen.append(request)
        return first_legal(request)

    position, history = _position(*OPENING)
    with bot_server(recording) as address, stack_client(analyst) as sdk:
        _external(sdk, "remote", address)
        reply = sdk.analyze(position, bot=common_pb2.BotRef(name="remote"),
                            limits=common_pb2.SearchLimits(time_ms=1500), history=history)
        board = game(OTHELLO).position_from_text(position.text)
        assert reply.move.square == board.legal_moves()[0]
        assert (reply.search.depth, reply.search.nodes) == (1, 1)  # what the bot reported
        assert reply.search.time_ms > 0  # timed by the analyst
        [request] = seen
        assert request.position.text == position.text
        assert list(request.history) == history and request.ply == len(history)
        assert request.move_time_ms == 1500
        assert request.color == common_pb2.COLOR_WHITE  # three plies played

        shown = arena_command(analyst, "analyze", "--bot", "remote",
                              "--moves", " ".join(OPENING), "--time-ms", "700")
        assert shown.returncode == 0, shown.stderr
        assert board.move_to_str(board.legal_moves()[0]) in shown.stdout, shown.stdout
        assert seen[-1].move_time_ms == 700


def test_an_external_bot_that_fails_is_a_clear_error(analyst: Launcher, closed_port: int
                                                     ) -> None:
    with (bot_server(illegal) as cheat, bot_server(no_move) as mute,
          bot_server(crash) as crasher, bot_server("garbage") as garbled,
          bot_server(late) as slow, stack_client(analyst) as sdk):
        for name, address in [("cheat", cheat), ("mute", mute), ("crasher", crasher),
                              ("garbled", garbled), ("slow", slow),
                              ("gone", f"127.0.0.1:{closed_port}")]:
            _external(sdk, name, address)
        expected = {
            "cheat": "gave no playable move: ",  # then the square and "is illegal in"
            "mute": "gave no move (malformed answer): the bot answered no move",
            "crasher": "gave no move (bot crashed): protocol error",
            "garbled": "gave no move (malformed answer): protocol error",
            "slow": "gave no move (timeout): no answer within 300 ms",
            "gone": "gave no move (bot unreachable): unreachable",
        }
        for name, words in expected.items():
            with pytest.raises(FailedPreconditionError) as failed:
                _analyze(sdk, name, time_ms=300)
            assert f"bot {name!r} {words}" in str(failed.value), failed.value
        with pytest.raises(FailedPreconditionError, match="is illegal in"):
            _analyze(sdk, "cheat")
        # No address reaches the caller: the bot's owner sees only "unreachable".
        with pytest.raises(FailedPreconditionError) as unreachable:
            _analyze(sdk, "gone")
        assert str(closed_port) not in str(unreachable.value)

        for extra, field in [
            ({"limits": common_pb2.SearchLimits(depth=4)}, "limits.depth"),
            ({"limits": common_pb2.SearchLimits(nodes=1000)}, "limits.nodes"),
            ({"tree_node_budget": 100}, "tree_node_budget"),
        ]:
            with pytest.raises(InvalidArgumentError) as refused:
                _analyze(sdk, "mute", **extra)
            assert [v.field for v in refused.value.violations] == [field], refused.value
            assert "an external bot is given a time" in str(refused.value) or (
                "no tree" in str(refused.value))

        over = "X" * 60 + "-" * 4 + " O"  # Black alone on the board: no one can move
        assert game(OTHELLO).position_from_text(over).is_game_over()
        with pytest.raises(InvalidArgumentError, match="the game is over"):
            sdk.analyze(common_pb2.Position(game=common_pb2.GameSpec(kind=OTHELLO), text=over),
                        bot=common_pb2.BotRef(name="cheat"),
                        limits=common_pb2.SearchLimits(time_ms=300))

    failed_cli = arena_command(analyst, "analyze", "--bot", "gone", "--time-ms", "300")
    assert failed_cli.returncode == 1 and "Traceback" not in failed_cli.stderr
    assert failed_cli.stderr.strip() == (
        "arena: error: bot 'gone' gave no move (bot unreachable): unreachable"), failed_cli.stderr



def test_a_caller_that_gives_up_stops_the_wait_for_an_external_bot(analyst: Launcher) -> None:
    """A search stops when its caller goes away; the wait for an external bot did not: the
    analyst waited the bot's whole time, holding an analysis slot and the caller's one
    analysis at a time (``analyses_at_once``), so the caller's next question was refused."""
    def sleepy(request: bot_service_pb2.GetMoveRequest) -> bot_service_pb2.GetMoveResponse:
        time.sleep(8)
        return first_legal(request)

    position, history = _position(*OPENING)
    asked = engine_pb2.AnalyzeRequest(position=position, history=history,
                                      bot_ref=common_pb2.BotRef(name="sleepy"),
                                      limits=common_pb2.SearchLimits(time_ms=8000))
    with (bot_server(sleepy) as slow, bot_server(first_legal) as quick,
          stack_client(analyst) as admin):
        _external(admin, "sleepy", slow)
        _external(admin, "quick", quick)
        with stack_channel(analyst, analyst.target("analyst")) as channel:
            with pytest.raises(grpc.RpcError) as gave_up:
                engine_pb2_grpc.EngineStub(channel).Analyze(
                    asked, timeout=1.0, metadata=metadata("alice-token"))
            assert gave_up.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        with user_client(analyst, "alice-token", engine=analyst.target("analyst")) as alice:
            deadline = time.monotonic() + 4.0  # the sleepy bot still sleeps for 6 s or more
            while True:
                try:
                    reply = _analyze(alice, "quick")
                    break
                except ResourceExhaustedError:
                    assert time.monotonic() < deadline, "the first analysis was still held"
                    time.sleep(0.1)
        assert reply.move.square == game(OTHELLO).position_from_text(
            position.text).legal_moves()[0]
