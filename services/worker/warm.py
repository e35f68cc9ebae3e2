"""Compile the engines once, before any worker starts: `python -m arena.services.worker.warm`.

The engines' kernels are compiled by numba and kept on disk. The first start on a machine
(or after an engine changes) compiles them all: about two minutes of CPU. Every worker
warms up before it takes jobs, so two workers and an analyst starting together would each
compile everything at once, on a 2-core machine past the launcher's ready timeout. The
launcher runs this module first, alone, and its workers then only load the kernels.

The games' kernels share nothing, so each game is compiled in a process of its own, all at
once (as many at a time as this process may use cores): on 2 cores the first start waits
for the slowest game instead of the sum. Takes the worker's settings
(``ARENA_WARM_GAMES``); prints what it did, one line per game and one for the whole.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from arena.services.common.config import Config
from arena.services.common.launcher import PARENT_ENV, die_with_parent
from arena.services.worker.server import warm_up

from arena.games import game


def _compile_game(game: str) -> int:
    """One game's kernels, in a child process (which reads only ``ARENA_WARM_GAMES``)."""
    env = dict(os.environ, ARENA_WARM_GAMES=game, **{PARENT_ENV: str(os.getpid())})
    return subprocess.run([sys.executable, "-m", "arena.services.worker.warm"],
                          env=env).returncode


def _compile_apart(games: list[str]) -> int:
    """Each game in a child process, as many at once as there are cores; the first
    failure's exit code (0 if every game compiled)."""
    cores = max(1, len(os.sched_getaffinity(0)))
    with ThreadPoolExecutor(max_workers=min(cores, len(games))) as pool:
        codes = list(pool.map(_compile_game, games))
    return next((code for code in codes if code), 0)


def main(argv: Sequence[str] | None = None) -> int:
    die_with_parent()
    try:
        config = Config.load("worker", argv)
        games = [game(name.strip()).name for name in config.warm_games.split(",")
                 if name.strip()]
    except ValueError as exc:  # UnknownGameError is one too
        print(f"arena-worker: configuration error: {exc}", file=sys.stderr)
        return 2
    started = time.monotonic()
    if len(games) > 1:  # each child compiled (or loaded) its game: nothing left to do
        code = _compile_apart(games)
        if code:
            return code
    else:
        warm_up(config)
    print(f"engines ready ({', '.join(games) or 'none'}) in "
          f"{time.monotonic() - started:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
