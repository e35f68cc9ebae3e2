"""The pattern evaluator and its training: symmetry, the fast index reading against the
per-square one, the kernel against the training's prediction, a small bounded training run
that must beat the untrained weights on held-out games, reproducibility, the preset."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from arena.engine.api import Limits
from arena.engine.othello import (
    PASS,
    PRESETS,
    choose_move,
    evaluator_hash,
    solve,
    validate_config,
)
from arena.engine.othello import patterns as pt
from arena.engine.othello.bitboard import Position, get_moves, legal_moves, parse_position
from arena.engine.othello.config import compile_config
from arena.engine.othello.train import GameSettings, Positions, generate, predict
from arena.engine.tools import main as engine_cli
from arena.errors import InvalidArgumentError
from arena.openings import load_suite, select_openings
from arena.openings.suites import start_position_after
from tests.engine.othello.conftest import random_boards


def _positions(count: int, seed: int) -> list[tuple[int, int]]:
    out = []
    for board in random_boards(count, seed):
        pos = parse_position(board.to_text())
        out.append((pos.player, pos.opponent))
    return out


def _random_weights(stages: int, seed: int) -> np.ndarray:
    """Random weights, symmetric twins tied as the training ties them."""
    rng = np.random.default_rng(seed)
    raw = rng.integers(-3000, 3000, size=(stages, pt.BLOCK))
    return raw[:, pt.canonical_indices()]


def test_fast_reading_matches_the_per_square_reading() -> None:
    for p, o in _positions(200, seed=11):
        for i in range(pt.N_INSTANCES):
            f, t = int(pt.INSTANCE_FAMILY[i]), pt._SYMMETRY_OF[i]
            pb = np.uint64(pt.board_for(np.uint64(p), t))
            ob = np.uint64(pt.board_for(np.uint64(o), t))
            assert pt.family_index(pb, ob, f) == pt.instance_index(np.uint64(p), np.uint64(o), i)


def test_instances_cover_every_symmetric_image() -> None:
    counts = {name: 0 for name in pt.FAMILIES}
    names = list(pt.FAMILIES)
    for f in pt.INSTANCE_FAMILY:
        counts[names[f]] += 1
    assert counts == {"edge_2x": 4, "corner_3x3": 4, "corner_2x5": 8, "row_2": 4, "row_3": 4,
                      "row_4": 4, "diagonal_8": 2, "diagonal_7": 4, "diagonal_6": 4,
                      "diagonal_5": 4, "diagonal_4": 4}


@pytest.mark.parametrize("source", ["random", "shipped"])
def test_the_eight_symmetric_boards_score_the_same(source: str) -> None:
    if source == "random":
        params = pt.build_params(_random_weights(3, seed=5))
    else:
        params = compile_config(PRESETS["arena-pattern"]).params
    scores = set()
    for p, o in _positions(150, seed=12):
        values = {
            int(pt.pattern_eval(np.uint64(pt.transform_board(t, p)),
                                np.uint64(pt.transform_board(t, o)), params))
            for t in range(8)
        }
        assert len(values) == 1, (p, o, values)
        scores |= values
    assert len(scores) > 50  # the weights do tell the positions apart


def test_kernel_agrees_with_the_training_prediction() -> None:
    weights = _random_weights(4, seed=6)
    params = pt.build_params(weights)
    boards = [(p, o) for p, o in _positions(300, seed=13)
              if get_moves(np.uint64(p), np.uint64(o)) or get_moves(np.uint64(o), np.uint64(p))]
    data = Positions(np.array([b[0] for b in boards], dtype=np.uint64),
                     np.array([b[1] for b in boards], dtype=np.uint64),
                     np.zeros(len(boards)), np.zeros(len(boards), dtype=np.int64))
    kernel = [pt.pattern_eval(np.uint64(p), np.uint64(o), params) for p, o in boards]
    assert np.array_equal(np.rint(predict(data, weights) * pt.EVAL_SCALE), kernel)


def test_generation_is_reproducible_from_the_seed() -> None:
    settings = GameSettings(depth=2, random_moves=3, solve_empties=8)
    a, b = generate(3, 21, settings), generate(3, 21, settings)
    c = generate(3, 22, settings)
    assert np.array_equal(a.p, b.p) and np.array_equal(a.o, b.o)
    assert np.array_equal(a.label, b.label) and np.array_equal(a.game, b.game)
    assert len(a) != len(c) or not np.array_equal(a.p, c.p)
    assert set(a.game.tolist()) == {0, 1, 2}
    # Labels are final disc differences, from the side to move's view: within a game they
    # only change sign; from solve_empties on (both sides solve) they are the exact scores.
    for g in range(3):
        labels = np.abs(a.label[a.game == g])
        assert (labels == labels[0]).all()
    late = [(p, o, label) for p, o, label in zip(a.p, a.o, a.label, strict=True)
            if 64 - (int(p) | int(o)).bit_count() <= 8]
    assert len(late) >= 6
    for p, o, label in late:
        assert solve(Position(int(p), int(o), 0).to_text()).score == label


def test_training_run_beats_the_untrained_weights_on_held_out_games(tmp_path: Path) -> None:
    out = tmp_path / "w.npz"
    # 60 quick games (depth 1, solved from 8 empties): about 2,200 training positions and
    # 20 held-out games; held-out errors of a few games only would be mostly noise.
    args = ["train", "othello", "--games", "60", "--seed", "4", "--depth", "1",
            "--solve-empties", "8", "--stages", "2", "--ridge", "100", "--iterations", "40",
            "--holdout", "0.3333", "--output", str(out), "--json"]
    assert engine_cli(args) == 0
    meta = json.loads(out.with_suffix(".json").read_text())
    metrics = meta["metrics"]
    assert metrics["positions"]["train"] > 1000 and metrics["positions"]["heldout"] > 500
    held = metrics["heldout"]
    assert held["trained"]["mse"] < 0.9 * held["untrained"]["mse"]
    assert held["trained"]["mae"] < held["untrained"]["mae"]
    assert meta["command"].startswith("arena engine train othello --games 60 --seed 4 ")
    weights = pt.read_weights(out)
    assert weights.shape == (2, pt.BLOCK) and np.abs(weights).sum() > 0


def test_config_hash_follows_the_weights(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = PRESETS["arena-pattern"]
    shipped = evaluator_hash(config)
    assert evaluator_hash({"evaluator": "pattern"}) == shipped
    weights = tmp_path / "weights"
    weights.mkdir()
    for name in ("arena-pattern.npz", "arena-pattern.probcut.json"):
        shutil.copy(pt.WEIGHTS_DIR / name, weights / name)
    monkeypatch.setattr(pt, "WEIGHTS_DIR", weights)
    assert evaluator_hash(config) == shipped  # same bytes, same hash
    plain = evaluator_hash({**config, "probcut": 0})
    changed = pt.read_weights(weights / "arena-pattern.npz")
    changed[0, pt.N_DENSE] += 1
    np.savez_compressed(weights / "arena-pattern.npz", weights=changed.astype(np.int16))
    assert evaluator_hash({**config, "probcut": 0}) != plain
    # ProbCut's table was fitted for the old weights: refused until it is refitted.
    assert [v.field for v in validate_config(config)] == ["probcut"]
    with pytest.raises(InvalidArgumentError):
        compile_config({**config, "weights": "no-such-set"})
    with pytest.raises(InvalidArgumentError):
        compile_config({**config, "weights_sha256": "0" * 64})


def test_pattern_preset_plays_legal_whole_games() -> None:
    suite = load_suite("othello-balanced")
    for n, opening in enumerate(select_openings(suite, 2, seed=9)):
        pos = parse_position(start_position_after("othello", "standard", 8, opening))
        bots = (PRESETS["arena-pattern"], PRESETS["arena-fast"])
        if n % 2:
            bots = bots[::-1]
        while legal_moves(pos):
            legal = legal_moves(pos)
            if legal == [PASS]:
                pos = pos.play(PASS)
                continue
            result = choose_move(pos.to_text(), bots[pos.turn], Limits(depth=3))
            assert result.move in legal
            pos = pos.play(result.move)
        assert pos.black.bit_count() + pos.white.bit_count() <= 64
