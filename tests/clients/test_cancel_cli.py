"""Stopping matches from the command line: `arena match cancel` against real services while
the match's bots are thinking, and `arena bot retire --cancel-matches`."""

from __future__ import annotations

import json
import time

from arena.v1 import bot_service_pb2
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
