"""Perft leaves/s from the start position (median of several runs), bulk-counted last ply.

.venv/bin/python bench/othello_perft.py --depths 10 11 12 --runs 3
"""

from __future__ import annotations

import argparse
import statistics
import time

from arena.engine.othello import START_TEXT, perft


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--depths", type=int, nargs="+", default=[10, 11, 12])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    perft(START_TEXT, 2)  # load the compiled kernel
    print(f"{'depth':>5} {'leaves':>14} {'median s':>9} {'M leaves/s':>11}")
    for depth in args.depths:
        times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            leaves = perft(START_TEXT, depth)
            times.append(time.perf_counter() - started)
        median = statistics.median(times)
        print(f"{depth:>5} {leaves:>14} {median:>9.3f} {leaves / median / 1e6:>11.1f}")


if __name__ == "__main__":
    main()
