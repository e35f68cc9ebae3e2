"""gRPC wiring of an engine worker, in one of two pools that never share capacity:

* ``match`` (the default): the move-job loop in the background; its Engine service refuses
  Analyze (interactive searches must never delay a match's moves).
* ``analysis``: no move jobs; Engine.Analyze with ``analysis_slots`` searches at once,
  further calls waiting for a slot in the order they came, at most ``analysis_wait_ms``
  and never past the point where the caller's deadline leaves too little for its search,
  before RESOURCE_EXHAUSTED. A user has at most ``analyses_at_once`` calls here, running
  or waiting (a quota): one user asking again and again queues behind the others. A bot
  that is not built in is asked for its move here too, through the same ``BotRunner`` as a
  match's move: a protocol engine when the analyst has it in its catalog
  (``ARENA_ENGINES_CATALOG``, as the match workers), an external bot's service when the
  egress policy lets the analyst reach it (``ARENA_EXTERNAL_ALLOW``). Either is told the
  time limit on the wall clock and answers with what it reports (no tree); its move is
  judged as the referee judges a match's, so an illegal one is an error, never a hint.
"""

from __future__ import annotations

import dataclasses
import gc
import logging
import time
from collections.abc import Callable
from typing import Any

from arena.services.common import metrics
from arena.services.common.auth import current_principal
from arena.services.common.config import Config
from arena.services.common.egress import EgressPolicy
from arena.services.common.peers import BotVersions, other_game, peer_client
from arena.services.common.protocol.streams import consumer_name
from arena.services.common.protocol.tcache import SharedSearchCache, cache_client
from arena.services.common.quotas import Quotas
from arena.services.common.redis_clients import connect
from arena.services.common.runner import ServiceParts
from arena.services.common.shares import FairSlots, Shares
from arena.services.worker.bots import BotRunner, search_info
from arena.services.worker.consumer import WorkerLoop
from arena.services.worker.engines.host import EngineHost
from arena.services.worker.telemetry import Presence
from arena.services.worker.trees import tree_to_proto

from arena.bots.spec import builtin_config, config_from_struct
from arena.engine.adapters import GameEngine, PreparedBot
from arena.engine.api import MAX_NODES, Limits, StopFlag
from arena.errors import (
    ArenaError,
    FailedPreconditionError,
    FieldViolation,
    InvalidArgumentError,
    ResourceExhaustedError,
)
from arena.games import Position, game, move_fault
from arena.v1 import bots_pb2, common_pb2, engine_pb2, engine_pb2_grpc

log = logging.getLogger(__name__)

MAX_ANALYZE_MS = 60_000
DEADLINE_MARGIN_S = 0.5  # of a caller's deadline, kept for the answer's way back
MAX_ANALYZE_DEPTH = 64
MAX_ANALYZE_TREE_NODES = 200_000
POOLS = ("match", "analysis")


class EngineServicer(engine_pb2_grpc.EngineServicer):
    """Direct analysis of a position with a registered bot or an inline configuration."""

    def __init__(self, bots: BotVersions, pool: str, slots: int, wait_ms: int,
                 quotas: Quotas, runner: BotRunner) -> None:
        self.bots = bots
        # Asks the bots that are not built in: an analyst's protocol engines (its catalog,
        # if any) and external bots' services (through its egress policy).
        self.runner = runner
        self.quotas = quotas
        self.pool = pool
        self.slots = FairSlots(max(1, slots))
        self.callers = Shares()  # each user's calls, running or waiting
        self.wait_s = wait_ms / 1000

    def _bot(self, request: engine_pb2.AnalyzeRequest
             ) -> dict[str, object] | bots_pb2.BotVersion:
        """A built-in engine's configuration, or the bot version of a bot that is not built
        in (a protocol engine or an external service)."""
        which = request.WhichOneof("bot")
        if which == "engine":
            return config_from_struct(request.engine.config)
        if which == "bot_ref":
            bot = self.bots.get(request.bot_ref)
            wrong = other_game(bot, request.position.game.kind)
            if wrong:
                raise InvalidArgumentError.for_fields([FieldViolation("bot_ref", wrong)])
            if bot.spec.WhichOneof("engine") != "builtin":
                return bot
            return builtin_config(bot.spec)
        raise InvalidArgumentError("name a bot (bot_ref) or give an engine configuration")

    def _in_slot(self, request: engine_pb2.AnalyzeRequest, context: Any,
                 run: Callable[[StopFlag], engine_pb2.AnalyzeResponse]
                 ) -> engine_pb2.AnalyzeResponse:
        """``run``, once a slot is free (RESOURCE_EXHAUSTED if none frees in time), with a
        stop flag that the call's cancellation raises."""
        wait_s = self.wait_s
        remaining = context.time_remaining()
        if remaining is not None:  # a slot found later would leave the search no time
            asked_s = request.limits.time_ms / 1000  # 0: a depth or node limit, soon done
            wait_s = min(wait_s, remaining - asked_s - DEADLINE_MARGIN_S)
        if self.slots.acquire(max(0.0, wait_s)) is not None:
            raise ResourceExhaustedError(
                f"the analysis pool is busy ({self.slots.capacity} searches at once per "
                f"worker, every one taken for the {max(0.0, wait_s):.1f} s this call could "
                "wait); retry, or allow a longer wait with a longer timeout", "analysis_slots")
        began = time.perf_counter()
        try:
            stop = StopFlag()
            context.add_callback(stop.set)  # a cancelled call stops the search
            return run(stop)
        finally:
            metrics.ANALYSIS_BUSY.inc(time.perf_counter() - began)
            self.slots.release()

    def _search(self, engine: GameEngine, bot: PreparedBot, request: engine_pb2.AnalyzeRequest,
                limits: Limits, stop: StopFlag) -> engine_pb2.AnalyzeResponse:
        engine.warm_thread()  # this server thread's first search: not in its time
        result = engine.choose_move(bot, request.position.text, list(request.history),
                                    limits, stop, request.tree_node_budget, request.seed)
        response = engine_pb2.AnalyzeResponse(
            move=common_pb2.Move(square=result.move), search=search_info(result))
        if result.tree is not None and request.tree_node_budget > 0:
            response.tree.CopyFrom(tree_to_proto(request.position, result.tree,
                                                 truncated=result.tree_truncated))
        return response

    def _checked_bot(self, bot: bots_pb2.BotVersion, request: engine_pb2.AnalyzeRequest
                     ) -> Position:
        """The request's position, unless this analyst cannot ask ``bot`` (not built in)
        what ``request`` asks (raises): a protocol engine must be in its catalog, either
        kind is given a time, not a depth or node limit, has no tree to store, and is
        never asked about a finished game."""
        if bot.spec.WhichOneof("engine") == "protocol":
            wanted = bot.spec.protocol
            try:
                if self.runner.engines is None:
                    raise ArenaError("this analysis worker has no engine catalog")
                self.runner.engines.spec_for(wanted)
            except ArenaError as exc:
                raise FailedPreconditionError(
                    f"bot {bot.spec.name!r} runs protocol engine {wanted.engine!r} "
                    f"({wanted.checksum[:12]}), which no analysis worker here offers ({exc}; "
                    "analysts read the catalog of ARENA_ENGINES_CATALOG, as `arena up "
                    "--engines` sets)") from None
        what = "a protocol engine" if bot.spec.HasField("protocol") else "an external bot"
        bad = [FieldViolation(f"limits.{name}", f"{what} is given a time, not a {name} "
                              "limit: set limits.time_ms")
               for name in ("depth", "nodes") if getattr(request.limits, name)]
        if request.tree_node_budget:
            bad.append(FieldViolation("tree_node_budget",
                                      f"{what}'s search has no tree to store"))
        if bad:
            raise InvalidArgumentError.for_fields(bad)
        position = game(request.position.game.kind).position_from_text(request.position.text)
        if position.is_game_over():
            raise InvalidArgumentError(
                f"no move to play: the game is over in {request.position.text!r}")
        return position

    def _bot_move(self, bot: bots_pb2.BotVersion, position: Position,
                  request: engine_pb2.AnalyzeRequest, limits: Limits, stop: StopFlag
                  ) -> engine_pb2.AnalyzeResponse:
        """The move of a bot that is not built in and what it reported, timed on the wall
        clock, asked as a match's worker asks it (a protocol engine's start and set-up come
        before the time), then judged: an illegal move is the bot's failure."""
        job = engine_pb2.MoveJob(game=request.position.game.kind, bot=bot,
                                 position=request.position, history=request.history,
                                 ply=len(request.history), time_budget_ms=limits.time_ms or 0)
        answer = self.runner.ready(job) or self.runner.run(job, stop)
        result = answer.result
        who = (f"engine {bot.spec.protocol.engine!r}" if bot.spec.HasField("protocol")
               else f"bot {bot.spec.name!r}")
        detail = result.error_detail  # printable: the bot's words (results.failure_detail)
        if result.error == engine_pb2.MOVE_ERROR_INVALID_JOB:
            raise InvalidArgumentError(f"{who} cannot be asked about this position: {detail}")
        if result.error != engine_pb2.MOVE_ERROR_UNSPECIFIED:
            reason = engine_pb2.MoveError.Name(result.error).removeprefix("MOVE_ERROR_")
            raise FailedPreconditionError(
                f"{who} gave no move ({reason.lower().replace('_', ' ')}): {detail}")
        fault = move_fault(position, result.move.square if result.HasField("move") else None)
        if fault is not None:
            raise FailedPreconditionError(f"{who} gave no playable move: {fault.reason}")
        return engine_pb2.AnalyzeResponse(move=result.move, search=result.search)

    def Analyze(self, request: engine_pb2.AnalyzeRequest,
                context: Any) -> engine_pb2.AnalyzeResponse:
        if self.pool != "analysis":
            raise FailedPreconditionError(
                "this worker plays matches; Analyze runs on the analysis pool (ARENA_ENGINE, "
                "`arena up` starts one)")
        limits = _checked_limits(request)
        _check_history(request)
        caller = current_principal()
        quota = self.quotas.for_caller(caller)
        # Never unbounded: no time limit asked means the most the caller may use.
        limits = dataclasses.replace(
            limits, time_ms=limits.time_ms or min(MAX_ANALYZE_MS, quota.analyze_time_ms))
        quota.check("analyze_time_ms", limits.time_ms or 0)
        quota.check("tree_nodes", request.tree_node_budget)
        share = quota.analyses_at_once
        if self.callers.take(caller.name, share) is not None:  # before any work or spending
            raise ResourceExhaustedError(
                f"quota analyses_at_once is {share}: wait for your analysis to finish",
                "analyses_at_once")
        try:
            self.quotas.spend(caller, "analyses_per_minute")
            chosen = self._bot(request)
            if isinstance(chosen, bots_pb2.BotVersion):
                position = self._checked_bot(chosen, request)
                return self._in_slot(request, context, lambda stop: self._bot_move(
                    chosen, position, request, limits, stop))
            engine = game(request.position.game.kind).engine()
            bot = engine.prepare(chosen)
            return self._in_slot(request, context, lambda stop: self._search(
                engine, bot, request, limits, stop))
        finally:
            self.callers.give_back(caller.name)


def _checked_limits(request: engine_pb2.AnalyzeRequest) -> Limits:
    """The search limits, bounded: no unbounded search or tree on a shared worker."""
    limits, bad = request.limits, []
    if not 0 <= limits.depth <= MAX_ANALYZE_DEPTH:
        bad.append(FieldViolation("limits.depth", f"must be in 0..{MAX_ANALYZE_DEPTH}"))
    if not 0 <= limits.nodes <= MAX_NODES:
        bad.append(FieldViolation("limits.nodes", f"must be in 0..{MAX_NODES}"))
    if not 0 <= limits.time_ms <= MAX_ANALYZE_MS:
        bad.append(FieldViolation("limits.time_ms", f"must be in 0..{MAX_ANALYZE_MS}"))
    if not 0 <= request.tree_node_budget <= MAX_ANALYZE_TREE_NODES:
        bad.append(FieldViolation("tree_node_budget",
                                  f"must be in 0..{MAX_ANALYZE_TREE_NODES}"))
    if bad:
        raise InvalidArgumentError.for_fields(bad)
    return Limits(depth=limits.depth or None, nodes=limits.nodes or None,
                  time_ms=limits.time_ms or None)


def _check_history(request: engine_pb2.AnalyzeRequest) -> None:
    """The moves said to have ended in the position could have: a protocol engine may
    search from them, and a built-in Othello bot, which reads none, would otherwise take
    any numbers without a word."""
    if not request.history:
        return
    position = game(request.position.game.kind).position_from_text(request.position.text)
    try:
        position.check_history(list(request.history))
    except InvalidArgumentError as exc:
        raise InvalidArgumentError.for_fields([FieldViolation("history", str(exc))]) from None


def warm_up(config: Config) -> list[str]:
    """Compile (or load from numba's cache) the engines of ``warm_games``; their names."""
    games = [name.strip() for name in config.warm_games.split(",") if name.strip()]
    if games:
        log.info("warming up the %s engines", ", ".join(games))
    for name in games:  # before taking jobs: a cold compile would cost a bot its time
        game(name).engine().warm_up()
    return games


def freeze_heap() -> None:
    """Leave the objects loaded so far to no collection: Python's cyclic collector runs in
    whichever thread allocates when it falls due, a bot's search thread too, and a full
    collection scans every object the process has (about 150,000 once the engines and
    services are loaded, 70 ms of CPU time that a move timed on CPU would be charged).
    Frozen (``gc.freeze``), they are never scanned again; a collection scans what came
    after."""
    gc.collect()  # the start-up's garbage is not frozen with it
    gc.freeze()


def create_service(config: Config) -> ServiceParts:
    if config.worker_pool not in POOLS:
        raise ValueError(f"ARENA_WORKER_POOL must be one of {', '.join(POOLS)}, "
                         f"got {config.worker_pool!r}")
    games = warm_up(config)
    freeze_heap()  # before any job: the engines and modules loaded, nothing to collect
    peers = peer_client(config)
    quotas = Quotas.from_config(config, connect(config.redis_url))
    engines = (EngineHost.load(config.engines_catalog, config.engine_processes,
                               config.worker_pool) if config.engines_catalog else None)
    match_pool = config.worker_pool == "match"
    probes = cache_client(config.cache_url) if match_pool and config.shared_cache else None
    runner = BotRunner(cache=SharedSearchCache(probes),  # analyses never touch the cache
                       warm_games=tuple(games),
                       grace_ms=config.grace_ms,
                       egress=EgressPolicy.parse(config.external_allow), engines=engines,
                       cpu_wall_factor=config.delivery.cpu_wall_factor)
    servicer = EngineServicer(BotVersions(peers), config.worker_pool, config.analysis_slots,
                              config.analysis_wait_ms, quotas, runner)
    on_stop = [peers.close]
    if match_pool:
        client = connect(config.redis_url)
        cache = connect(config.cache_url)
        loop = WorkerLoop(client, cache, config.instance, config.delivery, runner,
                          config.io_slots, engines.streams() if engines else (),
                          engines.offered_streams if engines else None).start()
        presence = Presence(client, loop.worker_id, lambda: loop.current_job,
                            lambda: loop.jobs_done, games,
                            offers=engines.offers if engines else None).start()
        on_stop[:0] = [loop.stop, presence.stop]
    else:
        client = connect(config.redis_url)
        presence = Presence(client, consumer_name("analyst", config.instance),
                            lambda: None, lambda: 0, games, pool="analysis",
                            offers=engines.offers if engines else None).start()
        on_stop.insert(0, presence.stop)
        on_stop.append(runner.close)  # a match worker's loop closes its own
    name = engine_pb2.DESCRIPTOR.services_by_name["Engine"].full_name
    return (
        [lambda s: engine_pb2_grpc.add_EngineServicer_to_server(servicer, s)],
        [name],
        on_stop,
    )
