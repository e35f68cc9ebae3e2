"""gRPC wiring of the referee: the Referee service, and the match loop in the background."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import redis
from arena.services.common.auth import Principal, current_principal
from arena.services.common.config import Config
from arena.services.common.metrics import MATCHES_RUNNING
from arena.services.common.peers import BotVersions, peer_client
from arena.services.common.protocol.ledger import Ledger
from arena.services.common.protocol.matches import MatchStore
from arena.services.common.protocol.trees import load_tree
from arena.services.common.quotas import Quotas, usage_user
from arena.services.common.redis_clients import LOOK_TIMEOUT_S, connect
from arena.services.common.runner import ServiceParts
from arena.services.referee import matches
from arena.services.referee.loop import RefereeLoop
from arena.services.referee.status import (
    QueueCollector,
    StatusServicer,
)
from arena.services.referee.watch import watch_match
from prometheus_client import REGISTRY

from arena.errors import NotFoundError, PermissionDeniedError
from arena.records import export
from arena.text import shown
from arena.v1 import (
    common_pb2,
    match_pb2,
    referee_pb2,
    referee_pb2_grpc,
    status_pb2,
    status_pb2_grpc,
)


class RefereeServicer(referee_pb2_grpc.RefereeServicer):
    """Validate, call the match store or runner, let the interceptor map errors."""

    def __init__(self, client: redis.Redis, cache: redis.Redis | None, bots: BotVersions,
                 quotas: Quotas | None = None) -> None:
        self.store, self.ledger = MatchStore(client), Ledger(client)
        self.cache, self.bots = cache, bots
        self.quotas = quotas or Quotas(client=client, service="referee")

    def CreateMatch(self, request: referee_pb2.CreateMatchRequest,
                    context: Any) -> match_pb2.Match:
        caller = current_principal()
        self.quotas.spend(caller, "creates_per_minute")
        if request.config.ladder_id and not caller.is_admin:
            # the ladder service's games: a user's match so marked was listed as one of
            # that ladder's games (its page, `arena match list --ladder`)
            raise PermissionDeniedError(f"{caller.name} may not create a match of ladder "
                                        f"{shown(request.config.ladder_id)}: the ladder "
                                        "service creates its games")
        owner = _owner(caller, request.owner)
        quota = self.quotas.for_caller(caller) if owner == caller.name else \
            self.quotas.of(owner)
        return matches.create_match(self.store, self.bots, request.config, owner,
                                    request.request_id, quota)

    def GetMatch(self, request: referee_pb2.GetMatchRequest, context: Any) -> match_pb2.Match:
        return self.store.get(request.match_id)

    def ListMatches(self, request: referee_pb2.ListMatchesRequest,
                    context: Any) -> referee_pb2.ListMatchesResponse:
        return matches.list_matches(self.store, request)

    def WatchMatch(self, request: referee_pb2.WatchMatchRequest,
                   context: Any) -> Iterator[match_pb2.MatchEvent]:
        yield from watch_match(self.store.client, request.match_id, context.is_active)

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
        matches.delete_match(self.store, self.bots, request.match_id, current_principal(),
                             self.cache)
        return referee_pb2.DeleteMatchResponse()

    def PruneMatches(self, request: referee_pb2.PruneMatchesRequest,
                     context: Any) -> referee_pb2.PruneMatchesResponse:
        return matches.prune_matches(self.store, request, current_principal(), self.cache)

    def CancelMatch(self, request: referee_pb2.CancelMatchRequest,
                    context: Any) -> match_pb2.Match:
        caller = current_principal()
        if request.as_user and request.as_user != caller.name:
            if not caller.is_admin:
                raise PermissionDeniedError(
                    f"{caller.name} may not cancel matches as {request.as_user}")
            caller = Principal(request.as_user, "user")
        return matches.cancel_match(self.store, self.ledger, self.bots, request.match_id,
                                    caller, request.reason)

    def ImportMatch(self, request: referee_pb2.ImportMatchRequest,
                    context: Any) -> match_pb2.Match:
        caller = current_principal()
        self.quotas.spend(caller, "creates_per_minute")  # an import is a create too
        return matches.import_match(self.store, request, caller.name,
                                    self.quotas.for_caller(caller).cap("match_bytes"))


    def GetUsage(self, request: referee_pb2.GetUsageRequest, context: Any) -> referee_pb2.Usage:
        user = usage_user(current_principal(), request.user)
        return matches.usage(self.store, user, self.quotas.of(user))


def _owner(caller: Principal, on_behalf_of: str) -> str:
    """Who a new match belongs to: the caller, or the user a service creates it for."""
    if not on_behalf_of or on_behalf_of == caller.name:
        return caller.name
    if not caller.is_admin:
        raise PermissionDeniedError(f"{caller.name} may not create matches for {on_behalf_of}")
    return on_behalf_of


def create_service(config: Config) -> ServiceParts:
    client = connect(config.redis_url)
    cache = connect(config.cache_url)
    peers = peer_client(config)
    bots = BotVersions(peers)
    quotas = Quotas.from_config(config, client)
    loop = RefereeLoop(client, bots, config.instance, config.delivery, config.max_matches,
                       quotas.of)
    loop.start()
    servicer = RefereeServicer(client, cache, bots, quotas)
    # The status is what an operator asks for when something is wrong: it waits less for
    # Redis than the loops do, so that a stalled Redis is named within seconds.
    looks = connect(config.redis_url, LOOK_TIMEOUT_S)
    status = StatusServicer(looks, loop.referee_id, servicer.store, config.registry,
                            peers.addresses.credentials())
    MATCHES_RUNNING.set_function(lambda: len(loop.active_matches))
    queue_figures = QueueCollector(client, cache, loop.referee_id)
    REGISTRY.register(queue_figures)
    names = [referee_pb2.DESCRIPTOR.services_by_name["Referee"].full_name,
             status_pb2.DESCRIPTOR.services_by_name["Status"].full_name]
    return (
        [lambda s: referee_pb2_grpc.add_RefereeServicer_to_server(servicer, s),
         lambda s: status_pb2_grpc.add_StatusServicer_to_server(status, s)],
        names,
        [loop.stop, peers.close, looks.close, lambda: REGISTRY.unregister(queue_figures)],
    )
