"""Serving the web app: uvicorn on a socket we bind ourselves (so port 0 works and the
ready file can name the port), and the same graceful stop as the gRPC services.

On SIGTERM or SIGINT: /healthz answers 503 at once, ``drain_s`` later the live streams
end and uvicorn stops taking connections, in-flight requests get ``GRACE_S`` to finish,
and the process exits 0. A second SIGINT stops at once. Whatever hangs, the process ends
``stop_deadline_s`` after the drain (``server.end_within``, as the gRPC services do).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import socket
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import FrameType

import uvicorn
from arena.services.common.launcher import die_with_parent, exit_code
from arena.services.common.logs import setup_logging
from arena.services.common.metrics import serve_metrics
from arena.services.common.protocol.streams import consumer_name
from arena.services.common.server import STOP_DEADLINE_S, end_within
from arena.services.web.app import Lifecycle, create_app
from arena.services.web.settings import WebSettings, split_listen

log = logging.getLogger("arena.services.web")
GRACE_S = 5


class WebServer(uvicorn.Server):
    """uvicorn with a draining period before it stops, and a ready file once serving."""

    def __init__(self, config: uvicorn.Config, lifecycle: Lifecycle, drain_s: float,
                 ready_file: Path | None, port: int,
                 stop_deadline_s: float = STOP_DEADLINE_S) -> None:
        super().__init__(config)
        self.lifecycle, self.drain_s = lifecycle, drain_s
        self.stop_deadline_s = stop_deadline_s
        self.ready_file, self.port = ready_file, port
        self.drain_started: float | None = None
        self.announced = False

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # Unlike uvicorn's own, this does not re-raise the signal after the stop: a
        # stop on request is a clean exit (status 0), as for the gRPC services.
        if self.drain_started is not None:
            if sig == signal.SIGINT:
                self.force_exit = True
            return
        log.info("signal %s: draining for %.1f s, then stopping", sig, self.drain_s)
        self.lifecycle.draining = True
        self.drain_started = time.monotonic()
        end_within(self.drain_s + self.stop_deadline_s)

    async def on_tick(self, counter: int) -> bool:
        if self.started and not self.announced:
            self.announced = True
            write_ready_file(self.ready_file, self.port)
        if (self.drain_started is not None and not self.should_exit
                and time.monotonic() - self.drain_started >= self.drain_s):
            self.lifecycle.stopping.set()  # live streams end within half a second
            self.should_exit = True
        return await super().on_tick(counter)


def write_ready_file(path: Path | None, port: int) -> None:
    if path is None:
        return
    tmp = path.with_suffix(".tmp")
    tmp.write_text(str(port))
    tmp.replace(path)  # atomic: readers never see a half-written port


def bind(listen: str) -> socket.socket:
    host, port = split_listen(listen)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP, not 0: asyncio turns Nagle off (TCP_NODELAY) only on sockets that
    # say they are TCP, and with Nagle on, a kept-alive connection waits 40 ms for the
    # client's delayed ACK between a response's header and body.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def main(argv: list[str] | None = None) -> int:
    die_with_parent()
    try:
        config, settings = WebSettings.load(argv)
        setup_logging("web", consumer_name("web", config.instance), config.log_level,
                      config.log_format)
    except ValueError as exc:  # a bad environment value: one line, not a traceback
        print(f"arena-web: configuration error: {exc}", file=sys.stderr)
        return 2
    log.info("configuration:\n  %s", "\n  ".join(config.describe()))
    try:
        sock = bind(settings.listen)
    except (OSError, ValueError) as exc:
        log.error("cannot listen on %s: %s", settings.listen, exc)
        return exit_code(exc) if isinstance(exc, OSError) else 2
    try:  # the process's own figures (CPU, memory, open files), as every service serves
        metrics = serve_metrics(config.metrics_listen, "web")
    except (OSError, ValueError) as exc:
        log.error("cannot serve metrics on %s: %s", config.metrics_listen, exc)
        return exit_code(exc) if isinstance(exc, OSError) else 2
    port = sock.getsockname()[1]
    lifecycle = Lifecycle()
    serving = uvicorn.Config(
        create_app(settings, lifecycle), log_config=None, access_log=False, lifespan="on",
        timeout_graceful_shutdown=GRACE_S, proxy_headers=False, server_header=False,
    )
    server = WebServer(serving, lifecycle, settings.drain_s, settings.ready_file, port)
    log.info("web gateway on http://%s:%d (reading %s)", settings.listen.rpartition(":")[0],
             port, settings.read_access)
    try:
        asyncio.run(server.serve(sockets=[sock]))
    finally:
        if metrics is not None:
            metrics.stop()
    return 0


def check_http_health(target: str, timeout_s: float = 2.0) -> bool:
    """True if the web gateway at ``target`` (host:port) answers GET /healthz with 200."""
    try:
        with urllib.request.urlopen(f"http://{target}/healthz", timeout=timeout_s) as reply:
            return bool(reply.status == 200)
    except (urllib.error.URLError, OSError):
        return False
