"""A real registry server (port 0) on the session's embedded durable Redis, with tokens."""

from __future__ import annotations

import base64
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

import grpc
import pytest
import redis
from arena.services.common.auth import Principal, TokenStore
from arena.services.common.config import Settings
from arena.services.common.embedded_redis import EmbeddedRedis
from arena.services.common.server import ServerHandle, build_server
from arena.services.registry.server import create_service

from arena.v1 import bots_pb2, registry_pb2, registry_pb2_grpc

TOKENS = {
    "admin-token": Principal("root", "admin"),
    "alice-token": Principal("alice", "user"),
    "bob-token": Principal("bob", "user"),
}


def metadata(token: str | None) -> tuple[tuple[str, str], ...]:
    return () if token is None else (("authorization", f"Bearer {token}"),)


@dataclass
class Registry:
    """A running registry and a stub per caller."""

    handle: ServerHandle
    channel: grpc.Channel
    stub: registry_pb2_grpc.BotRegistryStub

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.handle.port}"

    def call(self, method: str, request: object, token: str | None = "alice-token") -> object:
        rpc = getattr(self.stub, method)
        return rpc(request, timeout=10, metadata=metadata(token))

    def register(self, spec: bots_pb2.BotSpec, token: str | None = "alice-token",
                 from_preset: str = "") -> bots_pb2.BotVersion:
        reply = self.call("RegisterBot", registry_pb2.RegisterBotRequest(
            spec=spec, from_preset=from_preset), token)
        assert isinstance(reply, bots_pb2.BotVersion)
        return reply


@pytest.fixture
def registry(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> Iterator[Registry]:
    settings = Settings(redis_url=redis_server.url)
    registrations, names, on_stop = create_service(settings)
    handle = build_server(registrations, names, "127.0.0.1:0", TokenStore(TOKENS)).start()
    handle.on_stop.extend(on_stop)
    channel = grpc.insecure_channel(f"127.0.0.1:{handle.port}")
    try:
        yield Registry(handle, channel, registry_pb2_grpc.BotRegistryStub(channel))
    finally:
        channel.close()
        handle.stop(0)


def png_bytes(width: int = 2, height: int = 2) -> bytes:
    """A real, tiny greyscale PNG."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body)))

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


# A 1x1 PNG as produced by common tools (not by the helper above).
TOOL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def othello_spec(name: str = "lucy-2", **config: object) -> bots_pb2.BotSpec:
    """A KReversi-style bot, with ``config`` merged over a small valid config."""
    spec = bots_pb2.BotSpec(name=name, game=1, description="test bot")
    base: dict[str, object] = {"evaluator": "kreversi", "depth": {"begin": 3, "middle": 3,
                                                                  "end": 4}}
    base.update(config)
    spec.builtin.config.update(base)
    return spec


def gomoku_spec(name: str = "moku", depth: int = 2) -> bots_pb2.BotSpec:
    spec = bots_pb2.BotSpec(name=name, game=2)
    spec.builtin.config.update({"evaluator": "sharpmoku", "depth": depth})
    return spec


def external_spec(name: str = "remote", address: str = "127.0.0.1:50051") -> bots_pb2.BotSpec:
    return bots_pb2.BotSpec(name=name, game=1, external=bots_pb2.ExternalEngine(
        address=address, move_deadline_ms=2000))
