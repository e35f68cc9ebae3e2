"""What a referee reports about its matches and moves: metrics, one log line per judged
move and per finished match, and the ``arena.move`` trace of each move.

``runner.py`` calls one function here at each step; nothing here touches Redis.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager

from arena.services.common import metrics, tracing
from arena.services.common.logs import bind, bot_name, move_fields

from arena.games import GAMES, game
from arena.v1 import engine_pb2, match_pb2

log = logging.getLogger(__name__)

_GAME_NAMES: dict[int, str] = {int(each.kind): each.name for each in GAMES}
_published: OrderedDict[str, float] = OrderedDict()  # job id -> when it was published
_PUBLISHED_MAX = 10_000
_lock = threading.Lock()


def match_started(match: match_pb2.Match, fresh: bool) -> None:
    """A match thread starts (``fresh``: the match's first run, not a resumption)."""
    bind(match_id=match.id, **({"ladder_id": match.config.ladder_id}
                               if match.config.ladder_id else {}))
    if fresh:
        metrics.MATCHES_STARTED.inc()
    log.info("%s match: %s vs %s", "starting" if fresh else "resuming",
             bot_name(match.black), bot_name(match.white))


def job_built(job: engine_pb2.MoveJob) -> engine_pb2.MoveJob:
    """A job is built: its move's trace opens (the job carries its context)."""
    tracing.start_move(job)
    return job


def published(job: engine_pb2.MoveJob | None) -> None:
    if job is None:
        return
    metrics.JOBS_PUBLISHED.inc()
    with _lock:
        _published[job.job_id] = time.monotonic()
        while len(_published) > _PUBLISHED_MAX:
            _published.popitem(last=False)


def not_published(job: engine_pb2.MoveJob | None) -> None:
    """A built job lost its race (another referee recorded the ply, or the match ended)."""
    if job is not None:
        tracing.end_move(job.job_id, "not published")


@contextmanager
def judging(job: engine_pb2.MoveJob) -> Iterator[None]:
    with tracing.move_span("arena.referee.judge", job.job_id):
        yield


@contextmanager
def recording(job: engine_pb2.MoveJob | None) -> Iterator[None]:
    if job is None:  # a pass: no job, no trace
        yield
        return
    with tracing.move_span("arena.referee.record", job.job_id):
        yield


def _judged(job: engine_pb2.MoveJob, verdict: str) -> None:
    _counted(job.game, verdict)
    with _lock:
        since = _published.pop(job.job_id, None)
    if since is not None:
        metrics.MOVE_LATENCY.observe(time.monotonic() - since)


def recorded(job: engine_pb2.MoveJob, record: match_pb2.MoveRecord) -> None:
    """The answer to ``job`` is judged legal and recorded."""
    _judged(job, "recorded")
    log.info("recorded move %s in %d ms", record.move.text, record.time_ms,
             extra=move_fields(job, worker=record.worker_id))
    tracing.end_move(job.job_id, "recorded")


def _counted(kind: int, verdict: str) -> None:
    metrics.child(metrics.MOVES_JUDGED, _GAME_NAMES.get(kind) or game(kind).name,
                  verdict).inc()


def forfeited(job: engine_pb2.MoveJob, termination: int, detail: str) -> None:
    """The side to move forfeits by its answer, or the lack of one."""
    name = match_pb2.Termination.Name(termination)  # type: ignore[arg-type]
    _judged(job, "forfeit")
    log.warning("forfeit %s: %s", name, detail, extra=move_fields(job))
    tracing.end_move(job.job_id, name)


def out_of_game_time(match: match_pb2.Match, ply: int) -> None:
    """The side to move forfeits before it is asked: its game clock ran out. Counted and
    logged as any forfeit (it was an INFO line of the match's end alone)."""
    _counted(match.config.game.kind, "forfeit")
    log.warning("forfeit TERMINATION_TIME_FORFEIT: no game time left", extra={"ply": ply})


def refused_at_start(match: match_pb2.Match, limit: str) -> None:
    """A match created while there was room is cancelled at its start by its owner's
    ``limit``."""
    metrics.LIMIT_REFUSALS.labels(limit).inc()
    match_finished(match.result)
    log.info("match %s of %s not started: %s", match.id, match.owner, match.result.detail)


def match_finished(result: match_pb2.MatchResult) -> None:
    """The result is written (once per match, whichever referee wrote it)."""
    termination = match_pb2.Termination.Name(result.termination).removeprefix("TERMINATION_")
    metrics.child(metrics.MATCHES_FINISHED, termination.lower()).inc()
    if result.forfeited:
        metrics.child(metrics.FORFEITS, termination.lower()).inc()
