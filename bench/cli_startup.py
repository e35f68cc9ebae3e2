"""How long the `arena` command takes to start: prints the median wall time and peak memory
of commands that do not reach any service (help, a refused option), run as a user runs them.

    .venv/bin/python bench/cli_startup.py [--runs 10] [--arena PATH]

``--arena`` times another checkout's command (its ``.venv/bin/arena``) for a ratio. Every
command answers without a stack, so the figures are the start-up: the interpreter, the
imports and the parser. A command that calls a service adds its round trips to these.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import time
from pathlib import Path

COMMANDS = (
    ("--help",),
    ("bot", "register", "--help"),
    ("engine", "perft", "--help"),
    ("test", "--alpha", "0", "a", "b"),  # refused by the CLI before any call
)


def timed(arena: str, args: tuple[str, ...]) -> float:
    started = time.monotonic()
    subprocess.run([arena, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False)
    return time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--arena", default=str(Path(__file__).resolve().parents[1]
                                               / ".venv" / "bin" / "arena"))
    args = parser.parse_args()
    print(f"{args.arena}, {args.runs} runs each")
    for command in COMMANDS:
        timed(args.arena, command)  # one unmeasured run: the file cache
        times = [timed(args.arena, command) for _ in range(args.runs)]
        print(f"  arena {' '.join(command):32} median {statistics.median(times) * 1000:6.0f} ms"
              f"  (min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f})")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"  largest child: {peak:.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
