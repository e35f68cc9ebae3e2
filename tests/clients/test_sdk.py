"""ArenaClient: where it finds the services, what it sends, and the errors it raises,
against a real gRPC server built by the services' own bootstrap."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
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
    """Protobuf alone says ``ValueError: Value out of range: 1099511627776`` or ``TypeError:
    bad argument type for built-in operation``, and the caller must guess which argument."""
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"^BotRef\.version: Value out of range: 1099511627776 \(got "):
        client.get_bot("alice-bot", version=2**40)
    with pytest.raises(errors.InvalidArgumentError, match=r"^PageRequest\.page_size: .*'ten'"):
        client.list_bots(page_size="ten")  # type: ignore[arg-type]
    with pytest.raises(errors.InvalidArgumentError, match=r"^GetMatchRequest\.match_id: "):
        client.get_match(7)  # type: ignore[arg-type]
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"^engine_config must be a JSON object: .*set.* at Struct\.x"):
        client.analyze(common_pb2.Position(text="start"), engine_config={"x": {1, 2}})
    with pytest.raises(errors.InvalidArgumentError, match=r"^engine_config must be a JSON"):
        client.analyze(common_pb2.Position(text="start"),
                       engine_config="depth=3")  # type: ignore[arg-type]
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"^before must be a datetime, got str: 'yesterday'"):
        client.prune_matches(before="yesterday")  # type: ignore[arg-type]
    assert client.get_bot("alice-bot", version=3).version == 3  # the client still works


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
