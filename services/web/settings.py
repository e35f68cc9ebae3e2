"""The web gateway's view of the shared configuration (``services/common/config.py``,
``docs/configuration.md``): where the services are, which token reads go out with, who
may read, and how it stops.

Reads go out with the service token (``ARENA_SERVICE_TOKEN``, best a ``user`` token made
for the gateway; else the admin token) while reading is open; ``ARENA_WEB_READ=token``
restricts reading to people who enter a token in the page. Actions always need one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from arena.services.common.config import Config
from arena.services.web.addresses import (
    FORWARDED_HEADERS,
    X_FORWARDED_FOR,
    Network,
    parse_proxies,
)

ReadAccess = Literal["open", "token"]
READ_ACCESS: tuple[ReadAccess, ...] = ("open", "token")


@dataclass(frozen=True)
class WebSettings:
    listen: str = "127.0.0.1:0"
    ready_file: Path | None = None
    read_access: ReadAccess = "open"
    # The token the gateway reads with when reading is open; never used for actions.
    service_token: str = ""
    registry: str = ""
    referee: str = ""
    ladder: str = ""
    engine: str = ""
    # Seconds between /healthz turning 503 and the server closing on SIGTERM, so that a
    # load balancer stops sending first (Kubernetes: a few seconds; locally 0).
    drain_s: float = 0.0
    # Live streams (server-sent events) open at once; each holds one gRPC stream.
    max_streams: int = 200
    # ... of which one viewer (a token, else a client address) may hold.
    max_streams_per_viewer: int = 20
    # API requests one viewer has answered at once; more wait their turn (turns.py).
    calls_per_viewer: int = 4
    # Analyses running at once through this gateway: each holds a thread for the bot's
    # whole time (up to the person's analyze_time_ms quota).
    analyses: int = 8
    # Proxies whose X-Forwarded-For names the client (addresses.py).
    trusted_proxies: tuple[Network, ...] = ()
    # ... or whose Forwarded (RFC 7239) does: the one header they write.
    forwarded_header: str = X_FORWARDED_FOR

    @classmethod
    def from_config(cls, config: Config) -> WebSettings:
        if config.web_read not in READ_ACCESS:
            raise ValueError(f"ARENA_WEB_READ={config.web_read!r}: expected one of "
                             f"{', '.join(READ_ACCESS)}")
        header = config.web_forwarded_header.strip().lower()
        if header not in FORWARDED_HEADERS:
            raise ValueError(f"ARENA_WEB_FORWARDED_HEADER={config.web_forwarded_header!r}: "
                             f"expected one of {', '.join(FORWARDED_HEADERS)}")
        return cls(
            listen=config.listen, ready_file=config.ready_file,
            read_access=config.web_read, service_token=config.peer_token,
            registry=config.registry, referee=config.referee, ladder=config.ladder,
            engine=config.engine, drain_s=config.web_drain_s,
            max_streams=config.web_max_streams,
            max_streams_per_viewer=config.web_max_streams_per_viewer,
            calls_per_viewer=config.web_calls_per_viewer,
            analyses=config.web_analyses,
            trusted_proxies=parse_proxies(config.web_trusted_proxies),
            forwarded_header=header,
        )

    @classmethod
    def load(cls, argv: Sequence[str] | None = None,
             env: Mapping[str, str] | None = None) -> tuple[Config, WebSettings]:
        config = Config.load("web", argv, env)
        return config, cls.from_config(config)


def split_listen(listen: str) -> tuple[str, int]:
    """``127.0.0.1:8080`` / ``[::1]:0`` / ``0.0.0.0:8080`` -> (host, port)."""
    host, sep, port = listen.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--listen must be HOST:PORT, got {listen!r}")
    return host.strip("[]") or "127.0.0.1", int(port)
