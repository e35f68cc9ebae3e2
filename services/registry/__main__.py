"""Run the registry service: `python -m arena.services.registry --help`."""

from arena.services.common.runner import run_service
from arena.services.registry.server import create_service

if __name__ == "__main__":
    raise SystemExit(run_service("registry", create_service))
