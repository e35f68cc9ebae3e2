"""Find long Gomoku tactics: positions whose shortest threat win is 13 plies or more.

    python bench/gomoku_tactics.py [--games 12] [--min-plies 13] [--seed 1]

Plays self-play games of arena-gomoku from the balanced openings (a small node budget
per move, and now and then a random candidate move so the games differ), and measures
at every position the shortest VCF (fours only) and the shortest VCT (fours and threes)
of the side to move: the fewest plies ``p`` for which the threat search with a plies
limit of ``p`` proves a win. Positions where the shortest win is ``--min-plies`` or
longer are checked against every answer: for each legal reply of the opponent to the
winning first move, the solver must prove the win again (with two plies more room than
the rest of the line needs).
Prints the positions that pass as ``Tactic`` lines for ``tests/engine/gomoku/positions.py``.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

from arena.engine.api import Limits
from arena.engine.gomoku import PRESETS, choose_move, warm_up
from arena.engine.gomoku.bots import threat_line
from arena.engine.gomoku.position import GomokuPositionError, position_from_moves

ROOT = Path(__file__).resolve().parents[1]
MAX_PLIES = 27
SOLVER_NODES = 400_000


def solve(moves: list[int], plies: int, threes: bool) -> list[int]:
    """The threat search alone: a VCF, or with ``threes`` a VCT, of ``plies`` (its line)."""
    return threat_line(position_from_moves(15, "freestyle", moves), plies, not threes,
                       SOLVER_NODES)


def shortest(moves: list[int], threes: bool) -> tuple[int, list[int]] | None:
    """The fewest plies with a proven threat win, and its line."""
    if len(solve(moves, MAX_PLIES, threes)) <= 1:
        return None
    for plies in range(3, MAX_PLIES + 1, 2):
        line = solve(moves, plies, threes)
        if len(line) > 1:
            return plies, line
    return None


def holds_against_every_reply(moves: list[int], first: int, plies: int, threes: bool) -> bool:
    """After ``first``, every legal reply still leaves a proven win of ``plies``."""
    after = [*moves, first]
    occupied = set(after)
    for reply in range(225):
        if reply in occupied:
            continue
        try:
            position_from_moves(15, "freestyle", [*after, reply])
        except GomokuPositionError:
            return False  # the reply won
        if not solve([*after, reply], plies, threes):
            return False
    return True


def self_play(opening: list[int], rng: random.Random) -> list[list[int]]:
    """The positions of one game (each a move list), until it ends."""
    moves = list(opening)
    positions = []
    while True:
        try:
            position_from_moves(15, "freestyle", moves)
        except GomokuPositionError:
            return positions
        positions.append(list(moves))
        result = choose_move(15, "freestyle", moves, PRESETS["arena-gomoku"], Limits(nodes=3000))
        move = result.move
        if rng.random() < 0.15 and not result.exact:
            free = [m for m in range(225) if m not in moves and _near(m, moves)]
            move = rng.choice(free)
        moves.append(move)


def _near(cell: int, moves: list[int]) -> bool:
    x, y = cell % 15, cell // 15
    return any(max(abs(x - m % 15), abs(y - m // 15)) <= 1 for m in moves)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=12)
    parser.add_argument("--min-plies", type=int, default=13)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from bench.gomoku_match import load_openings

    warm_up()
    rng = random.Random(args.seed)
    openings = load_openings()
    found = 0
    for game in range(args.games):
        for moves in self_play(openings[game % len(openings)], rng):
            for threes in (False, True):
                best = shortest(moves, threes)
                if best is None or best[0] < args.min_plies:
                    continue
                plies, line = best
                kind = "vct" if threes else "vcf"
                if not holds_against_every_reply(moves, line[0], plies, threes):
                    print(f"# rejected ({kind} {plies}): {moves}", flush=True)
                    continue
                found += 1
                print(f'Tactic("{kind}-{plies}-g{game}", {moves}, {plies}, kind="{kind}"),  '
                      f"# {line}", flush=True)
                break
    print(f"# {found} positions", flush=True)


if __name__ == "__main__":
    main()
