"""The one stream consumer that the referee, worker and ladder loops build on.

Every job stream in Arena is read the same way, through a consumer group: an entry stays
pending until acknowledged, a consumer keeps the entries it works on fresh (heartbeat),
and entries whose consumer went quiet are taken over (reclaim). A delivery may repeat:
whoever handles an entry must make that safe.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import redis
from redis.client import Pipeline

log = logging.getLogger(__name__)

# Idle time given to an entry released on purpose: large enough to be reclaimed at once.
RELEASED_IDLE_MS = 365 * 24 * 3600 * 1000

Fields = dict[bytes, bytes]


def text(value: Any) -> str:
    """A reply item as ``str`` (this client returns bytes)."""
    return value.decode() if isinstance(value, bytes) else str(value)


def entry_ms(entry_id: str | bytes) -> int:
    """Server time of a stream entry: the millisecond part of its ID."""
    return int(text(entry_id).split("-", 1)[0])


# A field of a job handed back to the end of its stream (a worker's fair share, its call
# slots): the entry it first entered the queue as, which its wait counts from.
QUEUED = b"queued"


def queued_ms(entry_id: str | bytes, fields: dict[bytes, bytes]) -> int:
    """When the entry's job first entered the queue: ``QUEUED``'s entry if it was handed
    back, else its own."""
    return entry_ms(fields.get(QUEUED) or entry_id)


def entry_age_ms(entry_id: str | bytes, now_ms: int | None = None) -> int:
    """Milliseconds since the entry was added."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    return now_ms - entry_ms(entry_id)


def consumer_name(role: str, given: str = "", stable: bool = False) -> str:
    """The name a process reads a group under: ``given``, else ``role-host-pid``.

    ``stable`` leaves the pid out, so a restarted process (a ladder service) finds the
    entries it had been given and not acknowledged under the same name.
    """
    if given:
        return given
    host = socket.gethostname()
    return f"{role}-{host}" if stable else f"{role}-{host}-{os.getpid()}"


def ensure_group(client: redis.Redis, stream: str, group: str) -> None:
    """Create the consumer group (and the stream) if it does not exist yet; the group
    starts at the beginning of the stream, so nothing written before it is missed."""
    try:
        client.xgroup_create(stream, group, id="0", mkstream=True)
    except redis.ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise


@dataclass(frozen=True)
class Entry:
    """One delivered entry; ``fields`` is empty for an entry trimmed from the stream."""

    entry_id: str
    fields: Fields
    deliveries: int = 1


# Refresh only the entries this consumer still owns: an entry taken over by another
# consumer must not be pulled back by the heartbeat of one that was presumed dead.
# KEYS: stream. ARGV: group, consumer, entry ids.
_TOUCH_OWNED = """
local touched = 0
for i = 3, #ARGV do
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1)
  if p[1] and p[1][2] == ARGV[2] then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID')
    touched = touched + 1
  end
end
return touched
"""


class StreamConsumer:
    """One consumer of one stream's group: read, reclaim, heartbeat, release, ack.

    ``sole_group``: the group is the stream's only reader, so an entry it acknowledges is
    deleted too (the durable Redis keeps only the entries still to do, not every job ever
    queued)."""

    def __init__(self, client: redis.Redis, stream: str, group: str, consumer: str,
                 sole_group: bool = False) -> None:
        self.client = client
        self.stream, self.group, self.consumer = stream, group, consumer
        self.sole_group = sole_group
        self._touch = client.register_script(_TOUCH_OWNED)
        self._forget = client.register_script(_FORGET_IDLE)

    def ensure_group(self) -> None:
        ensure_group(self.client, self.stream, self.group)

    def wait_for_group(self, stop: threading.Event, max_pause_s: float = 5.0) -> bool:
        """Create the group, retrying while Redis is unreachable (a service started during
        an outage waits for Redis instead of exiting); False if ``stop`` was set first."""
        pause = 0.1
        while not stop.is_set():
            try:
                self.ensure_group()
                return True
            except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError) as exc:
                log.warning("redis unavailable for %s (%s); retrying in %.1f s",
                            self.stream, exc, pause)
                stop.wait(pause)
                pause = min(max_pause_s, pause * 2)
        return False

    def read(self, count: int, block_ms: int | None = None, pending: bool = False) -> list[Entry]:
        """New entries (waiting up to ``block_ms``), or with ``pending`` the entries this
        consumer was given before and has not acknowledged (after a restart)."""
        reply: Any = self.client.xreadgroup(
            self.group, self.consumer, {self.stream: "0" if pending else ">"},
            count=count, block=block_ms)
        return [Entry(text(entry_id), fields or {})
                for _stream, items in reply or [] for entry_id, fields in items]

    def reclaim(self, min_idle_ms: int, count: int) -> list[Entry]:
        """Take over entries idle for ``min_idle_ms`` (their consumer went quiet)."""
        reply: Any = self.client.xautoclaim(self.stream, self.group, self.consumer,
                                            min_idle_ms, start_id="0-0", count=count)
        return [Entry(text(entry_id), fields or {}) for entry_id, fields in reply[1]]

    def reclaim_each(self, min_idle_ms: int, timeout_of: Callable[[Fields], int],
                     scan: int) -> Entry | None:
        """Take over one entry whose own timeout (``timeout_of`` its fields, in ms) has
        passed; entries with a longer timeout than ``min_idle_ms`` stay with their owner.
        The XCLAIM's min-idle makes this atomic against a concurrent heartbeat."""
        pending: Any = self.client.xpending_range(
            self.stream, self.group, min="-", max="+", count=scan, idle=min_idle_ms)
        for item in pending:
            entry_id = text(item["message_id"])
            found: Any = self.client.xrange(self.stream, entry_id, entry_id)
            timeout = max(min_idle_ms, timeout_of(found[0][1]) if found else 0)
            if int(item["time_since_delivered"]) < timeout:
                continue
            claimed: Any = self.client.xclaim(self.stream, self.group, self.consumer,
                                              timeout, [entry_id])
            if not claimed:
                continue  # someone else was faster, or the entry got fresh again
            return Entry(entry_id, claimed[0][1] or {}, int(item["times_delivered"]) + 1)
        return None

    def touch(self, entry_ids: Sequence[str], pipe: Pipeline | None = None) -> int:
        """Heartbeat: keep the entries this consumer still owns fresh (queued on ``pipe``,
        if given, to go with other commands in one round trip; it then returns 0)."""
        if not entry_ids:
            return 0
        touched = self._touch(keys=[self.stream],
                              args=[self.group, self.consumer, *entry_ids], client=pipe)
        return 0 if pipe is not None else int(touched)

    def release(self, entry_id: str) -> None:
        """Give an entry back: mark it idle for ages so the next reclaim takes it at once."""
        self.client.xclaim(self.stream, self.group, self.consumer, min_idle_time=0,
                           message_ids=[entry_id], idle=RELEASED_IDLE_MS, justid=True)

    def ack(self, entry_id: str) -> None:
        if not self.sole_group:  # one command, no transaction: every move job's ack
            self.client.xack(self.stream, self.group, entry_id)
            return
        with self.client.pipeline(transaction=True) as pipe:
            self._done(pipe, entry_id)
            pipe.execute()

    def requeue(self, entry_id: str, fields: Mapping[bytes, bytes]) -> None:
        """Hand an entry back at the end of the stream, where any idle consumer gets it at
        once (a released entry waits for someone's reclaim scan)."""
        with self.client.pipeline(transaction=True) as pipe:
            self._done(pipe, entry_id)
            pipe.xadd(self.stream, dict(fields))  # type: ignore[arg-type]
            pipe.execute()

    def _done(self, pipe: Pipeline, entry_id: str) -> None:
        pipe.xack(self.stream, self.group, entry_id)
        if self.sole_group:
            pipe.xdel(self.stream, entry_id)

    def forget_gone(self, present: Collection[str]) -> list[str]:
        """Remove from the group the other consumers that hold no entry and are not
        ``present``: processes gone, whose entries others took over. Each restart reads
        under a new name, and without this every name read once stayed in the group (and
        in ``arena status``) for good. A consumer given an entry meanwhile is kept (the
        check and the removal are one script); one still alive that is forgotten is made
        again by its next read. Returns the names removed."""
        try:
            consumers: Any = self.client.xinfo_consumers(self.stream, self.group)
        except redis.ResponseError:  # no stream or no group yet: no one to forget
            return []
        names = [text(c["name"]) for c in consumers if int(c["pending"]) == 0]
        return [name for name in names
                if name != self.consumer and name not in present
                and int(self._forget(keys=[self.stream], args=[self.group, name]))]


# Remove a consumer from a group if it holds no entry (1 if it was removed).
# KEYS: the stream. ARGV: group, consumer.
_FORGET_IDLE = """
if #redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 1, ARGV[2]) > 0 then return 0 end
redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2])
return 1
"""


# The first new entry of several streams, trying them in the order given (one round trip).
# KEYS: the streams. ARGV: group, consumer.
_READ_FIRST = """
for i = 1, #KEYS do
  local got = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', 1,
                         'STREAMS', KEYS[i], '>')
  if got then return {i, got[1][2][1][1], got[1][2][1][2]} end
end
return false
"""


class StreamSet:
    """One consumer of the same group on several streams (a worker reads the common move
    stream and one stream per protocol engine it offers). Reads take one entry at a time,
    the streams in turn, so that a busy stream never starves another."""

    def __init__(self, client: redis.Redis, streams: Sequence[str], group: str,
                 consumer: str) -> None:
        if not streams:
            raise ValueError("a stream set needs at least one stream")
        self.client = client
        self.consumers = {stream: StreamConsumer(client, stream, group, consumer)
                          for stream in streams}
        self.group, self.consumer = group, consumer
        self._order = list(self.consumers)
        self._paused: frozenset[str] = frozenset()
        self._first = client.register_script(_READ_FIRST)

    def __getitem__(self, stream: str) -> StreamConsumer:
        return self.consumers[stream]

    def __iter__(self) -> Iterator[StreamConsumer]:
        return iter(list(self.consumers.values()))

    def wait_for_groups(self, stop: threading.Event) -> bool:
        return all(consumer.wait_for_group(stop) for consumer in self)

    def only(self, streams: Collection[str]) -> None:
        """Read and take over entries of these of the set's streams alone, until told
        otherwise (a worker stops reading a protocol engine's stream while the build's
        files are changed, and reads it again should they come back)."""
        self._paused = frozenset(self.consumers) - frozenset(streams)

    def _turn(self) -> list[str]:
        """The streams read, starting one further than last time."""
        self._order.append(self._order.pop(0))
        return [stream for stream in self._order if stream not in self._paused]

    def read_one(self, block_ms: int) -> tuple[str, Entry] | None:
        """One new entry and its stream, waiting up to ``block_ms`` for one."""
        order = self._turn()
        if not order:
            time.sleep(block_ms / 1000)
            return None
        if len(order) > 1:
            found: Any = self._first(keys=order, args=[self.group, self.consumer])
            if found:
                return order[int(found[0]) - 1], Entry(text(found[1]), _fields(found[2]))
        reply: Any = self.client.xreadgroup(self.group, self.consumer,
                                            {stream: ">" for stream in order}, count=1,
                                            block=block_ms)
        taken = [(text(stream), Entry(text(entry_id), fields or {}))
                 for stream, items in reply or [] for entry_id, fields in items]
        for stream, entry in taken[1:]:  # several streams woke at once: rare; keep one
            self.consumers[stream].requeue(entry.entry_id, entry.fields)
        return taken[0] if taken else None

    def forget_gone(self, present: Collection[str]) -> list[str]:
        """:meth:`StreamConsumer.forget_gone` on each of the set's streams."""
        return [name for consumer in self for name in consumer.forget_gone(present)]

    def reclaim_each(self, min_idle_ms: int, timeout_of: Callable[[Fields], int],
                     scan: int) -> tuple[str, Entry] | None:
        """One entry taken over (see :meth:`StreamConsumer.reclaim_each`), streams in turn."""
        for stream in self._turn():
            entry = self.consumers[stream].reclaim_each(min_idle_ms, timeout_of, scan)
            if entry is not None:
                return stream, entry
        return None


def _fields(raw: Sequence[bytes]) -> Fields:
    return {raw[i]: raw[i + 1] for i in range(0, len(raw), 2)}


def start_threads(*targets: tuple[Callable[[], None], str]) -> list[threading.Thread]:
    """Start a loop's background threads (daemons: a stuck one never blocks exit)."""
    threads = [threading.Thread(target=target, name=name, daemon=True)
               for target, name in targets]
    for thread in threads:
        thread.start()
    return threads


def flat(fields: Mapping[str, str | bytes | int]) -> list[str | bytes | int]:
    """``{"a": 1, "b": 2}`` -> ``["a", 1, "b", 2]`` (stream fields as script arguments)."""
    return [part for pair in fields.items() for part in pair]
