"""arena-gomoku's trained evaluation: the kernel against the training's features, the
shipped weight file and its hash, a small bounded training run that must beat the
untrained weights on held-out games, reproducibility, and the command's errors."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest

from arena.engine.api import Limits
from arena.engine.gomoku import PRESETS, choose_move, evaluator_hash, train
from arena.engine.gomoku import evaluation as ev
from arena.engine.gomoku.board import FREESTYLE
from arena.engine.gomoku.patterns import FOUR, NONE, OPEN_THREE, setup
from arena.engine.gomoku.search import evaluate
from arena.engine.gomoku.train import GameSettings, feature_row, generate
from arena.engine.tools import main as engine_cli

from .test_board import random_game


def test_kernel_evaluation_is_the_trained_features_weighed() -> None:
    weights, _digest = ev.load_weights()
    rng = random.Random(5)
    for _ in range(20):
        moves = random_game(15, "freestyle", rng)[: rng.randrange(4, 40)]
        for custom in (weights, ev.HAND_WEIGHTS,
                       np.array([rng.randrange(-900, 900) for _ in range(ev.FEATURES)])):
            st = setup(15, FREESTYLE, moves, custom)[2]
            for me in (1, 2):
                assert evaluate(st, me) == int(np.dot(custom, feature_row(st, me)))


def test_shipped_weights_load_and_record_their_command() -> None:
    weights, digest = ev.load_weights()
    path = ev.WEIGHTS_DIR / f"{ev.DEFAULT_WEIGHTS}.json"
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest()
    assert weights.shape == (ev.FEATURES,) and not weights.flags.writeable
    body = json.loads(path.read_text())
    assert body["command"].startswith("arena engine train gomoku ")
    teacher = body.get("teacher")  # labelled by an engine: the command names it
    assert teacher is None or (f"--teacher {teacher['engine']} " in body["command"]
                               and f"--teacher-scale {teacher['scale']:g} " in body["command"])
    metrics = body["metrics"]
    held = metrics["heldout"]
    assert held["trained"]["log_loss"] < held["untrained"]["log_loss"]
    # Over the five folds of games, the trained weights predict better than the hand ones.
    assert len(metrics["folds"]) == 5
    assert all(f["trained"]["log_loss"] < f["hand"]["log_loss"] for f in metrics["folds"])
    assert weights[1 + ev.PER_SIDE - 1] > weights[1]  # an own open four beats a two
    # The opponent's four-three cells count against us.
    four_three = ev.QUAD_INDEX[FOUR, OPEN_THREE, NONE, NONE]
    assert weights[ev.FIRST_QUAD + ev.QUADS + four_three] < 0


def test_config_hash_follows_the_weights(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = PRESETS["arena-gomoku"]
    shipped = evaluator_hash(config)
    hand = evaluator_hash({**config, "hand_eval": True})
    assert hand != shipped
    folder = tmp_path / "weights"
    folder.mkdir()
    name = f"{ev.DEFAULT_WEIGHTS}.json"
    shutil.copy(ev.WEIGHTS_DIR / name, folder / name)
    monkeypatch.setattr(ev, "WEIGHTS_DIR", folder)
    assert evaluator_hash(config) == shipped  # same bytes, same hash
    body = json.loads((folder / name).read_text())
    body["weights"][1] += 1
    (folder / name).write_text(json.dumps(body))
    assert evaluator_hash(config) != shipped
    assert evaluator_hash({**config, "hand_eval": True}) == hand  # not read


def test_hand_and_trained_evaluations_both_play() -> None:
    moves = [112, 113, 127, 98, 142]
    for hand in (False, True):
        config = {**PRESETS["arena-gomoku"], "hand_eval": hand}
        result = choose_move(15, "freestyle", moves, config, Limits(depth=3))
        assert result.move not in moves and result.depth == 3


def test_generation_is_reproducible_from_the_seed() -> None:
    settings = GameSettings(depth=1, random_moves=2)
    first = generate(3, 11, settings)
    again = generate(3, 11, settings, jobs=2)
    assert len(first) > 10
    assert np.array_equal(first.x, again.x) and np.array_equal(first.label, again.label)
    assert set(first.label.tolist()) <= {0.0, 0.5, 1.0}
    assert not np.array_equal(first.x, generate(3, 12, settings).x)


def test_training_run_beats_the_untrained_weights_on_held_out_games(tmp_path: Path) -> None:
    # 60 quick games (depth 3): about 550 positions, half a minute. So few games are a
    # noisy sample for 433 weights, so this asks for no more than beating a coin toss on
    # unseen games, with a far stronger penalty than the shipped fit's (at 0.03 the fold
    # mean was 0.771; at 0.3, seeds 4-6 gave 0.676, 0.641, 0.665 and held-out 0.58-0.59).
    out = tmp_path / "small.json"
    args = ["train", "gomoku", "--games", "60", "--seed", "4", "--depth", "3",
            "--holdout", "0.25", "--l2", "0.3", "--output", str(out), "--json"]
    assert engine_cli(args) == 0
    body = json.loads(out.read_text())
    metrics = body["metrics"]
    assert metrics["positions"]["train"] > 300 and metrics["positions"]["heldout"] > 100
    held = metrics["heldout"]
    assert held["trained"]["log_loss"] < 0.9 * held["untrained"]["log_loss"]
    folds = [f["trained"]["log_loss"] for f in metrics["folds"]]
    assert len(folds) == 5 and float(np.mean(folds)) < held["untrained"]["log_loss"]
    # Measured beside the hand weights and the shipped ones, on the same positions.
    assert set(held) == {"trained", "hand", "shipped", "untrained"}
    assert all(set(f) == {"trained", "hand", "shipped"} for f in metrics["folds"])
    assert body["command"].startswith("arena engine train gomoku --games 60 --seed 4 ")
    assert ev.read_weights(out).shape == (ev.FEATURES,)


def test_a_reference_is_measured_at_its_best_scale() -> None:
    # Labels made by the shipped weights at twice their scale, plus a constant: rescaled,
    # the shipped weights fit them as well as any weights can (the labels' own entropy),
    # and the hand weights, another shape, fit them worse.
    data = generate(6, 3, GameSettings(depth=2))
    shipped = train.references()["shipped"]
    z = data.x @ shipped.astype(np.float64) / ev.EVAL_SCALE
    data.label = 1.0 / (1.0 + np.exp(-(2.0 * z + 0.3)))
    scaled = train.rescaled(shipped, data)
    expected = 2.0 * shipped.astype(np.float64)
    expected[0] += 0.3 * ev.EVAL_SCALE
    assert np.allclose(scaled, expected, atol=1.5)
    y = data.label
    entropy = float(np.mean(-(y * np.log(y) + (1 - y) * np.log(1 - y))))
    assert train.metrics(data, scaled)["log_loss"] == pytest.approx(entropy, abs=1e-3)
    hand = train.rescaled(train.references()["hand"], data)
    assert train.metrics(data, hand)["log_loss"] > entropy + 0.02


@pytest.mark.parametrize(("extra", "message"), [
    (["--stages", "3"], "--stages does not apply to gomoku"),
    (["--output", "w.npz"], ".json"),
    (["--games", "1"], "--games must be in 2.."),
    (["--depth", "0"], "--depth"),
    (["--output", "no/such/folder/w.json"], "does not exist"),
    (["--keep-positions", "no/such/folder/p.npz"], "--keep-positions's folder"),
    (["--keep-positions", "p.json"], "--keep-positions is a .npz file here"),
    (["--positions", "no-such-file.npz"], "no such file"),
    (["--positions", "/dev/null"], "'/dev/null': not a file"),
    (["--positions", "."], "'.': not a file"),
    (["--positions", "p.npz", "--games", "10"], "--games cannot go with --positions"),
    (["--positions", "p.npz", "--teacher", "x", "--seed", "2"],
     "--seed, --teacher cannot go with --positions"),
])
def test_train_command_refuses_bad_options(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["train", "gomoku", "--output", "w.json", *extra]
    assert engine_cli(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("arena engine: error:") and message in err
    assert "Traceback" not in err


@pytest.mark.parametrize("option", ["--l2", "--positions", "--keep-positions"])
def test_othello_training_refuses_the_gomoku_options(
    option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert engine_cli(["train", "othello", option, "0.1", "--output", "w.npz"]) == 2
    assert f"{option} does not apply to othello" in capsys.readouterr().err


def test_kept_positions_fit_again_to_the_same_weights(tmp_path: Path) -> None:
    # The positions a training kept, fitted again without a game: the same features
    # (computed from the moves), labels and split, so the same weights and figures.
    kept = tmp_path / "kept.npz"
    common = ["--holdout", "0.25", "--l2", "0.3", "--json"]
    assert engine_cli(["train", "gomoku", "--games", "12", "--seed", "5", "--depth", "2",
                       "--keep-positions", str(kept), "--output", str(tmp_path / "a.json"),
                       *common]) == 0
    assert engine_cli(["train", "gomoku", "--positions", str(kept),
                       "--output", str(tmp_path / "b.json"), *common]) == 0
    first, again = (json.loads((tmp_path / n).read_text()) for n in ("a.json", "b.json"))
    del first["metrics"]["seconds"]  # of the games: the fit again plays none
    assert again["weights"] == first["weights"] and again["metrics"] == first["metrics"]
    assert again["command"] == ("arena engine train gomoku --positions kept.npz --l2 0.3 "
                                "--holdout 0.25 --output b.json")
    made_by = again["positions"]["made_by"]
    assert first["command"].startswith(made_by["command"] + " --l2 0.3")
    assert made_by["seed"] == again["seed"] == 5 and again["positions"]["games"] == 12
    loaded = train.load_positions(kept).data
    made = generate(12, 5, GameSettings(depth=2))
    assert np.array_equal(loaded.x, made.x) and loaded.moves == made.moves
    assert np.array_equal(loaded.game, made.game) and np.array_equal(loaded.stones, made.stones)


def test_a_damaged_positions_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = generate(2, 1, GameSettings(depth=2))
    good = train.save_positions(tmp_path / "good.npz", train.KeptPositions(data, 2, {}))
    with np.load(good) as body:
        fields = dict(body)
    damaged = {
        "text.npz": None,
        "bad-label.npz": {**fields, "label": fields["label"] + 2.0},
        "nan-label.npz": {**fields, "label": fields["label"] * np.nan},
        "short-offsets.npz": {**fields, "offsets": fields["offsets"][:-1]},
        "off-board.npz": {**fields, "moves": fields["moves"] + 500},
        "twice.npz": {**fields, "moves": np.zeros_like(fields["moves"])},
        "other-format.npz": {**fields, "header": np.array('{"format": "x"}')},
        "no-labels.npz": {k: v for k, v in fields.items() if k != "label"},
        "objects.npz": {**fields, "label": np.array([{"x": 1}] * len(fields["label"]))},
    }
    for name, body in damaged.items():
        path = tmp_path / name
        if body is None:
            path.write_text("not numpy at all\n")
        else:
            np.savez(path, **body)
        assert engine_cli(["train", "gomoku", "--positions", str(path),
                           "--output", str(tmp_path / "w.json")]) == 2, name
        err = capsys.readouterr().err
        assert err.startswith("arena engine: error:") and str(path) in err, (name, err)
        assert "pickle" not in err and err.count("\n") == 1, err  # one line, no advice
        assert "Traceback" not in err and not (tmp_path / "w.json").exists()
