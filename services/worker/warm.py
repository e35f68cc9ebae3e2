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
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from arena.services.common.config import Config
from arena.services.common.launcher import PARENT_ENV, die_with_parent

from arena.games import game

INTERRUPTED = 128 + signal.SIGINT  # the exit status of a process Ctrl-C stopped


class _Children:
    """The compile step's children: one per game, as many at once as there are cores, each
    in a session of its own, so that a terminal's Ctrl-C reaches this process only. This
    one, interrupted, stops every child and starts no more; a child also dies with it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running: list[subprocess.Popen[bytes]] = []
        self.stopped = False

    def compile(self, game: str) -> int:
        """One game's kernels, in a child process (which reads only ``ARENA_WARM_GAMES``)."""
        env = dict(os.environ, ARENA_WARM_GAMES=game, **{PARENT_ENV: str(os.getpid())})
        with self.lock:
            if self.stopped:
                return INTERRUPTED
            child = subprocess.Popen([sys.executable, "-m", "arena.services.worker.warm"],
                                     env=env, start_new_session=True)
            self.running.append(child)
        return child.wait()

    def stop(self) -> None:
        with self.lock:
            self.stopped = True
            for child in self.running:
                child.terminate()


def _compile_apart(games: list[str]) -> int:
    """Each game in a child process; the first failure's exit code (0 if every game
    compiled)."""
    cores = max(1, len(os.sched_getaffinity(0)))
    children = _Children()
    with ThreadPoolExecutor(max_workers=min(cores, len(games))) as pool:
        try:
            codes = list(pool.map(children.compile, games))
        except KeyboardInterrupt:
            children.stop()  # leaving the block waits for them
            raise
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
    try:
        if len(games) > 1:  # each child compiled (or loaded) its game: nothing left to do
            code = _compile_apart(games)
            if code:
                return code
        else:
            from arena.services.worker.server import warm_up  # numba: not before it is needed

            warm_up(config)
    except KeyboardInterrupt:
        print(f"arena-worker: compile of {', '.join(games)} interrupted", file=sys.stderr)
        return INTERRUPTED
    print(f"engines ready ({', '.join(games) or 'none'}) in "
          f"{time.monotonic() - started:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
