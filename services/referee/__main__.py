"""Run the referee service: `python -m arena.services.referee --help`."""

from arena.services.common.runner import run_service
from arena.services.referee.server import create_service

if __name__ == "__main__":
    raise SystemExit(run_service("referee", create_service))
