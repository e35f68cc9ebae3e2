"""The protocol engines one match worker offers: its catalog, its warm processes, and how a
move job of a protocol bot is played.

A bot of a protocol engine names the engine and the checksum the registry pinned; its jobs
go to that engine's own stream (``keys.engine_stream``), which only workers whose catalog
has exactly that engine read. The bot's options go on top of the catalog's (a different
set of options is a different warm process). The engine thinks on the worker's engine
thread, one move at a time like a built-in search, so an engine never competes with
another search of the same worker for its core.

The catalog's checksums are taken when the worker starts, but an engine's files can be
changed in place while it runs. So every look at a build (each job's ``ready`` and
``play``, an analysis, the heartbeat's list of offers) checks that the files still have
the catalog's checksum (``BuildCheck``: a stat, a new hash only if the stat changed). A
build whose files changed is not played (a job taken before the worker noticed is
``WORKER_FAULT``: a bot plays the build it pinned or nothing), its warm processes are
stopped, it is no longer offered and its stream is no longer read, so that its jobs wait
for a worker that still has it (or, if none does, the referee ends the game void); should
the files come back, so does the build. The worker offers the new build once restarted.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from arena.services.common import metrics
from arena.services.common.protocol import keys
from arena.services.common.protocol.delivery import cpu_wall_guard_ms
from arena.services.worker.engines.catalog import (
    BuildCheck,
    Catalog,
    EngineSpec,
    load_catalog,
)
from arena.services.worker.engines.client import PlayLimits
from arena.services.worker.engines.failures import EngineFailure
from arena.services.worker.engines.pool import EnginePool
from arena.services.worker.engines.results import (
    answer_result,
    error_result,
    failure_result,
)
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

    def __init__(self, catalog: Catalog, pool: EnginePool, worker_pool: str = "match") -> None:
        self.catalog = catalog
        self.pool = pool
        self.worker_pool = worker_pool  # match or analysis: the ``pool`` of its metrics
        self._specs: dict[bytes, EngineSpec] = {}
        self._lock = threading.Lock()
        self.builds = BuildCheck(catalog.engines.values())
        self._changed: set[str] = set()  # engines whose files no longer have their checksum

    @classmethod
    def load(cls, path: Path | str, processes: int, worker_pool: str = "match") -> EngineHost:
        """The catalog at ``path`` with a pool of ``processes`` warm processes, for a
        worker of ``worker_pool`` (raises ``CatalogError`` naming every problem of the
        file)."""
        catalog = load_catalog(path)
        sandbox = Sandbox()
        for line in sandbox.protections.describe():
            log.info("engine sandbox: %s", line)
        names = ", ".join(f"{s.name} ({s.checksum[:12]})" for s in catalog.engines.values())
        log.info("engine catalog %s offers %s", path, names or "no engine")
        return cls(catalog, EnginePool(sandbox, capacity=processes), worker_pool)

    def offers(self) -> list[engine_pb2.EngineOffer]:
        """The builds this worker plays: its catalog's engines whose files still have the
        checksum it read (asked again at every heartbeat)."""
        kinds = {g.name: g.kind for g in GAMES}
        return [engine_pb2.EngineOffer(
                    name=spec.name, protocol=spec.protocol, checksum=spec.checksum,
                    games=[kinds[name] for name in spec.games if name in kinds],
                    description=spec.description, options=config_to_struct(dict(spec.options)))
                for spec in sorted(self.catalog.engines.values(), key=lambda s: s.name)
                if self.changed(spec) is None]

    def changed(self, spec: EngineSpec) -> str | None:
        """Why ``spec``'s files on disk are no longer the build the catalog read (its
        executable or a file of its ``files`` was changed, replaced or removed), or None.
        The first time it finds so, the engine's warm processes are stopped and the change
        logged."""
        why: str | None
        try:
            now = self.builds.checksum_now(spec)
        except OSError as exc:
            why = f"its files cannot be read ({exc.strerror}: {exc.filename})"
        else:
            why = None if now == spec.checksum else f"its files now have checksum {now[:12]}"
        with self._lock:
            known = spec.name in self._changed
            if why is None:
                self._changed.discard(spec.name)
            else:
                self._changed.add(spec.name)
        if why is not None and not known:
            log.warning("engine %s (%s) changed on disk: %s; its build is no longer played "
                        "or offered (restart the worker to offer the new one)", spec.name,
                        spec.checksum[:12], why)
            self.pool.stop_engine(spec.name)
        elif why is None and known:
            log.info("engine %s has its checksum %s again: offered again", spec.name,
                     spec.checksum[:12])
        return why

    def streams(self) -> list[str]:
        """The job streams of the catalog's engines."""
        return [keys.engine_stream(spec.name, spec.checksum)
                for spec in self.catalog.engines.values()]

    def offered_streams(self) -> set[str]:
        """The job streams of the builds still offered: a build whose files changed is
        not read, so that its jobs wait for a worker that has it."""
        return {keys.engine_stream(spec.name, spec.checksum)
                for spec in self.catalog.engines.values() if self.changed(spec) is None}

    def ready(self, job: engine_pb2.MoveJob) -> engine_pb2.MoveResult | None:
        """Start the job's engine if it is not waiting warm and set it up for the job's
        position (a Gomocup ``START`` for a new size or rule), before the move is timed;
        the failure, if it cannot be (then the bot forfeits), else None."""
        try:
            spec = self.spec_for(job.bot.spec.protocol)
            game_name = game(job.game).name
        except BuildGone as exc:
            return error_result(engine_pb2.MOVE_ERROR_WORKER_FAULT, str(exc))
        except ArenaError as exc:
            return error_result(engine_pb2.MOVE_ERROR_INVALID_JOB, str(exc))
        position = job.position.text if game_name in spec.games else ""  # else: play says
        starts = self.pool.stats.starts
        try:
            self.pool.ready(spec, position, list(job.history), job.owner)
        except EngineFailure as failure:
            log.info("engine %s was not ready for job %s: %s", spec.name, job.job_id,
                     failure.report())
            return failure_result(failure)
        except ValueError as exc:  # a position the engine cannot be asked about
            return error_result(engine_pb2.MOVE_ERROR_INVALID_JOB, str(exc))
        finally:
            metrics.ENGINE_STARTS.labels(spec.name, self.worker_pool).inc(
                self.pool.stats.starts - starts)
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
        except BuildGone as exc:
            return error_result(engine_pb2.MOVE_ERROR_WORKER_FAULT, str(exc))
        except ArenaError as exc:
            return error_result(engine_pb2.MOVE_ERROR_INVALID_JOB, str(exc))
        if game_name not in spec.games:
            return error_result(engine_pb2.MOVE_ERROR_INVALID_JOB,
                                f"engine {spec.name!r} does not play {game_name}")
        limit = max(1, job.time_budget_ms)
        wait_ms = (cpu_wall_guard_ms(limit, spec.limits.grace_ms, cpu_wall_factor)
                   if job.cpu_clock else None)
        limits = PlayLimits(limit, wait_ms=wait_ms, stop=stop,
                            cpu_ms=limit if job.cpu_clock else None)
        starts, reused = self.pool.stats.starts, self.pool.stats.reused
        try:
            answer = self.pool.play(spec, job.position.text, list(job.history), limits,
                                    job.owner)
        except EngineFailure as failure:
            log.info("engine %s failed on job %s: %s", spec.name, job.job_id, failure.report())
            return failure_result(failure)
        except ValueError as exc:  # a position the engine cannot be asked about
            return error_result(engine_pb2.MOVE_ERROR_INVALID_JOB, str(exc))
        finally:  # one engine thread per worker: the pool's counts moved for this move only
            metrics.ENGINE_STARTS.labels(spec.name, self.worker_pool).inc(
                self.pool.stats.starts - starts)
            warm = "yes" if self.pool.stats.reused > reused else "no"
            metrics.ENGINE_MOVES.labels(spec.name, warm, self.worker_pool).inc()
        result = answer_result(answer, game(job.game).position_from_text(job.position.text))
        if job.cpu_clock:
            result.cpu_ms = round(answer.cpu_ms)
            result.queued_ms = round(answer.queued_ms)
        if answer.told_ms:
            metrics.ENGINE_STRETCH.labels(spec.name, self.worker_pool).observe(
                answer.told_ms / limit)
        if answer.held_ms:
            metrics.ENGINE_HELD.labels(spec.name, self.worker_pool).inc()
        return result

    def spec_for(self, wanted: bots_pb2.ProtocolEngine) -> EngineSpec:
        """The catalog's engine with the bot's options (checked against the pinned
        checksum, and the engine's files on disk against it: raises an ``ArenaError`` if
        this host has no such build, or no longer has it)."""
        identity = wanted.SerializeToString(deterministic=True)
        spec = self._specs.get(identity)
        if spec is None:
            spec = self.catalog.get(wanted.engine)
            if wanted.checksum != spec.checksum:
                raise BuildGone(f"engine {spec.name!r} here has checksum "
                                 f"{spec.checksum[:12]}, the bot pinned "
                                 f"{wanted.checksum[:12] or 'none'}")
            spec = spec.with_options(config_from_struct(wanted.options))
            with self._lock:
                if len(self._specs) >= _SPECS_MAX:
                    self._specs.clear()
                self._specs[identity] = spec
        why = self.changed(spec)
        if why is not None:
            raise BuildGone(f"engine {spec.name!r} changed on this worker since it read its "
                             f"catalog: {why}, not {spec.checksum[:12]} as the bot pinned "
                             "(a changed build is another engine: this one is no longer "
                             "offered here)")
        return spec

    def close(self) -> None:
        self.pool.close()


class BuildGone(ArenaError):
    """This worker no longer has the engine build a bot pinned (its files changed on disk):
    the worker's trouble, not the bot's, so its games end void rather than forfeited."""


