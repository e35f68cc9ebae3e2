"""How long a fresh process needs before it can search (kernels loaded from the disk cache).

.venv/bin/python bench/othello_startup.py --runs 5
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

CHILD = (
    "import time; t = time.monotonic();"
    "from arena.engine.othello import warm_up; warm_up();"
    "print(time.monotonic() - t)"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    subprocess.run([sys.executable, "-c", CHILD], check=True, capture_output=True)  # fill cache
    walls, inner = [], []
    for _ in range(args.runs):
        started = time.monotonic()
        out = subprocess.run(
            [sys.executable, "-c", CHILD], check=True, capture_output=True, text=True
        ).stdout
        walls.append(time.monotonic() - started)
        inner.append(float(out.strip()))
    print(
        f"import + warm_up: median {statistics.median(inner):.2f} s; "
        f"whole process: median {statistics.median(walls):.2f} s ({args.runs} runs)"
    )


if __name__ == "__main__":
    main()
