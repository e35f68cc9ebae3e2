"""ArenaClient: where it finds the services, what it sends, and the errors it raises,
against a real gRPC server built by the services' own bootstrap."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from arena.clients.sdk import ArenaClient, ServerError, StackAddresses
from arena.services.common.auth import Principal, TokenStore, current_principal
from arena.services.common.server import ServerHandle, build_server

from arena import errors
from arena.v1 import (
    bots_pb2,
    common_pb2,
    ladder_pb2,
    match_pb2,
    referee_pb2,
    referee_pb2_grpc,
    registry_pb2,
    registry_pb2_grpc,
)

TOKEN = "sdk-test-token"


class Registry(registry_pb2_grpc.BotRegistryServicer):
    def GetBot(self, request: registry_pb2.GetBotRequest, context: Any) -> bots_pb2.BotVersion:
        name = request.bot.name
        if name == "bad":
            raise errors.InvalidArgumentError.for_fields(
                [errors.FieldViolation("bot.name", "must not be 'bad'")])
        if name == "bug":
            raise KeyError("oops")
        if name == "slow":
            time.sleep(1.0)
        if name == "missing":
            raise errors.NotFoundError("no bot named 'missing'")
        return bots_pb2.BotVersion(spec=bots_pb2.BotSpec(name=name),
                                   owner=current_principal().name, version=request.bot.version)

    def ListBots(self, request: registry_pb2.ListBotsRequest,
                 context: Any) -> registry_pb2.ListBotsResponse:
        start = int(request.page.page_token or 0)
        names = [f"bot{i}" for i in range(start, min(start + 2, 5))]
        token = str(start + 2) if start + 2 < 5 else ""
        return registry_pb2.ListBotsResponse(
            bots=[bots_pb2.BotVersion(spec=bots_pb2.BotSpec(name=n)) for n in names],
            next_page_token=token)


class Referee(referee_pb2_grpc.RefereeServicer):
    def CreateMatch(self, request: referee_pb2.CreateMatchRequest,
                    context: Any) -> match_pb2.Match:
        return match_pb2.Match(id="m1", config=request.config)

    def ListMatches(self, request: referee_pb2.ListMatchesRequest,
                    context: Any) -> referee_pb2.ListMatchesResponse:
        """One match, in the status asked for (what the filter arrived as)."""
        return referee_pb2.ListMatchesResponse(
            matches=[match_pb2.Match(id="m1", status=request.status)])

    def WatchMatch(self, request: referee_pb2.WatchMatchRequest,
                   context: Any) -> Iterator[match_pb2.MatchEvent]:
        yield match_pb2.MatchEvent(match_id=request.match_id)
        raise errors.FailedPreconditionError("match was deleted")


@pytest.fixture(scope="module")
def server() -> Iterator[ServerHandle]:
    handle = build_server(
        [lambda s: registry_pb2_grpc.add_BotRegistryServicer_to_server(Registry(), s),
         lambda s: referee_pb2_grpc.add_RefereeServicer_to_server(Referee(), s)],
        ["arena.v1.BotRegistry", "arena.v1.Referee"],
        tokens=TokenStore({TOKEN: Principal("sdk-user", "user")}),
    ).start()
    yield handle
    handle.stop(0)


@pytest.fixture
def client(server: ServerHandle, tmp_path: Path) -> Iterator[ArenaClient]:
    target = f"127.0.0.1:{server.port}"
    with ArenaClient(registry=target, referee=target, token=TOKEN, home=tmp_path) as sdk:
        yield sdk


def test_calls_carry_the_token(client: ArenaClient) -> None:
    bot = client.get_bot("lucy", 3)
    assert (bot.spec.name, bot.version, bot.owner) == ("lucy", 3, "sdk-user")


def test_pagination(client: ArenaClient) -> None:
    assert [b.spec.name for b in client.iter_bots()] == [f"bot{i}" for i in range(5)]


def test_errors_become_arena_errors(client: ArenaClient) -> None:
    with pytest.raises(errors.InvalidArgumentError) as bad:
        client.get_bot("bad")
    assert bad.value.violations == [errors.FieldViolation("bot.name", "must not be 'bad'")]
    with pytest.raises(errors.NotFoundError, match="no bot named 'missing'"):
        client.get_bot("missing")
    with pytest.raises(ServerError, match="INTERNAL"):
        client.get_bot("bug")


def test_a_value_protobuf_refuses_names_its_field(client: ArenaClient) -> None:
    """Protobuf alone says ``ValueError: Value out of range: 1099511627776``, and the caller
    must guess which argument. (Wrong types are refused before, by the argument checks.)"""
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"^BotRef\.version: Value out of range: 1099511627776 \(got "):
        client.get_bot("alice-bot", version=2**40)
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"^engine_config must be a JSON object: .*set.* at Struct\.x"):
        client.analyze(common_pb2.Position(text="start"), engine_config={"x": {1, 2}})
    assert client.get_bot("alice-bot", version=3).version == 3  # the client still works


ENUM_VALUES = {
    "MatchStatus": "MATCH_STATUS_UNSPECIFIED=0, MATCH_STATUS_PENDING=1, MATCH_STATUS_RUNNING=2, "
                   "MATCH_STATUS_FINISHED=3, MATCH_STATUS_CANCELLED=4",
    "GameKind": "GAME_KIND_UNSPECIFIED=0, GAME_KIND_OTHELLO=1, GAME_KIND_GOMOKU=2",
    "ReplayFormat": "REPLAY_FORMAT_UNSPECIFIED=0, REPLAY_FORMAT_NATIVE=1, REPLAY_FORMAT_GGF=2, "
                    "REPLAY_FORMAT_TRANSCRIPT=3, REPLAY_FORMAT_PSQ=4",
}
START = common_pb2.Position(text="start")


REFUSED: list[tuple[Callable[[ArenaClient], object], str]] = [
    (lambda sdk: sdk.list_matches(status=99),
     f"list_matches: status must be a MatchStatus ({ENUM_VALUES['MatchStatus']}), got int 99"),
    (lambda sdk: sdk.list_matches(status="FINISHED"),
     "list_matches: status must be a MatchStatus (MATCH_STATUS_UNSPECIFIED=0, "),
    (lambda sdk: sdk.list_bots(game=-1),
     f"list_bots: game must be a GameKind ({ENUM_VALUES['GameKind']}), got int -1"),
    (lambda sdk: sdk.get_replay("m1", replay_format=77),
     f"get_replay: replay_format must be a ReplayFormat ({ENUM_VALUES['ReplayFormat']}), "
     "got int 77"),
    (lambda sdk: sdk.bot_ratings("lucy", 3),
     "bot_ratings: kind must be a GameKind ("),
    (lambda sdk: sdk.bot_ratings("lucy", 0),
     "bot_ratings: kind must name a game (GAME_KIND_OTHELLO=1, GAME_KIND_GOMOKU=2), got 0"),
    (lambda sdk: sdk.create_match({"seed": 1}),
     "create_match: config must be an arena.v1.MatchConfig message, got dict {'seed': 1}"),
    (lambda sdk: sdk.create_match(ladder_pb2.LadderConfig(name="l")),
     "create_match: config must be an arena.v1.MatchConfig message, got an "
     "arena.v1.LadderConfig message"),
    (lambda sdk: sdk.create_ladder(None),
     "create_ladder: config must be an arena.v1.LadderConfig message, got NoneType None"),
    (lambda sdk: sdk.create_ladder("ladder.toml"),
     "create_ladder: config must be an arena.v1.LadderConfig message, got str 'ladder.toml'"),
    (lambda sdk: sdk.get_standings(123),
     "get_standings: ladder_id must be a str, got int 123"),
    (lambda sdk: sdk.get_match(b"m1"), "get_match: match_id must be a str, got bytes b'm1'"),
    (lambda sdk: sdk.list_bots(page_size="ten"),
     "list_bots: page_size must be an int, got str 'ten'"),
    (lambda sdk: sdk.list_bots(limit="ten"),
     "list_bots: got an unexpected keyword argument 'limit' (it takes game, owner, "
     "name_prefix, include_retired, page_size, page_token)"),
    (lambda sdk: sdk.iter_matches(limit="ten"),  # a generator: refused when called
     "iter_matches: limit must be an int, got str 'ten'"),
    (lambda sdk: sdk.iter_matches(status=99),
     f"iter_matches: status must be a MatchStatus ({ENUM_VALUES['MatchStatus']}), got int 99"),
    (lambda sdk: sdk.iter_bots(owner_name="bob"),
     "iter_bots: got an unexpected keyword argument 'owner_name' (it takes game, owner, "
     "name_prefix, include_retired)"),
    (lambda sdk: sdk.get_bot("lucy", version=True),
     "get_bot: version must be an int, got bool True"),
    (lambda sdk: sdk.get_bot("lucy", 1.5), "get_bot: version must be an int, got float 1.5"),
    (lambda sdk: sdk.get_bot(), "get_bot: missing a required argument: 'name' (it takes "),
    (lambda sdk: sdk.retire_bot("lucy", cancel_matches="no"),
     "retire_bot: cancel_matches must be a bool, got str 'no'"),
    (lambda sdk: sdk.analyze(None, engine_config={}),
     "analyze: position must be an arena.v1.Position message, got NoneType None"),
    (lambda sdk: sdk.analyze(START, engine_config={}, history="f5"),
     "analyze: history must be a list of ints or None, got str 'f5'"),
    (lambda sdk: sdk.analyze(START, engine_config={}, history=[37, "d3"]),
     "analyze: history must be a list of ints or None, got list [37, 'd3']"),
    (lambda sdk: sdk.analyze(START, engine_config="depth=3"),
     "analyze: engine_config must be a Mapping or None, got str 'depth=3'"),
    (lambda sdk: sdk.get_ratings("othello"),
     "get_ratings: game must be an arena.v1.GameSpec message, got str 'othello'"),
    (lambda sdk: sdk.get_ratings(common_pb2.GameSpec(), clock=1000),
     "get_ratings: clock must be an arena.v1.TimeControl message or None, got int 1000"),
    (lambda sdk: sdk.prune_matches(before="yesterday"),
     "prune_matches: before must be a datetime, got str 'yesterday'"),
    (lambda sdk: sdk.watch_match(7), "watch_match: match_id must be a str, got int 7"),
    (lambda sdk: sdk.get_status(forfeits=None),
     "get_status: forfeits must be an int, got NoneType None"),
    (lambda sdk: ArenaClient(timeout_s="10"),
     "ArenaClient: timeout_s must be a number, got str '10'"),
]


@pytest.mark.parametrize(("call", "message"), REFUSED,
                         ids=[message.split(":")[0] for _, message in REFUSED])
def test_arguments_the_annotations_refuse_are_refused_before_anything_is_sent(
        call: Callable[[ArenaClient], object], message: str, tmp_path: Path) -> None:
    """Every service at a closed port: a call that were sent would fail as unreachable, so
    the argument error shows that the check is the client's. Before, protobuf's own words
    came out (``bad argument type for built-in operation``, ``Parameter to initialize
    message field must be dict or instance of same class``), and an enum number outside the
    enum (status=99), a dict for a message or None for the position was sent."""
    closed = "127.0.0.1:1"
    with ArenaClient(registry=closed, referee=closed, ladder=closed, engine=closed,
                     token=TOKEN, home=tmp_path, timeout_s=2) as sdk, \
            pytest.raises(errors.InvalidArgumentError) as refused:
        call(sdk)
    assert str(refused.value).startswith(message)
    assert "\n" not in str(refused.value) and len(str(refused.value)) < 300
    assert not sdk._channels  # no channel was opened: nothing was sent


def test_messages_and_enum_names_are_taken(client: ArenaClient) -> None:
    """What the annotations say still goes through: messages where a message goes, an
    enum's number or its name (sent as the number), a tuple for a list."""
    match = client.create_match(match_pb2.MatchConfig(seed=7), request_id="r1")
    assert match.config.seed == 7
    for status in ("MATCH_STATUS_RUNNING", match_pb2.MATCH_STATUS_RUNNING, 2):
        assert client.list_matches(status=status).matches[0].status == 2
    assert client.list_matches().matches[0].status == match_pb2.MATCH_STATUS_UNSPECIFIED


def test_deadline(server: ServerHandle, tmp_path: Path) -> None:
    target = f"127.0.0.1:{server.port}"
    with ArenaClient(registry=target, token=TOKEN, home=tmp_path, timeout_s=0.2) as sdk, \
            pytest.raises(errors.DeadlineExceededError, match="did not answer in time"):
        sdk.get_bot("slow")


def test_stream_errors(client: ArenaClient) -> None:
    events = client.watch_match("m7")
    assert next(events).match_id == "m7"
    with pytest.raises(errors.FailedPreconditionError, match="deleted"):
        next(events)


def test_missing_or_wrong_token(server: ServerHandle, tmp_path: Path) -> None:
    target = f"127.0.0.1:{server.port}"
    with ArenaClient(registry=target, home=tmp_path) as anonymous, \
            pytest.raises(errors.UnauthenticatedError, match="missing token"):
        anonymous.get_bot("lucy")
    with ArenaClient(registry=target, token="nope", home=tmp_path) as stranger, \
            pytest.raises(errors.UnauthenticatedError, match="unknown token"):
        stranger.get_bot("lucy")


def test_unreachable_and_unconfigured(tmp_path: Path) -> None:
    with ArenaClient(registry="127.0.0.1:1", home=tmp_path) as sdk:
        unreachable = r"registry unreachable at 127\.0\.0\.1:1"
        with pytest.raises(errors.UnavailableError, match=unreachable):
            sdk.get_bot("lucy")
        with pytest.raises(errors.UnavailableError, match="no ladder address"):
            sdk.list_ladders()
        with pytest.raises(errors.InvalidArgumentError, match="needs a bot"):
            sdk.analyze(common_pb2.Position())


def test_discovery_order(tmp_path: Path) -> None:
    (tmp_path / "admin.token").write_text("file-token\n")
    (tmp_path / "stack.json").write_text(json.dumps({
        "roles": {"registry": "h:1", "referee": "h:2", "ladder": "h:3", "engine": "h:4"},
        "services": {"worker-1": "h:8"},
        "token_file": str(tmp_path / "admin.token"),
    }))
    found = StackAddresses.discover(tmp_path, env={})
    assert (found.registry, found.referee, found.ladder, found.engine) == (
        "h:1", "h:2", "h:3", "h:4")
    assert found.token == "file-token"
    env = {"ARENA_REFEREE": "e:2", "ARENA_TOKEN": "env-token"}
    found = StackAddresses.discover(tmp_path, env=env, referee=None, ladder="c:3")
    assert (found.registry, found.referee, found.ladder, found.token) == (
        "h:1", "e:2", "c:3", "env-token")
    found = StackAddresses.discover(None, env={"ARENA_HOME": str(tmp_path)})
    assert found.registry == "h:1"


def test_service_config_declares_retries_for_reads_only() -> None:
    from arena.clients.sdk import SERVICE_CONFIG

    config = json.loads(SERVICE_CONFIG)
    names = {(n["service"], n["method"]) for n in config["methodConfig"][0]["name"]}
    assert ("arena.v1.Referee", "GetMatch") in names
    assert ("arena.v1.Referee", "CreateMatch") not in names
    assert config["methodConfig"][0]["retryPolicy"]["retryableStatusCodes"] == ["UNAVAILABLE"]
