"""The auth matrix: no token / unknown token / wrong owner / owner / admin, per RPC."""

from __future__ import annotations

import grpc
import pytest

from arena.v1 import bots_pb2, common_pb2, registry_pb2
from tests.registry.conftest import Registry, othello_spec

MUTATIONS = ["RegisterBot", "UpdateBot", "RetireBot"]
READS = ["GetBot", "ListBots", "ListPresets"]


def _request(method: str, name: str = "owned") -> object:
    return {
        "RegisterBot": registry_pb2.RegisterBotRequest(spec=othello_spec(name)),
        "UpdateBot": registry_pb2.UpdateBotRequest(
            name=name, spec=othello_spec(name, stable_disc_score=20)),
        "RetireBot": registry_pb2.RetireBotRequest(name=name),
        "GetBot": registry_pb2.GetBotRequest(bot=common_pb2.BotRef(name=name)),
        "ListBots": registry_pb2.ListBotsRequest(),
        "ListPresets": registry_pb2.ListPresetsRequest(),
        "GetUsage": registry_pb2.GetBotUsageRequest(user="alice"),
    }[method]


def _code(registry: Registry, method: str, token: str | None, name: str = "owned"
          ) -> grpc.StatusCode:
    try:
        registry.call(method, _request(method, name), token)
    except grpc.RpcError as error:
        return error.code()  # type: ignore[no-any-return]
    return grpc.StatusCode.OK


@pytest.fixture
def owned(registry: Registry) -> Registry:
    """The registry with alice's bot 'owned'."""
    registry.register(othello_spec("owned"), token="alice-token")
    return registry


@pytest.mark.parametrize("method", [*MUTATIONS, *READS, "GetUsage"])
@pytest.mark.parametrize("token", [None, "forged-token"])
def test_no_or_unknown_token_is_unauthenticated(owned: Registry, method: str,
                                                token: str | None) -> None:
    name = "fresh" if method == "RegisterBot" else "owned"
    assert _code(owned, method, token, name) == grpc.StatusCode.UNAUTHENTICATED


@pytest.mark.parametrize(("token", "code"), [
    ("alice-token", grpc.StatusCode.OK), ("admin-token", grpc.StatusCode.OK),
    ("bob-token", grpc.StatusCode.PERMISSION_DENIED)], ids=["owner", "admin", "other"])
def test_a_users_usage_is_theirs_and_the_admins_to_read(owned: Registry, token: str,
                                                        code: grpc.StatusCode) -> None:
    assert _code(owned, "GetUsage", token) == code


@pytest.mark.parametrize("method", ["UpdateBot", "RetireBot"])
def test_other_user_is_permission_denied(owned: Registry, method: str) -> None:
    assert _code(owned, method, "bob-token") == grpc.StatusCode.PERMISSION_DENIED
    latest = owned.call("GetBot", _request("GetBot"))
    assert isinstance(latest, bots_pb2.BotVersion)
    assert latest.version == 1 and not latest.retired


def test_other_user_cannot_register_over_a_taken_name(owned: Registry) -> None:
    assert _code(owned, "RegisterBot", "bob-token") == grpc.StatusCode.ALREADY_EXISTS


@pytest.mark.parametrize("method", MUTATIONS)
def test_owner_may(registry: Registry, method: str) -> None:
    if method != "RegisterBot":
        registry.register(othello_spec("owned"), token="alice-token")
    assert _code(registry, method, "alice-token") == grpc.StatusCode.OK


@pytest.mark.parametrize("method", MUTATIONS)
def test_admin_may_and_the_owner_stays(registry: Registry, method: str) -> None:
    if method != "RegisterBot":
        registry.register(othello_spec("owned"), token="alice-token")
    assert _code(registry, method, "admin-token") == grpc.StatusCode.OK
    latest = registry.call("GetBot", _request("GetBot"))
    assert isinstance(latest, bots_pb2.BotVersion)
    assert latest.owner == ("root" if method == "RegisterBot" else "alice")


@pytest.mark.parametrize("method", READS)
def test_any_user_may_read(owned: Registry, method: str) -> None:
    assert _code(owned, method, "bob-token") == grpc.StatusCode.OK


def test_owner_comes_from_the_token_not_the_request(registry: Registry) -> None:
    bot = registry.register(othello_spec("mine"), token="bob-token")
    assert bot.owner == "bob"
