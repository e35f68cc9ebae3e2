"""Who may call what: every RPC of every served service (found in the descriptors of
``arena/v1``) called by five callers: no token, a bad token, another user, the owner of
what the request names, and the admin. A method without a row in ``ROWS`` fails the test,
so a new RPC cannot be added without saying who may call it. Health checking and
reflection stay open to everyone.

Rows describe one request per method, built on resources ``alice`` owns (bots, matches,
ladders); ``bob`` is the other user. Where ownership matters the request names a fresh
resource for every caller, so that one caller's success cannot change another's answer.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import grpc
import pytest
from arena.clients.sdk import ArenaClient
from arena.services.common.launcher import Launcher
from google.protobuf import timestamp_pb2
from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from arena.games import game
from arena.v1 import (
    bots_pb2,
    common_pb2,
    engine_pb2,
    ladder_pb2,
    match_pb2,
    referee_pb2,
    registry_pb2,
    status_pb2,
)
from tests.security.conftest import USERS
from tests.support import rpc
from tests.support.bots import match_config
from tests.support.stacks import cancel_everything, stack_channel, stack_client

Code = grpc.StatusCode
CALLERS = ("none", "bad", "other", "owner", "admin")


@dataclass
class Kit:
    """Alice's things on the secure stack, and fresh ones on demand."""

    stack: Launcher
    alice: ArenaClient
    admin: ArenaClient
    black: str = "am-black"
    white: str = "am-white"
    finished_match: str = ""  # with a search tree at ply 0
    cancelled_match: str = ""
    cancelled_ladder: str = ""
    counter: Iterator[int] = field(default_factory=itertools.count)

    def bot(self) -> str:
        name = f"am-bot-{next(self.counter)}"
        self.alice.register_bot(bots_pb2.BotSpec(name=name), from_preset="lab-beginner")
        return name

    def match(self, move_time_ms: int = 20_000, **extra: object) -> str:
        """Alice's match, pending or running (slow enough not to end by itself soon)."""
        config = match_config(self.black, self.white, move_time_ms=move_time_ms, **extra)
        return self.alice.create_match(config).id

    def cancelled(self) -> str:
        match_id = self.match()
        self.alice.cancel_match(match_id)
        return match_id

    def ladder_config(self) -> ladder_pb2.LadderConfig:
        return ladder_pb2.LadderConfig(
            name="auth matrix", game=game("othello").spec(),
            bots=[common_pb2.BotRef(name=self.black), common_pb2.BotRef(name=self.white)],
            format=ladder_pb2.LADDER_FORMAT_ROUND_ROBIN, games_per_pairing=2,
            time_control=common_pb2.TimeControl(move_time_ms=20_000))

    def ladder(self) -> str:
        return self.alice.create_ladder(self.ladder_config()).id


def _wait_finished(sdk: ArenaClient, match_id: str, timeout_s: float = 300.0) -> None:
    deadline = time.monotonic() + timeout_s
    while sdk.get_match(match_id).status != match_pb2.MATCH_STATUS_FINISHED:
        assert time.monotonic() < deadline, f"match {match_id} did not finish"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def kit(secure_stack: Launcher) -> Iterator[Kit]:
    with stack_client(secure_stack, USERS["alice"]) as alice, \
            stack_client(secure_stack, secure_stack.admin_token) as admin:
        made = Kit(secure_stack, alice, admin)
        for name in (made.black, made.white):
            alice.register_bot(bots_pb2.BotSpec(name=name), from_preset="lab-beginner")
        made.finished_match = made.match(move_time_ms=2000, capture_trees=True)
        _wait_finished(alice, made.finished_match)
        made.cancelled_match = made.cancelled()
        made.cancelled_ladder = made.ladder()
        alice.cancel_ladder(made.cancelled_ladder)
        yield made
    cancel_everything(secure_stack)


# -- the rows --------------------------------------------------------------------------------

Request = Callable[[Kit], Message]


@dataclass(frozen=True)
class Row:
    """One request, and the status each kind of authenticated caller gets."""

    request: Request
    other: Code = Code.OK
    owner: Code = Code.OK
    admin: Code = Code.OK

    def expected(self, caller: str) -> Code:
        if caller in ("none", "bad"):
            return Code.UNAUTHENTICATED
        code: Code = getattr(self, caller)
        return code


def _owner_only(request: Request) -> Row:
    return Row(request, other=Code.PERMISSION_DENIED)


def _analyze(kit: Kit) -> Message:
    position = common_pb2.Position(game=game("othello").spec(),
                                   text=game("othello").new_position().to_text())
    return engine_pb2.AnalyzeRequest(position=position, bot_ref=common_pb2.BotRef(
        name=kit.black), limits=common_pb2.SearchLimits(depth=1))


def _update(kit: Kit) -> Message:
    name = kit.bot()
    return registry_pb2.UpdateBotRequest(name=name, spec=kit.alice.get_bot(name).spec)


ROWS: dict[str, Row] = {
    # -- registry: anyone registered may read and register; only the owner changes a bot
    "/arena.v1.BotRegistry/RegisterBot": Row(lambda k: registry_pb2.RegisterBotRequest(
        spec=bots_pb2.BotSpec(name=f"am-new-{next(k.counter)}"), from_preset="lab-beginner")),
    "/arena.v1.BotRegistry/GetBot": Row(lambda k: registry_pb2.GetBotRequest(
        bot=common_pb2.BotRef(name=k.black))),
    "/arena.v1.BotRegistry/ListBots": Row(lambda k: registry_pb2.ListBotsRequest(
        owner="alice")),
    "/arena.v1.BotRegistry/UpdateBot": _owner_only(_update),
    "/arena.v1.BotRegistry/RetireBot": _owner_only(lambda k: registry_pb2.RetireBotRequest(
        name=k.bot())),
    "/arena.v1.BotRegistry/ListPresets": Row(lambda k: registry_pb2.ListPresetsRequest()),
    "/arena.v1.BotRegistry/ListEngines": Row(lambda k: registry_pb2.ListEnginesRequest(
        game=common_pb2.GAME_KIND_OTHELLO)),
    # a user reads what their own bots take of their quotas; an admin anyone's
    "/arena.v1.BotRegistry/GetUsage": Row(lambda k: registry_pb2.GetBotUsageRequest(
        user="alice"), other=Code.PERMISSION_DENIED),
    # -- referee: matches are public to read; creating one for alice is alice's (or an
    # admin's) business; only her (or an admin) may cancel or delete hers
    "/arena.v1.Referee/CreateMatch": Row(lambda k: referee_pb2.CreateMatchRequest(
        config=match_config(k.black, k.white, move_time_ms=20_000), owner="alice"),
        other=Code.PERMISSION_DENIED),
    "/arena.v1.Referee/GetMatch": Row(lambda k: referee_pb2.GetMatchRequest(
        match_id=k.finished_match)),
    "/arena.v1.Referee/ListMatches": Row(lambda k: referee_pb2.ListMatchesRequest(
        bot_name=k.black, summary_only=True)),
    "/arena.v1.Referee/WatchMatch": Row(lambda k: referee_pb2.WatchMatchRequest(
        match_id=k.cancelled_match)),
    "/arena.v1.Referee/GetReplay": Row(lambda k: referee_pb2.GetReplayRequest(
        match_id=k.finished_match, format=referee_pb2.REPLAY_FORMAT_GGF)),
    "/arena.v1.Referee/GetSearchTree": Row(lambda k: referee_pb2.GetSearchTreeRequest(
        match_id=k.finished_match, ply=0)),
    "/arena.v1.Referee/DeleteMatch": _owner_only(lambda k: referee_pb2.DeleteMatchRequest(
        match_id=k.cancelled())),
    "/arena.v1.Referee/CancelMatch": _owner_only(lambda k: referee_pb2.CancelMatchRequest(
        match_id=k.match())),
    # a user prunes their own matches, an admin everyone's (a dry run: the stack's
    # matches stay; whose are examined is tests/system/test_storage_quota.py's)
    "/arena.v1.Referee/PruneMatches": Row(
        lambda k: referee_pb2.PruneMatchesRequest(before=timestamp_pb2.Timestamp(seconds=1),
                                                  dry_run=True)),
    # a user reads their own usage of their quotas; an admin anyone's
    "/arena.v1.Referee/GetUsage": Row(lambda k: referee_pb2.GetUsageRequest(user="alice"),
                                      other=Code.PERMISSION_DENIED),
    # an imported record belongs to whoever imports it
    "/arena.v1.Referee/ImportMatch": Row(lambda k: referee_pb2.ImportMatchRequest(
        content="f5d6c3d3c4\n")),
    # -- ladder: public to read, anyone may create, only the owner (or an admin) cancels
    "/arena.v1.Ladder/CreateLadder": Row(lambda k: ladder_pb2.CreateLadderRequest(
        config=k.ladder_config())),
    "/arena.v1.Ladder/GetStandings": Row(lambda k: ladder_pb2.GetStandingsRequest(
        ladder_id=k.cancelled_ladder)),
    "/arena.v1.Ladder/WatchLadder": Row(lambda k: ladder_pb2.WatchLadderRequest(
        ladder_id=k.cancelled_ladder)),
    "/arena.v1.Ladder/ListLadders": Row(lambda k: ladder_pb2.ListLaddersRequest()),
    "/arena.v1.Ladder/GetRatings": Row(lambda k: ladder_pb2.GetRatingsRequest(
        game=common_pb2.GameSpec(kind=common_pb2.GAME_KIND_OTHELLO))),
    "/arena.v1.Ladder/CancelLadder": _owner_only(lambda k: ladder_pb2.CancelLadderRequest(
        ladder_id=k.ladder())),
    # a user reads how many ladders of theirs run; an admin anyone's
    "/arena.v1.Ladder/GetUsage": Row(lambda k: ladder_pb2.GetLadderUsageRequest(user="alice"),
                                     other=Code.PERMISSION_DENIED),
    # -- engine: any registered caller may ask for a hint (within their quota)
    "/arena.v1.Engine/Analyze": Row(_analyze),
    # -- status (served by the referees): what the arena is doing, for anyone registered
    "/arena.v1.Status/GetStatus": Row(lambda k: status_pb2.GetStatusRequest(forfeits=3)),
}


def _token(kit: Kit, caller: str) -> str | None:
    return {"none": None, "bad": "not-a-token", "other": USERS["bob"],
            "owner": USERS["alice"], "admin": kit.stack.admin_token}[caller]


def test_every_service_is_served_or_said_not_to_be() -> None:
    assert rpc.unclassified_services() == []


def test_every_rpc_has_a_row_and_every_row_an_rpc() -> None:
    assert {rpc.path(m) for m in rpc.served_methods()} == set(ROWS)


@pytest.mark.parametrize("method", rpc.served_methods(), ids=rpc.path)
@pytest.mark.parametrize("caller", CALLERS)
def test_auth_matrix(kit: Kit, method: MethodDescriptor, caller: str) -> None:
    row = ROWS.get(rpc.path(method))
    if row is None:
        pytest.fail(f"{rpc.path(method)} has no row in ROWS: say who may call it")
    request = row.request(kit)
    assert isinstance(request, rpc.request_class(method))
    target = kit.stack.roles()[rpc.role_of(method)]
    with stack_channel(kit.stack, target) as channel:
        outcome = rpc.call(channel, method, request.SerializeToString(),
                           rpc.bearer(_token(kit, caller)), timeout_s=60)
    assert outcome.code == row.expected(caller), (
        f"{rpc.path(method)} by {caller}: {outcome.code.name} {outcome.details}")
    if method.server_streaming and outcome.code == Code.OK:
        assert outcome.replies > 0


@pytest.mark.parametrize("token", [None, "not-a-token"], ids=["no-token", "bad-token"])
def test_health_and_reflection_stay_open(secure_stack: Launcher, token: str | None) -> None:
    for name, process in secure_stack.processes.items():
        with stack_channel(secure_stack, process.target) as channel:
            health = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), metadata=rpc.bearer(token), timeout=10)
            assert health.status == health_pb2.HealthCheckResponse.SERVING, name
            replies = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo(
                iter([reflection_pb2.ServerReflectionRequest(list_services="")]),
                metadata=rpc.bearer(token), timeout=10)
            listed = {s.name for s in next(iter(replies)).list_services_response.service}
            assert "grpc.health.v1.Health" in listed, name
