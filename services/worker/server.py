"""gRPC wiring of an engine worker: the move-job loop in the background, Engine.Analyze.

Environment (beyond the common settings):

* ``ARENA_WARM_GAMES``: games whose engines are compiled before the worker takes jobs
  (default ``othello,gomoku``; empty to skip, e.g. for workers that only call external bots).
* ``ARENA_SHARED_CACHE``: ``0`` turns the shared transposition cache off (default on).
* ``ARENA_MAX_DELIVERIES``, ``ARENA_HEARTBEAT_MS``, ``ARENA_MIN_RECLAIM_IDLE_MS``,
  ``ARENA_GRACE_MS``, ``ARENA_RESERVE_HOLD_MS``: see
  ``arena.services.referee.delivery.DeliveryConfig``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

import redis
from arena.services.common.config import Settings
from arena.services.common.server import Registration
from arena.services.referee.delivery import DeliveryConfig
from arena.services.referee.matches import game_name
from arena.services.worker.bots import BotRunner, search_info
from arena.services.worker.consumer import WorkerLoop
from arena.services.worker.tcache import SharedSearchCache
from arena.services.worker.trees import tree_to_proto

from arena.bots.spec import builtin_config, config_from_struct
from arena.engine import dispatch
from arena.engine.api import Limits, StopFlag
from arena.errors import FailedPreconditionError, InvalidArgumentError
from arena.v1 import common_pb2, engine_pb2, engine_pb2_grpc

log = logging.getLogger(__name__)

MAX_ANALYZE_MS = 60_000


class EngineServicer(engine_pb2_grpc.EngineServicer):
    """Direct analysis of a position with a registered bot or an inline configuration."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client

    def _config(self, request: engine_pb2.AnalyzeRequest) -> dict[str, object]:
        which = request.WhichOneof("bot")
        if which == "engine":
            return config_from_struct(request.engine.config)
        if which == "bot_ref":
            from arena.services.registry.store import BotStore

            bot = BotStore(self.client).get(request.bot_ref.name, request.bot_ref.version)
            if bot.spec.WhichOneof("engine") != "builtin":
                raise FailedPreconditionError(
                    f"bot {bot.spec.name!r} is external: analyze runs built-in engines only")
            return builtin_config(bot.spec)
        raise InvalidArgumentError("name a bot (bot_ref) or give an engine configuration")

    def Analyze(self, request: engine_pb2.AnalyzeRequest,
                context: Any) -> engine_pb2.AnalyzeResponse:
        game = game_name(request.position.game.kind)
        config = self._config(request)
        limits = request.limits
        time_ms = min(limits.time_ms or MAX_ANALYZE_MS, MAX_ANALYZE_MS)
        stop = StopFlag()
        context.add_callback(stop.set)  # a cancelled call stops the search
        result = dispatch.choose_move(
            game, request.position.text, list(request.history), config,
            Limits(depth=limits.depth or None, nodes=limits.nodes or None, time_ms=time_ms),
            stop, request.tree_node_budget, request.seed)
        response = engine_pb2.AnalyzeResponse(
            move=common_pb2.Move(square=result.move), search=search_info(result))
        if result.tree is not None and request.tree_node_budget > 0:
            response.tree.CopyFrom(tree_to_proto(
                request.position, result.tree,
                truncated=len(result.tree) >= request.tree_node_budget))
        return response


def warm_games() -> list[str]:
    raw = os.environ.get("ARENA_WARM_GAMES", "othello,gomoku")
    return [game.strip() for game in raw.split(",") if game.strip()]


def create_service(
    settings: Settings,
) -> tuple[list[Registration], list[str], list[Callable[[], None]]]:
    client = redis.Redis.from_url(settings.redis_url)
    cache = redis.Redis.from_url(settings.cache_url)
    games = warm_games()
    if games:
        log.info("warming up the %s engines", ", ".join(games))
        dispatch.warm_up(games)  # before taking jobs: a cold compile would cost a bot its time
    config = DeliveryConfig.from_env()
    shared = os.environ.get("ARENA_SHARED_CACHE", "1") != "0"
    runner = BotRunner(cache=SharedSearchCache(cache if shared else None),
                       grace_ms=config.grace_ms)
    loop = WorkerLoop(client, cache, settings.worker_id, config, runner).start()
    servicer = EngineServicer(client)
    name = engine_pb2.DESCRIPTOR.services_by_name["Engine"].full_name
    return (
        [lambda s: engine_pb2_grpc.add_EngineServicer_to_server(servicer, s)],
        [name],
        [loop.stop],
    )
