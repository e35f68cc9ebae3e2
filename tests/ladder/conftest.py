"""A real ladder service (port 0) with a real registry and referee beside it, all in this
process; the referee takes no match jobs (its loop runs none), so the tests decide how each
game ends, finishing matches through the referee's own ledger."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import grpc
import pytest
import redis
from arena.clients.sdk import ArenaClient
from arena.services.common.config import Config
from arena.services.common.embedded_redis import EmbeddedRedis
from arena.services.common.peers import BotVersions
from arena.services.common.protocol.ladders import LadderStore
from arena.services.common.protocol.ledger import Ledger
from arena.services.common.protocol.matches import MatchStore
from arena.services.ladder.follower import FollowerConfig, ResultFollower
from arena.services.ladder.ladders import Ladders

from arena.v1 import common_pb2, ladder_pb2, ladder_pb2_grpc, match_pb2
from tests.support.bots import builtin_bot
from tests.support.servers import ADMIN_TOKEN, Server, client, metadata, serve

__all__ = ["metadata"]

# Every game of the tests' ladders is scheduled at once, as the tests finish them by hand.
IN_FLIGHT = 64


def fast_follower(consumer: str = "ladder-test") -> FollowerConfig:
    return FollowerConfig(
        consumer=consumer, block_ms=50, reclaim_idle_ms=60_000, reconcile_every_s=3600
    )


@dataclass
class LadderServer:
    server: Server
    channel: grpc.Channel
    stub: ladder_pb2_grpc.LadderStub

    def stop(self) -> None:
        self.channel.close()
        self.server.stop()


@dataclass
class Peers:
    """The registry and the referee the ladder service calls."""

    registry: Server
    referee: Server
    redis_url: str
    cache_url: str

    def config(self) -> Config:
        return Config(redis_url=self.redis_url, cache_url=self.cache_url,
                      registry=self.registry.target, referee=self.referee.target,
                      ladder_in_flight=IN_FLIGHT, max_matches=0, service_token=ADMIN_TOKEN)

    def client(self) -> ArenaClient:
        return client(registry=self.registry.target, referee=self.referee.target)

    def ladders(self, redis_client: redis.Redis) -> Ladders:
        sdk = self.client()
        return Ladders(LadderStore(redis_client), sdk, BotVersions(sdk), IN_FLIGHT)

    def follower(self, redis_client: redis.Redis, consumer: str = "ladder-test",
                 config: FollowerConfig | None = None) -> ResultFollower:
        return ResultFollower(redis_client, self.ladders(redis_client),
                              config or fast_follower(consumer))


@pytest.fixture
def ladder_peers(registry_server: Server, redis_server: EmbeddedRedis,
                 cache_server: EmbeddedRedis) -> Iterator[Peers]:
    config = Config(redis_url=redis_server.url, cache_url=cache_server.url,
                    registry=registry_server.target, max_matches=0, service_token=ADMIN_TOKEN)
    referee = serve("referee", config)
    yield Peers(registry_server, referee, redis_server.url, cache_server.url)
    referee.stop()


def start_ladder_server(peers: Peers, follower: FollowerConfig | None = None) -> LadderServer:
    server = serve("ladder", peers.config(), follower=follower or fast_follower())
    channel = grpc.insecure_channel(server.target)
    return LadderServer(server, channel, ladder_pb2_grpc.LadderStub(channel))


@pytest.fixture
def ladder_server(ladder_peers: Peers, redis_client: redis.Redis) -> Iterator[LadderServer]:
    server = start_ladder_server(ladder_peers)
    yield server
    server.stop()


LAB = {"evaluator": "lab", "look_ahead": 0}


def register_bots(peers: ArenaClient, kind: int, *names: str) -> None:
    config = LAB if kind == common_pb2.GAME_KIND_OTHELLO else {"evaluator": "sharpmoku",
                                                                 "depth": 1}
    for name in names:
        builtin_bot(peers, name, config, kind)


def finish_match(client: redis.Redis, match_id: str, winner: int,
                 void: bool = False) -> match_pb2.Match:
    """End a pending match with ``winner`` (a Color) the way a referee does; ``void``: with
    no result, as when its moves were dead-lettered."""
    ledger = Ledger(client)
    match = MatchStore(client).header(match_id)
    match.status = match_pb2.MATCH_STATUS_RUNNING
    assert ledger.start(match)
    match.status = match_pb2.MATCH_STATUS_FINISHED
    match.result.CopyFrom(match_pb2.MatchResult(
        winner=winner, void=void, termination=match_pb2.TERMINATION_DEAD_LETTERED if void
        else match_pb2.TERMINATION_NORMAL))
    match.finished_at.GetCurrentTime()
    assert ledger.finish(match, 0)
    return match


BLACK, WHITE, DRAW = common_pb2.COLOR_BLACK, common_pb2.COLOR_WHITE, common_pb2.COLOR_UNSPECIFIED


def create_ladder(server: LadderServer, config: ladder_pb2.LadderConfig,
                  token: str = "alice-token", request_id: str = "") -> ladder_pb2.LadderInfo:
    request = ladder_pb2.CreateLadderRequest(config=config, request_id=request_id)
    reply: ladder_pb2.LadderInfo = server.stub.CreateLadder(
        request, timeout=30, metadata=metadata(token))
    return reply


def standings(server: LadderServer, ladder_id: str) -> ladder_pb2.Standings:
    reply: ladder_pb2.Standings = server.stub.GetStandings(
        ladder_pb2.GetStandingsRequest(ladder_id=ladder_id), timeout=10, metadata=metadata())
    return reply


def wait_for(condition: Callable[[], bool], timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)
