"""Run the worker service: `python -m arena.services.worker --help`."""

from arena.services.common.runner import run_service
from arena.services.worker.server import create_service

if __name__ == "__main__":
    raise SystemExit(run_service("worker", create_service))
