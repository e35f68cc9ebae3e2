"""In-process referee and worker loops on the session Redis servers (real threads)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
import redis
from arena.services.common.embedded_redis import EmbeddedRedis
from arena.services.referee.delivery import DeliveryConfig
from arena.services.referee.loop import RefereeLoop
from arena.services.worker.bots import BotRunner
from arena.services.worker.consumer import WorkerLoop
from arena.services.worker.tcache import SharedSearchCache

from arena.engine import dispatch

FAST = DeliveryConfig(max_deliveries=3, min_reclaim_idle_ms=600, reclaim_margin_ms=300,
                      heartbeat_ms=100, match_idle_ms=1500, grace_ms=200,
                      stall_timeout_ms=30_000)


@pytest.fixture
def loops(
    redis_client: redis.Redis, cache_client: redis.Redis, redis_server: EmbeddedRedis,
    cache_server: EmbeddedRedis,
) -> Iterator[Callable[..., tuple[list[RefereeLoop], list[WorkerLoop]]]]:
    """Start referees and workers as threads of the test process; stopped at teardown.

    Like a real worker, the engines are compiled before any job is taken: a cold compile
    inside a move would cost the bot its time and forfeit the game.
    """
    dispatch.warm_up(["othello", "gomoku"])
    started: list[RefereeLoop | WorkerLoop] = []

    def start(referees: int = 1, workers: int = 2, shared_cache: bool = True,
              config: DeliveryConfig = FAST) -> tuple[list[RefereeLoop], list[WorkerLoop]]:
        refs = [RefereeLoop(redis_server.client(), f"referee-{i}", config).start()
                for i in range(referees)]
        cache = cache_server.client()
        runner_cache = SharedSearchCache(cache if shared_cache else None)
        works = [WorkerLoop(redis_server.client(), cache, f"worker-{i}", config,
                            BotRunner(cache=runner_cache, grace_ms=config.grace_ms)).start()
                 for i in range(workers)]
        started.extend(refs)
        started.extend(works)
        return refs, works

    yield start
    for loop in started:
        loop.stop(5.0)
