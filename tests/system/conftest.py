"""Real service processes (``python -m arena.services.<role>``) on the session Redis servers,
started, killed and restarted through the launcher that `arena up` uses."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from arena.clients.sdk import ArenaClient
from arena.services.common.embedded_redis import EmbeddedRedis
from arena.services.common.launcher import Launcher

from tests.support.servers import ADMIN_TOKEN
from tests.support.stacks import launcher as stack_launcher
from tests.support.stacks import stack_client as stack_sdk

# Short timeouts so that reclaims and take-overs happen within a test's patience.
FAST_ENV = {
    "ARENA_MATCH_IDLE_MS": "1500",
    "ARENA_MIN_RECLAIM_IDLE_MS": "600",
    "ARENA_RECLAIM_MARGIN_MS": "300",
    "ARENA_HEARTBEAT_MS": "100",
    "ARENA_MAX_DELIVERIES": "10",
    "ARENA_WARM_GAMES": "othello",
    "ARENA_EXTERNAL_ALLOW": "127.0.0.0/8",  # the tests' external bots listen on loopback
}


@pytest.fixture
def services(redis_server: EmbeddedRedis, cache_server: EmbeddedRedis,
             redis_client: redis.Redis, cache_client: redis.Redis,
             tmp_path: Path) -> Iterator[Launcher]:
    """A launcher with its registry running; tests spawn (and kill) the rest."""
    launcher = stack_launcher(home=tmp_path, workers=0, env=dict(FAST_ENV),
                              redis_urls=(redis_server.url, cache_server.url),
                              admin_token=ADMIN_TOKEN).prepare()
    try:
        launcher.spawn("registry")
        yield launcher
    finally:
        launcher.stop()


def stack_client(launcher: Launcher) -> ArenaClient:
    """The SDK, aimed at the launcher's registry and its first referee, ladder service and
    analyst (those it has)."""
    targets = {role: launcher.target(role) for role in ("registry", "referee", "ladder")
               if launcher.names(role)}
    if launcher.names("analyst"):
        targets["engine"] = launcher.target("analyst")
    return stack_sdk(launcher, ADMIN_TOKEN, **targets)
