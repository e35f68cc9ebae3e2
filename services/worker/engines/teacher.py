"""A catalog's protocol engine as a training's teacher (``arena.engine.teacher``).

Each position goes to the engine as a move to play, through the same pool, sandbox and
protocol clients that play the worker's games; the engine's search report (a Gomocup
``MESSAGE ... ev 35``, an NBoard ``nodestats``/``ply`` eval) is its judgement. ``jobs``
processes of the engine work at once, each on every ``jobs``-th position in order. An
engine that keeps its hash table from one position to the next (Rapfi does) may judge a
position a little differently after other positions, so its labels are reproducible for
the same positions, order and ``jobs``; an engine that is deterministic per position
(``pbrain-arena --depth D``) gives the same labels whatever ``jobs`` is.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from arena.services.worker.engines.catalog import EngineSpec, load_catalog
from arena.services.worker.engines.client import PlayLimits
from arena.services.worker.engines.failures import EngineFailure
from arena.services.worker.engines.pool import EnginePool

from arena.engine.teacher import Judgement, Position
from arena.errors import ArenaError

# A position the engine fails on (a timeout, a crash) is asked again this many times, by
# a fresh process, before the training stops.
RETRIES = 2


class CatalogTeacher:
    def __init__(self, spec: EngineSpec, catalog: str, move_ms: int) -> None:
        self.spec = spec
        self.catalog = catalog
        self.move_ms = move_ms

    def describe(self) -> dict[str, object]:
        return {"engine": self.spec.name, "catalog": self.catalog,
                "protocol": self.spec.protocol, "command": list(self.spec.command),
                "options": dict(self.spec.options), "move_ms": self.move_ms}

    def judge(self, positions: Sequence[Position], jobs: int,
              progress: Callable[[int], None] | None = None) -> list[Judgement]:
        judged: list[Judgement | None] = [None] * len(positions)
        done = 0
        lock = threading.Lock()
        step = max(1, len(positions) // 10)
        jobs = max(1, jobs)
        failed = threading.Event()  # a stripe failed or the caller was interrupted: stop

        def stripe(first: int) -> None:
            nonlocal done
            pool = EnginePool(capacity=1)
            try:
                for index in range(first, len(positions), jobs):
                    if failed.is_set():
                        return
                    judged[index] = self._judge_one(pool, positions[index])
                    with lock:
                        done += 1
                        if progress is not None and (done % step == 0 or
                                                     done == len(positions)):
                            progress(done)
            except BaseException:
                failed.set()
                raise
            finally:
                pool.close()

        with ThreadPoolExecutor(jobs) as workers:
            futures = [workers.submit(stripe, first) for first in range(jobs)]
            try:
                for future in futures:
                    future.result()  # a stripe's error stops the others and the training
            except BaseException:
                failed.set()
                raise
        assert all(j is not None for j in judged)  # every stripe finished or raised
        return [j for j in judged if j is not None]

    def _judge_one(self, pool: EnginePool, position: Position) -> Judgement:
        limits = PlayLimits(move_time_ms=self.move_ms)
        for _ in range(RETRIES + 1):
            try:
                answer = pool.play(self.spec, position.text, position.history, limits)
                break
            except EngineFailure as exc:  # the pool starts a fresh process next time
                failure = exc
        else:
            raise ValueError(f"teacher {self.spec.name!r} failed {RETRIES + 1} times on "
                             f"{position.text!r}: {failure.report()}")
        if answer.search.score is None:
            raise ValueError(
                f"teacher {self.spec.name!r} printed no evaluation for {position.text!r} (a "
                "teacher must report its search's score: a Gomocup MESSAGE with ev N, an "
                "NBoard eval)")
        return Judgement(answer.search.score, answer.search.exact)


def catalog_teacher(catalog: str, name: str, game: str, move_ms: int) -> CatalogTeacher:
    """The catalog's engine ``name`` as a teacher of ``game`` (``TeacherFactory``)."""
    try:
        spec = load_catalog(catalog).get(name)
    except ArenaError as exc:  # an unreadable or bad catalog, no such engine
        raise ValueError(str(exc)) from None
    if game not in spec.games:
        raise ValueError(f"engine {name!r} plays {', '.join(spec.games)}, not {game}")
    return CatalogTeacher(spec, catalog, move_ms)
