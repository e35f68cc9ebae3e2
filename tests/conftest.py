"""Session-wide fixtures: real Redis servers (durable + cache) on free loopback ports.

Every test that asks for ``redis_client`` or ``cache_client`` gets an empty database:
the fixture flushes it before the test. Nothing here needs a system Redis.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from arena.services.common.embedded_redis import EmbeddedRedis


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedRedis]:
    with EmbeddedRedis(tmp_path_factory.mktemp("redis-durable"), "durable") as server:
        yield server


@pytest.fixture(scope="session")
def cache_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedRedis]:
    with EmbeddedRedis(tmp_path_factory.mktemp("redis-cache"), "cache") as server:
        yield server


@pytest.fixture
def redis_client(redis_server: EmbeddedRedis) -> Iterator[redis.Redis]:
    client = redis_server.client()
    client.flushall()
    yield client
    client.close()


@pytest.fixture
def cache_client(cache_server: EmbeddedRedis) -> Iterator[redis.Redis]:
    client = cache_server.client()
    client.flushall()
    yield client
    client.close()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The reference data folder (../shared/data beside the repository)."""
    import os

    explicit = os.environ.get("ARENA_SHARED_DATA")
    path = Path(explicit) if explicit else Path(__file__).resolve().parents[2] / "shared" / "data"
    if not path.is_dir():
        pytest.fail(f"reference data not found at {path}; set ARENA_SHARED_DATA")
    return path
