"""Service settings from the environment (12-factor), with command-line overrides."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Settings:
    """Where a service listens and what it talks to."""

    listen: str = "127.0.0.1:0"
    redis_url: str = "redis://127.0.0.1:6379/0"
    cache_url: str = "redis://127.0.0.1:6380/0"
    ready_file: Path | None = None
    registry_target: str = ""
    worker_id: str = ""
    auth: bool = True

    @classmethod
    def from_args(cls, prog: str, argv: list[str] | None = None) -> Settings:
        env = os.environ
        parser = argparse.ArgumentParser(prog=prog, description=f"Run the Arena {prog} service.")
        parser.add_argument("--listen", default=env.get("ARENA_LISTEN", cls.listen),
                            help="host:port to bind (port 0 picks a free one)")
        parser.add_argument("--redis-url", default=env.get("ARENA_REDIS_URL", cls.redis_url),
                            help="durable Redis (bots, matches, ladders, job streams)")
        parser.add_argument("--cache-url", default=env.get("ARENA_CACHE_URL", cls.cache_url),
                            help="cache Redis (transposition table, search trees)")
        parser.add_argument("--ready-file", type=Path, default=None,
                            help="write the bound port here once serving")
        parser.add_argument("--registry", default=env.get("ARENA_REGISTRY", ""),
                            help="registry address (host:port) for services that need it")
        parser.add_argument("--worker-id", default=env.get("ARENA_WORKER_ID", ""),
                            help="consumer name in the job streams (default: host-pid)")
        parser.add_argument("--no-auth", action="store_true",
                            default=env.get("ARENA_NO_AUTH", "") == "1",
                            help="accept calls without tokens (local experiments only)")
        args = parser.parse_args(argv)
        return cls(
            listen=args.listen, redis_url=args.redis_url, cache_url=args.cache_url,
            ready_file=args.ready_file, registry_target=args.registry,
            worker_id=args.worker_id, auth=not args.no_auth,
        )
