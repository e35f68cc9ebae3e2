"""Run an engine worker: `python -m arena.services.worker --help` (also `arena worker`)."""

from __future__ import annotations

from arena.services.common.runner import run_service
from arena.services.worker.server import create_service


def main(argv: list[str] | None = None) -> int:
    """Entry point for `arena worker [--redis-url ...] [--worker-id ...]`."""
    return run_service("worker", create_service, argv)


if __name__ == "__main__":
    raise SystemExit(main())
