"""Training arena-gomoku's evaluation on positions Arena labels itself.

Data: self-play games of the ``arena-gomoku`` preset with version 2's hand-set
evaluation (``hand_eval``) at a fixed shallow depth, freestyle 15x15, each from one of
the balanced openings (``arena.openings.gomoku``) with a few random candidate moves on
top (at random plies soon after the opening), all drawn from
``random.Random(f"{seed}:{game}")``: the same seed gives the same games, whatever the
number of processes. A game ends when a search proves a win or a loss (or the board is
full: a draw); every position searched up to then, that one included, is labelled with
the result from the side to move's view (1 win, 0.5 draw, 0 loss). Positions where
either side has a five point are left out: the search answers those itself, never the
evaluation. A game gives at most ``MAX_POSITIONS_PER_GAME`` positions.

Features: what the kernels keep per colour anyway, the number of (empty cell, direction)
pairs of each line class (``patterns.TWO`` .. ``patterns.OPEN_FOUR``), for the side to
move and for the opponent, plus a constant. Fit: logistic regression (Newton's method,
an L2 penalty on everything but the constant): the evaluation is the log-odds of a win
for the side to move, stored in integer units of ``EVAL_SCALE`` per unit of log-odds.
Games are split into training and held-out sets by index, and into folds for a
cross-validation. Version 2's hand-set weights and the weights shipped at the time are
measured on the same positions, each with its best single scale fitted, so the comparison
is of the shapes of the evaluations, not of their units.

With a teacher (``--teacher NAME``, a protocol engine of a catalog: ``arena.engine.teacher``)
the same positions are labelled instead by what the teacher thinks of them: its score
for the side to move, ``s``, read as the probability of a win ``sigmoid(s /
teacher_scale)`` (``teacher_scale``: its units per unit of log-odds, Rapfi's 200), a
proven win or loss as ``TEACHER_SURE`` or its complement, and every label kept within
those two. The fit is the same logistic regression on these soft labels: the evaluation
learns the teacher's judgement rather than the outcome of version 2's games.

Labelled positions can be kept (``--keep-positions``, ``save_positions``): the moves of
each from the empty board, its label and game, and the command that made them. A kept
file is fitted again without a game or a teacher (``--positions``, ``load_positions``,
which computes the features from the moves: a file outlives a change of the features).

With ``--hidden N`` a network of ``N`` rectified units over the same features is fitted
to what the linear fit leaves (``network_fit``: Adam over mini-batches, a fixed number of
steps from a seeded start), and measured with it (``evaluation.values``).

With ``--board`` a board network (``evaluation.BoardNet``) is fitted instead of the
linear weights and their network (``boardfit.py``; the file's "weights" are then all zero
and its "board" section holds the network), and the trained figures are those of its
integer form, the kernels' (``evaluation.board_values``).
"""

from __future__ import annotations

import io
import json
import random
import time
import zipfile
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from arena.engine.api import Limits
from arena.engine.gomoku import boardfit
from arena.engine.gomoku.board import FREESTYLE, is_win
from arena.engine.gomoku.config import PRESETS
from arena.engine.gomoku.evaluation import (
    BOARD_CHANNELS,
    EVAL_SCALE,
    FEATURES,
    FIRST_CLASS,
    HAND_WEIGHTS,
    LAST_CLASS,
    MAX_WEIGHT,
    NET_SCALE,
    BoardNet,
    Weights,
    combined,
    hidden_units,
    load_board,
    load_weights,
    network,
    values,
)
from arena.engine.gomoku.patterns import (
    FIVE,
    ST_CANDIDATES,
    ST_LIST,
    State,
    play,
    setup,
    stat,
)
from arena.engine.gomoku.search import cell_features
from arena.engine.selfplay import game_progress, held_out_games, play_games
from arena.engine.teacher import Judgement, Position, Teacher

SIZE = 15
RANDOM_WITHIN = 8  # random moves come within this many plies after the opening
MAX_GAME_PLIES = SIZE * SIZE
FOLDS = 5
# Positions kept per game at most (evenly spaced): the rare long games would otherwise
# weigh hundreds of positions with one shared result.
MAX_POSITIONS_PER_GAME = 24
# The self-play bot evaluates with version 2's hand weights, so the data (and what is
# trained on it) never depends on the weights shipped at the time; and it searches 16 root
# moves, as versions 2 to 8 did, so that a recorded training command (the shipped
# weights') still makes the same games.
SELF_PLAY = {**PRESETS["arena-gomoku"], "hand_eval": True, "root_width": 16,
             "reductions": False}
# Nodes per self-play move at most: a bound on every game's time that, unlike a time
# limit, keeps the games deterministic.
SELF_PLAY_NODES = 1_000_000
# A teacher's label for a proven win (a loss: 1 minus it), and the bounds of every label
# it gives: no position is taken for certain on one engine's word.
TEACHER_SURE = 0.99


@dataclass(frozen=True)
class GameSettings:
    depth: int = 4
    random_moves: int = 2


@dataclass
class Positions:
    """Feature rows (``feature_row``), labels (side to move's score), stones, games, and
    the moves of each position from the empty board."""

    x: npt.NDArray[np.float64]
    label: npt.NDArray[np.float64]
    stones: npt.NDArray[np.int64]
    game: npt.NDArray[np.int64]
    moves: list[tuple[int, ...]]

    def __len__(self) -> int:
        return len(self.label)

    def subset(self, mask: npt.NDArray[np.bool_]) -> Positions:
        return Positions(self.x[mask], self.label[mask], self.stones[mask], self.game[mask],
                         [m for m, keep in zip(self.moves, mask, strict=True) if keep])


def feature_row(st: State, me: int) -> list[int]:
    """The evaluation's features of the position for ``me`` to move (``evaluation``)."""
    classes = range(FIRST_CLASS, LAST_CLASS + 1)
    return [1, *(stat(st, me, c) for c in classes), *(stat(st, 3 - me, c) for c in classes),
            *cell_features(st, me).tolist()]


def play_game(seed: int, game: int, settings: GameSettings
              ) -> list[tuple[list[int], float, int, tuple[int, ...]]]:
    """One self-play game: (features, label, stones, moves) of each quiet position
    searched."""
    from arena.engine.gomoku import choose_move
    from arena.openings.gomoku import balanced_openings

    rng = random.Random(f"{seed}:{game}")
    opening = list(rng.choice(balanced_openings()).moves)
    random_plies = set(rng.sample(range(len(opening), len(opening) + RANDOM_WITHIN),
                                  settings.random_moves))
    cells, pat, st, table = setup(SIZE, FREESTYLE, opening, HAND_WEIGHTS)
    moves = list(opening)
    limits = Limits(depth=settings.depth, nodes=SELF_PLAY_NODES)
    seen: list[tuple[list[int], int, tuple[int, ...]]] = []  # features, colour to move, moves
    winner = 0  # 0: draw
    while len(moves) < MAX_GAME_PLIES:
        me = 1 + len(moves) % 2
        if len(moves) in random_plies:
            count = int(st[ST_CANDIDATES])
            move = int(sorted(st[ST_LIST : ST_LIST + count].tolist())[rng.randrange(count)])
        else:
            result = choose_move(SIZE, "freestyle", moves, SELF_PLAY, limits)
            if stat(st, me, FIVE) == 0 and stat(st, 3 - me, FIVE) == 0:
                seen.append((feature_row(st, me), me, tuple(moves)))
            if result.exact:  # a proven result ends the game
                winner = me if result.score > 0 else 3 - me
                break
            move = result.move
        play(cells, pat, st, table, move, me)
        moves.append(move)
        if is_win(cells, SIZE, move, FREESTYLE):
            winner = me
            break
    return [(x, 0.5 if winner == 0 else float(colour == winner), len(played), played)
            for x, colour, played in spread(seen, MAX_POSITIONS_PER_GAME)]


# A recorded game: its moves from the empty board (freestyle 15x15) and Black's score,
# 1, 0.5 or 0 (None: no result, for a teacher to label).
RecordedGame = tuple[Sequence[int], float | None]
OPENING_STONES = 3  # a record's positions are taken from its third stone on


def record_positions(games: Sequence[RecordedGame]) -> Positions:
    """The quiet positions of recorded games (neither side with a five point, from
    ``OPENING_STONES`` stones, the final one included unless a five or a full board ended
    the game there: no evaluation, nor a teacher, judges a finished game), at most
    ``MAX_POSITIONS_PER_GAME`` a game, evenly spaced; each labelled with its game's result
    from the side to move's view (0.5 where the game has none: a teacher's labels replace
    them)."""
    rows: list[Row] = []
    for index, (moves, black_score) in enumerate(games):
        cells, pat, st, table = setup(SIZE, FREESTYLE, [], HAND_WEIGHTS)
        seen: list[tuple[list[int], int, tuple[int, ...]]] = []
        over = False  # a five or a full board: the records' rules end the game there
        for ply in range(len(moves) + 1):
            me = 1 + ply % 2
            if ply >= OPENING_STONES and not over and stat(st, me, FIVE) == 0 and (
                    stat(st, 3 - me, FIVE) == 0):
                seen.append((feature_row(st, me), me, tuple(moves[:ply])))
            if ply < len(moves):
                play(cells, pat, st, table, moves[ply], me)
                over = is_win(cells, SIZE, moves[ply], FREESTYLE) or ply + 1 == SIZE * SIZE
        score = 0.5 if black_score is None else black_score
        rows += [(x, score if colour == 1 else 1 - score, len(played), played, index)
                 for x, colour, played in spread(seen, MAX_POSITIONS_PER_GAME)]
    return _positions_of(rows)


T = TypeVar("T")


def spread(items: list[T], limit: int) -> list[T]:
    """At most ``limit`` of ``items``, evenly spaced, in order."""
    if len(items) <= limit:
        return items
    return [items[i * len(items) // limit] for i in range(limit)]


Row = tuple[list[int], float, int, tuple[int, ...], int]  # features, label, stones, moves, game


def _positions_of(rows: Sequence[tuple[Any, ...]]) -> Positions:
    """Rows of ``Row``'s fields as ``Positions``."""
    return Positions(
        np.array([r[0] for r in rows], dtype=np.float64).reshape(len(rows), FEATURES),
        np.array([r[1] for r in rows], dtype=np.float64),
        np.array([r[2] for r in rows], dtype=np.int64),
        np.array([r[4] for r in rows], dtype=np.int64),
        [r[3] for r in rows],
    )


def generate(
    games: int, seed: int, settings: GameSettings, jobs: int = 1,
    progress: Callable[[int], None] | None = None,
) -> Positions:
    """The quiet positions of ``games`` self-play games (reproducible from ``seed``)."""
    rows = play_games(play_game, games, seed, settings, jobs, progress)
    return _positions_of(rows)


def teacher_labels(judgements: Sequence[Judgement], scale: float) -> npt.NDArray[np.float64]:
    """The labels a teacher's judgements give (module docstring)."""
    scores = np.array([j.score for j in judgements], dtype=np.float64)
    exact = np.array([j.exact for j in judgements], dtype=np.bool_)
    p = np.where(exact, np.where(scores > 0, 1.0, 0.0), _sigmoid(scores / scale))
    return np.clip(p, 1 - TEACHER_SURE, TEACHER_SURE)


def label_by_teacher(data: Positions, teacher: Teacher, scale: float, jobs: int = 1,
                     progress: Callable[[int], None] | None = None) -> Positions:
    """``data`` with the teacher's labels instead of the games' results."""
    positions = [teacher_position(moves) for moves in data.moves]
    labels = teacher_labels(teacher.judge(positions, jobs, progress), scale)
    return Positions(data.x, labels, data.stones, data.game, data.moves)


def teacher_position(moves: Sequence[int]) -> Position:
    """The position after ``moves`` (freestyle 15x15) as a teacher is asked it."""
    from arena.games import GomokuBoard

    board = GomokuBoard(SIZE, "freestyle")
    for move in moves:
        board.push(move)
    return Position(board.to_text(), tuple(moves))


def _sigmoid(z: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(z, -40.0, 40.0))), dtype=np.float64)


def logistic_fit(
    x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], l2: float, iterations: int = 50
) -> npt.NDArray[np.float64]:
    """argmin of the mean log-loss of sigmoid(x w) against y, plus l2 |w[1:]|^2 / 2
    (column 0 is the constant, not penalised); Newton's method from zero."""
    n, k = x.shape
    w = np.zeros(k)
    penalty = np.full(k, l2)
    penalty[0] = 0.0
    for _ in range(iterations):
        p = _sigmoid(x @ w)
        gradient = x.T @ (p - y) / n + penalty * w
        hessian = (x * (p * (1 - p))[:, None]).T @ x / n + np.diag(penalty) + 1e-9 * np.eye(k)
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if float(np.abs(step).max()) < 1e-9:
            break
    return w


def log_loss(chance: npt.NDArray[np.float64], label: npt.NDArray[np.float64]) -> float:
    """Mean soft log-loss of ``chance`` against ``label`` (either may be fractional)."""
    p = np.clip(chance, 1e-12, 1 - 1e-12)
    return float(np.mean(-(label * np.log(p) + (1 - label) * np.log(1 - p))))


def metrics(data: Positions, weights: Weights) -> dict[str, float | None]:
    """Mean log-loss and accuracy of integer ``weights`` on ``data`` (``scored``)."""
    return scored(data, _values(data, weights))


def scored(data: Positions, value: npt.NDArray[np.float64]) -> dict[str, float | None]:
    """Mean log-loss and accuracy of an evaluation that gives ``data`` the values
    ``value`` (``EVAL_SCALE`` units): how often it takes the side the label takes
    (positions with a label of 0.5 left out; None if every label is 0.5: JSON has no
    NaN)."""
    if len(data) == 0:
        return {"log_loss": None, "accuracy": None}
    p = _sigmoid(value / EVAL_SCALE)
    y = data.label
    decided = y != 0.5
    accuracy = (round(float(np.mean((p[decided] > 0.5) == (y[decided] > 0.5))), 4)
                if decided.any() else None)
    return {"log_loss": round(log_loss(p, y), 5), "accuracy": accuracy}


def _values(data: Positions, weights: Weights) -> npt.NDArray[np.float64]:
    return values(data.x, weights).astype(np.float64)


def to_units(w: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    return np.asarray(np.clip(np.rint(w * EVAL_SCALE), -MAX_WEIGHT, MAX_WEIGHT), dtype=np.int64)


# The network's fit (``fit`` with hidden units): Adam steps over mini-batches of positions
# from a seeded start, on the features divided by their spread; ``NET_PASSES`` passes over
# the training positions and at least ``NET_STEPS`` steps. Version 8's fit took 1,500
# steps, about ten passes over its 36,000 positions (more passes overfit them); over
# 73,000 positions, ten passes fitted better than those 1,500 steps (README.md).
NET_STEPS = 1500
NET_PASSES = 10
NET_BATCH = 256
NET_RATE = 1e-3
NET_SHARE = 0.1  # the new gradient's share in Adam's moving mean of it (a decay of 0.9)


def network_steps(positions: int) -> int:
    """The Adam steps of a network's fit on ``positions`` training positions."""
    return max(NET_STEPS, -(-NET_PASSES * positions // NET_BATCH))


def fit(data: Positions, l2: float, hidden: int = 0, seed: boardfit.Seed = 0) -> Weights:
    """Integer weights fitted on ``data``: the linear ones (``evaluation.FEATURES``), then,
    with ``hidden`` units, a network fitted to what the linear part leaves (``l2`` times
    the square of its weights added to the loss) from a start drawn from ``seed``."""
    linear = logistic_fit(data.x, data.label, l2)
    if hidden == 0:
        return to_units(linear)
    inputs, outputs = network_fit(data, data.x @ linear, l2, hidden, seed)
    return _in_units(linear, np.rint(inputs * NET_SCALE).astype(np.int64), outputs)


def _in_units(linear: npt.NDArray[np.float64], inputs: Weights,
              outputs: npt.NDArray[np.float64]) -> Weights:
    """One weight array of linear weights and network outputs in log-odds (evaluation
    units in the array) and the network's integer inputs."""
    return combined(to_units(linear), inputs, np.rint(outputs * EVAL_SCALE).astype(np.int64))


def network_fit(data: Positions, base: npt.NDArray[np.float64], l2: float, hidden: int,
                seed: boardfit.Seed) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """(inputs, outputs) of ``hidden`` rectified units minimising the mean log-loss of
    sigmoid(base + relu(x inputs) outputs) against the labels, plus ``l2`` times the
    squared weights over 2; inputs per unit of each feature, outputs in log-odds."""
    spread = data.x.std(axis=0)
    spread[spread == 0] = 1.0
    spread[0] = 1.0
    x = data.x / spread
    rng = np.random.default_rng(seed)
    params = [rng.normal(0.0, 1.0 / np.sqrt(FEATURES), (FEATURES, hidden)), np.zeros(hidden)]
    first = [np.zeros_like(q) for q in params]
    second = [np.zeros_like(q) for q in params]
    batches = _batches(len(data), rng)
    for step in range(1, network_steps(len(data)) + 1):
        batch = next(batches)
        xb = x[batch]
        inputs, outputs = params
        sums = xb @ inputs
        active = np.maximum(sums, 0.0)
        g = (_sigmoid(base[batch] + active @ outputs) - data.label[batch]) / len(batch)
        grads = [xb.T @ (np.outer(g, outputs) * (sums > 0)) + l2 * inputs,
                 active.T @ g + l2 * outputs]
        for q, grad, m, v in zip(params, grads, first, second, strict=True):
            boardfit.adam_step(q, grad, m, v, step, NET_RATE, NET_SHARE)
    return params[0] / spread[:, None], params[1]


def _batches(n: int, rng: np.random.Generator) -> Iterator[npt.NDArray[np.int64]]:
    """Mini-batches of ``NET_BATCH`` of ``n`` positions, each pass in a new order, forever."""
    while True:
        order = rng.permutation(n)
        yield from (order[start : start + NET_BATCH] for start in range(0, n, NET_BATCH))


@dataclass(frozen=True)
class Reference:
    """An evaluation a training is measured against: integer weights, or a board network
    (which then evaluates alone, as in a search)."""

    weights: Weights
    board: BoardNet | None = None

    def values(self, data: Positions, boards: boardfit.BoardInputs | None
               ) -> npt.NDArray[np.float64]:
        """Its values (``EVAL_SCALE`` units) of ``data``, whose board inputs are
        ``boards`` (needed for a board network alone)."""
        if self.board is None:
            return _values(data, self.weights)
        assert boards is not None, "a board network is measured on board inputs"
        return boardfit.board_net_values(self.board, boards).astype(np.float64)


def rescaling(value: npt.NDArray[np.float64], label: npt.NDArray[np.float64]
              ) -> tuple[float, float]:
    """(constant, scale) that fit ``label`` best as the log-odds ``constant + scale * value
    / EVAL_SCALE``: the shape of an evaluation, measured apart from its units."""
    bias, scale = logistic_fit(np.stack([np.ones(len(value)), value / EVAL_SCALE], axis=1),
                               label, 0.0)
    return float(bias), float(scale)


def rescaled_metrics(train_value: npt.NDArray[np.float64], train_label: npt.NDArray[np.float64],
                     data: Positions, value: npt.NDArray[np.float64]
                     ) -> dict[str, float | None]:
    """``scored`` of ``value`` on ``data``, at the constant and scale fitted on
    ``train_value`` against ``train_label`` (``rescaling``)."""
    bias, scale = rescaling(train_value, train_label)
    return scored(data, scale * value + bias * EVAL_SCALE)


def references() -> dict[str, Reference]:
    """The evaluations a training is measured against, each at its best scale on its
    training set: version 2's hand weights and the set shipped now
    (``evaluation.load_weights`` and ``load_board``)."""
    return {"hand": Reference(HAND_WEIGHTS),
            "shipped": Reference(load_weights()[0], load_board())}


@dataclass
class TrainingResult:
    """The fitted weights (all zero beside a board network), the figures, and the board
    network if one was fitted."""

    weights: npt.NDArray[np.int64]
    metrics: dict[str, object]
    board: BoardNet | None = None


@dataclass(frozen=True)
class TeacherSettings:
    teacher: Teacher
    scale: float  # the teacher's units per unit of log-odds


@dataclass(frozen=True)
class Fitting:
    """How labelled positions are fitted and measured (``fit_and_measure``): the L2
    penalty; the share of games held out (the last ones); a network of ``hidden`` units
    beside the linear weights, or with ``board`` a board network instead; how many
    ``starts`` each network's fit tries; how many cross-validation ``folds`` follow the fit
    (0: none; each costs a whole fit); and how many processes (``jobs``) play, label and
    fit at once."""

    l2: float
    holdout: float = 0.2
    hidden: int = 0
    board: bool = False
    starts: int = 1
    folds: int = FOLDS
    jobs: int = 1


def train(
    games: int, seed: int, settings: GameSettings, fitting: Fitting,
    progress: Callable[[str], None] | None = None, teacher: TeacherSettings | None = None,
    keep: tuple[Path, dict[str, object]] | None = None,
) -> TrainingResult:
    """Generate ``games`` self-play games, have the teacher label their positions if there
    is one, keep them in a positions file if ``keep`` says where (and what made them), and
    fit them (``fit_and_measure``)."""
    say = progress or (lambda _: None)
    _try_teacher(teacher)
    started = time.monotonic()
    data = generate(games, seed, settings, fitting.jobs, game_progress(games, say))
    seconds = {"generate": round(time.monotonic() - started, 1)}
    return _taught_and_fitted(data, games, seed, fitting, say, teacher, keep, seconds)


def train_on_records(
    games: Sequence[RecordedGame], fitting: Fitting,
    progress: Callable[[str], None] | None = None, teacher: TeacherSettings | None = None,
    keep: tuple[Path, dict[str, object]] | None = None,
) -> TrainingResult:
    """``train`` on the positions of recorded games (``record_positions``) instead of
    self-play; the network's start is drawn from seed 0."""
    say = progress or (lambda _: None)
    _try_teacher(teacher)
    started = time.monotonic()
    data = record_positions(games)
    if len(data) == 0:
        raise ValueError("the records hold no position to train on (none with "
                         f"{OPENING_STONES} stones or more and no five point)")
    seconds = {"positions": round(time.monotonic() - started, 1)}
    return _taught_and_fitted(data, len(games), 0, fitting, say, teacher, keep, seconds)


def _try_teacher(teacher: TeacherSettings | None) -> None:
    """One judgement first: a teacher that fails, fails before any game is played."""
    if teacher is not None:
        from arena.openings.gomoku import balanced_openings

        teacher.teacher.judge([teacher_position(balanced_openings()[0].moves)], 1)


def _taught_and_fitted(
    data: Positions, games: int, seed: int, fitting: Fitting, say: Callable[[str], None],
    teacher: TeacherSettings | None, keep: tuple[Path, dict[str, object]] | None,
    seconds: dict[str, float],
) -> TrainingResult:
    """The positions labelled by the teacher (if any), kept (if asked), and fitted."""
    if teacher is not None:
        started = time.monotonic()
        say(f"{len(data)} positions to the teacher")
        data = label_by_teacher(data, teacher.teacher, teacher.scale, fitting.jobs,
                                lambda done: say(f"judged {done}/{len(data)}"))
        seconds["teacher"] = round(time.monotonic() - started, 1)
    if keep is not None:
        say(f"kept the positions in {save_positions(keep[0], KeptPositions(data, games, keep[1]))}")
    result = fit_and_measure(data, games, fitting, say, seed)
    result.metrics["seconds"] = seconds
    return result


def fit_and_measure(data: Positions, games: int, fitting: Fitting,
                    say: Callable[[str], None], seed: int = 0) -> TrainingResult:
    """Split by game (the last ``fitting.holdout`` share is held out), fit, and measure
    the trained weights against the references (``references``: the hand and the shipped
    weights, each with its best scale fitted on the training set) and the untrained ones
    (all zero: a coin toss); then the same comparison over ``fitting.folds`` folds of the
    games (game index modulo the folds), each fold held out once. ``seed``: the network's
    start (``fit``; ``Fitter``)."""
    held = data.game >= games - held_out_games(games, fitting.holdout)
    training, heldout = data.subset(~held), data.subset(held)
    if len(training) == 0 or len(heldout) == 0:
        raise ValueError(f"{games} games gave {len(training)} training and {len(heldout)} "
                         "held-out positions; play more games")
    say(f"{len(training)} training positions, {len(heldout)} held out; fitting")
    bases = references()
    fitter = Fitter(data, fitting, seed, say,
                    any(base.board is not None for base in bases.values()))
    weights, net = fitter.fit(~held)
    start_losses = fitter.start_losses
    values = {name: base.values(data, fitter.boards) for name, base in bases.items()}

    def against(name: str, fitted_on: npt.NDArray[np.bool_], chosen: npt.NDArray[np.bool_]
                ) -> dict[str, float | None]:
        return rescaled_metrics(values[name][fitted_on], data.label[fitted_on],
                                data.subset(chosen), values[name][chosen])

    zero = np.zeros_like(weights)
    folds = []
    for k in range(fitting.folds):
        out = data.game % fitting.folds == k
        if out.all() or not out.any():
            continue
        say(f"fold {k + 1}/{fitting.folds}")
        folds.append({"trained": fitter.measure(out, *fitter.fit(~out)),
                      **{name: against(name, ~out, out) for name in bases}})

    def measured(chosen: npt.NDArray[np.bool_]) -> dict[str, dict[str, float | None]]:
        return {"trained": fitter.measure(chosen, weights, net),
                **{name: against(name, ~held, chosen) for name in bases},
                "untrained": metrics(data.subset(chosen), zero)}

    result: dict[str, object] = {
        "games": games,
        "positions": {"train": len(training), "heldout": len(heldout)},
        "wins_for_side_to_move": round(float(np.mean(data.label)), 4),
        "train": measured(~held),
        "heldout": measured(held),
        "folds": folds,
    }
    if fitting.starts > 1:
        result["starts"] = start_losses  # the training log-loss of each start, kept the least
    return TrainingResult(weights, result, net)


def start_seed(seed: int, start: int) -> boardfit.Seed:
    """The seed of a fit's ``start``-th start (from 0): the first is ``seed`` itself, so a
    fit of one start is the fit it always was; each further one is drawn apart from it."""
    return seed if start == 0 else (seed, start)


class Fitter:
    """How ``fit_and_measure`` fits a share of ``data`` and measures the fit on another:
    the linear weights and their network (``fit``, ``metrics``), or with ``fitting.board`` a
    board network of ``BOARD_CHANNELS`` (``boardfit.fit_board``, from ``seed`` as the network's
    start) beside all-zero weights, measured by the kernels' integer evaluation of it
    (``boardfit.board_net_values``). With ``fitting.starts`` above one a network is fitted
    from that many starts (``start_seed``) and the one that fits its own positions best is
    kept: a network's start changes its fit (README.md), and its loss on the positions
    it was fitted on follows the held-out one, while the held-out games stay unseen. With
    ``fitting.jobs`` above one the starts are fitted that many at once, in other processes (the
    same fits: each is a function of its seed)."""

    def __init__(self, data: Positions, fitting: Fitting, seed: int,
                 say: Callable[[str], None], board_inputs: bool = False) -> None:
        self.data, self.fitting, self.seed, self.say = data, fitting, seed, say
        # read once (each fold fits a share of the same positions), with ``board`` or
        # ``board_inputs`` (a reference that is a board network)
        self.boards = (boardfit.board_inputs(data.moves) if fitting.board or board_inputs
                       else None)
        self.start_losses: list[float] = []  # the last fit's, per start, with starts > 1

    def fit(self, chosen: npt.NDArray[np.bool_]) -> tuple[Weights, BoardNet | None]:
        if self.fitting.starts == 1:
            return next(self._fits(chosen, [self.seed]))
        fits, self.start_losses = [], []
        seeds = [start_seed(self.seed, start) for start in range(self.fitting.starts)]
        for start, fitted in enumerate(self._fits(chosen, seeds)):
            loss = self.measure(chosen, *fitted)["log_loss"]
            assert loss is not None  # a log-loss is always there
            self.say(f"start {start + 1}/{self.fitting.starts}: training log-loss {loss:.4f}")
            fits.append(fitted)
            self.start_losses.append(loss)
        return fits[self.start_losses.index(min(self.start_losses))]

    def _fits(self, chosen: npt.NDArray[np.bool_], seeds: list[boardfit.Seed]
              ) -> Iterator[tuple[Weights, BoardNet | None]]:
        """The fits of ``chosen`` from each of ``seeds``, in order."""
        # a board network's fit reads its board inputs and labels alone, the linear fit the
        # positions' features (which would be most of what goes to another process)
        task: FitTask
        if self.fitting.board:
            assert self.boards is not None
            task = (self.boards.subset(chosen), self.data.label[chosen])
            self.say(f"a board network of {BOARD_CHANNELS} channels on {len(task[1])} "
                     "positions")
        else:
            task = self.data.subset(chosen)
        tasks = [(task, self.fitting.l2, self.fitting.hidden, seed) for seed in seeds]
        if self.fitting.jobs <= 1 or len(seeds) == 1:
            return (_fit_task(task, self.say) for task in tasks)
        self.say(f"{len(seeds)} starts, {self.fitting.jobs} at once")
        pool = ProcessPoolExecutor(min(self.fitting.jobs, len(seeds)))
        return _in_pool(pool, pool.map(_fit_task, tasks))

    def measure(self, chosen: npt.NDArray[np.bool_], weights: Weights, net: BoardNet | None
                ) -> dict[str, float | None]:
        part = self.data.subset(chosen)
        if net is None:
            return metrics(part, weights)
        assert self.boards is not None  # a board network is fitted on them
        values = boardfit.board_net_values(net, self.boards.subset(chosen))
        return scored(part, values.astype(np.float64))


# What one fit reads: the positions (the linear weights and their network), or a board
# network's board inputs and labels.
FitTask = Positions | tuple[boardfit.BoardInputs, npt.NDArray[np.float64]]


def _fit_task(task: tuple[FitTask, float, int, boardfit.Seed],
              say: Callable[[str], None] | None = None) -> tuple[Weights, BoardNet | None]:
    """One fit (``Fitter``) from ``seed``, with ``l2`` and ``hidden`` units; a module-level
    function, so a pool can run it."""
    data, l2, hidden, seed = task
    if isinstance(data, Positions):
        return fit(data, l2, hidden, seed), None
    boards, label = data
    net = boardfit.fit_board(boards, label, BOARD_CHANNELS, l2, seed, say)
    return np.zeros(FEATURES, dtype=np.int64), net


def _in_pool(pool: ProcessPoolExecutor, results: Iterator[T]) -> Iterator[T]:
    """``results`` one by one, the pool shut down after the last (or when the caller stops)."""
    with pool:
        yield from results


POSITIONS_FORMAT = "arena-gomoku-positions-1"
POSITIONS_FIELDS = ("header", "moves", "offsets", "label", "game")


@dataclass
class KeptPositions:
    """Labelled positions as a positions file keeps them: the data, the number of games
    they came from (the held-out split and the folds are by game) and what made them (the
    generating command, its seed, the teacher if any)."""

    data: Positions
    games: int
    made_by: dict[str, object]


def save_positions(path: Path, kept: KeptPositions) -> Path:
    """Write ``kept`` as a ``.npz`` file: the moves of each position from the empty board,
    its label and game, and ``made_by``; the features are not kept (``load_positions``
    computes them), so a positions file outlives a change of the features."""
    path = path.with_suffix(".npz")
    data = kept.data
    offsets = np.cumsum([0, *(len(m) for m in data.moves)], dtype=np.int64)
    header = {"format": POSITIONS_FORMAT, "games": kept.games, "made_by": kept.made_by}
    with path.open("wb") as out:
        np.savez_compressed(
            out, header=np.array(json.dumps(header, sort_keys=True)),
            moves=np.array([c for m in data.moves for c in m], dtype=np.int16),
            offsets=offsets, label=data.label, game=data.game)
    return path


def load_positions(path: Path, raw: bytes | None = None) -> KeptPositions:
    """The positions of a file written by ``save_positions`` (``raw``: its bytes, already
    read), their features computed (``feature_row``); ``ValueError`` if it is not such a
    file or does not hold together."""
    if raw is None:
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise ValueError(f"{path} cannot be read ({exc.strerror})") from None
    body_bytes = io.BytesIO(raw)
    if not zipfile.is_zipfile(body_bytes):
        raise ValueError(f"{path} is not a gomoku positions file (not an .npz archive)")
    body_bytes.seek(0)
    try:
        with np.load(body_bytes, allow_pickle=False) as body:
            fields = {name: body[name] for name in POSITIONS_FIELDS if name in body.files}
        header = json.loads(str(fields["header"])) if "header" in fields else None
    except (OSError, ValueError, TypeError, zipfile.BadZipFile) as exc:
        raise ValueError(f"{path} is not a gomoku positions file (a field that is not "
                         "numbers or text, or a damaged archive)") from exc
    missing = [name for name in POSITIONS_FIELDS if name not in fields]
    if missing:
        raise ValueError(f"{path} is not a gomoku positions file (no {', '.join(missing)} "
                         "in it)")
    moves, offsets = fields["moves"].astype(np.int64), fields["offsets"].astype(np.int64)
    label, game = fields["label"].astype(np.float64), fields["game"].astype(np.int64)
    if not isinstance(header, dict) or header.get("format") != POSITIONS_FORMAT:
        raise ValueError(f"{path} is not a gomoku positions file (format "
                         f"{header.get('format') if isinstance(header, dict) else None!r}, "
                         f"expected {POSITIONS_FORMAT!r})")
    games, made_by = header.get("games"), header.get("made_by")
    n = len(label)
    if (not isinstance(games, int) or not isinstance(made_by, dict) or n == 0
            or offsets.shape != (n + 1,) or game.shape != (n,) or offsets[0] != 0
            or offsets[-1] != len(moves) or np.any(np.diff(offsets) < 0)
            or not np.all((label >= 0) & (label <= 1)) or np.any((game < 0) | (game >= games))
            or np.any((moves < 0) | (moves >= SIZE * SIZE))):
        raise ValueError(f"{path}: the positions do not hold together (damaged file?)")
    sequences = [tuple(int(c) for c in moves[offsets[i]:offsets[i + 1]]) for i in range(n)]
    rows = []
    for played in sequences:
        if len(set(played)) != len(played):
            raise ValueError(f"{path}: a position plays a cell twice (damaged file?)")
        _cells, _pat, st, _table = setup(SIZE, FREESTYLE, list(played), HAND_WEIGHTS)
        rows.append(feature_row(st, 1 + len(played) % 2))
    x = np.array(rows, dtype=np.float64).reshape(n, FEATURES)
    stones = np.array([len(m) for m in sequences], dtype=np.int64)
    return KeptPositions(Positions(x, label, stones, game, sequences), games, made_by)


def joined(kept: Sequence[KeptPositions]) -> tuple[Positions, int]:
    """The positions of several files as one set, and its number of games: each file's
    games numbered after the previous file's (the held-out share is then the last
    file's last games)."""
    first = np.cumsum([0, *(k.games for k in kept)])  # each file's first game
    parts = [k.data for k in kept]
    games = [p.game + offset for p, offset in zip(parts, first[:-1], strict=True)]
    data = Positions(np.concatenate([p.x for p in parts]),
                     np.concatenate([p.label for p in parts]),
                     np.concatenate([p.stones for p in parts]), np.concatenate(games),
                     [m for p in parts for m in p.moves])
    return data, int(first[-1])


def save(path: Path, result: TrainingResult, metadata: dict[str, object]) -> Path:
    """Write the weights with their metadata (command, metrics) as one JSON file: the
    linear weights, and the network's apart (``evaluation.py``) if there is one, or the
    board network's ("board")."""
    path = path.with_suffix(".json")
    body = {**metadata, "weights": result.weights[:FEATURES].tolist(), "metrics": result.metrics}
    if result.board is not None:
        body["board"] = result.board.to_json()
    if hidden_units(result.weights):
        inputs, outputs = network(result.weights)
        body["network"] = {"inputs": inputs.tolist(), "outputs": outputs.tolist()}
    path.write_text(json.dumps(body, indent=2, sort_keys=True) + "\n")
    return path
