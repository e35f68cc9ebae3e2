"""Run the web gateway: `python -m arena.services.web --help`."""

from arena.services.web.server import main

if __name__ == "__main__":
    raise SystemExit(main())
