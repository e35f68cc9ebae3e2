"""Exact solve of FFO endgame files: time per position, nodes, correct or not.

.venv/bin/python bench/othello_solve.py                      # fforum-1-19 and 20-39
.venv/bin/python bench/othello_solve.py --files fforum-20-39.obf --runs 3
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from arena.engine.othello import solve, warm_up
from arena.engine.othello.bitboard import parse_position, square_name
from arena.engine.othello.cli import _read_obf

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "othello"


def bench_file(path: Path, runs: int) -> tuple[float, int, int]:
    print(f"== {path.name} (median of {runs} run(s) per position)")
    print(
        f"{'#':>3} {'empt':>4} {'score':>5} {'want':>5} {'move':>4} {'ok':>3} {'nodes':>11} "
        f"{'s':>8} {'Mn/s':>6}"
    )
    total_s, total_nodes, wrong = 0.0, 0, 0
    for index, (text, scores) in enumerate(_read_obf(path), start=1):
        results = [solve(text) for _ in range(runs)]
        seconds = statistics.median(r.elapsed_ms for r in results) / 1000
        result = results[0]
        want = max(scores.values())
        ok = result.score == want
        wrong += not ok
        total_s += seconds
        total_nodes += result.nodes
        print(
            f"{index:>3} {parse_position(text).empties():>4} {result.score:>+5d} {want:>+5d} "
            f"{square_name(result.move):>4} {'yes' if ok else 'NO':>3} {result.nodes:>11} "
            f"{seconds:>8.3f} {result.nodes / seconds / 1e6 if seconds else 0:>6.1f}"
        )
    print(f"total {total_s:.2f} s, {total_nodes} nodes, {wrong} wrong")
    return total_s, total_nodes, wrong


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", nargs="+", default=["fforum-1-19.obf", "fforum-20-39.obf"])
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    warm_up()
    for name in args.files:
        bench_file(DATA / name, args.runs)


if __name__ == "__main__":
    main()
