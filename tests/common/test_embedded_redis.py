from __future__ import annotations

import socket
from pathlib import Path

import redis
from arena.services.common import pids
from arena.services.common.embedded_redis import EmbeddedRedis, find_redis_server, free_port


def test_binary_is_found_without_a_system_redis() -> None:
    assert Path(find_redis_server()).exists()


def test_durable_server_has_aof_and_its_own_folder(tmp_path: Path) -> None:
    with EmbeddedRedis(tmp_path / "d", "durable") as server:
        client = server.client()
        assert client.config_get("appendonly")["appendonly"] == "yes"
        assert Path(client.config_get("dir")["dir"]) == (tmp_path / "d").resolve()
        client.set("k", "v")
        assert server.host == "127.0.0.1" and server.port > 0
        assert server.pid is not None
        stamp = pids.stamp(server.pid)
    assert pids.running(stamp) is None


def test_data_survives_a_restart_through_the_aof(tmp_path: Path) -> None:
    with EmbeddedRedis(tmp_path, "durable") as server:
        server.client().set("bot:lucy", "v1")
    with EmbeddedRedis(tmp_path, "durable") as again:
        assert again.client().get("bot:lucy") == b"v1"


def test_cache_server_evicts_with_lru_and_does_not_persist(tmp_path: Path) -> None:
    with EmbeddedRedis(tmp_path, "cache", maxmemory="2mb") as server:
        client = server.client()
        config = client.config_get("*")
        assert config["maxmemory-policy"] == "allkeys-lru"
        assert config["appendonly"] == "no"
        for i in range(400):
            client.set(f"tt:{i}", b"x" * 20_000)
        assert client.dbsize() < 400  # evicted instead of refusing writes


def test_fixture_gives_an_empty_database(redis_client: redis.Redis) -> None:
    assert redis_client.dbsize() == 0
    redis_client.set("left-behind", 1)


def test_fixture_gives_an_empty_database_again(redis_client: redis.Redis) -> None:
    assert redis_client.dbsize() == 0


def test_free_ports_stay_out_of_the_range_of_outgoing_connections() -> None:
    # A port from that range may be taken by any client connection before its server
    # binds it; none is handed out twice by one process.
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    ports = [free_port() for _ in range(200)]
    assert len(set(ports)) == len(ports)
    assert all(10_000 <= port < low for port in ports)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", ports[-1]))  # free when handed out
