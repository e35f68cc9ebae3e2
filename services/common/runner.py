"""The `__main__` of every service: configuration, logging, build, serve until a signal."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Sequence

from arena.services.common.auth import TokenStore
from arena.services.common.config import Config
from arena.services.common.launcher import die_with_parent
from arena.services.common.server import Registration, ServerHandle, build_server, serve
from arena.services.common.tls import server_credentials

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
    except ValueError as exc:  # a bad value or an unreadable file: one line, no traceback
        print(f"arena-{role}: configuration error: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=config.log_level.upper(), stream=sys.stderr,
        format=f"%(asctime)s {role} %(levelname)s %(name)s: %(message)s",
    )
    log.info("configuration:\n  %s", "\n  ".join(config.describe()))
    registrations, names, on_stop = factory(config)
    tokens = TokenStore.from_config(config) if config.auth else None
    handle: ServerHandle = build_server(registrations, names, config.listen, tokens,
                                        credentials=credentials)
    handle.on_stop.extend(on_stop)
    serve(handle, config.ready_file)
    return 0
