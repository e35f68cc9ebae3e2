"""Races: one winner among concurrent registrations, no lost updates."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import grpc

from arena.bots import builtin_config
from arena.v1 import bots_pb2, registry_pb2
from tests.registry.conftest import Registry, othello_spec


def test_twenty_concurrent_registrations_of_one_name_have_one_winner(registry: Registry) -> None:
    tokens = ["alice-token", "bob-token"]

    def attempt(index: int) -> tuple[grpc.StatusCode, str]:
        spec = othello_spec("contested", stable_disc_score=index)
        try:
            bot = registry.register(spec, token=tokens[index % 2])
        except grpc.RpcError as error:
            return error.code(), ""
        return grpc.StatusCode.OK, bot.content_hash

    with ThreadPoolExecutor(max_workers=20) as pool:
        outcomes = list(pool.map(attempt, range(20)))
    codes = [code for code, _ in outcomes]
    assert codes.count(grpc.StatusCode.OK) == 1
    assert codes.count(grpc.StatusCode.ALREADY_EXISTS) == 19
    winner_hash = next(h for code, h in outcomes if code == grpc.StatusCode.OK)
    stored = registry.call("GetBot", registry_pb2.GetBotRequest(bot={"name": "contested"}))
    assert isinstance(stored, bots_pb2.BotVersion)
    assert stored.version == 1 and stored.content_hash == winner_hash


def test_concurrent_registrations_of_names_that_differ_in_case_have_one_winner(
        registry: Registry) -> None:
    """The folded name is claimed in the create script that claims the name itself, so no
    two of 'Rival', 'RIVAL', 'rival', 'ｒｉｖａｌ'... registered at once are both taken."""
    names = ["rival", "Rival", "RIVAL", "rIVAL", "\uff52\uff49\uff56\uff41\uff4c"] * 4

    def attempt(index: int) -> grpc.StatusCode:
        spec = othello_spec(names[index], stable_disc_score=index)
        try:
            registry.register(spec, token=("alice-token", "bob-token")[index % 2])
        except grpc.RpcError as error:
            return error.code()
        return grpc.StatusCode.OK

    with ThreadPoolExecutor(max_workers=20) as pool:
        codes = list(pool.map(attempt, range(len(names))))
    assert codes.count(grpc.StatusCode.OK) == 1, codes
    assert codes.count(grpc.StatusCode.ALREADY_EXISTS) == len(names) - 1, codes
    listed = registry.call("ListBots", registry_pb2.ListBotsRequest())
    assert isinstance(listed, registry_pb2.ListBotsResponse)
    assert len(listed.bots) == 1


def test_concurrent_updates_each_get_their_own_version(registry: Registry) -> None:
    registry.register(othello_spec("busy"))

    def update(index: int) -> int:
        spec = othello_spec("busy", stable_disc_score=index)
        reply = registry.call("UpdateBot", registry_pb2.UpdateBotRequest(name="busy", spec=spec))
        assert isinstance(reply, bots_pb2.BotVersion)
        return reply.version

    with ThreadPoolExecutor(max_workers=10) as pool:
        versions = sorted(pool.map(update, range(1, 11)))
    assert versions == list(range(2, 12))
    stored = set()
    for version in range(2, 12):
        bot = registry.call("GetBot", registry_pb2.GetBotRequest(
            bot={"name": "busy", "version": version}))
        assert isinstance(bot, bots_pb2.BotVersion) and bot.version == version
        stored.add(builtin_config(bot.spec)["stable_disc_score"])
    assert stored == set(range(1, 11))
