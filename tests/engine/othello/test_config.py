"""Presets, config validation, hashes, depth conventions and seeded tie-breaking."""

from __future__ import annotations

import copy

import pytest

from arena.engine.adapters import OTHELLO
from arena.engine.api import Limits
from arena.engine.othello import (
    PASS,
    PRESETS,
    START_TEXT,
    choose_move,
    evaluator_hash,
    validate_config,
)
from arena.engine.othello.config import compile_config
from arena.errors import InvalidArgumentError
from tests.engine.othello.conftest import random_boards

NAMES = {
    "kreversi-default",
    "lucy",
    "madoka",
    "ryo",
    "terra",
    "lab-beginner",
    "lab-intermediate",
    "lab-advanced",
    "arena-fast",
    "arena-strong",
    "arena-pattern",
}


def test_every_preset_is_valid_and_plays() -> None:
    assert set(PRESETS) == NAMES
    for name, config in PRESETS.items():
        assert validate_config(config) == [], name
        result = choose_move(START_TEXT, config, Limits(depth=2, time_ms=2000))
        assert result.move in (19, 26, 37, 44), name


def test_seed_parameters_of_shipped_bots() -> None:
    terra = PRESETS["terra"]
    assert terra["force_pass_score"] == 1000 and terra["stable_disc_score"] == 60
    assert terra["position_tables"]["begin"][1][1] == -120  # type: ignore[index]
    lucy = PRESETS["lucy"]
    assert lucy["position_tables"]["end"] == [[1] * 8 for _ in range(8)]  # type: ignore[index]
    assert lucy["mobility"] == {"begin": 5, "middle": 10, "end": 20}
    madoka = PRESETS["madoka"]
    assert madoka["time_limit_s"] == 4 and madoka["position_tables"]["end"][4][2] == 3  # type: ignore[index]


def test_kreversi_depth_converts_to_plies() -> None:
    # Configured depth d expands d - 1 plies (seed-facts 1.6).
    assert compile_config(PRESETS["ryo"]).plies == (4, 4, 5)
    assert compile_config(PRESETS["lucy"]).plies == (5, 5, 6)
    assert compile_config(PRESETS["kreversi-default"]).plies == (1, 1, 1)
    assert choose_move(START_TEXT, PRESETS["ryo"], Limits()).depth == 4
    assert compile_config(PRESETS["lab-advanced"]).plies == (4, 4, 4)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"evaluator": "minimax"}, "evaluator"),
        ({"colour": 1}, "colour"),
        ({"depth": {"begin": 0, "middle": 2, "end": 2}}, "depth.begin"),
        ({"depth": {"begin": 2, "middle": 11, "end": 2}}, "depth.middle"),
        ({"depth": {"begin": 2, "middle": 2}}, "depth.end"),
        ({"mobility": {"begin": 80, "middle": 0, "end": 0}}, "mobility.begin"),
        ({"stable_disc_score": 70}, "stable_disc_score"),
        ({"force_pass_score": -2010}, "force_pass_score"),
        ({"time_limit_s": 0}, "time_limit_s"),
        ({"time_limit_s": 61}, "time_limit_s"),
        ({"time_limit_s": "3"}, "time_limit_s"),
        ({"use_position_table": 1}, "use_position_table"),
        ({"random_tied_root_moves": "yes"}, "random_tied_root_moves"),
    ],
)
def test_kreversi_violations_name_the_field(change: dict[str, object], field: str) -> None:
    config = {**copy.deepcopy(PRESETS["ryo"]), **change}
    fields = [v.field for v in validate_config(config)]
    assert field in fields
    with pytest.raises(InvalidArgumentError):
        compile_config(config)


def test_table_violations() -> None:
    config = copy.deepcopy(PRESETS["ryo"])
    tables = config["position_tables"]
    assert isinstance(tables, dict)
    tables["begin"][2][3] = 351
    tables["middle"] = [[0] * 8] * 7
    tables["end"][0] = [0] * 9
    fields = {v.field for v in validate_config(config)}
    assert fields == {
        "position_tables.begin[2][3]",
        "position_tables.middle",
        "position_tables.end[0]",
    }
    tables["begin"][2][3] = True
    assert "position_tables.begin[2][3]" in {v.field for v in validate_config(config)}


def test_lab_and_arena_violations() -> None:
    assert [v.field for v in validate_config({"evaluator": "lab", "look_ahead": 2})] == [
        "look_ahead"
    ]
    bad = {"evaluator": "arena", "weights": {"mobility": [1]}, "depth": 0, "x": 1}
    fields = {v.field for v in validate_config(bad)}
    assert {"weights.mobility", "depth", "x", "weights.corner"} <= fields
    assert validate_config("lab") != []


def test_evaluator_hash_is_stable_and_content_based() -> None:
    ryo = copy.deepcopy(PRESETS["ryo"])
    reordered = dict(reversed(list(ryo.items())))
    assert evaluator_hash(ryo) == evaluator_hash(reordered)
    assert evaluator_hash(PRESETS["kreversi-default"]) == evaluator_hash({"evaluator": "kreversi"})
    ryo["stable_disc_score"] = 50
    assert evaluator_hash(ryo) != evaluator_hash(PRESETS["ryo"])
    assert len({evaluator_hash(c) for c in PRESETS.values()}) == len(PRESETS)


def test_random_tied_root_moves_follow_the_seed() -> None:
    config = PRESETS["kreversi-default"]  # the four opening moves tie by symmetry
    moves = {seed: choose_move(START_TEXT, config, Limits(), seed=seed).move for seed in range(12)}
    assert set(moves.values()) <= {19, 26, 37, 44}
    assert len(set(moves.values())) > 1
    assert all(
        choose_move(START_TEXT, config, Limits(), seed=s).move == m for s, m in moves.items()
    )
    fixed = {**config, "random_tied_root_moves": False}
    assert len({choose_move(START_TEXT, fixed, Limits(), seed=s).move for s in range(6)}) == 1
    assert choose_move(START_TEXT, fixed, Limits()).ties == []


@pytest.mark.parametrize("preset", ["kreversi-default", "lucy", "terra"])
def test_a_search_under_one_seed_redrawn_equals_the_search_under_another(preset: str) -> None:
    """What lets the shared cache ignore the seed: the search itself never depends on it,
    only the draw among the tied root moves it reports does."""
    config = {**PRESETS[preset], "depth": {"begin": 4, "middle": 4, "end": 4}}
    boards = [START_TEXT, *(b.to_text() for b in random_boards(300, seed=4)
                            if 64 - b.empties <= 14 and b.legal_moves() != [PASS])]
    tied = 0
    for text in boards[:20]:
        first = choose_move(text, config, Limits(), seed=0)
        assert first.move in first.ties and first.ties == sorted(first.ties)
        tied += len(first.ties) > 1
        for seed in range(1, 6):
            fresh = choose_move(text, config, Limits(), seed=seed)
            again = OTHELLO.redraw(copy.deepcopy(first), seed)
            assert (again.move, again.score, again.depth, again.ties) == (
                fresh.move, fresh.score, fresh.depth, fresh.ties), (text, seed)
    assert tied >= 2  # the draw was exercised, not only single best moves
