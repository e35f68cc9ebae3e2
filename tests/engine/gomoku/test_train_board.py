"""``arena engine train gomoku --board``: the board network's numpy fit (``boardfit``)
against finite differences, a small bounded fit that must beat a coin toss on held-out
games and come again from its seed, its float network against the kernels' integers
(``evaluation.board_values``), and the command end to end with its refusals."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from arena.engine.gomoku import boardfit, train
from arena.engine.gomoku import evaluation as ev
from arena.engine.gomoku.board import FREESTYLE
from arena.engine.gomoku.patterns import cell_code, setup
from arena.engine.selfplay import held_out_games
from arena.engine.tools import main as engine_cli

from .test_board import random_game

GAMES = 30  # random games of the small fit: about 650 positions


def _teacher() -> ev.BoardNet:
    """A board network to learn from: a seeded start of two channels, its 5x5 weights
    made the same in all eight symmetries of the board (as a fit in random symmetries
    learns them)."""
    start = boardfit._typed(boardfit._start(2, np.random.default_rng(7)), np.float64)
    turns = [np.rot90(start.taps, k, axes=(0, 1)) for k in range(4)]
    taps = np.mean([*turns, *(t[:, ::-1] for t in turns)], axis=0)
    return ev.BoardNet(start.first, taps, start.bias, start.head_in, start.head_bias,
                       start.head_out, start.head_out_bias)


@pytest.fixture(scope="module")
def kept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A positions file of random games' positions, labelled by a board network (soft
    labels, as a teacher's, spread to a standard deviation of 1.5 in log-odds): what a fit
    must be able to learn from a few hundred positions, where the results of so few games
    would be mostly noise and another evaluation's judgement would need more of them."""
    rng = random.Random(3)
    data = train.record_positions([(random_game(15, "freestyle", rng), None)
                                   for _ in range(GAMES)])
    z = boardfit.logits(_teacher(), boardfit.board_inputs(data.moves))
    data.label = 1.0 / (1.0 + np.exp(-1.5 * (z - z.mean()) / z.std()))
    return train.save_positions(tmp_path_factory.mktemp("board") / "kept.npz",
                                train.KeptPositions(data, GAMES, {"command": "random games",
                                                                  "seed": 3}))


@pytest.fixture(scope="module")
def split(kept: Path) -> tuple[train.Positions, boardfit.BoardInputs, np.ndarray]:
    """The small file's positions, their board inputs and which are held out (the last
    quarter of the games, as ``fit_and_measure`` holds them out)."""
    data = train.load_positions(kept).data
    held = data.game >= GAMES - held_out_games(GAMES, 0.25)
    return data, boardfit.board_inputs(data.moves), held


def _small_fit(split: tuple[train.Positions, boardfit.BoardInputs, np.ndarray],
               seed: int) -> ev.BoardNet:
    data, inputs, held = split
    return boardfit.fit_board(inputs.subset(~held), data.label[~held], ev.BOARD_CHANNELS,
                              1e-4, seed, passes=30, batch=64)


@pytest.fixture(scope="module")
def small_net(split: tuple[train.Positions, boardfit.BoardInputs, np.ndarray]) -> ev.BoardNet:
    return _small_fit(split, 1)


def _random_positions(count: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    return [random_game(15, "freestyle", rng)[: rng.randrange(3, 60)] for _ in range(count)]


def test_the_inputs_are_the_engines_cell_codes() -> None:
    for moves in _random_positions(5, 1):
        inputs = boardfit.board_inputs([moves])
        cells, _pat, st, _table = setup(15, FREESTYLE, moves, ev.HAND_WEIGHTS)
        assert np.array_equal(inputs.cells[0], cells)
        for colour, codes in ((1, inputs.black[0]), (2, inputs.white[0])):
            expected = [cell_code(st, colour, cell) if cells[cell] == 0 else 0
                        for cell in range(225)]
            assert codes.tolist() == expected
        assert bool(inputs.black_to_move[0]) == (len(moves) % 2 == 0)


def test_the_gradient_is_the_losss_slope() -> None:
    # Every weight of a small network (2 channels), in float64: the backward pass
    # against central differences of the loss, the L2 penalty included.
    inputs = boardfit.board_inputs(_random_positions(6, 2))
    label = np.array([0.2, 0.9, 0.5, 0.7, 0.1, 0.6])
    net = boardfit._typed(boardfit._start(2, np.random.default_rng(0)), np.float64)

    def loss() -> float:
        return boardfit.gradients(net, inputs.cells, inputs.black, inputs.white,
                                  inputs.black_to_move, label, 0.01)[0]

    grads = boardfit.gradients(net, inputs.cells, inputs.black, inputs.white,
                               inputs.black_to_move, label, 0.01)[1]
    step = 1e-6
    for name in net.shapes():
        weights, slope = getattr(net, name), getattr(grads, name)
        assert slope.shape == weights.shape
        for index in np.ndindex(weights.shape):
            kept = weights[index]
            weights[index] = kept + step
            above = loss()
            weights[index] = kept - step
            below = loss()
            weights[index] = kept
            assert slope[index] == pytest.approx((above - below) / (2 * step), abs=1e-7), (
                name, index)


def test_a_small_fit_beats_a_coin_toss_on_held_out_games_and_comes_from_its_seed(
    split: tuple[train.Positions, boardfit.BoardInputs, np.ndarray], small_net: ev.BoardNet
) -> None:
    data, inputs, held = split
    net = small_net
    assert net.channels == ev.BOARD_CHANNELS
    heldout = data.subset(held)
    values = boardfit.board_net_values(net, inputs.subset(held)).astype(np.float64)
    loss = train.scored(heldout, values)["log_loss"]
    y = heldout.label
    entropy = float(np.mean(-(y * np.log(y) + (1 - y) * np.log(1 - y))))  # the best loss
    assert loss is not None and loss < entropy + 0.1 * (np.log(2) - entropy), (loss, entropy)
    again = _small_fit(split, 1)
    assert all(np.array_equal(getattr(net, name), getattr(again, name))
               for name in net.shapes())
    other = _small_fit(split, 2)
    assert not np.array_equal(net.first, other.first)


def test_the_float_network_and_the_kernels_integers_agree(
    split: tuple[train.Positions, boardfit.BoardInputs, np.ndarray], small_net: ev.BoardNet
) -> None:
    # A fitted network and a fresh start: the integer form differs by its rounding alone.
    _data, inputs, _held = split
    start = boardfit._typed(boardfit._start(8, np.random.default_rng(5)), np.float64)
    for net in (small_net, start):
        floats = boardfit.logits(net, inputs)
        ints = boardfit.board_net_values(net, inputs) / ev.EVAL_SCALE
        assert np.abs(floats - ints).max() < 0.05
        assert np.abs(floats - ints).mean() < 0.01
        assert floats.std() > 0.05  # not a constant that would agree trivially


# The first ten games alone (about 220 positions: one mini-batch a pass) keep the command's
# six fits (the held-out split's and the five folds') short.
SMALL_GAMES = 10


def _first_games(kept: Path, folder: Path) -> tuple[train.Positions, Path]:
    """The positions of the first ``SMALL_GAMES`` games of ``kept``, and a positions file
    of them in ``folder``."""
    whole = train.load_positions(kept).data
    data = whole.subset(whole.game < SMALL_GAMES)
    return data, train.save_positions(folder / "small.npz", train.KeptPositions(
        data, SMALL_GAMES, {"command": "random games", "seed": 3}))


def test_the_command_fits_a_board_network_measured_by_the_kernels_integers(
    kept: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, small = _first_games(kept, tmp_path)
    games = SMALL_GAMES
    out = tmp_path / "w.json"
    assert engine_cli(["train", "gomoku", "--positions", str(small), "--board",
                       "--holdout", "0.3", "--output", str(out)]) == 0
    said = capsys.readouterr().out
    assert "board network: 16 channels" in said and "board pass 15/15" in said
    body = json.loads(out.read_text())
    # no penalty by default with --board (cli.BOARD_L2)
    assert body["command"] == ("arena engine train gomoku --positions small.npz --l2 0 "
                               "--board --holdout 0.3 --output w.json")
    assert body["weights"] == [0] * ev.FEATURES and "network" not in body
    assert np.array_equal(ev.read_weights(out), np.zeros(ev.FEATURES))
    net = ev.read_board(out)
    assert net is not None and net.channels == ev.BOARD_CHANNELS
    # The network is the fit of the training games from the file's seed, and the trained
    # figures are its own, in the kernels' integers.
    held = data.game >= games - held_out_games(games, 0.3)
    inputs = boardfit.board_inputs(data.moves)
    alone = boardfit.fit_board(inputs.subset(~held), data.label[~held], ev.BOARD_CHANNELS,
                               0.0, 3)
    assert alone.to_json() == body["board"]
    values = boardfit.board_net_values(net, inputs).astype(np.float64)
    metrics = body["metrics"]
    for part, chosen in (("train", ~held), ("heldout", held)):
        assert metrics[part]["trained"] == train.scored(data.subset(chosen), values[chosen])
        assert set(metrics[part]) == {"trained", "hand", "shipped", "untrained"}
    assert metrics["train"]["trained"]["log_loss"] < metrics["train"]["untrained"]["log_loss"]
    assert len(metrics["folds"]) == 5


def test_several_starts_keep_the_one_that_fits_its_training_positions_best(
    kept: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Through the command with the small network of --hidden (its fits take seconds), two
    # starts at a time in other processes: the recorded command, each start's training
    # loss said and kept, the least one's fit kept, each the fit from its seed here.
    data, small = _first_games(kept, tmp_path)
    games = SMALL_GAMES
    out = tmp_path / "w.json"
    assert engine_cli(["train", "gomoku", "--positions", str(small), "--hidden", "2",
                       "--starts", "3", "--jobs", "2", "--holdout", "0.3", "--output",
                       str(out)]) == 0
    said = capsys.readouterr().out
    body = json.loads(out.read_text())
    assert "--hidden 2 --starts 3 --holdout 0.3" in body["command"]
    losses = body["metrics"]["starts"]
    best = losses.index(min(losses))
    assert f"kept start {best + 1}" in said and "start 3/3: training log-loss" in said
    # Each start is the fit from its own seed (the first the file's seed itself, as a fit
    # of one start), measured on the training games.
    training = data.subset(data.game < games - held_out_games(games, 0.3))
    fits = [train.fit(training, 1e-4, 2, train.start_seed(3, start)) for start in range(3)]
    assert [train.metrics(training, w)["log_loss"] for w in fits] == pytest.approx(losses,
                                                                                  abs=1e-5)
    assert len({tuple(w) for w in fits}) == 3  # the starts differ
    assert "network" in body and ev.read_weights(out).tolist() == fits[best].tolist()


def test_several_starts_of_a_board_network_keep_the_least_training_loss(
    split: tuple[train.Positions, boardfit.BoardInputs, np.ndarray]
) -> None:
    data, _inputs, held = split
    fitter = train.Fitter(data, train.Fitting(0.0, board=True, starts=2), 3, lambda _: None)
    zero, net = fitter.fit(~held)
    assert net is not None and fitter.boards is not None and len(fitter.start_losses) == 2
    assert fitter.start_losses[0] != fitter.start_losses[1]
    measured = fitter.measure(~held, zero, net)["log_loss"]
    assert measured == pytest.approx(min(fitter.start_losses), abs=1e-5)
    first = boardfit.fit_board(fitter.boards.subset(~held), data.label[~held],
                               ev.BOARD_CHANNELS, 0.0, 3)
    assert fitter.measure(~held, zero, first)["log_loss"] == pytest.approx(
        fitter.start_losses[0], abs=1e-5)
    # the same starts two at a time in other processes: the same fits and choice
    pooled = train.Fitter(data, train.Fitting(0.0, board=True, starts=2, jobs=2), 3,
                          lambda _: None)
    again = pooled.fit(~held)[1]
    assert again is not None and again.to_json() == net.to_json()
    assert pooled.start_losses == fitter.start_losses


@pytest.mark.parametrize(("extra", "message"), [
    (["--board", "--hidden", "3"], "--board cannot go with --hidden"),
    (["--board", "--hidden", "0"], "--board cannot go with --hidden"),
    (["--board", "--starts", "0"], "--starts must be in 1..16, got 0"),
    (["--hidden", "4", "--starts", "17"], "--starts must be in 1..16, got 17"),
    (["--starts", "2"], "--starts needs a network to start from"),
])
def test_the_command_refuses_bad_board_options(
    extra: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "w.json"
    assert engine_cli(["train", "gomoku", "--games", "4", "--depth", "1", "--output", str(out),
                       *extra]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("arena engine: error:") and message in captured.err
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert "games" not in captured.out and not out.exists()  # before the first game
