"""gRPC wiring of the referee: the Referee service, and the match loop in the background.

Environment (beyond the common settings): ``ARENA_MAX_MATCHES`` (matches one referee runs
at once, default 64), ``ARENA_MATCH_IDLE_MS``, ``ARENA_GRACE_MS``, ``ARENA_STALL_TIMEOUT_MS``
(see ``arena.services.referee.delivery.DeliveryConfig``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import redis
from arena.services.common.auth import current_principal
from arena.services.common.config import Settings
from arena.services.common.server import Registration
from arena.services.referee.delivery import DeliveryConfig
from arena.services.referee.loop import RefereeLoop
from arena.services.referee.matches import MatchStore, create_match
from arena.services.referee.replay import export
from arena.services.referee.watch import watch_match
from arena.services.worker.trees import load_tree

from arena.errors import NotFoundError
from arena.v1 import common_pb2, match_pb2, referee_pb2, referee_pb2_grpc


class RefereeServicer(referee_pb2_grpc.RefereeServicer):
    """Validate, call the match store or runner, let the interceptor map errors."""

    def __init__(self, client: redis.Redis, cache: redis.Redis | None) -> None:
        self.client = client
        self.cache = cache
        self.store = MatchStore(client)

    def CreateMatch(self, request: referee_pb2.CreateMatchRequest,
                    context: Any) -> match_pb2.Match:
        return create_match(self.client, request.config, current_principal().name)

    def GetMatch(self, request: referee_pb2.GetMatchRequest, context: Any) -> match_pb2.Match:
        return self.store.get(request.match_id)

    def ListMatches(self, request: referee_pb2.ListMatchesRequest,
                    context: Any) -> referee_pb2.ListMatchesResponse:
        return self.store.list(request)

    def WatchMatch(self, request: referee_pb2.WatchMatchRequest,
                   context: Any) -> Iterator[match_pb2.MatchEvent]:
        yield from watch_match(self.client, request.match_id, context.is_active)

    def GetReplay(self, request: referee_pb2.GetReplayRequest,
                  context: Any) -> referee_pb2.Replay:
        return export(self.store.get(request.match_id), request.format)

    def GetSearchTree(self, request: referee_pb2.GetSearchTreeRequest,
                      context: Any) -> common_pb2.SearchTree:
        match = self.store.get(request.match_id)
        if not 0 <= request.ply < len(match.moves) or not match.moves[request.ply].has_tree:
            raise NotFoundError(f"match {request.match_id} has no search tree at ply "
                                f"{request.ply}")
        if self.cache is None:
            raise NotFoundError("this referee has no cache to read search trees from")
        return load_tree(self.cache, request.match_id, request.ply)

    def DeleteMatch(self, request: referee_pb2.DeleteMatchRequest,
                    context: Any) -> referee_pb2.DeleteMatchResponse:
        principal = current_principal()
        self.store.delete(request.match_id, principal.name, principal.is_admin, self.cache)
        return referee_pb2.DeleteMatchResponse()


def create_service(
    settings: Settings,
) -> tuple[list[Registration], list[str], list[Callable[[], None]]]:
    client = redis.Redis.from_url(settings.redis_url)
    cache = redis.Redis.from_url(settings.cache_url)
    max_matches = int(os.environ.get("ARENA_MAX_MATCHES", "64"))
    loop = RefereeLoop(client, settings.worker_id, DeliveryConfig.from_env(), max_matches)
    loop.start()
    servicer = RefereeServicer(client, cache)
    name = referee_pb2.DESCRIPTOR.services_by_name["Referee"].full_name
    return (
        [lambda s: referee_pb2_grpc.add_RefereeServicer_to_server(servicer, s)],
        [name],
        [loop.stop],
    )
