"""Midgame search speed: nodes/s of each evaluator on random midgame positions.

.venv/bin/python bench/othello_midgame.py --positions 20 --time-ms 500
nice -n 5 .venv/bin/python bench/othello_midgame.py --depth 8 --presets arena-strong arena-pattern
nice -n 5 .venv/bin/python bench/othello_midgame.py --time-ms 100 --clock cpu \\
    --presets arena-pattern+probcut=0 arena-pattern+probcut=15

A preset may change integer settings: ``PRESET+KEY=VALUE`` (``arena-pattern+probcut=15``).

With ``--depth`` every search goes to that fixed depth (no time limit) and the rate is nodes
per second of the searching thread's CPU time, which other processes do not change; the
total nodes per preset then show the tree sizes too.
"""

from __future__ import annotations

import argparse
import random
import statistics

from arena.engine.api import Limits
from arena.engine.othello import PRESETS, START_TEXT, choose_move, warm_up
from arena.engine.othello.bitboard import legal_moves, parse_position
from arena.engine.othello.presets import named_config


def midgame_positions(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        pos = parse_position(START_TEXT)
        for _ in range(rng.randrange(16, 30)):
            moves = legal_moves(pos)
            if not moves:
                break
            pos = pos.play(rng.choice(moves))
        if legal_moves(pos) and legal_moves(pos) != [64]:
            out.append(pos.to_text())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--positions", type=int, default=20)
    parser.add_argument("--time-ms", type=int, default=500)
    parser.add_argument("--depth", type=int, default=0, help="fixed depth instead of time")
    parser.add_argument("--presets", nargs="+", default=["arena-strong", "terra", "lucy"])
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                        help="the clock --time-ms is counted on (and the rate divided by)")
    args = parser.parse_args()
    warm_up()
    positions = midgame_positions(args.positions, seed=1)
    width = max(14, *(len(name) for name in args.presets))
    print(f"{'preset':>{width}} {'median nodes/s':>15} {'median depth':>13} {'mean depth':>11}")
    for name in args.presets:
        config = (
            {**named_config(name), "depth": 60}
            if name.startswith("arena")
            else {
                **PRESETS[name],
                "depth": {"begin": 10, "middle": 10, "end": 10},
                "time_limit_s": 60,
                "random_tied_root_moves": False,
            }
        )
        rates, depths, nodes = [], [], 0
        for text in positions:
            if args.depth:
                config = {**config, "time_ms": 600_000} if name.startswith("arena") else config
                result = choose_move(text, config, Limits(depth=args.depth, clock="cpu"))
                rates.append(result.nodes / max(result.cpu_ms, 1e-3) * 1000)
            else:
                result = choose_move(text, config, Limits(time_ms=args.time_ms, clock=args.clock))
                rates.append(result.nps if args.clock == "wall"
                             else result.nodes / max(result.cpu_ms, 1e-3) * 1000)
            depths.append(result.depth)
            nodes += result.nodes
        print(f"{name:>{width}} {statistics.median(rates):>15,.0f} {statistics.median(depths):>13}"
              f" {statistics.mean(depths):>11.2f}"
              + (f"  total nodes {nodes:,}" if args.depth else ""))


if __name__ == "__main__":
    main()
