"""The first start's compile step on a fresh machine: prints the wall time of compiling
every engine kernel into an empty numba cache, both games in one process (as before)
against the compile step (`python -m arena.services.worker.warm`: one process per game, at
once), in turn, with their ratios and medians.

    .venv/bin/python bench/compile_engines.py [--rounds 3]

Each run gets its own empty cache folder (``NUMBA_CACHE_DIR``), so nothing is loaded that
an earlier run compiled. Both games take minutes of CPU: on 2 cores, three rounds take
about ten minutes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory

ONE_PROCESS = ("import arena.engine.othello as othello, arena.engine.gomoku as gomoku; "
               "othello.warm_up(); gomoku.warm_up()")
COMMANDS = {
    "one process": [sys.executable, "-c", ONE_PROCESS],
    "compile step": [sys.executable, "-m", "arena.services.worker.warm"],
}


def timed(command: list[str]) -> float:
    with TemporaryDirectory(prefix="arena-kernels-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, ARENA_WARM_GAMES="othello,gomoku")
        started = time.monotonic()
        subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL,
                       cwd=Path(__file__).resolve().parents[1])
        return time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"cores: {len(os.sched_getaffinity(0))}")
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for round_ in range(1, args.rounds + 1):
        for name, command in COMMANDS.items():
            times[name].append(timed(command))
        base, step = times["one process"][-1], times["compile step"][-1]
        print(f"round {round_}: one process {base:6.1f} s, compile step {step:6.1f} s, "
              f"ratio {step / base:.2f}", flush=True)
    base = statistics.median(times["one process"])
    step = statistics.median(times["compile step"])
    print(f"median: one process {base:.1f} s, compile step {step:.1f} s, "
          f"ratio {step / base:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
