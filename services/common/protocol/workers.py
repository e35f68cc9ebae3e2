"""Workers advertise themselves: who is alive, what it can run, what it runs now.

Each worker writes its ``WorkerInfo`` every second under ``keys.worker(id)`` with a TTL of
a few seconds, and scores its id in ``keys.WORKERS`` by when that TTL ends. A worker that
dies simply stops refreshing: its key expires and readers prune its id. Reading the live
workers is one sorted-set range and one MGET, whatever else the database holds (no SCAN).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import redis
from arena.services.common.protocol import keys
from google.protobuf.message import DecodeError
from redis.client import Pipeline

from arena.v1 import engine_pb2, status_pb2

OWNER = "worker"  # writes its own presence
# The referee reads it for Status.GetStatus and the workers-alive metric; the registry for
# the protocol engines live workers offer (ListEngines, and a protocol bot's registration).
SHARED_WITH = ("referee", "registry")

ADVERTISE_EVERY_S = 1.0
TTL_MS = 5000  # five missed refreshes and a worker counts as gone


def advertise(pipe: Pipeline, info: status_pb2.WorkerInfo, ttl_ms: int = TTL_MS) -> None:
    """Queue the refresh of ``info`` on ``pipe`` (two commands, one round trip)."""
    now_ms = int(time.time() * 1000)
    info.seen_unix_ms = now_ms
    pipe.set(keys.worker(info.worker_id), info.SerializeToString(), px=ttl_ms)
    pipe.zadd(keys.WORKERS, {info.worker_id: now_ms + ttl_ms})


def retire(client: redis.Redis, worker_id: str) -> None:
    """A worker that stops on purpose leaves at once."""
    with client.pipeline(transaction=False) as pipe:
        pipe.delete(keys.worker(worker_id))
        pipe.zrem(keys.WORKERS, worker_id)
        pipe.execute()


def present(client: redis.Redis, now_ms: int | None = None) -> list[str]:
    """The ids of the workers whose heartbeat has not expired, in order."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    with client.pipeline(transaction=False) as pipe:
        pipe.zremrangebyscore(keys.WORKERS, "-inf", now_ms)
        pipe.zrange(keys.WORKERS, 0, -1)
        _, ids = pipe.execute()
    return [i.decode() for i in ids]


def alive(client: redis.Redis, now_ms: int | None = None) -> list[status_pb2.WorkerInfo]:
    """The workers whose heartbeat has not expired, by id."""
    ids = present(client, now_ms)
    if not ids:
        return []
    found: Any = client.mget([keys.worker(i) for i in ids])
    workers = []
    for payload in found:
        if payload is None:
            continue  # expired between the two reads
        try:
            workers.append(status_pb2.WorkerInfo.FromString(payload))
        except DecodeError:  # garbage under our key: not a worker
            continue
    return sorted(workers, key=lambda w: w.worker_id)


def offers(workers: Iterable[status_pb2.WorkerInfo]) -> list[engine_pb2.EngineOffer]:
    """Every protocol engine (name and checksum) the workers offer, with how many match
    workers and how many analysts offer it; by name, the checksum most match workers offer
    first."""
    found: dict[tuple[str, str], engine_pb2.EngineOffer] = {}
    for info in workers:
        for offer in info.protocol_engines:
            key = (offer.name, offer.checksum)
            if key not in found:
                found[key] = engine_pb2.EngineOffer()
                found[key].CopyFrom(offer)
                found[key].workers = found[key].analysts = 0
            if info.pool == "analysis":
                found[key].analysts += 1
            else:
                found[key].workers += 1
    return sorted(found.values(),
                  key=lambda o: (o.name, -o.workers, -o.analysts, o.checksum))
