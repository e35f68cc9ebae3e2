"""The `__main__` of every service: configuration, logging, build, serve until a signal."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Sequence

from arena.services.common.auth import TokenStore
from arena.services.common.config import Config
from arena.services.common.launcher import die_with_parent, exit_code
from arena.services.common.logs import setup_logging
from arena.services.common.metrics import counting_role, serve_metrics
from arena.services.common.protocol.streams import consumer_name
from arena.services.common.quotas import Quotas
from arena.services.common.server import (
    STREAM_RESERVE,
    Registration,
    ServerHandle,
    build_server,
    serve,
)
from arena.services.common.tls import server_credentials
from arena.services.common.tracing import setup_tracing, shutdown_tracing

from arena.errors import ArenaError

log = logging.getLogger(__name__)

# A service factory: given the configuration, the servicer registrations, their full
# service names, and callbacks to run on shutdown (stop background loops, close connections).
ServiceParts = tuple[list[Registration], list[str], list[Callable[[], None]]]
ServiceFactory = Callable[[Config], ServiceParts]


def run_service(role: str, factory: ServiceFactory, argv: Sequence[str] | None = None) -> int:
    die_with_parent()
    try:
        config = Config.load(role, argv)
        credentials = server_credentials(config)
        instance = consumer_name(role, config.instance)
        setup_logging(role, instance, config.log_level, config.log_format)
        # Read before the service is built: its factory reads them again, and a missing
        # tokens file or bad JSON must stop the service with one line, not a traceback.
        tokens = TokenStore.from_config(config) if config.auth else None
        quotas = Quotas.from_config(config)
    except (OSError, ValueError, ArenaError) as exc:  # a bad value or an unreadable file
        print(f"arena-{role}: configuration error: {exc}", file=sys.stderr)
        return 2
    log.info("configuration:\n  %s", "\n  ".join(config.describe()))
    try:
        metrics = serve_metrics(config.metrics_listen, counting_role(role, config.worker_pool))
    except (OSError, ValueError) as exc:
        print(f"arena-{role}: cannot serve metrics on {config.metrics_listen}: {exc}",
              file=sys.stderr)
        return exit_code(exc) if isinstance(exc, OSError) else 2
    setup_tracing(role, instance, config.otlp_endpoint, config.trace_sample_ratio)
    try:
        registrations, names, on_stop = factory(config)
    except ArenaError as exc:  # a bad file the configuration names (an engine catalog)
        print(f"arena-{role}: configuration error: {exc}", file=sys.stderr)
        return 2
    try:
        handle: ServerHandle = build_server(
            registrations, names, config.listen, tokens,
            threads=max(STREAM_RESERVE + 1, config.grpc_threads), credentials=credentials,
            quotas=quotas)
    except OSError as exc:  # a host that does not resolve, a port in use
        for stop in on_stop:
            stop()
        print(f"arena-{role}: cannot serve on {config.listen}: {exc}", file=sys.stderr)
        return exit_code(exc)
    handle.on_stop.extend(on_stop)
    handle.on_stop.append(shutdown_tracing)  # after the loops: their last spans go out
    if metrics is not None:
        handle.on_stop.append(metrics.stop)
    serve(handle, config.ready_file)
    return 0
