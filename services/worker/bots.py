"""Running the bot of a move job: a built-in engine search, a move from a protocol engine
the worker runs (``engines.host``), or a call to an external bot.

Either way the answer is a ``MoveResult``; failures become a ``MoveError`` the referee turns
into a forfeit. The worker does not judge legality (the referee does, with the rules
library); it only reports what the bot said, when it said it, or why it said nothing. What
an external bot says is bounded on the way in (``EXTERNAL_REPLY_BYTES``, ``kept_report``): the
referee stores it with the move and sends it to every viewer.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import grpc
from arena.services.common.egress import EgressPolicy, EgressRefused, dial_target, split_address
from arena.services.common.protocol.tcache import CacheKey, SharedSearchCache
from arena.services.worker.engines.host import EngineHost
from arena.services.worker.engines.process import queued_ns
from arena.services.worker.engines.results import error_result, kept_report

from arena.bots.spec import builtin_config
from arena.bots.validation import canonical_address
from arena.engine.adapters import PreparedBot
from arena.engine.api import Limits, SearchResult, StopFlag, TreeNode, clock_share_ms
from arena.errors import InvalidArgumentError
from arena.games import Color, GameError, game
from arena.v1 import bot_service_pb2, bot_service_pb2_grpc, common_pb2, engine_pb2

# How long past the bot's limit the worker waits for an external bot before giving up.
EXTERNAL_SLACK_MS = 50
# The most an external bot's answer may hold: a move and what it reports, which the referee
# stores with the move and every viewer is sent. A few hundred bytes in practice; larger is
# the bot's fault (MALFORMED_ANSWER), not the arena's storage to fill.
EXTERNAL_REPLY_BYTES = 64 * 1024
log = logging.getLogger(__name__)


# Prepared bots kept per worker; a ladder uses a handful, so this bound is never reached
# in practice and only guards against unbounded growth.
_PREPARED_MAX = 256


@dataclass
class _Channel:
    channel: grpc.Channel
    calls: int = 0  # calls on it now: never closed under them


@dataclass
class BotAnswer:
    result: engine_pb2.MoveResult
    tree: list[TreeNode] | None = None
    # A completed search the worker stores in the shared cache after answering.
    to_cache: tuple[CacheKey, SearchResult] | None = None
    probed: bool = False  # the shared cache was asked first (hit or miss)
    tree_truncated: bool = False  # the tree filled its node budget (SearchResult's)


def _error(code: engine_pb2.MoveError.ValueType, detail: str) -> BotAnswer:
    return BotAnswer(error_result(code, detail))


def builtin_time_ms(job: engine_pb2.MoveJob) -> int | None:
    """A built-in bot's search time: the move's limit, and with a game clock no more than
    its share of what is left (``clock_share_ms``). The bots do not read the clock
    themselves; given all of it, they spent most of a game's budget on its first moves."""
    limit = job.time_budget_ms or None
    if job.game_time_left_ms > 0:
        share = clock_share_ms(job.game_time_left_ms)
        limit = share if limit is None else min(limit, share)
    return limit


def search_info(result: SearchResult, cache_hit: bool = False) -> common_pb2.SearchInfo:
    return common_pb2.SearchInfo(
        score=result.score, depth=result.depth, nodes=result.nodes, nps=result.nps,
        pv=result.pv, time_ms=result.elapsed_ms, exact=result.exact, cache_hit=cache_hit,
        tied_moves=result.ties)


@dataclass
class BotRunner:
    """Runs jobs' bots; one per worker process (holds the external bots' channels)."""

    cache: SharedSearchCache = field(default_factory=lambda: SharedSearchCache(None))
    grace_ms: int = 200
    egress: EgressPolicy = field(default_factory=EgressPolicy)
    engines: EngineHost | None = None  # the protocol engines this worker offers
    cpu_wall_factor: float = 4.0  # a CPU-timed protocol move is waited for this long
    warm_games: tuple[str, ...] = ()  # games whose engines the searching thread readies
    idle_channels: int = 32  # external bots' connections kept open while no call uses them
    _channels: dict[tuple[str, str], _Channel] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _prepared: dict[bytes, PreparedBot] = field(default_factory=dict)

    def warm_thread(self) -> None:
        """Ready the calling thread's search tables for the ``warm_games``: the thread that
        will run the jobs calls this before it takes one (its first search would fault
        them in within its bot's time: depth 1 of a 100 ms move)."""
        for name in self.warm_games:
            game(name).engine().warm_thread()

    @staticmethod
    def is_external(job: engine_pb2.MoveJob) -> bool:
        """The job's bot is a service somewhere: its answer is waited for, not computed."""
        return job.bot.spec.WhichOneof("engine") == "external"

    def run(self, job: engine_pb2.MoveJob, stop: StopFlag) -> BotAnswer:
        engine = job.bot.spec.WhichOneof("engine")
        if engine == "external":
            return self.run_external(job, stop)
        if engine == "builtin":
            started, queued = time.thread_time_ns(), queued_ns()
            answer = self.run_builtin(job, stop)
            if job.cpu_clock:
                # All on this thread: the probe, then the search (its tree's reading aside,
                # charged on neither clock).
                used_ns = (time.thread_time_ns() - started
                           - answer.result.recording_ms * 1_000_000)
                answer.result.cpu_ms = max(0, used_ns) // 1_000_000
                now = queued_ns()
                if queued is not None and now is not None:
                    answer.result.queued_ms = (now - queued) // 1_000_000
            return answer
        if engine == "protocol":
            return self.run_protocol(job, stop)
        return _error(engine_pb2.MOVE_ERROR_INVALID_JOB, "the bot has no engine")

    # -- built-in engines ------------------------------------------------------------------

    def prepare(self, job: engine_pb2.MoveJob) -> PreparedBot:
        """The job's bot, decoded, validated and hashed once per bot version (cached by
        the exact spec bytes): that costs far more than a shallow search (~1 ms for a
        KReversi spec with its tables).

        Raises ``InvalidArgumentError`` or ``GameError`` for a spec that cannot run.
        """
        identity = job.bot.spec.SerializeToString(deterministic=True) + bytes(
            [job.game & 0xFF])
        found = self._prepared.get(identity)
        if found is not None:
            return found
        prepared = game(job.game).engine().prepare(builtin_config(job.bot.spec))
        with self._lock:
            if len(self._prepared) >= _PREPARED_MAX:
                self._prepared.clear()
            self._prepared[identity] = prepared
        return prepared

    def run_builtin(self, job: engine_pb2.MoveJob, stop: StopFlag) -> BotAnswer:
        try:
            bot = self.prepare(job)
            key = self._cache_key(job, bot)
        except (InvalidArgumentError, GameError, ValueError) as exc:
            return _error(engine_pb2.MOVE_ERROR_INVALID_JOB, str(exc))
        limit = builtin_time_ms(job)
        engine = game(bot.game).engine()
        if key is None:
            self.flush()  # no probe to carry the queued stores
        else:
            cached = self.cache.probe(key, limit)
            if cached is not None:
                cached = engine.redraw(cached, job.seed)
                move = common_pb2.Move(square=cached.move)
                info = search_info(cached, cache_hit=True)
                return BotAnswer(engine_pb2.MoveResult(move=move, search=info), probed=True)
        try:
            result = engine.choose_move(bot, job.position.text, list(job.history),
                                        Limits(time_ms=limit,
                                               clock="cpu" if job.cpu_clock else "wall"),
                                        stop, job.tree_node_budget,
                                        job.seed)
        except InvalidArgumentError as exc:
            return _error(engine_pb2.MOVE_ERROR_INVALID_JOB, str(exc))
        except Exception as exc:  # an engine bug must cost this bot the game, not the worker
            return _error(engine_pb2.MOVE_ERROR_BOT_CRASHED, f"{type(exc).__name__}: {exc}")
        # Stored only if no limit cut it short (a shallower depth, a solve given up): such
        # a result depends on the machine's load, not on the request. Nor is a move the
        # seed drew other than among tied root moves (SharpMoku's random opening): a
        # later job with another seed could not draw it again.
        seeded = bot.seed_sensitive and engine.seed_phase(job.position.text)
        reusable = not result.cut_short and not stop.is_set() and (result.ties or not seeded)
        answer = engine_pb2.MoveResult(move=common_pb2.Move(square=result.move),
                                       search=search_info(result),
                                       recording_ms=round(result.capture_ms))
        return BotAnswer(answer, result.tree,
                         (key, result) if reusable and key is not None else None,
                         probed=key is not None, tree_truncated=result.tree_truncated)

    def store(self, answer: BotAnswer) -> None:
        """Queue a completed search for the shared cache (called once the move is answered;
        sent with the next probe, or by :meth:`flush`)."""
        if answer.to_cache is not None:
            self.cache.defer(*answer.to_cache)

    def flush(self) -> None:
        """Send queued cache stores (before the worker waits for work)."""
        self.cache.flush()

    def _cache_key(self, job: engine_pb2.MoveJob, bot: PreparedBot) -> CacheKey | None:
        if not self.cache.enabled or job.tree_node_budget > 0:
            return None  # a tree is only captured by running the search
        return CacheKey(bot.game, bot.evaluator_hash, job.position.text)

    # -- protocol engines ------------------------------------------------------------------

    def ready(self, job: engine_pb2.MoveJob) -> BotAnswer | None:
        """What must happen before the bot's clock starts: a protocol engine's process is
        started if none is waiting warm, and set up for the job's board. The failure to
        answer with, if that fails."""
        if job.bot.spec.WhichOneof("engine") != "protocol" or self.engines is None:
            return None
        failed = self.engines.ready(job)
        return None if failed is None else BotAnswer(failed)

    def run_protocol(self, job: engine_pb2.MoveJob, stop: StopFlag) -> BotAnswer:
        """The move of a protocol engine, on this thread (an engine process thinks on a core
        like a built-in search). ``stop`` kills the engine mid-move; a new process serves
        the next one."""
        self.flush()  # no probe to carry the queued stores
        if self.engines is None:
            return _error(engine_pb2.MOVE_ERROR_INVALID_JOB,
                          "this worker offers no protocol engines")
        return BotAnswer(self.engines.play(job, stop, self.cpu_wall_factor))

    # -- external bots ---------------------------------------------------------------------

    @contextmanager
    def _calling(self, address: str) -> Iterator[bot_service_pb2_grpc.BotServiceStub]:
        """A stub dialling the address the egress policy checked, not whatever the name
        resolves to when gRPC next looks (raises ``EgressRefused``), for the body's call.
        Connections are kept per address and dialled target, the most recently used
        first; past ``idle_channels`` the oldest that no call uses are closed (one per
        bot a user registered was kept open for good: 150 bots, 150 connections)."""
        address = canonical_address(address)
        host, port = split_address(address)
        target = dial_target(self.egress.resolve(host, port)[0], port)
        with self._lock:
            held = self._channels.pop((address, target), None)
            if held is None:
                held = _Channel(grpc.insecure_channel(
                    target, options=[("grpc.default_authority", address),
                                     ("grpc.max_receive_message_length",
                                      EXTERNAL_REPLY_BYTES)]))
            held.calls += 1
            self._channels[(address, target)] = held  # the most recent, last
            idle = [key for key, kept in self._channels.items() if not kept.calls]
            closing = [self._channels.pop(key).channel
                       for key in idle[:max(0, len(self._channels) - self.idle_channels)]]
        for channel in closing:
            channel.close()
        try:
            yield bot_service_pb2_grpc.BotServiceStub(held.channel)
        finally:
            with self._lock:
                held.calls -= 1

    @property
    def channels_open(self) -> int:
        """External bots' connections kept (each a socket while connected)."""
        with self._lock:
            return len(self._channels)

    def run_external(self, job: engine_pb2.MoveJob, stop: StopFlag) -> BotAnswer:
        """The bot's answer to a call made with the job's time; ``stop`` cancels the call
        (a match cancelled, an analysis its caller gave up), as it stops a search."""
        self.flush()  # no probe to carry the queued stores
        external = job.bot.spec.external
        limit = job.time_budget_ms
        if external.move_deadline_ms:
            limit = min(limit, external.move_deadline_ms)
        try:
            position = game(job.game).position_from_text(job.position.text)
        except (GameError, ValueError) as exc:
            return _error(engine_pb2.MOVE_ERROR_INVALID_JOB, str(exc))
        black = position.turn is Color.BLACK
        request = bot_service_pb2.GetMoveRequest(
            match_id=job.match_id, ply=job.ply, position=job.position,
            color=common_pb2.COLOR_BLACK if black else common_pb2.COLOR_WHITE,
            history=job.history, move_time_ms=limit, time_left_ms=job.game_time_left_ms)
        timeout_s = (limit + self.grace_ms + EXTERNAL_SLACK_MS) / 1000
        started = time.monotonic()
        try:
            with self._calling(external.address) as stub:
                call = stub.GetMove.future(request, timeout=timeout_s)
                stop.add_callback(call.cancel)
                reply = call.result()
        except grpc.FutureCancelledError:
            return _error(engine_pb2.MOVE_ERROR_TIMEOUT, "stopped: the move is no longer wanted")
        except (grpc.RpcError, EgressRefused, ValueError) as exc:
            return _external_failure(exc, job, limit)
        if not reply.HasField("move"):
            return _error(engine_pb2.MOVE_ERROR_MALFORMED_ANSWER, "the bot answered no move")
        info = kept_report(reply.search, position)
        info.time_ms = (time.monotonic() - started) * 1000
        return BotAnswer(engine_pb2.MoveResult(move=common_pb2.Move(square=reply.move.square),
                                               search=info))

    def close(self) -> None:
        with self._lock:
            channels, self._channels = list(self._channels.values()), {}
        for held in channels:
            held.channel.close()
        if self.engines is not None:
            self.engines.close()


def _external_failure(exc: Exception, job: engine_pb2.MoveJob, limit_ms: int) -> BotAnswer:
    """Why an external bot's move failed, told to its owner in the fewest words (the arena
    must not tell anyone what listens where); the whole reason goes to the operator's log."""
    code = exc.code() if isinstance(exc, grpc.Call) else grpc.StatusCode.UNAVAILABLE
    details = (exc.details() if isinstance(exc, grpc.Call)
               else exc.detail if isinstance(exc, EgressRefused) else str(exc)) or ""
    log.info("external bot %s of job %s failed: %s %s", job.bot.spec.external.address,
             job.job_id, code.name, details)
    if code is grpc.StatusCode.DEADLINE_EXCEEDED:
        return _error(engine_pb2.MOVE_ERROR_TIMEOUT, f"no answer within {limit_ms} ms")
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.UNIMPLEMENTED):
        # Nothing there, or no BotService there: the same to the owner, who would
        # otherwise learn which ports run gRPC services.
        return _error(engine_pb2.MOVE_ERROR_BOT_UNREACHABLE, "unreachable")
    if code is grpc.StatusCode.RESOURCE_EXHAUSTED and "larger than max" in details.lower():
        return _error(engine_pb2.MOVE_ERROR_MALFORMED_ANSWER,
                      f"an answer over {EXTERNAL_REPLY_BYTES // 1024} KiB")
    if code is grpc.StatusCode.INTERNAL and "deserializ" in details.lower():
        return _error(engine_pb2.MOVE_ERROR_MALFORMED_ANSWER, "protocol error")
    return _error(engine_pb2.MOVE_ERROR_BOT_CRASHED, "protocol error")
