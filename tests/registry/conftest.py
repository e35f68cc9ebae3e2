"""A real registry server (port 0) on the session's embedded durable Redis, with tokens."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import grpc
import pytest
import redis
from arena.services.common.config import Config
from arena.services.common.embedded_redis import EmbeddedRedis
from arena.services.common.server import ServerHandle

from arena.v1 import bots_pb2, registry_pb2, registry_pb2_grpc
from tests.support.servers import TOKENS, metadata, serve
from tests.support.specs import TOOL_PNG, external_spec, gomoku_spec, othello_spec, png_bytes

__all__ = ["TOKENS", "TOOL_PNG", "external_spec", "gomoku_spec", "othello_spec", "png_bytes"]


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
                 from_preset: str = "", request_id: str = "") -> bots_pb2.BotVersion:
        reply = self.call("RegisterBot", registry_pb2.RegisterBotRequest(
            spec=spec, from_preset=from_preset, request_id=request_id), token)
        assert isinstance(reply, bots_pb2.BotVersion)
        return reply


@pytest.fixture
def registry(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> Iterator[Registry]:
    # The address tests name loopback, private and made-up hosts: allowed here.
    allow = "127.0.0.0/8,10.0.0.0/8,::1/128,*.example.org"
    server = serve("registry", Config(redis_url=redis_server.url, external_allow=allow))
    channel = grpc.insecure_channel(server.target)
    try:
        yield Registry(server.handle, channel, registry_pb2_grpc.BotRegistryStub(channel))
    finally:
        channel.close()
        server.stop()


