"""Perft speed of the reference Othello rules (arena.games.othello), pure Python.

Prints the leaf count, the median wall time of several runs and leaves per second
for each depth, and checks the counts against ../shared/data/othello/perft.txt.
Usage: python bench/perft_rules.py [max_depth] [runs]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from arena.games.othello import OthelloBoard, perft

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.data import shared_data_dir


def expected_counts() -> dict[int, int]:
    path = shared_data_dir() / "othello" / "perft.txt"
    counts = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            depth, leaves = line.split()
            counts[int(depth)] = int(leaves)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("max_depth", type=int, nargs="?", default=9)
    parser.add_argument("runs", type=int, nargs="?", default=3,
                        help="runs of each depth from 6 on (the median is printed)")
    args = parser.parse_args()
    max_depth, runs = args.max_depth, args.runs
    expected = expected_counts()
    print(f"{'variant':<14}{'depth':>6}{'leaves':>14}{'median s':>11}{'leaves/s':>13}  check")
    for variant in ("standard", "international"):
        board = OthelloBoard(variant)
        for depth in range(1, max_depth + 1):
            times = []
            for _ in range(runs if depth >= 6 else 1):
                started = time.perf_counter()
                leaves = perft(board, depth)
                times.append(time.perf_counter() - started)
            median = statistics.median(times)
            check = ""
            if variant == "standard" and depth in expected:
                check = "ok" if expected[depth] == leaves else f"MISMATCH {expected[depth]}"
            rate = leaves / median if median > 0 else 0.0
            print(f"{variant:<14}{depth:>6}{leaves:>14}{median:>11.3f}{rate:>13,.0f}  {check}")


if __name__ == "__main__":
    main()
