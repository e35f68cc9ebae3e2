"""Fair shares of the match workers between the owners whose moves they play.

The move queue is first come, first served, and a user's ``running_matches`` bounds their
moves in flight, not how long each holds a worker: two matches at 60 s a move held both
workers of a two-worker arena, and another user's 300 ms moves waited behind them for a
minute each. So each worker, before its engine runs a job it read or took ahead (an
external bot's call holds no engine; a job taken over from a dead worker runs whoever owns
it), asks whether the job's owner already holds their share of the live match workers
while another owner, under theirs, wants one: then it hands the job back to the end of its
stream and reads again.

A worker holds an owner's move while a job of theirs is in its pending list (read, not yet
answered: Redis adds it there as it delivers it, so two workers reading at once each see
the other's). An owner wants a worker while a worker holds a move of theirs, while a job of
theirs waits among the first ``PEEK`` not yet read, or for ``RECENT_MS`` after a worker
answered one (``keys.MOVE_OWNERS``, marked in the answer's own transaction: their next move
is a moment away, while the referee records the last). The share is the live match
workers divided among those owners, at least one: an owner alone uses every worker.

Where the picture, read at most every ``PICTURE_S`` (the live workers every
``WORKERS_S``, or sooner when a worker they do not name holds a job: one that just joined),
shows the job's owner alone, and this worker took no other owner's job in the
last ``RECENT_MS`` (it knows that at once, where the others learn it from Redis), the job
runs at once: a worker of an arena with one user spends no round trip on sharing.
Otherwise the picture is read anew (two round trips) before the worker decides.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import redis
from arena.services.common.protocol import keys, workers
from arena.services.common.protocol.keys import WORKER_GROUP
from arena.services.common.protocol.streams import text
from google.protobuf.message import DecodeError

from arena.v1 import engine_pb2

RECENT_MS = 1500
PEEK = 64  # waiting entries of a stream looked at for their owners
PENDING_SCAN = 200  # pending entries of a stream looked at for the moves workers hold
PICTURE_S = 0.1
WORKERS_S = 1.0
MARK_EVERY_S = 0.5  # an owner's answers mark them at most this often, per worker
HANDED_BACK_WAIT_S = 0.02  # after a job handed back, before the next read


@dataclass
class Picture:
    """Who holds and who wants the workers, as read at ``at`` (monotonic)."""

    at: float
    holders: dict[str, set[str]] = field(default_factory=dict)  # owner -> other workers
    wanting: set[str] = field(default_factory=set)  # owners held, waiting or recent

    def held(self, owner: str) -> int:
        return len(self.holders.get(owner, ()))


class FairShare:
    """One worker's side of the sharing (see the module docstring)."""

    def __init__(self, client: redis.Redis, worker_id: str) -> None:
        self.client, self.worker_id = client, worker_id
        self._live: tuple[float, frozenset[str]] = (-WORKERS_S, frozenset())
        self._picture = Picture(-PICTURE_S)
        self._gone: frozenset[str] = frozenset()  # holders not live at the last look
        # Whether another owner wanted a worker at the last job's look: then the worker
        # takes no job ahead (a job held ahead is no worker's, yet reads as held, and
        # waits out the move before it: another owner's, it was counted as served).
        self.crowded = False
        self._marked: dict[str, float] = {}  # owner -> when an answer last marked them
        self._ran: dict[str, float] = {}  # owner -> when this worker last took a job of theirs

    def hand_back(self, job: engine_pb2.MoveJob, streams: Sequence[str]) -> bool:
        """Whether this worker should hand ``job`` back rather than run it (``streams``:
        those it reads): its owner holds their share of the workers while another owner
        wants one."""
        if not job.owner:
            return False
        now = time.monotonic()
        self._ran = {owner: at for owner, at in self._ran.items() if now - at < RECENT_MS / 1000}
        if now - self._picture.at > PICTURE_S:
            self._picture = self._read(streams)
        if self._picture.wanting | set(self._ran) <= {job.owner}:
            self._ran[job.owner] = now
            self.crowded = False
            return False  # its owner alone wants the workers
        picture = self._picture = self._read(streams)
        wanting = picture.wanting | set(self._ran) | {job.owner}
        self.crowded = len(wanting) > 1
        share = max(1, len(self._live[1]) // len(wanting))
        if picture.held(job.owner) >= share and any(
                picture.held(other) < share for other in wanting if other != job.owner):
            return True
        self._ran[job.owner] = now
        return False

    def _read(self, streams: Sequence[str]) -> Picture:
        now, now_ms = time.monotonic(), int(time.time() * 1000)
        if now - self._live[0] > WORKERS_S:
            self._read_live(now, now_ms)
        with self.client.pipeline(transaction=False) as pipe:
            pipe.zrangebyscore(keys.MOVE_OWNERS, now_ms - RECENT_MS, "+inf")
            for stream in streams:
                pipe.xpending_range(stream, WORKER_GROUP, "-", "+", PENDING_SCAN)
                pipe.xinfo_groups(stream)
            recent, *replies = pipe.execute(raise_on_error=False)
        holding = {text(p["consumer"]) for pending in replies[::2]
                   if not isinstance(pending, Exception) for p in pending}
        if not holding - {self.worker_id} <= self._live[1] | self._gone:
            self._read_live(now, now_ms)  # a worker that joined since (or one gone)
            self._gone = frozenset(holding - self._live[1])  # not asked about again
        live = self._live[1]
        held: list[tuple[str, str, str]] = []  # (stream, entry, worker) held by others
        after: dict[str, str] = {}  # stream -> the last entry a worker read
        for stream, pending, groups in zip(streams, replies[::2], replies[1::2], strict=True):
            if isinstance(pending, Exception) or isinstance(groups, Exception):
                continue  # no stream or group yet
            held += [(stream, text(p["message_id"]), text(p["consumer"])) for p in pending
                     if text(p["consumer"]) in live and text(p["consumer"]) != self.worker_id]
            last = next((text(g["last-delivered-id"]) for g in groups
                         if text(g["name"]) == WORKER_GROUP), None)
            if last is not None:
                after[stream] = last
        with self.client.pipeline(transaction=False) as pipe:
            for stream, entry_id, _worker in held:
                pipe.xrange(stream, entry_id, entry_id)
            for stream, last in after.items():
                pipe.xrange(stream, f"({last}", "+", count=PEEK)
            found = pipe.execute()
        holders: dict[str, set[str]] = defaultdict(set)
        for (_stream, _entry_id, worker), entries in zip(held, found, strict=False):
            for owner in _owners(entries, engines_only=True):
                holders[owner].add(worker)
        waiting = {owner for entries in found[len(held):] for owner in _owners(entries)}
        return Picture(now, dict(holders),
                       {*holders, *waiting, *(text(owner) for owner in recent)})

    def mark_due(self, job: engine_pb2.MoveJob) -> bool:
        """Whether the answer to ``job``, which this worker's engine played, should mark
        its owner as having just played (``delivery.post_result``): at most every
        ``MARK_EVERY_S`` an owner, well within ``RECENT_MS`` (asked by the poster only)."""
        now = time.monotonic()
        if not job.owner or now - self._marked.get(job.owner, -MARK_EVERY_S) < MARK_EVERY_S:
            return False
        self._marked = {owner: at for owner, at in self._marked.items()
                        if now - at < MARK_EVERY_S}
        self._marked[job.owner] = now
        return True

    def _read_live(self, now: float, now_ms: int) -> None:
        self._live = (now, frozenset(w.worker_id for w in workers.alive(self.client, now_ms)
                                     if w.pool != "analysis"))


def _owners(entries: Any, engines_only: bool = False) -> list[str]:
    """The owners of the jobs of ``entries`` (XRANGE's reply); ``engines_only``: of those
    an engine runs (an external bot's call holds none)."""
    owners = []
    for _entry_id, fields in entries:
        try:
            job = engine_pb2.MoveJob.FromString(fields.get(b"pb", b""))
        except DecodeError:  # an unreadable job: its reader dead-letters it
            continue
        if job.owner and not (engines_only
                              and job.bot.spec.WhichOneof("engine") == "external"):
            owners.append(job.owner)
    return owners
