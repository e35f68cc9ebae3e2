"""The `__main__` of every service: settings, logging, build, serve until a signal."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

from arena.services.common.auth import TokenStore
from arena.services.common.config import Settings
from arena.services.common.server import Registration, ServerHandle, build_server, serve
from arena.services.common.stack import die_with_parent

# A service factory: given the settings, the servicer registrations, their full service
# names, and callbacks to run on shutdown (stop background loops, close connections).
ServiceParts = tuple[list[Registration], list[str], list[Callable[[], None]]]
ServiceFactory = Callable[[Settings], ServiceParts]


def run_service(prog: str, factory: ServiceFactory, argv: list[str] | None = None) -> int:
    die_with_parent()
    settings = Settings.from_args(prog, argv)
    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr,
        format=f"%(asctime)s {prog} %(levelname)s %(name)s: %(message)s",
    )
    registrations, names, on_stop = factory(settings)
    tokens = TokenStore.from_env() if settings.auth else None
    handle: ServerHandle = build_server(registrations, names, settings.listen, tokens)
    handle.on_stop.extend(on_stop)
    serve(handle, settings.ready_file)
    return 0
