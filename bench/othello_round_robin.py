"""In-process round robin of Othello presets, colour-swapped, with a results table.

    .venv/bin/python bench/othello_round_robin.py --openings 2 --time-ms 300

Each pairing plays every opening (random 4-ply starts) twice, colours swapped. Bots keep
their own depth and time; ``--time-ms`` caps every move (the stricter limit wins).
"""

from __future__ import annotations

import argparse
import itertools
import random

from arena.engine.api import Limits
from arena.engine.othello import PASS, PRESETS, START_TEXT, choose_move, warm_up
from arena.engine.othello.bitboard import Position, legal_moves, parse_position

DEFAULT_BOTS = [
    "arena-strong",
    "arena-fast",
    "lucy",
    "madoka",
    "ryo",
    "terra",
    "kreversi-default",
    "lab-advanced",
]


def opening(seed: int, plies: int = 4) -> Position:
    rng = random.Random(seed)
    pos = parse_position(START_TEXT)
    for _ in range(plies):
        pos = pos.play(rng.choice(legal_moves(pos)))
    return pos


def play(black: str, white: str, start: Position, time_ms: int, seed: int) -> int:
    """Final disc difference for Black."""
    pos = start
    bots = (PRESETS[black], PRESETS[white])
    ply = 0
    while legal_moves(pos):
        if legal_moves(pos) == [PASS]:
            pos = pos.play(PASS)
            continue
        result = choose_move(
            pos.to_text(), bots[pos.turn], Limits(time_ms=time_ms), seed=seed * 1000 + ply
        )
        pos = pos.play(result.move)
        ply += 1
    return bin(pos.black).count("1") - bin(pos.white).count("1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bots", nargs="+", default=DEFAULT_BOTS)
    parser.add_argument("--openings", type=int, default=2)
    parser.add_argument("--time-ms", type=int, default=300)
    args = parser.parse_args()
    warm_up()
    points = {b: 0.0 for b in args.bots}
    games = {b: 0 for b in args.bots}
    pair_scores: dict[tuple[str, str], float] = {}
    for a, b in itertools.combinations(args.bots, 2):
        score_a = 0.0
        for n in range(args.openings):
            start = opening(seed=n)
            for black, white in ((a, b), (b, a)):
                diff = play(black, white, start, args.time_ms, seed=n)
                result_a = 0.5 if diff == 0 else float((diff > 0) == (black == a))
                score_a += result_a
                points[a] += result_a
                points[b] += 1 - result_a
                games[a] += 1
                games[b] += 1
        pair_scores[(a, b)] = score_a
        pair_scores[(b, a)] = 2 * args.openings - score_a
        print(f"{a} vs {b}: {score_a}-{2 * args.openings - score_a}", flush=True)
    print()
    width = max(len(b) for b in args.bots)
    print(" " * width + " " + " ".join(f"{b[:6]:>6}" for b in args.bots) + "   total")
    for a in sorted(args.bots, key=lambda x: -points[x]):
        cells = " ".join(
            f"{'--':>6}" if a == b else f"{pair_scores[(a, b)]:>6.1f}" for b in args.bots
        )
        print(f"{a:>{width}} {cells} {points[a]:>5.1f}/{games[a]}")


if __name__ == "__main__":
    main()
