"""Registry latency over a real server and embedded Redis: prints medians per RPC.

    .venv/bin/python bench/registry_rpcs.py [--bots 300]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from tempfile import TemporaryDirectory

import grpc
from arena.services.common.auth import Principal, TokenStore
from arena.services.common.config import Config
from arena.services.common.embedded_redis import EmbeddedRedis
from arena.services.common.server import build_server
from arena.services.registry.server import create_service

from arena.v1 import bots_pb2, common_pb2, registry_pb2, registry_pb2_grpc

AUTH = (("authorization", "Bearer bench"),)


def _timed(calls: int, call: Callable[[int], object]) -> list[float]:
    """Milliseconds per call, one figure per call."""
    times = []
    for index in range(calls):
        started = time.perf_counter()
        call(index)
        times.append((time.perf_counter() - started) * 1000)
    return times


def _report(name: str, times: list[float]) -> None:
    ordered = sorted(times)
    p95 = ordered[int(0.95 * (len(ordered) - 1))]
    print(f"{name:<34} median {statistics.median(times):7.2f} ms   p95 {p95:7.2f} ms"
          f"   ({len(times)} calls)")


def run(bots: int) -> None:
    with TemporaryDirectory() as folder, EmbeddedRedis(Path(folder), "durable") as server:
        parts, names, on_stop = create_service(Config(redis_url=server.url))
        handle = build_server(parts, names, "127.0.0.1:0",
                              TokenStore({"bench": Principal("bench", "admin")})).start()
        handle.on_stop.extend(on_stop)
        with grpc.insecure_channel(f"127.0.0.1:{handle.port}") as channel:
            stub = registry_pb2_grpc.BotRegistryStub(channel)

            def register(index: int) -> object:
                spec = bots_pb2.BotSpec(name=f"terra-{index:05d}")
                spec.builtin.config.update({"depth": {"end": 1 + index % 10}})
                return stub.RegisterBot(registry_pb2.RegisterBotRequest(
                    spec=spec, from_preset="terra"), timeout=10, metadata=AUTH)

            def update(index: int) -> object:
                latest = stub.GetBot(registry_pb2.GetBotRequest(
                    bot=common_pb2.BotRef(name="terra-00000")), timeout=10, metadata=AUTH)
                spec = latest.spec
                spec.builtin.config["stable_disc_score"] = index % 60
                return stub.UpdateBot(registry_pb2.UpdateBotRequest(
                    name=spec.name, spec=spec), timeout=10, metadata=AUTH)

            def get(index: int) -> object:
                return stub.GetBot(registry_pb2.GetBotRequest(bot=common_pb2.BotRef(
                    name=f"terra-{index % bots:05d}")), timeout=10, metadata=AUTH)

            def list_page(index: int) -> object:
                return stub.ListBots(registry_pb2.ListBotsRequest(
                    name_prefix="terra-", page=common_pb2.PageRequest(page_size=50)),
                    timeout=10, metadata=AUTH)

            _report("RegisterBot (terra + override)", _timed(bots, register))
            _report("GetBot (latest, full tables)", _timed(3 * bots, get))
            _report("UpdateBot (after a GetBot)", _timed(100, update))
            _report(f"ListBots (page of 50 of {bots})", _timed(50, list_page))
        handle.stop(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bots", type=int, default=300)
    run(parser.parse_args().bots)


if __name__ == "__main__":
    main()
