"""Server bootstrap shared by every Arena service.

``build_server`` returns a started-ready gRPC server bound to an address (port 0 picks a
free port) with health checking, reflection, error mapping and (optionally) token auth;
``serve`` runs it until SIGTERM/SIGINT and shuts down gracefully: health goes NOT_SERVING
first so load balancers stop sending, then in-flight RPCs get a grace period.
"""

from __future__ import annotations

import errno
import faulthandler
import functools
import logging
import os
import signal
import socket
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from arena.clients.sdk import open_channel
from arena.services.common.auth import (
    OPEN_SERVICES,
    Authenticator,
    TokenStore,
    current_principal,
)
from arena.services.common.errors import Behavior, Wrap, decoded, map_errors, rewrap, tolerant
from arena.services.common.metrics import refusal_layer, rpc_layer
from arena.services.common.quotas import UNLIMITED_VALUE, Quotas
from arena.services.common.shares import Refusal, Shares, Turns
from google.protobuf import descriptor_pool
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from arena.errors import ResourceExhaustedError

log = logging.getLogger(__name__)

# A layer of the server's interceptor: given a call, a wrapper of its handler (or None).
Layer = Callable[[grpc.HandlerCallDetails], Wrap | None]


class ServiceInterceptor(grpc.ServerInterceptor):  # type: ignore[type-arg]
    """The one interceptor of every Arena server: each layer may wrap each handler; the
    first layer is the outermost (metrics, errors, then authentication, then the
    handler)."""

    def __init__(self, layers: Sequence[Layer]) -> None:
        self._layers = list(layers)

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], grpc.RpcMethodHandler[Any, Any] | None],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = continuation(handler_call_details)
        if handler is None:
            return None
        handler = tolerant(handler)
        for layer in reversed(self._layers):
            wrap = layer(handler_call_details)
            if wrap is not None:
                handler = rewrap(handler, wrap)
        return handler


STREAM_RESERVE = 16  # threads live streams never take: the unary calls' share
CALL_WAIT_S = 30.0  # longest a call waits behind its caller's others (less if its deadline is)
CALLS_WAITING = 4  # a user's calls that may wait, per call they may run at once
WAITING_SHARE = 0.25  # of a server's threads, at most so many hold waiting calls
DEADLINE_MARGIN_S = 0.5  # a refusal reaches the caller before its own deadline


@functools.cache
def streams(method: str) -> bool:
    """Whether ``method`` (``/package.Service/Method``, one the server has a handler for)
    answers with a stream, read from its descriptor."""
    service, _, name = method.lstrip("/").rpartition("/")
    try:
        found = descriptor_pool.Default().FindServiceByName(service).methods_by_name[name]
    except KeyError:
        return False
    return bool(found.server_streaming)


class Gate:
    """The layer that shares a server's threads among its callers. Runs after
    authentication, in the handler's thread; admins (the services' own tokens, the web
    gateway reading for its anonymous viewers) pass.

    The server is synchronous and bound by one interpreter lock: a call holds one of its
    threads until it ends, and the calls running share one CPU. So:

    * live streams (server-streaming calls: WatchMatch, WatchLadder) may take all but
      ``STREAM_RESERVE`` threads in all, and a user at most their ``open_streams`` quota;
      past either, the stream is refused at once with RESOURCE_EXHAUSTED;
    * a user's other calls run at most ``calls_at_once`` at once; more wait for their turn
      in the order they came (``shares.Turns``), at most ``CALLS_WAITING`` times that many
      and each at most ``CALL_WAIT_S`` or until just before its deadline, then are refused
      with RESOURCE_EXHAUSTED. One user's eight loops of large match lists otherwise took
      the CPU from everyone (another user's short list: 13 ms alone, 175 ms beside them).
      A waiting call holds a thread too, so all users' lines together hold at most
      ``WAITING_SHARE`` of the threads; past that a call that would wait is refused at
      once (with ``calls_at_once`` 2, the full lines of 26 users would hold all 256
      threads, and health checks would queue behind them).
    """

    def __init__(self, threads: int, quotas: Quotas | None) -> None:
        self.streams = Shares(max(1, threads - STREAM_RESERVE))
        self.calls = Turns(CALLS_WAITING, max(1, int(threads * WAITING_SHARE)))
        self.quotas = quotas or Quotas()

    def __call__(self, details: grpc.HandlerCallDetails) -> Wrap | None:
        if details.method.startswith(OPEN_SERVICES):
            return None
        return self._stream if streams(details.method) else self._call

    def _call(self, behavior: Behavior) -> Behavior:
        def gated(request: Any, context: grpc.ServicerContext) -> Any:
            principal = current_principal()
            mine = int(self.quotas.for_caller(principal).calls_at_once)
            if mine >= UNLIMITED_VALUE:
                return behavior(request, context)
            remaining = context.time_remaining()
            wait_s = max(0.0, CALL_WAIT_S if remaining is None
                         else min(CALL_WAIT_S, remaining - DEADLINE_MARGIN_S))
            refusal = self.calls.take(principal.name, mine, wait_s)
            if refusal is Refusal.QUEUE:
                raise ResourceExhaustedError(
                    f"quota calls_at_once is {mine}: {mine} of your calls run on this server "
                    f"and {CALLS_WAITING * mine} more wait their turn; wait for them",
                    "calls_at_once")
            if refusal is Refusal.TOTAL:
                raise ResourceExhaustedError(
                    f"this server has {self.calls.most_waiting} calls waiting their turn, its "
                    "most: try again shortly", "server_calls_waiting")
            if refusal is not None:
                raise ResourceExhaustedError(
                    f"quota calls_at_once is {mine}: this call waited {wait_s:.1f} s for your "
                    "earlier calls to this server to end; allow a longer wait with a "
                    "longer timeout", "calls_at_once")
            try:
                return behavior(request, context)
            finally:
                self.calls.give_back(principal.name)
        return gated

    def _stream(self, behavior: Behavior) -> Behavior:
        def gated(request: Any, context: grpc.ServicerContext) -> Any:
            principal = current_principal()
            mine = int(self.quotas.for_caller(principal).open_streams)
            refusal = self.streams.take(principal.name, mine)
            if refusal is Refusal.SHARE:
                raise ResourceExhaustedError(f"quota open_streams is {mine}: close a "
                                             "live stream first", "open_streams")
            if refusal is Refusal.TOTAL:
                raise ResourceExhaustedError(
                    f"this server has {self.streams.total} live streams open, its "
                    "most: try again shortly", "server_streams")
            try:
                items = behavior(request, context)
            except BaseException:
                self.streams.give_back(principal.name)
                raise
            return self._counted(items, principal.name)
        return gated

    def _counted(self, items: Iterator[Any], name: str) -> Iterator[Any]:
        try:
            yield from items
        finally:
            self.streams.give_back(name)


# A function that adds one servicer to the server, e.g.
# ``lambda s: registry_pb2_grpc.add_BotRegistryServicer_to_server(servicer, s)``.
Registration = Callable[[grpc.Server], None]


@dataclass
class ServerHandle:
    """A built server: the gRPC server, its bound port and its health servicer."""

    server: grpc.Server
    port: int
    health: health.HealthServicer
    service_names: list[str]
    on_stop: list[Callable[[], None]] = field(default_factory=list)

    def start(self) -> ServerHandle:
        self.server.start()
        self.set_serving(True)
        return self

    def set_serving(self, serving: bool) -> None:
        status = (
            health_pb2.HealthCheckResponse.SERVING
            if serving
            else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        for name in ["", *self.service_names]:
            self.health.set(name, status)

    def stop(self, grace_s: float = 5.0) -> None:
        """Graceful stop: NOT_SERVING, refuse new RPCs, let in-flight ones finish."""
        self.set_serving(False)
        for callback in self.on_stop:
            callback()
        self.server.stop(grace_s).wait()


def build_server(
    registrations: Iterable[Registration],
    service_names: Sequence[str],
    address: str = "127.0.0.1:0",
    tokens: TokenStore | None = None,
    threads: int = 256,
    credentials: grpc.ServerCredentials | None = None,
    quotas: Quotas | None = None,
) -> ServerHandle:
    """Build a server for the given servicers; ``tokens=None`` turns authentication off
    (every caller is the anonymous admin); ``credentials`` (``tls.server_credentials``)
    make it serve TLS only; ``quotas`` give each user's ``open_streams`` and
    ``calls_at_once``."""
    interceptor = ServiceInterceptor([rpc_layer, map_errors, refusal_layer,
                                      Authenticator(tokens), Gate(threads, quotas), decoded])
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=threads, thread_name_prefix="grpc"),
        interceptors=[interceptor],
        options=[("grpc.so_reuseport", 0)],
    )
    for register in registrations:
        register(server)
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    names = list(service_names)
    reflection.enable_server_reflection(
        [*names, health.SERVICE_NAME, reflection.SERVICE_NAME], server
    )
    try:
        if credentials is None:
            port = server.add_insecure_port(address)
        else:
            port = server.add_secure_port(address, credentials)
    except RuntimeError as exc:  # gRPC's "Failed to bind to address ..."
        raise _bind_error(address, f": {exc}") from None
    if port == 0:
        raise _bind_error(address, "")
    return ServerHandle(server, port, health_servicer, names)


def _bind_error(address: str, detail: str) -> OSError:
    """The error of a server that could not bind ``address``, with ``errno.EADDRINUSE``
    when something listens there (gRPC's error does not say why): the launcher then
    starts its stack again on other ports (``launcher.exit_code``)."""
    error = OSError(f"could not bind {address}{detail}")
    host, _, port = address.rpartition(":")
    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            probe.bind((host.strip("[]"), int(port)))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            error.errno = errno.EADDRINUSE
    except ValueError:  # no port number: nothing there to be in use
        pass
    return error


def host_of(address: str) -> str:
    return address.rsplit(":", 1)[0]


SIGNAL_POLL_S = 0.2  # how often the main thread looks for a signal it did not receive


def stop_signals() -> threading.Event:
    """An event that SIGTERM or SIGINT sets; their handlers are installed by this call (in
    the main thread), so a signal from now on asks to stop rather than ends the process."""
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        log.info("signal %s: shutting down", signum)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    return stop


def wait_for(stop: threading.Event) -> None:
    """Block until ``stop`` is set, in steps rather than one wait: Python runs a signal's
    handler in the main thread only, and a SIGTERM the kernel delivers to another thread
    (gRPC's, numba's) does not wake a main thread blocked in one long wait (a worker
    ignored one for good)."""
    while not stop.wait(SIGNAL_POLL_S):
        pass


# Past this, a stop is stuck: the longest graceful one (a worker waits up to 15 s for its
# move, joins its threads, then gives calls the 5 s grace) takes under 30 s.
STOP_DEADLINE_S = 45.0
STUCK_EXIT_CODE = 70  # EX_SOFTWARE


def serve(handle: ServerHandle, ready_file: Path | None = None, grace_s: float = 5.0,
          stop_deadline_s: float = STOP_DEADLINE_S) -> None:
    """Start, announce the port, block until SIGTERM/SIGINT, then stop gracefully; the
    process ends within ``stop_deadline_s`` of the signal whatever hangs."""
    stop = stop_signals()
    handle.start()
    log.info("serving %s on port %d", ", ".join(handle.service_names), handle.port)
    if ready_file is not None:
        tmp = ready_file.with_suffix(".tmp")
        tmp.write_text(str(handle.port))
        tmp.replace(ready_file)  # atomic: readers never see a half-written port
    wait_for(stop)
    end_within(stop_deadline_s)
    handle.stop(grace_s)


def end_within(seconds: float) -> None:
    """End the process ``seconds`` from now if it has not ended by itself (its stop or
    the interpreter's exit hangs on a thread), after writing every thread's stack to
    stderr, the service's log. A service whose launcher died has nobody left to kill it;
    a worker once outlived its killed launcher by more than 10 s, and why is not known."""

    def expire() -> None:
        log.error("still stopping after %.0f s; every thread's stack follows, then exit %d",
                  seconds, STUCK_EXIT_CODE)
        faulthandler.dump_traceback(all_threads=True)
        os._exit(STUCK_EXIT_CODE)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True  # it never holds the exit up itself
    timer.start()


def check_health(target: str, timeout_s: float = 2.0, service: str = "",
                 credentials: grpc.ChannelCredentials | None = None) -> bool:
    """True if the server at ``target`` answers SERVING (over TLS with ``credentials``)."""
    try:
        with open_channel(target, credentials) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=timeout_s)
            return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)
    except grpc.RpcError:
        return False
