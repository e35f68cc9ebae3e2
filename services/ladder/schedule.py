"""From a ladder request to the list of games it plays (pure: no Redis, no network).

Every pairing plays the same openings, each twice with colours swapped, so that neither
the opening nor the first move favours anyone. Round robin pairs every two bots; a gauntlet
pairs the first bot (the challenger) with each of the others. Games are ordered opening by
opening, pairing by pairing, so partial standings stay balanced while a ladder runs.

A game's seed depends on the ladder's seed, the opening's place in the plan and the two
bot versions by colour, not on the game's index: a ladder re-run with one more bot (or one
bot replaced) plays every game between the others exactly as before, so their results
stay comparable and the shared search cache answers those games' moves.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from arena.openings import Opening
from arena.v1 import ladder_pb2

_SEED_BITS = 62


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


def game_seed(seed: int, opening_index: int, black: str, white: str) -> int:
    """The seed of the game ``black`` vs ``white`` (bot versions) on the ladder's
    ``opening_index``-th opening."""
    material = f"{seed}|{opening_index}|{black}|{white}".encode()
    digest = hashlib.blake2b(material, digest_size=8).digest()
    return int.from_bytes(digest, "big") >> (64 - _SEED_BITS)


def games_total(bots: int, ladder_format: int, games_per_pairing: int) -> int:
    """How many games a ladder plays, counted without listing its pairings."""
    pairs = bots - 1 if ladder_format == ladder_pb2.LADDER_FORMAT_GAUNTLET else (
        bots * (bots - 1) // 2)
    return max(0, pairs) * games_per_pairing


def game_at(
    bots: Sequence[str], ladder_format: int, games_per_pairing: int, openings: Sequence[Opening],
    seed: int, index: int,
) -> PlannedGame:
    """The ``index``-th game of the plan, without planning the others (a ladder schedules
    its games a few at a time). ``openings`` is the suite in the ladder's seeded order
    (``select_openings``); the plan takes the first games_per_pairing / 2 of it, cycling."""
    pairs = pairings(len(bots), ladder_format)
    if not 0 <= index < len(pairs) * games_per_pairing:
        raise IndexError(f"game {index} of a {len(pairs) * games_per_pairing}-game ladder")
    opening_index, rest = divmod(index, 2 * len(pairs))
    first, second = pairs[rest // 2]
    black, white = (first, second) if rest % 2 == 0 else (second, first)
    opening = openings[opening_index % len(openings)]
    return PlannedGame(index, black, white, opening,
                       game_seed(seed, opening_index, bots[black], bots[white]))


def plan_games(
    bots: Sequence[str], ladder_format: int, games_per_pairing: int, openings: list[Opening],
    seed: int,
) -> list[PlannedGame]:
    """Every game of the ladder; ``bots`` names each bot version (``name@version``) and
    ``openings`` holds games_per_pairing / 2 openings."""
    if games_per_pairing % 2 or len(openings) != games_per_pairing // 2:
        raise ValueError(
            f"need games_per_pairing / 2 openings: {games_per_pairing} games, "
            f"{len(openings)} openings"
        )
    if len(set(bots)) != len(bots):
        raise ValueError(f"a bot version is listed twice: {list(bots)}")
    total = games_total(len(bots), ladder_format, games_per_pairing)
    return [game_at(bots, ladder_format, games_per_pairing, openings, seed, index)
            for index in range(total)]
