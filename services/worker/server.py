"""gRPC wiring of an engine worker: the move-job loop in the background, Engine.Analyze."""

from __future__ import annotations

import logging
from typing import Any

import redis
from arena.services.common.config import Config
from arena.services.common.peers import BotVersions, peer_client
from arena.services.common.protocol.tcache import SharedSearchCache
from arena.services.common.runner import ServiceParts
from arena.services.worker.bots import BotRunner, search_info
from arena.services.worker.consumer import WorkerLoop
from arena.services.worker.trees import tree_to_proto

from arena.bots.spec import builtin_config, config_from_struct
from arena.engine.api import Limits, StopFlag
from arena.errors import FailedPreconditionError, InvalidArgumentError
from arena.games import game
from arena.v1 import common_pb2, engine_pb2, engine_pb2_grpc

log = logging.getLogger(__name__)

MAX_ANALYZE_MS = 60_000


class EngineServicer(engine_pb2_grpc.EngineServicer):
    """Direct analysis of a position with a registered bot or an inline configuration."""

    def __init__(self, bots: BotVersions) -> None:
        self.bots = bots

    def _config(self, request: engine_pb2.AnalyzeRequest) -> dict[str, object]:
        which = request.WhichOneof("bot")
        if which == "engine":
            return config_from_struct(request.engine.config)
        if which == "bot_ref":
            bot = self.bots.get(request.bot_ref)
            if bot.spec.WhichOneof("engine") != "builtin":
                raise FailedPreconditionError(
                    f"bot {bot.spec.name!r} is external: analyze runs built-in engines only")
            return builtin_config(bot.spec)
        raise InvalidArgumentError("name a bot (bot_ref) or give an engine configuration")

    def Analyze(self, request: engine_pb2.AnalyzeRequest,
                context: Any) -> engine_pb2.AnalyzeResponse:
        engine = game(request.position.game.kind).engine()
        bot = engine.prepare(self._config(request))
        limits = request.limits
        time_ms = min(limits.time_ms or MAX_ANALYZE_MS, MAX_ANALYZE_MS)
        stop = StopFlag()
        context.add_callback(stop.set)  # a cancelled call stops the search
        result = engine.choose_move(
            bot, request.position.text, list(request.history),
            Limits(depth=limits.depth or None, nodes=limits.nodes or None, time_ms=time_ms),
            stop, request.tree_node_budget, request.seed)
        response = engine_pb2.AnalyzeResponse(
            move=common_pb2.Move(square=result.move), search=search_info(result))
        if result.tree is not None and request.tree_node_budget > 0:
            response.tree.CopyFrom(tree_to_proto(
                request.position, result.tree,
                truncated=len(result.tree) >= request.tree_node_budget))
        return response


def warm_games(config: Config) -> list[str]:
    return [name.strip() for name in config.warm_games.split(",") if name.strip()]


def create_service(config: Config) -> ServiceParts:
    client = redis.Redis.from_url(config.redis_url)
    cache = redis.Redis.from_url(config.cache_url)
    games = warm_games(config)
    if games:
        log.info("warming up the %s engines", ", ".join(games))
        for name in games:  # before taking jobs: a cold compile would cost a bot its time
            game(name).engine().warm_up()
    runner = BotRunner(cache=SharedSearchCache(cache if config.shared_cache else None),
                       grace_ms=config.grace_ms)
    loop = WorkerLoop(client, cache, config.instance, config.delivery, runner).start()
    peers = peer_client(config)
    servicer = EngineServicer(BotVersions(peers))
    name = engine_pb2.DESCRIPTOR.services_by_name["Engine"].full_name
    return (
        [lambda s: engine_pb2_grpc.add_EngineServicer_to_server(servicer, s)],
        [name],
        [loop.stop, peers.close],
    )
