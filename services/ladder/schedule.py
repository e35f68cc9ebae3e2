"""From a ladder request to the list of games it plays (pure: no Redis, no network).

Every pairing plays the same openings, each twice with colours swapped, so that neither
the opening nor the first move favours anyone. Round robin pairs every two bots; a gauntlet
pairs the first bot (the challenger) with each of the others. Games are ordered opening by
opening, pairing by pairing, so partial standings stay balanced while a ladder runs.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from arena.openings import Opening
from arena.v1 import ladder_pb2

MAX_BOTS = 32
MAX_GAMES = 20_000
# Distinct from the opening shuffle's seed use, so two ladders that differ only in seed
# differ in both openings and per-game seeds.
_SEED_STRIDE = 1_000_003
_SEED_MASK = (1 << 62) - 1


@dataclass(frozen=True)
class PlannedGame:
    """One game of a ladder: bot indices for each colour, its opening and its seed."""

    index: int
    black: int
    white: int
    opening: Opening
    seed: int


def pairings(bots: int, ladder_format: int) -> list[tuple[int, int]]:
    """The pairs of bot indices that meet (the first of each pair is listed first)."""
    if ladder_format == ladder_pb2.LADDER_FORMAT_GAUNTLET:
        return [(0, other) for other in range(1, bots)]
    return list(itertools.combinations(range(bots), 2))


def even_games(requested: int, suite_size: int) -> int:
    """Games per pairing: rounded up to even; 0 means every opening of the suite twice."""
    if requested <= 0:
        return 2 * suite_size
    return requested + requested % 2


def plan_games(
    bots: int, ladder_format: int, games_per_pairing: int, openings: list[Opening], seed: int
) -> list[PlannedGame]:
    """Every game of the ladder; ``openings`` holds games_per_pairing / 2 openings."""
    if games_per_pairing % 2 or len(openings) != games_per_pairing // 2:
        raise ValueError(
            f"need games_per_pairing / 2 openings: {games_per_pairing} games, "
            f"{len(openings)} openings"
        )
    games: list[PlannedGame] = []
    for opening in openings:
        for first, second in pairings(bots, ladder_format):
            for black, white in ((first, second), (second, first)):
                index = len(games)
                game_seed = (seed * _SEED_STRIDE + index) & _SEED_MASK
                games.append(PlannedGame(index, black, white, opening, game_seed))
    return games
