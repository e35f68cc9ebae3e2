"""Live streams cannot jam a service: each holds one of the server's threads, so a user may
hold ``open_streams`` of them and all users together all but ``STREAM_RESERVE``.

Before the gate, 40 viewers of one running match (through the web gateway, or a user with
32 WatchMatch calls) held every thread of the referee's pool, and every other call, from
anyone, waited until its deadline ("referee ... did not answer in time")."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from arena.services.common.launcher import Launcher
from arena.services.common.server import STREAM_RESERVE

from arena.v1 import bots_pb2, common_pb2, match_pb2, referee_pb2, referee_pb2_grpc
from tests.support.stacks import launcher, stack_channel, stack_client

THREADS = STREAM_RESERVE + 8  # streams may hold 8 threads in all
TOKENS = {"alice-token": {"name": "alice", "role": "user"},
          "bob-token": {"name": "bob", "role": "user"}}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launcher]:
    """No workers: a match, once started, waits for its first move for as long as the test
    watches it."""
    env = {"ARENA_TOKENS": json.dumps(TOKENS), "ARENA_GRPC_THREADS": str(THREADS),
           "ARENA_QUOTAS": json.dumps({"user": {"open_streams": 3}})}
    with launcher(home=tmp_path_factory.mktemp("streams"), workers=0, analysts=0,
                  env=env) as running:
        yield running


def _running_match(stack: Launcher) -> str:
    with stack_client(stack, stack.admin_token) as admin:
        for name in ("gate-a", "gate-b"):
            with contextlib.suppress(Exception):
                admin.register_bot(bots_pb2.BotSpec(name=name, preset="lab-beginner"),
                                   from_preset="lab-beginner")
    with stack_client(stack, "alice-token") as alice:
        match = alice.create_match(match_pb2.MatchConfig(
            game=common_pb2.GameSpec(kind=common_pb2.GAME_KIND_OTHELLO),
            black=common_pb2.BotRef(name="gate-a"), white=common_pb2.BotRef(name="gate-b")))
    return match.id


class Watchers:
    """WatchMatch calls held open, each past its first event."""

    def __init__(self, stack: Launcher, match_id: str) -> None:
        self.stub = referee_pb2_grpc.RefereeStub(stack_channel(stack, stack.target("referee")))
        self.match_id = match_id
        self.open: list[Any] = []

    def watch(self, token: str) -> grpc.StatusCode | None:
        """Open one more as ``token``'s owner: None when it streams, else its refusal."""
        call = self.stub.WatchMatch(referee_pb2.WatchMatchRequest(match_id=self.match_id),
                                    metadata=[("authorization", f"Bearer {token}")],
                                    timeout=120)
        try:
            next(call)
        except grpc.RpcError as error:
            self.refusal = error.details()
            code: grpc.StatusCode = error.code()
            return code
        self.open.append(call)
        return None

    def close(self, count: int) -> None:
        for call in self.open[:count]:
            call.cancel()
        del self.open[:count]


def test_streams_are_bounded_per_user_and_in_all(stack: Launcher) -> None:
    watchers = Watchers(stack, _running_match(stack))
    try:
        assert [watchers.watch("alice-token") for _ in range(3)] == [None] * 3
        assert watchers.watch("alice-token") == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "quota open_streams is 3" in watchers.refusal
        # Bob's share is his own; the admin (the web gateway's token) has no share.
        assert [watchers.watch("bob-token") for _ in range(3)] == [None] * 3
        assert [watchers.watch(stack.admin_token) for _ in range(2)] == [None] * 2
        assert watchers.watch(stack.admin_token) == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "8 live streams open" in watchers.refusal
        # Every thread streams may hold is held: the other calls are still served at once.
        with stack_client(stack, "bob-token") as bob:
            started = time.monotonic()
            assert bob.get_match(watchers.match_id).id == watchers.match_id
            bob.list_matches()
            assert time.monotonic() - started < 5
        # A closed stream gives its thread back.
        watchers.close(3)  # alice's
        deadline = time.monotonic() + 10
        while watchers.watch("alice-token") is not None:
            assert time.monotonic() < deadline, watchers.refusal
            time.sleep(0.1)
    finally:
        watchers.close(len(watchers.open))
        with stack_client(stack, stack.admin_token) as admin:
            admin.cancel_match(watchers.match_id)
