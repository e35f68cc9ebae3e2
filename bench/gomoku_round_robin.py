"""Colour-swapped round robin of the Gomoku presets over the balanced openings.

    python bench/gomoku_round_robin.py --time-ms 1000 --openings 12

Each opening is played twice per pairing (each bot once as Black). Games are refereed
by the reference rules (arena.games.gomoku). Prints each game and a table of points.
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

from arena.engine.api import Limits
from arena.engine.gomoku import PRESETS, choose_move, warm_up
from arena.games.base import Color
from arena.games.gomoku import GomokuBoard

OPENINGS = (Path(__file__).resolve().parents[1].parent / "shared" / "data" / "gomoku"
            / "balanced-openings-freestyle15.txt")
BOTS = ("sharpmoku-normal", "sharpmoku-hard", "arena-gomoku")


def load_openings(path: Path) -> list[list[int]]:
    openings = []
    for line in path.read_text().splitlines():
        if line.startswith("#") or "|" not in line:
            continue
        pairs = line.split("|")[1].split()
        openings.append([int(y) * 15 + int(x) for x, y in (p.split(",") for p in pairs)])
    return openings


def play(black: str, white: str, opening: list[int], time_ms: int) -> tuple[str, int, float]:
    """('black'|'white'|'draw', plies, slowest move in ms)."""
    board = GomokuBoard(15, "freestyle")
    for move in opening:
        board.push(move)
    slowest = 0.0
    while board.outcome() is None:
        name = black if board.turn is Color.BLACK else white
        result = choose_move(15, "freestyle", board.move_stack, PRESETS[name],
                             Limits(time_ms=time_ms), seed=board.ply)
        slowest = max(slowest, result.elapsed_ms)
        board.push(result.move)
    outcome = board.outcome()
    assert outcome is not None
    winner = "draw" if outcome.winner is None else outcome.winner.name.lower()
    return winner, board.ply, slowest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--time-ms", type=int, default=1000)
    parser.add_argument("--openings", type=int, default=12)
    parser.add_argument("--bots", nargs="+", default=list(BOTS), choices=sorted(PRESETS))
    args = parser.parse_args()
    warm_up()
    openings = load_openings(OPENINGS)[: args.openings]
    points = dict.fromkeys(args.bots, 0.0)
    started = time.monotonic()
    for a, b in itertools.combinations(args.bots, 2):
        score = {a: 0.0, b: 0.0}
        for index, opening in enumerate(openings):
            for black, white in ((a, b), (b, a)):
                winner, plies, slowest = play(black, white, opening, args.time_ms)
                gained = {"black": {black: 1.0}, "white": {white: 1.0}}.get(
                    winner, {black: 0.5, white: 0.5})
                for name, value in gained.items():
                    score[name] += value
                    points[name] += value
                print(f"opening {index + 1:2d}  {black:>16} (B) vs {white:<16} (W): "
                      f"{winner:5} in {plies:3d} plies, slowest move {slowest:7.1f} ms",
                      flush=True)
        print(f"== {a} {score[a]:.1f} - {score[b]:.1f} {b}", flush=True)
    print(f"total ({time.monotonic() - started:.0f} s):",
          ", ".join(f"{n} {p:.1f}" for n, p in points.items()))


if __name__ == "__main__":
    main()
