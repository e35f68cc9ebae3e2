"""A real ladder server (port 0) on the session's durable Redis, bots in the real registry
store, and a helper that finishes matches through the referee's own ledger."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import grpc
import pytest
import redis
from arena.services.common.auth import Principal, TokenStore
from arena.services.common.config import Settings
from arena.services.common.embedded_redis import EmbeddedRedis
from arena.services.common.server import ServerHandle, build_server
from arena.services.ladder.follower import FollowerConfig
from arena.services.ladder.server import create_service
from arena.services.referee.ledger import Ledger
from arena.services.referee.matches import MatchStore
from arena.services.registry.store import BotStore

from arena.v1 import bots_pb2, common_pb2, ladder_pb2_grpc, match_pb2

TOKENS = {
    "admin-token": Principal("root", "admin"),
    "alice-token": Principal("alice", "user"),
    "bob-token": Principal("bob", "user"),
}


def metadata(token: str = "alice-token") -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def fast_follower(consumer: str = "ladder-test") -> FollowerConfig:
    return FollowerConfig(
        consumer=consumer, block_ms=50, reclaim_idle_ms=60_000, reconcile_every_s=3600
    )


@dataclass
class LadderServer:
    handle: ServerHandle
    channel: grpc.Channel
    stub: ladder_pb2_grpc.LadderStub

    def stop(self) -> None:
        self.channel.close()
        self.handle.stop(0)


def start_ladder_server(url: str, follower: FollowerConfig | None = None) -> LadderServer:
    registrations, names, on_stop = create_service(
        Settings(redis_url=url), follower or fast_follower()
    )
    handle = build_server(registrations, names, "127.0.0.1:0", TokenStore(TOKENS)).start()
    handle.on_stop.extend(on_stop)
    channel = grpc.insecure_channel(f"127.0.0.1:{handle.port}")
    return LadderServer(handle, channel, ladder_pb2_grpc.LadderStub(channel))


@pytest.fixture
def ladder_server(
    redis_server: EmbeddedRedis, redis_client: redis.Redis
) -> Iterator[LadderServer]:
    server = start_ladder_server(redis_server.url)
    yield server
    server.stop()


def register_bots(client: redis.Redis, game: int, *names: str) -> None:
    store = BotStore(client)
    for name in names:
        store.create(bots_pb2.BotVersion(
            spec=bots_pb2.BotSpec(name=name, game=game), version=1, owner="alice"))


def finish_match(client: redis.Redis, match_id: str, winner: int) -> match_pb2.Match:
    """End a pending match with ``winner`` (a Color) the way a referee does."""
    ledger = Ledger(client)
    match = MatchStore(client).header(match_id)
    match.status = match_pb2.MATCH_STATUS_RUNNING
    assert ledger.start(match)
    match.status = match_pb2.MATCH_STATUS_FINISHED
    match.result.CopyFrom(match_pb2.MatchResult(
        winner=winner, termination=match_pb2.TERMINATION_NORMAL))
    assert ledger.finish(match, 0)
    return match


BLACK, WHITE, DRAW = common_pb2.COLOR_BLACK, common_pb2.COLOR_WHITE, common_pb2.COLOR_UNSPECIFIED
