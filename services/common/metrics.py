"""Prometheus metrics of every Arena service: every metric declared here, once.

A service serves them on ``metrics_listen`` (``ARENA_METRICS_LISTEN``; empty: no endpoint,
the metrics are still counted in memory, which costs well under a microsecond each). The
names follow Prometheus conventions (``_total`` counters, ``_seconds`` histograms) and the
gRPC ecosystem's (``grpc_server_handled_total{grpc_service, grpc_method, grpc_code}``), so
the usual dashboards and alerts apply; ``deploy/monitoring/`` has Arena's own.

* Every RPC: counted and timed by :func:`rpc_layer`, a layer of the server's one
  interceptor (outermost: it sees the status the error layer chose).
* The delivery of moves: jobs published (referee), taken, answered, dead-lettered, dropped
  (worker); the time a job waits in the queue and the engine's time (histograms); the
  workers' busy time; the shared cache's probes, hits and the engine time it saved; Redis
  round trips on the move path.
* Matches and ladders: started, finished by termination, forfeits by termination, games
  counted.
* Analysts (workers of the analysis pool) count their own: the families of the move loop
  are the match workers' alone, and those both pools count carry ``pool``.
* Queue depths, consumer-group lag, live workers and Redis memory come from one component
  only (a referee holding a lease, see ``queue_collector``): every referee could read them,
  but one answer per figure keeps sums and alerts simple.

No label takes unbounded values (ids, free text): ids go in logs and traces.
"""

from __future__ import annotations

import functools
import logging
import socket
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, make_server

import grpc
from arena.services.common.errors import Behavior, Wrap, catching
from prometheus_client import (
    REGISTRY,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    make_wsgi_app,
)
from prometheus_client.exposition import ThreadingWSGIServer
from prometheus_client.metrics_core import Metric

from arena.errors import ResourceExhaustedError

log = logging.getLogger(__name__)

disable_created_metrics()  # type: ignore[no-untyped-call]  # no ``_created`` series: half the scrape

# Latency buckets: gRPC calls and Redis round trips are sub-millisecond to seconds; engine
# searches and queue waits run from a millisecond to minutes.
_FAST = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
         1.0, 2.5, 5.0)
_SLOW = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
         300.0)

# -- every RPC ------------------------------------------------------------------------------

RPC_HANDLED = Counter("grpc_server_handled_total", "RPCs completed, by status code",
                      ["grpc_service", "grpc_method", "grpc_type", "grpc_code"])
RPC_SECONDS = Histogram("grpc_server_handling_seconds", "time to complete an RPC",
                        ["grpc_service", "grpc_method", "grpc_type"], buckets=_FAST)
LIMIT_REFUSALS = Counter("arena_limit_refusals_total",
                         "calls refused with RESOURCE_EXHAUSTED, by the quota or shared limit "
                         "that refused them", ["limit"])

# -- the web gateway's API ------------------------------------------------------------------

WEB_REQUESTS = Counter("arena_web_requests_total",
                       "web API requests answered, by route (its path template), method and "
                       "HTTP status; an address no route takes is the route 'unrouted'",
                       ["route", "method", "code"])
WEB_SECONDS = Histogram("arena_web_request_seconds", "time to answer a web API request (a "
                        "live stream: until its first bytes)", ["route"], buckets=_FAST)
WEB_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"})

# -- the delivery of moves ------------------------------------------------------------------

JOBS_PUBLISHED = Counter("arena_move_jobs_published_total",
                         "move jobs published on the move stream (referee)")
JOBS_TAKEN = Counter("arena_move_jobs_taken_total",
                     "move jobs a worker took to run: new, taken ahead, or reclaimed", ["how"])
JOBS_RECLAIMED = Counter("arena_move_jobs_reclaimed_total",
                         "move jobs taken over from a worker that went quiet")
JOBS_ANSWERED = Counter("arena_move_jobs_answered_total",
                        "move jobs answered (result posted), by game and bot error",
                        ["game", "error"])
JOBS_DEAD = Counter("arena_move_jobs_dead_lettered_total",
                    "move jobs moved to the dead-letter stream", ["reason"])
DEAD_UNREADABLE, DEAD_TOO_OFTEN = "unreadable", "too_many_deliveries"  # its reasons
JOBS_DROPPED = Counter("arena_move_jobs_dropped_total",
                       "move jobs acknowledged without an answer: past their deadline, or "
                       "their ply no longer wanted", ["reason"])
JOBS_RELEASED = Counter("arena_move_jobs_released_total",
                        "move jobs a worker gave back unanswered (stopping, or "
                        "its build of the job's engine changed)")
JOBS_HANDED_BACK = Counter("arena_move_jobs_handed_back_total",
                           "move jobs a worker handed back to the end of the queue, by why: "
                           "fair_share (their owner held their share of the workers while "
                           "another owner waited), io_slots (an external bot's call, with "
                           "every one of the worker's calls in flight)", ["reason"])
MOVE_WAIT = Histogram("arena_move_wait_seconds",
                      "time from a job's publication to its start on a worker (Redis clock)",
                      buckets=_SLOW)
ENGINE_SECONDS = Histogram("arena_engine_seconds", "engine search time of answered jobs "
                           "(cache answers excluded)", ["game"], buckets=_SLOW)
WORKER_BUSY = Counter("arena_worker_busy_seconds_total",
                      "time the worker's engine thread spent on jobs (busy ratio: its rate)")
CACHE_PROBES = Counter("arena_cache_probes_total", "shared transposition cache probes")
CACHE_HITS = Counter("arena_cache_hits_total", "shared transposition cache hits")
CACHE_SAVED = Counter("arena_cache_saved_seconds_total",
                      "engine time the cache's answers had cost when first searched")
# Match workers and analysts both run protocol engines: ``pool`` (match, analysis) tells
# their figures apart.
ENGINE_STARTS = Counter("arena_protocol_engine_starts_total",
                        "protocol engine processes a worker started: first use, after a "
                        "failure, or replaced near their CPU-seconds limit", ["engine", "pool"])
ENGINE_MOVES = Counter("arena_protocol_engine_moves_total",
                       "protocol engine moves, by whether a process already running and "
                       "warm answered (warm=yes) or one started for this move",
                       ["engine", "warm", "pool"])
ENGINE_STRETCH = Histogram("arena_protocol_engine_time_stretch",
                           "time a protocol engine timed on CPU was told, over its move's "
                           "limit: 1 on an idle machine, up to 2 on a busy one",
                           ["engine", "pool"], buckets=(1.0, 1.1, 1.25, 1.5, 1.75, 2.0))
ENGINE_HELD = Counter("arena_protocol_engine_held_total",
                      "protocol engine moves stopped at their CPU limit until the time they "
                      "were told ran out (the machine quietened during the move)",
                      ["engine", "pool"])
REDIS_SECONDS = Histogram("arena_redis_roundtrip_seconds",
                          "Redis round trips on the move path, by operation", ["op"],
                          buckets=_FAST)

# -- the analysis pool ----------------------------------------------------------------------

ANALYSIS_BUSY = Counter("arena_analysis_busy_seconds_total",
                        "time an analyst's slots spent on searches (Engine.Analyze; busy "
                        "slots: its rate)")

# -- matches and ladders --------------------------------------------------------------------

MOVES_JUDGED = Counter("arena_moves_judged_total",
                       "answers judged by a referee: recorded, or a forfeit",
                       ["game", "verdict"])
MOVE_LATENCY = Histogram("arena_move_latency_seconds",
                         "from a job's publication to its judgement (referee clock)",
                         buckets=_SLOW)
MATCHES_STARTED = Counter("arena_matches_started_total", "matches a referee started")
MATCHES_FINISHED = Counter("arena_matches_finished_total", "matches finished, by termination",
                           ["termination"])
FORFEITS = Counter("arena_forfeits_total", "games lost by forfeit, by termination",
                   ["termination"])
MATCHES_RUNNING = Gauge("arena_matches_running", "matches this referee runs now")
LADDER_GAMES = Counter("arena_ladder_games_counted_total",
                       "finished ladder games counted in their standings")


# Which services count each family. A process's endpoint shows those of its role (and
# the families no role owns: the process's own CPU, memory and open files, a collector
# a service registers): every process declared every metric here, so the web gateway
# showed `arena_matches_started_total 0` and a worker `arena_ladder_games_counted_total
# 0`, figures it never counts. An analyst (a worker of the analysis pool) is a role of its
# own: it showed the match workers' families under their names, so that a dashboard's busy
# workers or jobs answered counted analysts too.
_GRPC_SERVICES = ("registry", "referee", "ladder", "worker", "analyst")
COUNTED_BY: dict[str, tuple[str, ...]] = {
    next(iter(metric.describe())).name: roles for roles, family in (
        (_GRPC_SERVICES, (RPC_HANDLED, RPC_SECONDS)),
        ((*_GRPC_SERVICES, "web"), (LIMIT_REFUSALS,)),
        (("web",), (WEB_REQUESTS, WEB_SECONDS)),
        (("referee",), (JOBS_PUBLISHED, MOVES_JUDGED, MOVE_LATENCY, MATCHES_STARTED,
                        MATCHES_FINISHED, FORFEITS, MATCHES_RUNNING)),
        (("worker",), (JOBS_TAKEN, JOBS_RECLAIMED, JOBS_ANSWERED, JOBS_DEAD, JOBS_DROPPED,
                       JOBS_RELEASED, JOBS_HANDED_BACK, MOVE_WAIT, ENGINE_SECONDS,
                       WORKER_BUSY, CACHE_PROBES, CACHE_HITS, CACHE_SAVED, REDIS_SECONDS)),
        (("worker", "analyst"), (ENGINE_STARTS, ENGINE_MOVES, ENGINE_STRETCH, ENGINE_HELD)),
        (("analyst",), (ANALYSIS_BUSY,)),
        (("ladder",), (LADDER_GAMES,)),
    ) for metric in family}


# The series the alert rules read (deploy/monitoring/prometheus-rules.yaml), shown at 0
# from the start: a labelled counter has no sample before its first increment, and
# ``increase()`` counts nothing for a series whose first sample is already 1, so each
# process's (and each restarted process's) first dead letter went unseen by the alerts.
for _metric, _labels in ((FORFEITS, ("dead_lettered",)), (JOBS_DEAD, (DEAD_UNREADABLE,)),
                         (JOBS_DEAD, (DEAD_TOO_OFTEN,))):
    _metric.labels(*_labels)


class RoleView:
    """The default registry's families that ``role`` counts (``COUNTED_BY``) and those
    no role owns; None shows every family."""

    def __init__(self, role: str | None) -> None:
        self.role = role

    def collect(self) -> Iterator[Metric]:
        for family in REGISTRY.collect():
            roles = COUNTED_BY.get(family.name)
            if self.role is None or roles is None or self.role in roles:
                yield family

    def restricted_registry(self, names: Iterable[str]) -> _Samples:
        """For ``/metrics?name[]=...``: only samples of those names."""
        return _Samples(self, frozenset(names))


class _Samples:
    def __init__(self, view: RoleView, names: frozenset[str]) -> None:
        self.view, self.names = view, names

    def collect(self) -> Iterator[Metric]:
        for family in self.view.collect():
            samples = [sample for sample in family.samples if sample.name in self.names]
            if samples:
                kept = Metric(family.name, family.documentation, family.type, family.unit)
                kept.samples = samples
                yield kept


@functools.lru_cache(maxsize=4096)
def child(metric: Any, *values: str) -> Any:
    """``metric.labels(*values)``, looked up once: ``labels`` takes a lock and checks its
    arguments at every call, several times the cost of the increment itself."""
    return metric.labels(*values)


def observe_redis(op: str, seconds: float) -> None:
    child(REDIS_SECONDS, op).observe(seconds)


# -- the RPC layer --------------------------------------------------------------------------


def rpc_layer(details: grpc.HandlerCallDetails) -> Wrap:
    """The metrics layer of ``server.ServiceInterceptor``: counts and times each call,
    labelled by the status code it ended with."""
    service, _, method = details.method.lstrip("/").rpartition("/")
    return lambda behavior: _measured(behavior, service or "unknown", method)


def _measured(behavior: Behavior, service: str, method: str) -> Behavior:
    def measured(request: Any, context: grpc.ServicerContext) -> Any:
        began = time.perf_counter()
        try:
            result = behavior(request, context)
        except BaseException:
            _handled(service, method, "unary", context, began, "UNKNOWN")
            raise
        if isinstance(result, Iterator):
            return _measured_stream(result, service, method, context, began)
        _handled(service, method, "unary", context, began, "OK")
        return result

    return measured


def _measured_stream(items: Iterator[Any], service: str, method: str,
                     context: grpc.ServicerContext, began: float) -> Iterator[Any]:
    ended = "UNKNOWN"  # unless the stream runs out or is closed
    try:
        yield from items
        ended = "OK"
    except GeneratorExit:  # closed: the client went away (or the server is stopping)
        ended = "CANCELLED"
        raise
    finally:
        _handled(service, method, "server_stream", context, began, ended)


def refusal_layer(details: grpc.HandlerCallDetails) -> Wrap:
    """Counts each refusal (``ResourceExhaustedError``) by its ``limit``, so that an
    operator sees which quota or shared limit turns callers away. Inside the error layer,
    which turns the refusal into its status."""
    return _count_refusals


def _counted_refusal(exc: Exception, context: grpc.ServicerContext) -> None:
    if isinstance(exc, ResourceExhaustedError):
        LIMIT_REFUSALS.labels(exc.limit or "other").inc()


_count_refusals = catching(_counted_refusal)


def _handled(service: str, method: str, kind: str, context: grpc.ServicerContext,
             began: float, ended: str) -> None:
    """Counts and times one call by its status: the code an abort or ``set_code`` gave it,
    CANCELLED if the client has gone (cancelled, or its deadline passed), else ``ended``
    (OK, or UNKNOWN for an uncaught exception)."""
    code = context.code()  # type: ignore[attr-defined]  # set by an abort or set_code
    if isinstance(code, grpc.StatusCode):
        name = code.name
    else:  # a stream that saw its client leave and returned is not OK but CANCELLED
        name = ended if context.is_active() else "CANCELLED"
    child(RPC_HANDLED, service, method, kind, name).inc()
    child(RPC_SECONDS, service, method, kind).observe(time.perf_counter() - began)


# -- the /metrics endpoint ------------------------------------------------------------------


class _QuietHandler(WSGIRequestHandler):
    """No access log on stderr, and a client that sends nothing for a while is dropped
    (one slow or stuck client must not hold a thread forever)."""

    timeout = 10

    def log_message(self, format: str, *args: Any) -> None:
        return


class MetricsServer:
    """``/metrics`` over HTTP in daemon threads (one per connection)."""

    def __init__(self, listen: str, role: str | None = None) -> None:
        host, _, port = listen.rpartition(":")
        host = host.strip("[]") or "0.0.0.0"

        class Server(ThreadingWSGIServer):
            address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
            request_queue_size = 64

        self._httpd = make_server(host, int(port), make_wsgi_app(RoleView(role)), Server,
                                  handler_class=_QuietHandler)
        self.port = int(self._httpd.server_port)
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        name="metrics-http", daemon=True)

    def start(self) -> MetricsServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def counting_role(role: str, pool: str) -> str:
    """The role whose families a process shows (``COUNTED_BY``): a worker of the analysis
    pool shows an analyst's."""
    return "analyst" if role == "worker" and pool == "analysis" else role


def serve_metrics(listen: str, role: str | None = None) -> MetricsServer | None:
    """Start the endpoint if ``listen`` names an address (``host:port``, port 0: any),
    showing the families ``role`` counts (``RoleView``; None: all)."""
    if not listen:
        return None
    server = MetricsServer(listen, role).start()
    log.info("metrics on http://%s:%d/metrics", listen.rpartition(":")[0], server.port)
    return server
