"""The protocol engines one match worker offers: its catalog, its warm processes, and how a
move job of a protocol bot is played.

A bot of a protocol engine names the engine and the checksum the registry pinned; its jobs
go to that engine's own stream (``keys.engine_stream``), which only workers whose catalog
has exactly that engine read. The bot's options go on top of the catalog's (a different
set of options is a different warm process). The engine thinks on the worker's engine
thread, one move at a time like a built-in search, so an engine never competes with
another search of the same worker for its core.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from arena.services.common import metrics
from arena.services.common.protocol import keys
from arena.services.common.protocol.delivery import cpu_wall_guard_ms
from arena.services.worker.engines.catalog import Catalog, EngineSpec, load_catalog
from arena.services.worker.engines.client import PlayLimits
from arena.services.worker.engines.failures import EngineFailure
from arena.services.worker.engines.pool import EnginePool
from arena.services.worker.engines.results import answer_result, failure_result
from arena.services.worker.engines.sandbox import Sandbox

from arena.bots.spec import config_from_struct, config_to_struct
from arena.engine.api import StopFlag
from arena.errors import ArenaError
from arena.games import GAMES, game
from arena.v1 import bots_pb2, engine_pb2

log = logging.getLogger(__name__)

_SPECS_MAX = 256  # engine specs with a bot's options, kept per worker


class EngineHost:
    """A worker's catalog and pool; ``play`` answers a protocol bot's move job."""

    def __init__(self, catalog: Catalog, pool: EnginePool) -> None:
        self.catalog = catalog
        self.pool = pool
        self._specs: dict[bytes, EngineSpec] = {}
        self._lock = threading.Lock()

    @classmethod
    def load(cls, path: Path | str, processes: int) -> EngineHost:
        """The catalog at ``path`` with a pool of ``processes`` warm processes (raises
        ``CatalogError`` naming every problem of the file)."""
        catalog = load_catalog(path)
        sandbox = Sandbox()
        for line in sandbox.protections.describe():
            log.info("engine sandbox: %s", line)
        names = ", ".join(f"{s.name} ({s.checksum[:12]})" for s in catalog.engines.values())
        log.info("engine catalog %s offers %s", path, names or "no engine")
        return cls(catalog, EnginePool(sandbox, capacity=processes))

    def offers(self) -> list[engine_pb2.EngineOffer]:
        kinds = {g.name: g.kind for g in GAMES}
        return [engine_pb2.EngineOffer(
                    name=spec.name, protocol=spec.protocol, checksum=spec.checksum,
                    games=[kinds[name] for name in spec.games if name in kinds],
                    description=spec.description, options=config_to_struct(dict(spec.options)))
                for spec in sorted(self.catalog.engines.values(), key=lambda s: s.name)]

    def streams(self) -> list[str]:
        """The job streams of the engines offered."""
        return [keys.engine_stream(spec.name, spec.checksum)
                for spec in self.catalog.engines.values()]

    def ready(self, job: engine_pb2.MoveJob) -> engine_pb2.MoveResult | None:
        """Start the job's engine if it is not waiting warm and set it up for the job's
        position (a Gomocup ``START`` for a new size or rule), before the move is timed;
        the failure, if it cannot be (then the bot forfeits), else None."""
        try:
            spec = self.spec_for(job.bot.spec.protocol)
            game_name = game(job.game).name
        except ArenaError as exc:
            return _invalid(str(exc))
        position = job.position.text if game_name in spec.games else ""  # else: play says
        starts = self.pool.stats.starts
        try:
            self.pool.ready(spec, position, list(job.history))
        except EngineFailure as failure:
            log.info("engine %s was not ready for job %s: %s", spec.name, job.job_id,
                     failure.report())
            return failure_result(failure)
        except ValueError as exc:  # a position the engine cannot be asked about
            return _invalid(str(exc))
        finally:
            metrics.ENGINE_STARTS.labels(spec.name).inc(self.pool.stats.starts - starts)
        return None

    def play(self, job: engine_pb2.MoveJob, stop: StopFlag | None = None,
             cpu_wall_factor: float = 4.0) -> engine_pb2.MoveResult:
        """The engine's move, or why there is none (a failure the referee forfeits).
        Raising ``stop`` kills the engine mid-move (its answer is no longer wanted). A job
        timed on CPU (``cpu_clock``) is answered with the engine's CPU time and the time it
        waited for a CPU (``queued_ms``), and waited for as long as the referee's
        wall-clock guard allows (``cpu_wall_factor``), put back by that wait
        (``client.RunQueueWait``)."""
        try:
            spec = self.spec_for(job.bot.spec.protocol)
            game_name = game(job.game).name
        except ArenaError as exc:
            return _invalid(str(exc))
        if game_name not in spec.games:
            return _invalid(f"engine {spec.name!r} does not play {game_name}")
        limit = max(1, job.time_budget_ms)
        wait_ms = (cpu_wall_guard_ms(limit, spec.limits.grace_ms, cpu_wall_factor)
                   if job.cpu_clock else None)
        limits = PlayLimits(limit, wait_ms=wait_ms, stop=stop,
                            cpu_ms=limit if job.cpu_clock else None)
        starts, reused = self.pool.stats.starts, self.pool.stats.reused
        try:
            answer = self.pool.play(spec, job.position.text, list(job.history), limits)
        except EngineFailure as failure:
            log.info("engine %s failed on job %s: %s", spec.name, job.job_id, failure.report())
            return failure_result(failure)
        except ValueError as exc:  # a position the engine cannot be asked about
            return _invalid(str(exc))
        finally:  # one engine thread per worker: the pool's counts moved for this move only
            metrics.ENGINE_STARTS.labels(spec.name).inc(self.pool.stats.starts - starts)
            warm = "yes" if self.pool.stats.reused > reused else "no"
            metrics.ENGINE_MOVES.labels(spec.name, warm).inc()
        result = answer_result(answer)
        if job.cpu_clock:
            result.cpu_ms = round(answer.cpu_ms)
            result.queued_ms = round(answer.queued_ms)
        if answer.told_ms:
            metrics.ENGINE_STRETCH.labels(spec.name).observe(answer.told_ms / limit)
        if answer.held_ms:
            metrics.ENGINE_HELD.labels(spec.name).inc()
        return result

    def spec_for(self, wanted: bots_pb2.ProtocolEngine) -> EngineSpec:
        """The catalog's engine with the bot's options (checked against the pinned
        checksum; raises an ``ArenaError`` if this host has no such build)."""
        identity = wanted.SerializeToString(deterministic=True)
        found = self._specs.get(identity)
        if found is not None:
            return found
        spec = self.catalog.get(wanted.engine)
        if wanted.checksum != spec.checksum:
            raise ArenaError(f"engine {spec.name!r} here has checksum {spec.checksum[:12]}, "
                             f"the bot pinned {wanted.checksum[:12] or 'none'}")
        spec = spec.with_options(config_from_struct(wanted.options))
        with self._lock:
            if len(self._specs) >= _SPECS_MAX:
                self._specs.clear()
            self._specs[identity] = spec
        return spec

    def close(self) -> None:
        self.pool.close()


def _invalid(detail: str) -> engine_pb2.MoveResult:
    return engine_pb2.MoveResult(error=engine_pb2.MOVE_ERROR_INVALID_JOB,
                                 error_detail=detail[:500])
