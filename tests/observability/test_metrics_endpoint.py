"""The /metrics endpoint and the RPC layer: real servers, real sockets, hostile clients."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from arena.services.common import metrics
from arena.services.common.embedded_redis import free_port
from arena.services.common.metrics import MetricsServer, serve_metrics
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.parser import text_string_to_metric_families

from arena.v1 import common_pb2, registry_pb2, registry_pb2_grpc
from tests.support.processes import wait_for_file
from tests.support.servers import Server, metadata


@pytest.fixture
def endpoint() -> Iterator[MetricsServer]:
    server = serve_metrics("127.0.0.1:0")
    assert server is not None
    yield server
    server.stop()


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of the endpoint, by name and labels."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        assert reply.status == 200
        text = reply.read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def _raw(port: int, payload: bytes, read: bool = True) -> bytes:
    """Send raw bytes; the whole answer (the server closes after a bad request)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(payload)
        answer = b""
        while read and (chunk := sock.recv(65536)):
            answer += chunk
        return answer


def test_every_metric_declared_says_which_services_count_it() -> None:
    """An endpoint shows the families of its process's role (``COUNTED_BY``); one
    declared without a role would show, at 0, on every process again."""
    declared = {next(iter(value.describe())).name for value in vars(metrics).values()
                if isinstance(value, MetricWrapperBase)}
    assert declared and declared == set(metrics.COUNTED_BY)


def test_no_endpoint_unless_an_address_is_set() -> None:
    assert serve_metrics("") is None


def test_a_busy_port_is_a_clear_error(endpoint: MetricsServer) -> None:
    with pytest.raises(OSError):
        MetricsServer(f"127.0.0.1:{endpoint.port}")


def test_the_endpoint_survives_bad_requests(endpoint: MetricsServer) -> None:
    port = endpoint.port
    assert b"400" in _raw(port, b"\x00\xff garbage \r\n\r\n")
    assert b"400" in _raw(port, b"NOT-HTTP\r\n\r\n")
    assert b"414" in _raw(port, b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n")
    huge_header = b"GET /metrics HTTP/1.0\r\nX: " + b"b" * 100_000 + b"\r\n\r\n"
    assert _raw(port, huge_header).startswith(b"HTTP/1.")
    close = b"Connection: close\r\n\r\n"
    _raw(port, b"POST /metrics HTTP/1.1\r\nContent-Length: 5\r\n" + close[:-2] + b"\r\nhello")
    _raw(port, b"GET /../../etc/passwd HTTP/1.1\r\nHost: x\r\n" + close)
    _raw(port, b"GET /metrics?name[]=%ff%fe&name[]= HTTP/1.1\r\nHost: x\r\n" + close)
    _raw(port, b"GET /metrics HTTP/1.1\r\nAccept: \xff\xfe/;;;q=x\r\n"
               b"Accept-Encoding: gzip, \xff\r\n" + close)
    _raw(port, b"GET /metrics HTTP/1.1\r\n", read=False)  # half a request, then gone
    # Clients that connect and say nothing hold a thread each, never the whole server.
    stuck = [socket.create_connection(("127.0.0.1", port)) for _ in range(20)]
    try:
        stuck[0].sendall(b"GET /metr")
        samples = scrape(port)
    finally:
        for sock in stuck:
            sock.close()
    assert ("process_cpu_seconds_total", ()) in samples  # still serving, every figure


def test_many_concurrent_scrapes(endpoint: MetricsServer) -> None:
    failures: list[BaseException] = []

    def scraper() -> None:
        try:
            for _ in range(5):
                scrape(endpoint.port)
        except BaseException as exc:  # collected and reported below
            failures.append(exc)

    threads = [threading.Thread(target=scraper) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert failures == []


def _handled(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], method: str,
             code: str) -> float:
    labels = (("grpc_code", code), ("grpc_method", method),
              ("grpc_service", "arena.v1.BotRegistry"), ("grpc_type", "unary"))
    return samples.get(("grpc_server_handled_total", labels), 0.0)


def test_rpcs_are_counted_by_status_code(endpoint: MetricsServer,
                                         registry_server: Server) -> None:
    before = scrape(endpoint.port)
    with grpc.insecure_channel(registry_server.target) as channel:
        stub = registry_pb2_grpc.BotRegistryStub(channel)
        missing = registry_pb2.GetBotRequest(bot=common_pb2.BotRef(name="nobody"))
        for _ in range(3):
            with pytest.raises(grpc.RpcError) as caught:
                stub.GetBot(missing, metadata=metadata(), timeout=10)
            assert caught.value.code() is grpc.StatusCode.NOT_FOUND
        with pytest.raises(grpc.RpcError) as caught:
            stub.GetBot(missing, metadata=metadata(None), timeout=10)
        assert caught.value.code() is grpc.StatusCode.UNAUTHENTICATED
        stub.ListBots(registry_pb2.ListBotsRequest(), metadata=metadata(), timeout=10)
    after = scrape(endpoint.port)
    assert _handled(after, "GetBot", "NOT_FOUND") - _handled(before, "GetBot", "NOT_FOUND") == 3
    assert (_handled(after, "GetBot", "UNAUTHENTICATED")
            - _handled(before, "GetBot", "UNAUTHENTICATED")) == 1
    assert _handled(after, "ListBots", "OK") - _handled(before, "ListBots", "OK") == 1
    count = ("grpc_server_handling_seconds_count",
             (("grpc_method", "ListBots"), ("grpc_service", "arena.v1.BotRegistry"),
              ("grpc_type", "unary")))
    assert after[count] - before.get(count, 0.0) == 1


def test_the_web_gateway_serves_metrics_and_logs_as_configured(tmp_path: Path) -> None:
    """`arena up --metrics` lists a metrics address for the web gateway too, and the
    deployments give it ARENA_LOG_FORMAT=json: it read neither (nothing listened there, and
    its lines were always text), and an unknown ARENA_LOG_LEVEL ended it in a traceback."""
    ready, metrics_port = tmp_path / "web.port", free_port()
    env = {"PATH": "/usr/bin:/bin", "ARENA_ADMIN_TOKEN": "a" * 20, "ARENA_LOG_FORMAT": "json",
           "ARENA_METRICS_LISTEN": f"127.0.0.1:{metrics_port}"}
    process = subprocess.Popen(
        [sys.executable, "-m", "arena.services.web", "--listen", "127.0.0.1:0",
         "--ready-file", str(ready)], env=env, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_file(ready, process, 30, lambda: "")
        shown = scrape(metrics_port)
        assert ("process_cpu_seconds_total", ()) in shown
        # Only what the gateway counts: it showed every service's figures, at 0.
        assert not {name for name, _ in shown} & {
            "arena_matches_started_total", "arena_move_jobs_taken_total",
            "arena_cache_probes_total", "arena_ladder_games_counted_total"}
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=60)
    lines = [json.loads(line) for line in stderr.splitlines()]
    assert {line["service"] for line in lines} == {"web"}
    assert any(line["msg"].startswith("web gateway on") for line in lines)
    done = subprocess.run([sys.executable, "-m", "arena.services.web"],
                          env={**env, "ARENA_LOG_LEVEL": "LOUD"}, capture_output=True,
                          text=True, timeout=60)
    assert (done.returncode, done.stderr) == (2, "arena-web: configuration error: "
                                              "ARENA_LOG_LEVEL='LOUD': expected one of "
                                              "DEBUG, INFO, WARNING, ERROR\n")
