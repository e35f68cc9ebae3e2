"""Run the ladder service: `python -m arena.services.ladder --help`."""

from arena.services.common.runner import run_service
from arena.services.ladder.server import create_service

if __name__ == "__main__":
    raise SystemExit(run_service("ladder", create_service))
