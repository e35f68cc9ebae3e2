"""Compile the engines once, before any worker starts: `python -m arena.services.worker.warm`.

The engines' kernels are compiled by numba and kept on disk. The first start on a machine
(or after an engine changes) compiles them all: about two minutes of CPU. Every worker
warms up before it takes jobs, so two workers and an analyst starting together would each
compile everything at once, on a 2-core machine past the launcher's ready timeout. The
launcher runs this module first, alone, and its workers then only load the kernels.
Takes the worker's settings (``ARENA_WARM_GAMES``); prints what it did.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence

from arena.services.common.config import Config
from arena.services.common.launcher import die_with_parent
from arena.services.worker.server import warm_up


def main(argv: Sequence[str] | None = None) -> int:
    die_with_parent()
    try:
        config = Config.load("worker", argv)
    except ValueError as exc:
        print(f"arena-worker: configuration error: {exc}", file=sys.stderr)
        return 2
    started = time.monotonic()
    games = warm_up(config)
    print(f"engines ready ({', '.join(games) or 'none'}) in "
          f"{time.monotonic() - started:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
