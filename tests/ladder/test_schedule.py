"""Turning a ladder into games: pairings, colour swaps, openings twice per pairing."""

from __future__ import annotations

from collections import Counter

import pytest
from arena.services.ladder.schedule import even_games, games_total, pairings, plan_games

from arena.openings import load_suite, select_openings
from arena.v1 import ladder_pb2

ROUND_ROBIN = ladder_pb2.LADDER_FORMAT_ROUND_ROBIN
GAUNTLET = ladder_pb2.LADDER_FORMAT_GAUNTLET
BOTS = ["ana@1", "ben@1", "cy@2", "dee@1"]


def test_pairings_of_both_formats() -> None:
    assert pairings(4, ROUND_ROBIN) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    assert pairings(4, GAUNTLET) == [(0, 1), (0, 2), (0, 3)]
    assert pairings(2, GAUNTLET) == pairings(2, ROUND_ROBIN) == [(0, 1)]


def test_the_games_are_counted_as_the_pairings_make_them() -> None:
    # Counted without listing the pairings (test_ladder_service: 2,000 bots are refused).
    for bots in range(0, 40):
        for ladder_format in (ROUND_ROBIN, GAUNTLET):
            assert games_total(bots, ladder_format, 6) == 6 * len(pairings(bots, ladder_format))


def test_games_per_pairing_round_up_to_even_and_default_to_the_suite() -> None:
    assert [even_games(n, 60) for n in (1, 2, 3, 10)] == [2, 2, 4, 10]
    assert even_games(0, 60) == 120 and even_games(0, 1) == 2


@pytest.mark.parametrize("ladder_format", [ROUND_ROBIN, GAUNTLET])
def test_every_opening_is_played_twice_per_pairing_with_colours_swapped(ladder_format: int) -> None:
    suite = load_suite("othello-balanced-3")
    openings = select_openings(suite, 5, seed=9)
    games = plan_games(BOTS, ladder_format, 10, openings, seed=9)
    pairs = pairings(4, ladder_format)
    assert len(games) == 10 * len(pairs)
    assert [g.index for g in games] == list(range(len(games)))
    per_colour = Counter((g.black, g.white, g.opening.moves) for g in games)
    for first, second in pairs:
        for opening in openings:
            assert per_colour[(first, second, opening.moves)] == 1
            assert per_colour[(second, first, opening.moves)] == 1
    assert len({g.seed for g in games}) == len(games)
    assert games == plan_games(BOTS, ladder_format, 10, openings, seed=9)
    assert [g.seed for g in plan_games(BOTS, ladder_format, 10, openings, seed=10)] != [
        g.seed for g in games
    ]


def test_the_plan_needs_half_as_many_openings_as_games() -> None:
    openings = select_openings(load_suite("none"), 2, seed=0)
    with pytest.raises(ValueError, match="openings"):
        plan_games(BOTS[:2], ROUND_ROBIN, 6, openings, seed=0)


@pytest.mark.parametrize("ladder_format", [ROUND_ROBIN, GAUNTLET])
def test_a_game_keeps_its_seed_when_the_ladder_gains_or_changes_a_bot(ladder_format: int) -> None:
    openings = select_openings(load_suite("othello-balanced-3"), 3, seed=4)

    def seeds(bots: list[str]) -> dict[tuple[str, str, tuple[int, ...]], int]:
        return {(bots[g.black], bots[g.white], tuple(g.opening.moves)): g.seed
                for g in plan_games(bots, ladder_format, 6, openings, seed=4)}

    before = seeds(BOTS)
    grown = seeds([*BOTS, "eve@1"])
    assert {key: grown[key] for key in before} == before
    changed = seeds([*BOTS[:3], "dee@2"])
    kept = {key: seed for key, seed in before.items() if "dee@1" not in key}
    assert kept and {key: changed[key] for key in kept} == kept
    assert not set(changed.values()) & {s for k, s in before.items() if "dee@1" in k}


def test_a_bot_version_listed_twice_is_refused() -> None:
    openings = select_openings(load_suite("none"), 1, seed=0)
    with pytest.raises(ValueError, match="twice"):
        plan_games(["ana@1", "ana@1"], ROUND_ROBIN, 2, openings, seed=0)
