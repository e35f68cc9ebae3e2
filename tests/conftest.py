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

from tests.data import shared_data_dir


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
    return shared_data_dir()
