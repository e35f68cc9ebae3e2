"""Training the pattern evaluator (``patterns.py``) on positions Arena labels itself.

Data: self-play games of ``arena-fast`` at a fixed shallow depth, each from an opening of the
``othello-balanced`` suite with a few uniformly random moves on top (at random plies before
``RANDOM_BEFORE_PLY``), all drawn from ``random.Random(f"{seed}:{game}")``: the same seed
gives the same games, whatever the number of processes. The self-play bot solves exactly at
``solve_empties`` empties or fewer with no time limit, so from there on both sides play
perfectly and the game's result is the exact solver's score of every such position; earlier
positions are labelled with the game's final disc difference (empties to the winner), from
the side to move's view. Positions where the side to move must pass are skipped.

Fit: one weight block per stage, by ridge regression (conjugate gradients on the normal
equations, sparse rows read with ``np.bincount``), each stage on the positions of its disc
counts widened by ``window`` discs on each side. Symmetric twins share one weight
(``canonical_indices``). Games are split into training and held-out sets by index.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from arena.engine.api import Limits
from arena.engine.othello.bitboard import PASS, legal_moves, parse_position
from arena.engine.othello.engine import choose_move
from arena.engine.othello.patterns import (
    BLOCK,
    EVAL_SCALE,
    N_DENSE,
    N_INSTANCES,
    canonical_indices,
    position_features,
    stage_table,
)
from arena.engine.othello.presets import PRESETS
from arena.engine.selfplay import game_progress, held_out_games, play_games
from arena.openings import load_suite
from arena.openings.suites import start_position_after

RANDOM_BEFORE_PLY = 40  # random moves come before this ply (the opening's plies included)
MAX_WEIGHT = 32_000  # weights are stored as int16 evaluation units


@dataclass(frozen=True)
class GameSettings:
    depth: int = 4
    random_moves: int = 2
    solve_empties: int = 14


@dataclass
class Positions:
    """Positions (side to move ``p``, opponent ``o``), labels in discs, game index."""

    p: npt.NDArray[np.uint64]
    o: npt.NDArray[np.uint64]
    label: npt.NDArray[np.float64]
    game: npt.NDArray[np.int64]

    def __len__(self) -> int:
        return len(self.label)

    def subset(self, mask: npt.NDArray[np.bool_]) -> Positions:
        return Positions(self.p[mask], self.o[mask], self.label[mask], self.game[mask])


def most_random_moves() -> int:
    """The most random moves a game can take: they come after the longest opening of the
    suite and before ``RANDOM_BEFORE_PLY``."""
    longest = max(len(opening.moves) for opening in load_suite("othello-balanced").openings)
    return RANDOM_BEFORE_PLY - longest


def play_game(seed: int, game: int, settings: GameSettings) -> list[tuple[int, int, int]]:
    """One self-play game: (p, o, label) for each position where a move is chosen."""
    rng = random.Random(f"{seed}:{game}")
    suite = load_suite("othello-balanced")
    opening = rng.choice(suite.openings)
    pos = parse_position(start_position_after("othello", "standard", 8, opening))
    ply = len(opening.moves)
    random_plies = set(rng.sample(range(ply, RANDOM_BEFORE_PLY), settings.random_moves))
    bot = {**PRESETS["arena-fast"], "time_ms": 600_000, "endgame_empties": settings.solve_empties}
    limits = Limits(depth=settings.depth)
    seen: list[tuple[int, int, int]] = []  # p, o, colour of p
    while True:
        moves = legal_moves(pos)
        if not moves:
            break
        if moves == [PASS]:
            pos = pos.play(PASS)
            continue
        seen.append((pos.player, pos.opponent, pos.turn))
        if ply in random_plies:
            move = rng.choice(moves)
        else:
            move = choose_move(pos.to_text(), bot, limits).move
        pos = pos.play(move)
        ply += 1
    black, white = bin(pos.black).count("1"), bin(pos.white).count("1")
    diff = black - white
    final = diff + (64 - black - white) * (1 if diff > 0 else -1 if diff < 0 else 0)
    return [(p, o, final if turn == 0 else -final) for p, o, turn in seen]


def generate(
    games: int,
    seed: int,
    settings: GameSettings,
    jobs: int = 1,
    progress: Callable[[int], None] | None = None,
) -> Positions:
    """The positions of ``games`` self-play games (reproducible from ``seed``)."""
    rows = play_games(play_game, games, seed, settings, jobs, progress)
    return Positions(
        np.array([r[0] for r in rows], dtype=np.uint64),
        np.array([r[1] for r in rows], dtype=np.uint64),
        np.array([r[2] for r in rows], dtype=np.float64),
        np.array([r[3] for r in rows], dtype=np.int64),
    )


def features(data: Positions) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Block offsets each instance reads (n x instances) and dense terms (n x N_DENSE)."""
    index = np.zeros((len(data), N_INSTANCES), dtype=np.int64)
    dense = np.zeros((len(data), N_DENSE), dtype=np.float64)
    position_features(data.p, data.o, index, dense)
    return index, dense


def _ridge(
    index: npt.NDArray[np.int64],
    dense: npt.NDArray[np.float64],
    y: npt.NDArray[np.float64],
    ridge: float,
    iterations: int,
) -> npt.NDArray[np.float64]:
    """argmin |X w - y|^2 + ridge |w_patterns|^2 (+ 1e-3 |w_dense|^2), X's rows being the
    sparse instance offsets plus the dense terms; conjugate gradients from zero."""
    cols = index.shape[1]
    flat = index.ravel()
    penalty = np.full(BLOCK, ridge)
    penalty[:N_DENSE] = 1e-3

    def times_x(w: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        return np.asarray(w[index].sum(axis=1) + dense @ w[:N_DENSE])

    def times_xt(r: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        out: npt.NDArray[np.float64] = np.bincount(
            flat, weights=np.repeat(r, cols), minlength=BLOCK
        ).astype(np.float64)
        out[:N_DENSE] += dense.T @ r
        return out

    w = np.zeros(BLOCK)
    r = times_xt(y)
    d = r.copy()
    rr = float(r @ r)
    for _ in range(iterations):
        if rr < 1e-12:
            break
        ad = times_xt(times_x(d)) + penalty * d
        step = rr / float(d @ ad)
        w += step * d
        r -= step * ad
        rr_new = float(r @ r)
        d = r + (rr_new / rr) * d
        rr = rr_new
    return w


def fit(
    data: Positions,
    stages: int,
    ridge: float,
    window: int = 3,
    iterations: int = 200,
) -> npt.NDArray[np.int64]:
    """Weights per stage, (stages, BLOCK) in evaluation units (``EVAL_SCALE`` per disc)."""
    index, dense = features(data)
    canon = canonical_indices()
    tied = canon[index]
    discs = np.array([bin(int(p | o)).count("1") for p, o in zip(data.p, data.o, strict=True)])
    table = stage_table(stages)
    weights = np.zeros((stages, BLOCK), dtype=np.int64)
    for s in range(stages):
        members = np.flatnonzero(table == s)
        low, high = members.min() - window, members.max() + window
        rows = (discs >= low) & (discs <= high)
        if not rows.any():
            continue
        w = _ridge(tied[rows], dense[rows], data.label[rows], ridge, iterations)
        full = w[canon]  # every symmetric twin gets the orbit's weight
        weights[s] = np.clip(np.rint(full * EVAL_SCALE), -MAX_WEIGHT, MAX_WEIGHT)
    return weights


def predict(data: Positions, weights: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """What ``pattern_eval`` answers (in discs) for each position, from the stored weights."""
    index, dense = features(data)
    discs = np.array([bin(int(p | o)).count("1") for p, o in zip(data.p, data.o, strict=True)])
    stage = stage_table(weights.shape[0])[discs]
    total = weights[stage[:, None], index].sum(axis=1).astype(np.float64)
    total += (weights[stage, :N_DENSE] * dense).sum(axis=1)
    return np.asarray(total / EVAL_SCALE, dtype=np.float64)


def errors(data: Positions, weights: npt.NDArray[np.int64]) -> dict[str, float]:
    """Mean squared and mean absolute error (discs) of the weights on ``data``."""
    if len(data) == 0:
        return {"mse": float("nan"), "mae": float("nan")}
    residual = predict(data, weights) - data.label
    return {"mse": float(np.mean(residual**2)), "mae": float(np.mean(np.abs(residual)))}


@dataclass
class TrainingResult:
    weights: npt.NDArray[np.int64]
    metrics: dict[str, object]


def train(
    games: int,
    seed: int,
    settings: GameSettings,
    stages: int,
    ridge: float,
    holdout: float = 0.1,
    jobs: int = 1,
    window: int = 3,
    iterations: int = 200,
    progress: Callable[[str], None] | None = None,
) -> TrainingResult:
    """Generate, split by game (the last ``holdout`` share of games is held out), fit, and
    measure the errors of the trained and the untrained (all-zero) weights."""
    say = progress or (lambda _: None)
    started = time.monotonic()
    data = generate(games, seed, settings, jobs, game_progress(games, say))
    generated = time.monotonic()
    held = data.game >= games - held_out_games(games, holdout)
    training, heldout = data.subset(~held), data.subset(held)
    say(f"{len(training)} training positions, {len(heldout)} held out; fitting")
    weights = fit(training, stages, ridge, window, iterations)
    zero = np.zeros_like(weights)
    metrics: dict[str, object] = {
        "games": games,
        "positions": {"train": len(training), "heldout": len(heldout)},
        "train": {"trained": errors(training, weights), "untrained": errors(training, zero)},
        "heldout": {"trained": errors(heldout, weights), "untrained": errors(heldout, zero)},
        "seconds": {
            "generate": round(generated - started, 1),
            "fit": round(time.monotonic() - generated, 1),
        },
    }
    return TrainingResult(weights, metrics)


def save(path: Path, result: TrainingResult, metadata: dict[str, object]) -> Path:
    """Write ``path`` (.npz, int16 weights) and its metadata beside it (.json)."""
    path = path.with_suffix(".npz")
    np.savez_compressed(path, weights=result.weights.astype(np.int16))
    meta = {**metadata, "metrics": result.metrics, "shape": list(result.weights.shape)}
    path.with_suffix(".json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return path
