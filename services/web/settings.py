"""The web gateway's settings: the environment (12-factor), with command-line overrides.

Where the other services are comes from ``ARENA_REGISTRY``, ``ARENA_REFEREE``,
``ARENA_LADDER`` and ``ARENA_ENGINE`` (then ``stack.json`` in ``$ARENA_HOME``, as for the
SDK). Reads go out with the gateway's own token: ``ARENA_WEB_TOKEN`` (best a ``user``
token), else ``ARENA_ADMIN_TOKEN``. ``ARENA_WEB_READ=token`` restricts reading to people
who enter a token in the page; actions always need one.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

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
    home: Path | None = None
    # Seconds between /healthz turning 503 and the server closing on SIGTERM, so that a
    # load balancer stops sending first (Kubernetes: a few seconds; locally 0).
    drain_s: float = 0.0
    # Live streams (server-sent events) open at once; each holds one gRPC stream.
    max_streams: int = 200

    @classmethod
    def from_args(cls, argv: list[str] | None = None,
                  env: Mapping[str, str] | None = None) -> WebSettings:
        env = os.environ if env is None else env
        parser = argparse.ArgumentParser(
            prog="arena.services.web", description="Run the Arena web gateway (HTTP).")
        parser.add_argument("--listen", default=env.get("ARENA_LISTEN", cls.listen),
                            help="host:port to bind (port 0 picks a free one)")
        parser.add_argument("--ready-file", type=Path, default=None,
                            help="write the bound port here once serving")
        parser.add_argument("--read-access", choices=READ_ACCESS,
                            default=env.get("ARENA_WEB_READ", "open"),
                            help="open: anyone may read; token: readers need a token too")
        for role in ("registry", "referee", "ladder", "engine"):
            parser.add_argument(f"--{role}", default=env.get(f"ARENA_{role.upper()}", ""),
                                help=f"{role} address (host:port)")
        parser.add_argument("--drain-s", type=float,
                            default=float(env.get("ARENA_WEB_DRAIN_S", "0")),
                            help="seconds /healthz reports draining before the server stops")
        parser.add_argument("--max-streams", type=int,
                            default=int(env.get("ARENA_WEB_MAX_STREAMS", "200")),
                            help="live streams served at once")
        args = parser.parse_args(argv)
        if args.read_access not in READ_ACCESS:
            parser.error(f"ARENA_WEB_READ must be one of {', '.join(READ_ACCESS)}, "
                         f"got {args.read_access!r}")
        home = env.get("ARENA_HOME")
        return cls(
            listen=args.listen, ready_file=args.ready_file, read_access=args.read_access,
            service_token=env.get("ARENA_WEB_TOKEN") or env.get("ARENA_ADMIN_TOKEN", ""),
            registry=args.registry, referee=args.referee, ladder=args.ladder,
            engine=args.engine, home=Path(home) if home else None,
            drain_s=max(0.0, args.drain_s), max_streams=max(1, args.max_streams),
        )


def split_listen(listen: str) -> tuple[str, int]:
    """``127.0.0.1:8080`` / ``[::1]:0`` / ``0.0.0.0:8080`` -> (host, port)."""
    host, sep, port = listen.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--listen must be HOST:PORT, got {listen!r}")
    return host.strip("[]") or "127.0.0.1", int(port)
