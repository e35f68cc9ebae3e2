"""Gomoku engine speed: nodes/s, the protocol smoke positions, VCF solve times.

    python bench/gomoku_speed.py [--runs 5]

Prints medians over ``--runs`` runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from arena.engine.api import Limits
from arena.engine.gomoku import PRESETS, choose_move, warm_up

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.engine.gomoku.positions import VCF_13, VCF_15
from tests.engine.gomoku.test_arena import smoke_positions

# Balanced opening 2 of the shared list: a quiet position where the search runs 1 s.
MIDGAME = [192, 159, 158, 143, 160, 178, 148, 190, 174]


def median(values: list[float]) -> float:
    return statistics.median(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    warm_up()
    for name in ("arena-gomoku", "sharpmoku-hard"):
        results = [choose_move(15, "freestyle", MIDGAME, PRESETS[name], Limits(time_ms=1000))
                   for _ in range(args.runs)]
        print(f"{name:16} midgame 1 s: median {median([r.nps for r in results]):,.0f} nodes/s, "
              f"depth {results[0].depth}, {median([r.nodes for r in results]):,.0f} nodes, "
              f"{median([r.elapsed_ms for r in results]):.1f} ms")
    for case, moves, expected in smoke_positions():
        for name in ("arena-gomoku", "sharpmoku-normal", "sharpmoku-hard"):
            runs = [choose_move(15, "freestyle", moves, PRESETS[name], Limits(time_ms=1000))
                    for _ in range(args.runs)]
            ok = all(r.move in expected for r in runs)
            print(f"smoke {case} {name:16}: {'correct' if ok else 'WRONG'}, median "
                  f"{median([r.elapsed_ms for r in runs]):.2f} ms")
    for label, moves in (("VCF_13", VCF_13), ("VCF_15", VCF_15)):
        runs = [choose_move(15, "freestyle", moves, PRESETS["arena-gomoku"],
                            Limits(time_ms=1000)) for _ in range(args.runs)]
        print(f"{label}: line of {len(runs[0].pv)} plies, median "
              f"{median([r.elapsed_ms for r in runs]):.2f} ms, exact={runs[0].exact}")


if __name__ == "__main__":
    main()
