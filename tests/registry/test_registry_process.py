"""`python -m arena.services.registry` as deployed: env settings, auth on, graceful stop."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import grpc
import pytest
import redis
from arena.services.common.config import Config
from arena.services.common.embedded_redis import EmbeddedRedis, free_port
from arena.services.common.protocol.bots import BotStore

from arena.bots import new_version
from arena.v1 import common_pb2, registry_pb2, registry_pb2_grpc
from tests.registry.conftest import metadata, othello_spec
from tests.support.processes import wait_for_file
from tests.support.servers import serve


def test_registry_process_serves_with_tokens_from_the_environment(
        redis_server: EmbeddedRedis, redis_client: redis.Redis, tmp_path: Path) -> None:
    ready = tmp_path / "registry.port"
    env = dict(os.environ, ARENA_REDIS_URL=redis_server.url, ARENA_ADMIN_TOKEN="boss",
               ARENA_TOKENS=json.dumps({"carol-token": {"name": "carol", "role": "user"}}))
    process = subprocess.Popen(
        [sys.executable, "-m", "arena.services.registry", "--listen", "127.0.0.1:0",
         "--ready-file", str(ready)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_for_file(ready, process, 60, lambda: process.communicate()[0].decode())
        with grpc.insecure_channel(f"127.0.0.1:{ready.read_text()}") as channel:
            stub = registry_pb2_grpc.BotRegistryStub(channel)
            bot = stub.RegisterBot(registry_pb2.RegisterBotRequest(spec=othello_spec("carols")),
                                   timeout=30, metadata=metadata("carol-token"))
            assert bot.owner == "carol"
            with pytest.raises(grpc.RpcError) as caught:
                stub.RetireBot(registry_pb2.RetireBotRequest(name="carols"), timeout=10)
            assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
            retired = stub.RetireBot(registry_pb2.RetireBotRequest(name="carols"), timeout=10,
                                     metadata=metadata("boss"))
            assert retired.retired
        assert BotStore(redis_client).get("carols").owner == "carol"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_a_redis_outage_is_unavailable_with_retry_advice() -> None:
    server = serve("registry", Config(redis_url=f"redis://127.0.0.1:{free_port()}/0"))
    try:
        with grpc.insecure_channel(server.target) as channel:
            stub = registry_pb2_grpc.BotRegistryStub(channel)
            with pytest.raises(grpc.RpcError) as caught:
                stub.GetBot(registry_pb2.GetBotRequest(bot=common_pb2.BotRef(name="any")),
                            timeout=30, metadata=metadata("admin-token"))
    finally:
        server.stop()
    assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
    assert "retry" in (caught.value.details() or "")


def test_store_works_with_a_decoding_client(redis_server: EmbeddedRedis,
                                            redis_client: redis.Redis) -> None:
    bot = new_version(othello_spec("decoded"), 1, "alice", datetime.now(UTC))
    BotStore(redis_client).create(bot)
    decoding = redis.Redis(host=redis_server.host, port=redis_server.port, decode_responses=True)
    try:
        assert BotStore(decoding).get("decoded").spec.name == "decoded"
    finally:
        decoding.close()
