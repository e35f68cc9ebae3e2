"""In-process round robin of Othello presets, colour-swapped, with a results table.

    .venv/bin/python bench/othello_round_robin.py --openings 4 --time-ms 300
    .venv/bin/python bench/othello_round_robin.py --focus arena-strong --openings 6 \\
        --bots arena-strong lucy madoka ryo terra kreversi-default --time-ms 250
    nice -n 5 .venv/bin/python bench/othello_round_robin.py --bots arena-pattern arena-strong \\
        --openings 50 --time-ms 100 --clock cpu
    nice -n 5 .venv/bin/python bench/othello_round_robin.py --openings 50 --time-ms 100 \\
        --clock cpu --bots arena-pattern+probcut=15 arena-pattern+probcut=0

A bot is a preset's name, or a preset with integer settings changed: ``PRESET+KEY=VALUE``
(``arena-pattern+probcut=15``).

Each pairing plays every opening twice, colours swapped. Openings come from the
``othello-balanced`` suite (distinct 4-ply starts, ``arena.openings``), in a seeded order.
Bots keep their own depth and time; ``--time-ms`` caps every move (the stricter limit wins),
which only shortens the time-limited bots (the KReversi presets search to a fixed depth in a
few milliseconds). ``--focus BOT`` plays only the pairings of that bot. ``--clock cpu`` counts
the move time on the searching thread's CPU clock (as the workers do), so other processes on
a loaded machine do not shorten a bot's moves.

Each pairing's line gives the first bot's Elo difference with a 95% interval, from the
scores of the colour-swapped game pairs (their spread, so the openings' bias cancels).
"""

from __future__ import annotations

import argparse
import itertools
import time
from dataclasses import dataclass, field

from arena.engine.api import Clock, Limits
from arena.engine.othello import PASS, choose_move, warm_up
from arena.engine.othello.bitboard import Position, legal_moves, parse_position
from arena.engine.othello.presets import named_config
from arena.openings import load_suite, select_openings
from arena.openings.suites import start_position_after
from arena.ratings.elo import elo_from_score

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


@dataclass
class Record:
    """One bot's results against one opponent."""

    wins: int = 0
    draws: int = 0
    losses: int = 0
    discs: int = 0  # sum of final disc differences from this bot's side
    seconds: list[float] = field(default_factory=list)  # its thinking time per game

    @property
    def points(self) -> float:
        return self.wins + 0.5 * self.draws

    def add(self, diff: int, seconds: float) -> None:
        self.wins += diff > 0
        self.draws += diff == 0
        self.losses += diff < 0
        self.discs += diff
        self.seconds.append(seconds)


def elo_interval(pair_points: list[float]) -> str:
    """'Elo +12 [-30, +55]' from the points (0..2) of colour-swapped game pairs."""
    n = len(pair_points)
    score = sum(pair_points) / (2 * n)
    if n < 2:
        return f"score {score:.3f}"
    mean = sum(pair_points) / n
    sd = (sum((x - mean) ** 2 for x in pair_points) / (n - 1)) ** 0.5
    half = 1.96 * sd / n**0.5 / 2  # of the per-game score

    def elo(x: float) -> str:
        x = min(max(x, 1e-3), 1 - 1e-3)
        return f"{elo_from_score(x):+.0f}"

    return f"Elo {elo(score)} [{elo(score - half)}, {elo(score + half)}]"


def play(
    black: str, white: str, start: Position, time_ms: int | None, seed: int,
    clock: Clock = "wall",
) -> tuple:
    """(final disc difference for Black, Black's thinking s, White's thinking s)."""
    pos = start
    bots = (named_config(black), named_config(white))
    thinking = [0.0, 0.0]
    ply = 0
    while legal_moves(pos):
        if legal_moves(pos) == [PASS]:
            pos = pos.play(PASS)
            continue
        started = time.monotonic()
        result = choose_move(
            pos.to_text(), bots[pos.turn], Limits(time_ms=time_ms, clock=clock),
            seed=seed * 1000 + ply,
        )
        thinking[pos.turn] += time.monotonic() - started
        pos = pos.play(result.move)
        ply += 1
    diff = bin(pos.black).count("1") - bin(pos.white).count("1")
    return diff, thinking[0], thinking[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bots", nargs="+", default=DEFAULT_BOTS)
    parser.add_argument("--focus", default=None, help="play only this bot's pairings")
    parser.add_argument("--openings", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--time-ms", type=int, default=300, help="cap per move; 0: none")
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                        help="the clock the move time is counted on")
    args = parser.parse_args()
    time_ms = args.time_ms or None
    warm_up()
    suite = load_suite("othello-balanced")
    openings = select_openings(suite, args.openings, args.seed)
    starts = [parse_position(start_position_after("othello", "standard", 8, o)) for o in openings]
    records: dict[tuple[str, str], Record] = {}
    pairs = [
        (a, b)
        for a, b in itertools.combinations(args.bots, 2)
        if args.focus is None or args.focus in (a, b)
    ]
    for a, b in pairs:
        ra, rb = Record(), Record()
        pairs_points: list[float] = []
        for n, start in enumerate(starts):
            before = ra.points
            for black, white in ((a, b), (b, a)):
                diff, black_s, white_s = play(black, white, start, time_ms, n, args.clock)
                a_diff = diff if black == a else -diff
                ra.add(a_diff, black_s if black == a else white_s)
                rb.add(-a_diff, white_s if black == a else black_s)
            pairs_points.append(ra.points - before)
        records[(a, b)], records[(b, a)] = ra, rb
        print(
            f"{a} vs {b}: {ra.points}-{rb.points} (W{ra.wins} D{ra.draws} L{ra.losses}, "
            f"discs {ra.discs:+d}, {sum(ra.seconds) / len(ra.seconds):.1f} s/game "
            f"vs {sum(rb.seconds) / len(rb.seconds):.1f}; {elo_interval(pairs_points)})",
            flush=True,
        )
    print_table(args.bots, records)


def print_table(bots: list[str], records: dict[tuple[str, str], Record]) -> None:
    """Points of the row bot against the column bot, then totals."""
    played = [b for b in bots if any(k[0] == b for k in records)]
    totals = {
        b: (
            sum(r.points for k, r in records.items() if k[0] == b),
            sum(r.wins + r.draws + r.losses for k, r in records.items() if k[0] == b),
        )
        for b in played
    }
    width = max(len(b) for b in played)
    print()
    print(" " * width + " " + " ".join(f"{b[:8]:>8}" for b in played) + "     total")
    for a in sorted(played, key=lambda x: -totals[x][0]):
        cells = []
        for b in played:
            record = records.get((a, b))
            cells.append(f"{'--' if record is None else f'{record.points:g}':>8}")
        points, games = totals[a]
        print(f"{a:>{width}} {' '.join(cells)} {points:>5g}/{games}")


if __name__ == "__main__":
    main()
