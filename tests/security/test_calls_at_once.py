"""One user's many calls at once cannot take a service from the others.

A service process runs its calls in threads that share one CPU. Alice looping over large
match lists from eight threads made bob's short list 13x slower (13 ms alone, 175 ms beside
her; ``bench/call_fairness.py``). Now a user runs at most ``calls_at_once`` calls at once on
each service; more wait their turn in the order they came, a bounded number of them, each
until just before its deadline. The analysis worker shows it without timing anything: a
search runs as long as it was asked to, and its one slot goes to waiting calls first come,
first served, so a user whose calls waited in that queue would put all of them before
another user's."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import grpc
import pytest
from arena.services.common.launcher import Launcher
from arena.services.common.server import CALLS_WAITING

from arena.v1 import common_pb2, engine_pb2, engine_pb2_grpc
from tests.observability.test_stack import scrape_all, total
from tests.support.servers import first_refusal
from tests.support.stacks import launcher, stack_channel, stack_client

TOKENS = {"alice-token": {"name": "alice", "role": "user"},
          "bob-token": {"name": "bob", "role": "user"}}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launcher]:
    """One analysis worker with its one slot; a user may run one call at once per service
    (and, so that only that quota binds, many analyses). Servers of 16 threads, so that
    the lines of all users together hold at most 4 waiting calls (a quarter)."""
    env = {"ARENA_TOKENS": json.dumps(TOKENS), "ARENA_GRPC_THREADS": "16",
           "ARENA_QUOTAS": json.dumps({"user": {"calls_at_once": 1,
                                                 "analyses_at_once": 20,
                                                 "analyses_per_minute": 1000}})}
    with launcher(home=tmp_path_factory.mktemp("calls"), workers=0, analysts=1,
                  env=env, metrics=True) as running:
        yield running


def _analysis(time_ms: int = 0, depth: int = 0) -> engine_pb2.AnalyzeRequest:
    request = engine_pb2.AnalyzeRequest(position=common_pb2.Position(
        game=common_pb2.GameSpec(kind=common_pb2.GAME_KIND_OTHELLO),
        text="---------------------------OX------XO--------------------------- X"),
        limits=common_pb2.SearchLimits(time_ms=time_ms, depth=depth))
    request.engine.config.update({"evaluator": "arena", "depth": 60, "time_ms": 60_000})
    return request


def _as(token: str) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {token}")]


def test_a_users_calls_wait_their_turn_behind_each_other_not_before_others(
        stack: Launcher) -> None:
    stub = engine_pb2_grpc.EngineStub(stack_channel(stack, stack.target("analyst")))
    done: list[str] = []

    def start(who: str, token: str, time_ms: int = 0, depth: int = 0) -> grpc.Future:
        call = stub.Analyze.future(_analysis(time_ms, depth), metadata=_as(token),
                                   timeout=60)
        call.add_done_callback(lambda c: None if c.exception() else done.append(who))
        return call

    first = start("alice", "alice-token", 6000)
    # While her first search runs, a call of hers with a short deadline waits for its turn
    # and is told so before that deadline (on a busy machine her first call may take a
    # moment to arrive: until then the probe itself runs, at depth 1, and is done).
    late, took = first_refusal(
        lambda: stub.Analyze(_analysis(depth=1), metadata=_as("alice-token"), timeout=1.5),
        "alice's first search never started")
    assert late.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, late
    assert "quota calls_at_once is 1: this call waited 1.0 s" in (late.details() or "")
    assert took < 1.5
    # Four calls (four times her share) may wait; of five sent together, whichever comes
    # last is refused at once (her first search holds the others for seconds).
    calls = [start(f"alice {n}", "alice-token", 300) for n in range(CALLS_WAITING + 1)]
    began = time.monotonic()
    while not any(call.done() for call in calls):
        assert time.monotonic() - began < 5, "no call was refused"
        time.sleep(0.01)
    refused = [call for call in calls if call.done()]
    assert len(refused) == 1
    assert refused[0].code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "1 of your calls run on this server and 4 more wait" in (refused[0].details() or "")
    queued = [call for call in calls if call is not refused[0]]
    # Operators see which limit turned her away.
    assert total(scrape_all(stack), "arena_limit_refusals_total", limit="calls_at_once") == 2
    # Her line is on this server only: the referee serves her.
    with stack_client(stack, "alice-token") as alice:
        alice.list_matches()
    # Bob, asking after all of hers, waits for the search running, not for her line.
    bob = start("bob", "bob-token", depth=3)
    assert bob.result().HasField("move")
    for call in (first, *queued):
        assert call.result().HasField("move")
    # Bob's reply and her first may cross; her queued ones (sent together, so in any
    # order) came after both.
    assert sorted(done[:2]) == ["alice", "bob"]
    assert len(done[2:]) == CALLS_WAITING and all(who.startswith("alice ") for who in done[2:])


def test_the_lines_of_all_users_hold_a_quarter_of_the_threads_at_most(
        stack: Launcher) -> None:
    """A waiting call holds one of the server's threads: with calls_at_once 2, the full
    lines of 26 users (ten calls each) would hold all 256, and health checks and the
    services' own calls would queue behind them. Now, once the waiting calls of all
    users hold a quarter of the threads, a call that would wait is refused at once,
    whoever's it is; one that can run runs."""
    stub = engine_pb2_grpc.EngineStub(stack_channel(stack, stack.target("analyst")))
    first = stub.Analyze.future(_analysis(6000), metadata=_as("alice-token"), timeout=60)
    first_refusal(
        lambda: stub.Analyze(_analysis(depth=1), metadata=_as("alice-token"), timeout=1.5),
        "alice's first search never started")
    # Alice's line is full (four waiting: the server's most), each waiting for seconds.
    queued = [stub.Analyze.future(_analysis(300), metadata=_as("alice-token"), timeout=60)
              for _ in range(CALLS_WAITING)]
    before = total(scrape_all(stack), "arena_limit_refusals_total",
                   limit="server_calls_waiting")
    # Bob's first call runs (it waits for the analysis slot inside, as any search does).
    sent = time.monotonic()
    bob = stub.Analyze.future(_analysis(depth=3), metadata=_as("bob-token"), timeout=60)
    bob_ended: list[float] = []
    bob.add_done_callback(lambda _: bob_ended.append(time.monotonic()))
    # His second would wait behind it, and there is no room: refused at once. (Until
    # alice's calls have all arrived, it may wait its second and be told so instead.)
    def second() -> None:
        stub.Analyze(_analysis(depth=1), metadata=_as("bob-token"), timeout=2)

    deadline = time.monotonic() + 60
    while True:
        assert time.monotonic() < deadline, "no call of bob's was refused at once"
        if bob.done():
            # His first call came second on a busy machine: a probe arrived before it and
            # ran (waiting for the analysis slot), and the call above is the one refused.
            refusal, took, admitted = bob.exception(), bob_ended[0] - sent, ()
            assert refusal is not None, "bob's first call ended before his second came"
            break
        refusal, took = first_refusal(second, "bob's second call was never refused")
        admitted = (bob,)
        if "this server has 4 calls waiting their turn, its most" in (refusal.details() or ""):
            break
        assert any(text in (refusal.details() or "") for text in (
            "this call waited", "the analysis pool is busy", "Deadline Exceeded")), refusal
    assert refusal.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "this server has 4 calls waiting their turn, its most" in (refusal.details() or "")
    assert took < 1.0
    assert total(scrape_all(stack), "arena_limit_refusals_total",
                 limit="server_calls_waiting") == before + 1
    # Everything admitted is served in turn.
    for call in (first, *queued, *admitted):
        assert call.result().HasField("move")


def test_admins_have_no_line(stack: Launcher) -> None:
    """The services' own token (the web gateway reads with it for every anonymous viewer)
    runs any number of calls at once: where a user's sixth would be refused, none is."""
    stub = engine_pb2_grpc.EngineStub(stack_channel(stack, stack.target("analyst")))
    calls = [stub.Analyze.future(_analysis(depth=2), metadata=_as(stack.admin_token),
                                 timeout=60) for _ in range(3 + 2 * CALLS_WAITING)]
    assert all(call.result().HasField("move") for call in calls)
