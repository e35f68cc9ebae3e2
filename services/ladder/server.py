"""gRPC wiring of the ladder service: validate, call the ladder logic, stream progress."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import redis
from arena.services.common.auth import current_principal
from arena.services.common.config import Config
from arena.services.common.peers import BotVersions, peer_client
from arena.services.common.protocol import keys
from arena.services.common.protocol.ladders import RUNNING, LadderStore
from arena.services.common.quotas import Quotas, usage_user
from arena.services.common.redis_clients import LOOK_TIMEOUT_S, connect
from arena.services.common.runner import ServiceParts
from arena.services.ladder.follower import FollowerConfig, ResultFollower
from arena.services.ladder.ladders import Ladders
from arena.services.ladder.ratings import RatingList

from arena.v1 import ladder_pb2, ladder_pb2_grpc

WATCH_BLOCK_MS = 1000


class LadderServicer(ladder_pb2_grpc.LadderServicer):
    def __init__(self, client: redis.Redis, ladders: Ladders, quotas: Quotas,
                 listing: LadderStore | None = None) -> None:
        """``listing``: the store ListLadders reads (default ``ladders``'s)."""
        self.client = client
        self.ladders = ladders
        self.listing = listing
        self.store = ladders.store
        self.quotas = quotas
        self.rating_list = RatingList(ladders.store)

    def CreateLadder(
        self, request: ladder_pb2.CreateLadderRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.LadderInfo:
        caller = current_principal()
        self.quotas.spend(caller, "creates_per_minute")
        return self.ladders.create(request.config, caller.name, request.request_id,
                                   self.quotas.for_caller(caller))

    def GetStandings(
        self, request: ladder_pb2.GetStandingsRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.Standings:
        return self.ladders.standings(request.ladder_id)

    def GetRatings(
        self, request: ladder_pb2.GetRatingsRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.Ratings:
        return self.rating_list.ratings(
            request.game, request.clock if request.HasField("clock") else None)

    def ListLadders(
        self, request: ladder_pb2.ListLaddersRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.ListLaddersResponse:
        return self.ladders.list(request.page, self.listing, request.running_only)

    def GetUsage(self, request: ladder_pb2.GetLadderUsageRequest,
                 context: grpc.ServicerContext) -> ladder_pb2.LadderUsage:
        caller = current_principal()
        user = usage_user(caller, request.user)
        # the caller's own: the quota CreateLadder holds them to
        quota = self.quotas.for_caller(caller) if user == caller.name else self.quotas.of(user)
        return ladder_pb2.LadderUsage(user=user, running_ladders=self.store.running_of(user),
                                      running_ladders_limit=quota.cap("running_ladders"))

    def CancelLadder(
        self, request: ladder_pb2.CancelLadderRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.LadderInfo:
        caller = current_principal()
        return self.ladders.cancel(request.ladder_id, caller.name, caller.is_admin)

    def WatchLadder(
        self, request: ladder_pb2.WatchLadderRequest, context: grpc.ServicerContext
    ) -> Iterator[ladder_pb2.LadderProgress]:
        """The ladder now, then one message per counted result and one whenever why its
        next game waits (``waiting``) changes, then the final state, each without the
        ladder's match ids (up to 20,000: read once with ``GetStandings``).

        The watch ends on the progress stream's own ``status`` entry, never on the ladder's
        status field: the last count sets that field and appends its ``match_id`` entry in
        one step, so a watcher that stopped on the field could leave that entry unread.
        """
        ladder_id = request.ladder_id
        key = keys.ladder(ladder_id, "progress")
        info, last = self.store.snapshot(ladder_id)
        yield ladder_pb2.LadderProgress(ladder=self.ladders.with_sprt(info))
        if info.status != RUNNING:
            return
        ended = False
        while not ended and context.is_active():
            reply: Any = self.client.xread({key: last}, count=100, block=WATCH_BLOCK_MS)
            if not reply:
                self.store.status(ladder_id)  # NOT_FOUND if the ladder was deleted
            for _stream, entries in reply or []:
                for entry_id, fields in entries:
                    last = entry_id
                    match_id = fields.get(b"match_id")
                    if match_id is not None:
                        yield ladder_pb2.LadderProgress(
                            ladder=self.ladders.info(ladder_id, with_games=False),
                            finished_match_id=match_id.decode())
                    elif b"waiting" in fields:  # why its next game waits changed
                        yield ladder_pb2.LadderProgress(
                            ladder=self.ladders.info(ladder_id, with_games=False))
                    elif b"status" in fields:  # the ladder's last entry: finished or cancelled
                        ended = True
                        break
                if ended:
                    break
        if ended:
            yield ladder_pb2.LadderProgress(ladder=self.ladders.info(ladder_id, with_games=False))


def create_service(config: Config, follower: FollowerConfig | None = None) -> ServiceParts:
    client = connect(config.redis_url)
    peers = peer_client(config)
    ladders = Ladders(LadderStore(client), peers, BotVersions(peers), config.ladder_in_flight)
    follower = follower or FollowerConfig(reconcile_every_s=config.ladder_reconcile_s)
    follower.consumer = follower.consumer or config.instance
    results = ResultFollower(client, ladders, follower).start()
    # `arena status` lists the running ladders: that list waits less for Redis, so that a
    # stalled Redis is named there, not a silent ladder service.
    looks = connect(config.redis_url, LOOK_TIMEOUT_S)
    servicer = LadderServicer(client, ladders, Quotas.from_config(config, client),
                              LadderStore(looks))
    name = ladder_pb2.DESCRIPTOR.services_by_name["Ladder"].full_name

    def stop() -> None:
        results.stop()
        peers.close()
        client.close()
        looks.close()

    return [lambda s: ladder_pb2_grpc.add_LadderServicer_to_server(servicer, s)], [name], [stop]
