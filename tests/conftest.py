"""Session-wide fixtures: real Redis servers (durable + cache) on free loopback ports, and a
real registry in the test process for tests that run referees, workers or ladders.

Every test that asks for ``redis_client`` or ``cache_client`` gets an empty database:
the fixture flushes it before the test. Nothing here needs a system Redis.

`make test` runs the tests in two processes (pytest-xdist, ``--dist loadfile``): each
file runs whole, in order, in one of them, since some files' tests share a stack or what
an earlier test made. (Only ``deploy/test_compose_stack.py`` starts Compose projects on
the Docker engine, so two processes never start them at once.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from arena.clients.sdk import ArenaClient
from arena.services.common.config import Config
from arena.services.common.egress import EgressPolicy
from arena.services.common.embedded_redis import EmbeddedRedis
from arena.services.common.peers import BotVersions
from arena.services.common.protocol.delivery import DeliveryConfig
from arena.services.common.protocol.matches import MatchStore
from arena.services.common.protocol.tcache import SharedSearchCache
from arena.services.referee.loop import RefereeLoop
from arena.services.referee.matches import create_match
from arena.services.worker.bots import BotRunner
from arena.services.worker.consumer import WorkerLoop

from arena.games import GAMES
from arena.v1 import match_pb2
from tests.data import shared_data_dir
from tests.support.servers import Server, client, compile_engines, serve

# Short timeouts so that reclaims and take-overs happen within a test's patience.
FAST = DeliveryConfig(max_deliveries=3, min_reclaim_idle_ms=600, reclaim_margin_ms=300,
                      heartbeat_ms=100, match_idle_ms=1500, grace_ms=200,
                      stall_timeout_ms=30_000)
Loops = Callable[..., tuple[list[RefereeLoop], list[WorkerLoop]]]
# The tests' external bots listen on loopback, which the arena refuses by default.
TEST_BOTS = "127.0.0.0/8"


def loopback_runner(config: DeliveryConfig, cache: SharedSearchCache | None = None) -> BotRunner:
    """A worker's bot runner that may dial the tests' loopback bots."""
    return BotRunner(cache=cache or SharedSearchCache(None), grace_ms=config.grace_ms,
                     egress=EgressPolicy.parse(TEST_BOTS))


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


@pytest.fixture
def registry_server(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> Iterator[Server]:
    """A real registry (in this process, on the session's durable Redis, emptied first)."""
    server = serve("registry", Config(redis_url=redis_server.url, external_allow=TEST_BOTS))
    yield server
    server.stop()


@pytest.fixture
def peers(registry_server: Server) -> Iterator[ArenaClient]:
    """What a service uses to call the registry: the SDK with the admin token."""
    with client(registry=registry_server.target) as sdk:
        yield sdk


@pytest.fixture
def bots(peers: ArenaClient) -> BotVersions:
    return BotVersions(peers)


@pytest.fixture
def loops(bots: BotVersions, redis_server: EmbeddedRedis,
          cache_server: EmbeddedRedis, cache_client: redis.Redis) -> Iterator[Loops]:
    """Start referee and worker loops as threads of the test process; stopped at teardown.

    Like a real worker, the engines are compiled before any job is taken: a cold compile
    inside a move would cost the bot its time and forfeit the game.
    """
    compile_engines()
    for each in GAMES:
        each.engine().warm_up()
    started: list[RefereeLoop | WorkerLoop] = []

    def start(referees: int = 1, workers: int = 2, shared_cache: bool = True,
              config: DeliveryConfig = FAST) -> tuple[list[RefereeLoop], list[WorkerLoop]]:
        refs = [RefereeLoop(redis_server.client(), bots, f"referee-{i}", config).start()
                for i in range(referees)]
        cache = cache_server.client()
        runner_cache = SharedSearchCache(cache if shared_cache else None)
        works = [WorkerLoop(redis_server.client(), cache, f"worker-{i}", config,
                            loopback_runner(config, runner_cache)).start()
                 for i in range(workers)]
        started.extend(refs)
        started.extend(works)
        return refs, works

    yield start
    for loop in started:
        loop.stop(5.0)


NewMatch = Callable[..., match_pb2.Match]


@pytest.fixture
def new_match(redis_client: redis.Redis, bots: BotVersions) -> NewMatch:
    """Create a match the way CreateMatch does (validated, queued): ``new_match(config)``."""
    store = MatchStore(redis_client)

    def create(config: match_pb2.MatchConfig, owner: str = "me",
               request_id: str = "") -> match_pb2.Match:
        return create_match(store, bots, config, owner, request_id)

    return create
