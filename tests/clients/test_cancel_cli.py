"""Stopping matches from the command line: `arena match cancel` against real services while
the match's bots are thinking, and `arena bot retire --cancel-matches`."""

from __future__ import annotations

import json
import threading
import time
from concurrent import futures
from typing import Any

import grpc

from arena.v1 import bot_service_pb2, bot_service_pb2_grpc
from tests.clients.conftest import InProcessStack, ok, one_line_error
from tests.support.bots import bot_server, external_bot, first_legal


def _thinks_long(request: bot_service_pb2.GetMoveRequest) -> bot_service_pb2.GetMoveResponse:
    time.sleep(1.5)
    return first_legal(request)


def _create(stack: InProcessStack, black: str, white: str) -> str:
    created = json.loads(ok(stack.run("match", "create", "--black", black, "--white", white,
                                      "--move-time-ms", "20000", "--json")))
    return str(created["id"])


def _status(stack: InProcessStack, match_id: str) -> str:
    return str(json.loads(ok(stack.run("match", "show", match_id, "--json")))["status"])


def _wait_running(stack: InProcessStack, match_id: str) -> None:
    deadline = time.monotonic() + 30
    while _status(stack, match_id) != "MATCH_STATUS_RUNNING":
        assert time.monotonic() < deadline, "the match never started"
        time.sleep(0.1)


def test_cancel_stops_a_running_match(cli_stack: InProcessStack) -> None:
    with bot_server(_thinks_long) as address, cli_stack.client() as sdk:
        for name in ("slow-a", "slow-b", "slow-c"):
            external_bot(sdk, name, address)
        first = _create(cli_stack, "slow-a", "slow-b")
        _wait_running(cli_stack, first)
        said = ok(cli_stack.run("match", "cancel", first, "--reason", "enough"))
        assert said.strip() == f"match {first}: cancelled"
        cancelled = json.loads(ok(cli_stack.run("match", "show", first, "--json")))
        assert cancelled["status"] == "MATCH_STATUS_CANCELLED"
        assert "enough" in cancelled["result"]["detail"]

        # This stack's registry runs without a referee: the flag reaches it, which says
        # what it lacks (what retiring with cancel_matches does is tested with a referee in
        # tests/referee/test_control.py).
        one_line_error(cli_stack.run("bot", "retire", "slow-c", "--cancel-matches"),
                       "knows no referee", "to cancel matches")
        ok(cli_stack.run("bot", "retire", "slow-c"))
    one_line_error(cli_stack.run("match", "cancel", "no-such-match"), "no-such-match")


def test_a_cancel_that_is_not_yours_says_who_may(cli_stack: InProcessStack) -> None:
    """It said only 'bob may not cancel match ID' (deleting names the owner)."""
    ok(cli_stack.run("bot", "register", "--name", "lab-a", "--from-preset", "lab-beginner",
                     "--token", "alice-token"))
    created = json.loads(ok(cli_stack.run(
        "match", "create", "--black", "lab-a", "--white", "lab-a", "--move-time-ms", "500",
        "--json", "--token", "alice-token")))
    refused = one_line_error(cli_stack.run("match", "cancel", created["id"], "--token",
                                           "bob-token"))
    assert refused.endswith(f"bob may not cancel match {created['id']}: its creator (alice) "
                            "may, and the owner of either bot, to withdraw it"), refused


class _Sleeper(bot_service_pb2_grpc.BotServiceServicer):
    """An external bot that thinks for 20 s unless its call ends first (then it answers into
    the void): it notes when it was asked and when its call ended."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.ended = threading.Event()

    def GetMove(self, request: bot_service_pb2.GetMoveRequest,
                context: Any) -> bot_service_pb2.GetMoveResponse:
        context.add_callback(self.ended.set)  # the call ends: answered, or cancelled
        self.asked.set()
        self.ended.wait(20)
        return first_legal(request)


def test_a_cancelled_match_cancels_its_call_to_an_external_bot(cli_stack: InProcessStack
                                                               ) -> None:
    """The worker waited for an external bot's answer until the move's deadline even after
    the match was cancelled (its slot held, the bot thinking for nobody); the call is now
    cancelled with the move, as a search is stopped."""
    sleeper = _Sleeper()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    bot_service_pb2_grpc.add_BotServiceServicer_to_server(sleeper, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with cli_stack.client() as sdk:
            external_bot(sdk, "sleeper", f"127.0.0.1:{port}")
            ok(cli_stack.run("bot", "register", "--name", "quick", "--from-preset",
                             "lab-beginner"))
        match_id = _create(cli_stack, "sleeper", "quick")
        assert sleeper.asked.wait(30), "the sleeper was never asked for a move"
        ok(cli_stack.run("match", "cancel", match_id))
        cancelled_at = time.monotonic()
        assert sleeper.ended.wait(10), "the call to the bot went on after the cancel"
        assert time.monotonic() - cancelled_at < 10
        assert _status(cli_stack, match_id) == "MATCH_STATUS_CANCELLED"
    finally:
        server.stop(0).wait()
