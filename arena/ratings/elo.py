"""Maximum-likelihood Elo over a set of game results (the BayesElo / Ordo approach).

Model: Bradley-Terry on the Elo scale. Player ``i`` scores against player ``j`` with
expectation ``p_ij = 1 / (1 + 10 ** ((r_j - r_i) / 400))``; a win counts 1, a draw 1/2, a
loss 0, and a game contributes ``s log p + (1 - s) log(1 - p)`` to the log-likelihood. A
draw is thus half a win and half a loss, exactly as Ordo counts it.

Prior: ``prior_draws`` virtual draws are added between every pair of players that met.
They keep a perfect score finite (without them a 10-0 sweep has no maximum) and pull very
short head-to-head records a little toward equality; ``prior_draws=0`` gives the plain MLE.

Anchor: ratings only have meaning as differences, so the fit is anchored so that the
**mean rating is 0**. The 95% intervals come from the inverse of the Fisher information at
the maximum (a pseudo-inverse, since the information is singular along the constant
direction): they are the uncertainty of each rating relative to that mean.

The maximisation is Newton's method, which converges in a handful of steps here because the
log-likelihood is concave; a halving line search keeps every step uphill.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

# Natural log-odds units per Elo point: p = sigmoid(theta_i - theta_j), theta = r * NAT.
NAT = math.log(10.0) / 400.0
Z95 = 1.959963984540054  # two-sided 95% quantile of the standard normal
DEFAULT_PRIOR_DRAWS = 1.0

FloatArray = NDArray[np.float64]


class RatingError(ValueError):
    """Results that admit no rating (bad indices or scores, or no finite maximum)."""


@dataclass(frozen=True)
class Game:
    """One game between players ``a`` and ``b`` (indices); ``score`` is a's: 1, 0.5 or 0."""

    a: int
    b: int
    score: float


@dataclass(frozen=True)
class EloFit:
    """Fitted ratings (mean 0) with their covariance, both in Elo points."""

    elo: FloatArray
    covariance: FloatArray
    iterations: int

    def interval(self, player: int) -> tuple[float, float]:
        """The 95% interval of ``player``'s rating (relative to the mean)."""
        half = Z95 * math.sqrt(max(float(self.covariance[player, player]), 0.0))
        centre = float(self.elo[player])
        return centre - half, centre + half

    def difference_stddev(self, i: int, j: int) -> float:
        """Standard error of ``elo[i] - elo[j]``."""
        c = self.covariance
        return math.sqrt(max(float(c[i, i] + c[j, j] - 2.0 * c[i, j]), 0.0))

    def los(self, i: int, j: int) -> float:
        """Likelihood of superiority: the probability that ``i`` is stronger than ``j``."""
        if i == j:
            return 0.5
        diff = float(self.elo[i] - self.elo[j])
        sd = self.difference_stddev(i, j)
        if sd == 0.0:
            return 0.5 if diff == 0.0 else float(diff > 0.0)
        return normal_cdf(diff / sd)


def normal_cdf(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def expected_score(elo_diff: float) -> float:
    """Expected score of a player rated ``elo_diff`` points above the opponent (0.0 or 1.0
    once the difference is too large for a float to tell from them)."""
    try:
        return float(1.0 / (1.0 + 10.0 ** (-elo_diff / 400.0)))
    except OverflowError:  # 10 ** x past about 1e308: the score is below the smallest float
        return 0.0


def elo_from_score(score: float) -> float:
    """The Elo difference that makes ``score`` (strictly between 0 and 1) the expectation."""
    if not 0.0 < score < 1.0:
        raise RatingError(f"a score of {score!r} has no finite Elo difference")
    return float(400.0 * math.log10(score / (1.0 - score)))


def los_from_wins(wins: int, losses: int) -> float:
    """The classic head-to-head LOS from wins and losses alone (draws carry no signal)."""
    if wins + losses == 0:
        return 0.5
    return normal_cdf((wins - losses) / math.sqrt(2.0 * (wins + losses)))


@dataclass(frozen=True)
class ScoreElo:
    """One player's score against one opponent, as an Elo difference with its 95% interval.

    ``score`` is the mean points per sample (a game, or half a colour-swapped pair);
    ``stderr`` its standard error; ``low``/``high`` the interval's ends on the Elo scale
    (infinite where the score interval reaches 0 or 1, as after a sweep).
    """

    samples: int
    score: float
    stderr: float
    elo: float
    low: float
    high: float


def _wilson(score: float, samples: float, side: float) -> float:
    """The Wilson score interval's bound (``side`` -1: low, +1: high) at 95%."""
    z2 = Z95 * Z95
    centre = score + z2 / (2 * samples)
    half = Z95 * math.sqrt(score * (1 - score) / samples + z2 / (4 * samples * samples))
    return (centre + side * half) / (1 + z2 / samples)


def score_elo(counts: Mapping[float, float]) -> ScoreElo:
    """The Elo difference of a two-player score and its 95% interval (normal approximation;
    exact for a sweep, Wilson's where the normal one leaves 0..1).

    ``counts`` maps each outcome's score (0..1) to how often it happened: single games
    (``trinomial``: 0, 1/2, 1) or colour-swapped pairs (``pentanomial``: 0, 1/4, ..., 1, a
    pair's points over 2). The score's standard error is the outcomes' sample deviation
    over the square root of their number (cutechess-cli's and fishtest's interval); the
    score interval is mapped to Elo through ``elo_from_score``. Pairs give the narrower,
    truer interval when the openings favour one colour, since each pair cancels its bias.
    """
    if any(c < 0 for c in counts.values()) or any(not 0.0 <= x <= 1.0 for x in counts):
        raise RatingError(f"need non-negative counts of outcomes in 0..1, got {dict(counts)}")
    samples = sum(counts.values())
    if samples <= 0:
        raise RatingError("no results: a score needs at least one outcome")
    score = sum(x * c for x, c in counts.items()) / samples
    variance = max(sum(c * (x - score) ** 2 for x, c in counts.items()) / samples, 0.0)
    stderr = math.sqrt(variance / samples)

    def to_elo(value: float) -> float:
        if value <= 0.0:
            return -math.inf
        if value >= 1.0:
            return math.inf
        return elo_from_score(value)

    low, high = score - Z95 * stderr, score + Z95 * stderr
    # A sweep has no spread, so the normal interval shrinks to a point; there the exact
    # (Clopper-Pearson) bound of n straight wins (or losses) takes over: 0.025 ** (1 / n).
    # Near a sweep the normal interval crosses 0 or 1 (1 win in 60 games: 1.7% +- 3.2%),
    # which would read as an infinite Elo bound; there the Wilson bound takes over, which
    # stays inside (0, 1) for any score strictly between them.
    if score >= 1.0:
        low = 0.025 ** (1.0 / samples)
    elif score <= 0.0:
        high = 1.0 - 0.025 ** (1.0 / samples)
    if low <= 0.0 < score:
        low = _wilson(score, samples, -1.0)
    if high >= 1.0 > score:
        high = _wilson(score, samples, 1.0)
    return ScoreElo(round(samples), score, stderr, to_elo(score), to_elo(low), to_elo(high))


def pair_totals(
    players: int, games: Iterable[Game], prior_draws: float = DEFAULT_PRIOR_DRAWS
) -> tuple[FloatArray, FloatArray]:
    """(games[i, j], points[i, j]) with the virtual draws added to every pair that met."""
    if prior_draws < 0:
        raise RatingError(f"prior_draws must be >= 0, got {prior_draws!r}")
    counts = np.zeros((players, players))
    points = np.zeros((players, players))
    for game in games:
        _check_game(game, players)
        counts[game.a, game.b] += 1.0
        counts[game.b, game.a] += 1.0
        points[game.a, game.b] += game.score
        points[game.b, game.a] += 1.0 - game.score
    add_prior_draws(counts, points, prior_draws)
    return counts, points


def add_prior_draws(counts: FloatArray, points: FloatArray, prior_draws: float) -> None:
    """Add ``prior_draws`` virtual draws to every pair of ``counts`` that met (in place)."""
    met = counts > 0
    counts[met] += prior_draws
    points[met] += prior_draws / 2.0


def log_likelihood(elo: Sequence[float] | FloatArray, points: FloatArray) -> float:
    """Log-likelihood of ratings ``elo`` given the points matrix of ``pair_totals``."""
    theta = np.asarray(elo, dtype=np.float64) * NAT
    diff = theta[:, None] - theta[None, :]
    # log sigmoid(d) = -log(1 + exp(-d)), computed stably.
    log_p = -np.logaddexp(0.0, -diff)
    # Summing over ordered pairs counts each game once from each side: s log p for the
    # points of i against j and (n - s) log(1 - p) as j's points against i.
    return float(np.sum(points * log_p))


def fit_elo(
    players: int,
    games: Iterable[Game],
    prior_draws: float = DEFAULT_PRIOR_DRAWS,
    max_iterations: int = 100,
    tolerance: float = 1e-9,
) -> EloFit:
    """Maximum-likelihood Elo ratings (mean 0) of ``players`` from ``games``."""
    if players < 1:
        raise RatingError(f"need at least one player, got {players}")
    counts, points = pair_totals(players, games, prior_draws)
    return fit_totals(counts, points, max_iterations, tolerance)


def fit_totals(
    counts: FloatArray, points: FloatArray, max_iterations: int = 100, tolerance: float = 1e-9,
    connected: bool = False, start: FloatArray | None = None,
) -> EloFit:
    """Maximum-likelihood Elo ratings (mean 0) from the games and points matrices of
    ``pair_totals`` (virtual draws included).

    ``connected``: the caller knows that every player met every other through a chain of
    games. Then the information matrix with one player's row and column left out is
    positive definite: each Newton step solves that smaller system, and the covariance
    comes from its inverse (``_grounded_pinv``), instead of a pseudo-inverse of the whole
    (the same numbers, without a singular value decomposition).

    ``start``: Elo ratings to begin from (an earlier fit of nearly the same games: a list
    refitted after one more game converges in fewer steps); the maximum is the same."""
    theta = np.zeros(counts.shape[0]) if start is None else np.asarray(start) * NAT
    theta = theta - theta.mean()
    newton_step, pinv = (_grounded_step, _grounded_pinv) if connected else (_pinv_step, _pinv)
    likelihood = log_likelihood(theta / NAT, points)
    for iteration in range(1, max_iterations + 1):
        gradient, information = _derivatives(theta, counts, points)
        step = newton_step(information, gradient)
        # The ratings' common shift is not identified (the mean is anchored below), and the
        # pseudo-inverse can return a rounding-error component along it, as large as 0.03
        # in a long one-sided record: measured with it, the step never got small.
        step -= step.mean()
        theta, likelihood = _uphill(theta, step, points, likelihood)
        theta -= theta.mean()
        if float(np.max(np.abs(step))) < tolerance:
            covariance = np.asarray(pinv(information) / NAT**2, dtype=np.float64)
            return EloFit(theta / NAT, covariance, iteration)
    raise RatingError(
        "the Elo fit did not converge: some player has a perfect or zero score with no "
        "prior draws to keep the ratings finite (use prior_draws > 0)"
    )


def _pinv_step(information: FloatArray, gradient: FloatArray) -> FloatArray:
    return _pinv(information) @ gradient


def _grounded_step(information: FloatArray, gradient: FloatArray) -> FloatArray:
    """A solution of ``information @ step = gradient`` for a connected information matrix
    (any solution does: the caller takes the mean out), with player 0's step left at 0."""
    step = np.zeros_like(gradient)
    step[1:] = np.linalg.solve(information[1:, 1:], gradient[1:])
    return step


def _pinv(information: FloatArray) -> FloatArray:
    return np.asarray(np.linalg.pinv(information, hermitian=True), dtype=np.float64)


def _grounded_pinv(information: FloatArray) -> FloatArray:
    """The pseudo-inverse of a connected information matrix (its null space is the
    constant vector alone): any generalised inverse, here the inverse of the matrix with
    player 0 left out, projected onto the mean-zero space."""
    inverse = np.zeros_like(information)
    inverse[1:, 1:] = np.linalg.inv(information[1:, 1:])
    # (I - J/n) X (I - J/n), J all ones: the row and column means taken out.
    rows = inverse.mean(axis=1, keepdims=True)
    return np.asarray(inverse - rows - rows.T + inverse.mean(), dtype=np.float64)


def _derivatives(
    theta: FloatArray, counts: FloatArray, points: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Gradient of the log-likelihood and the Fisher information (minus the Hessian)."""
    p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
    gradient = np.sum(points - counts * p, axis=1)
    weights = counts * p * p.T  # 1 - p[i, j] is p[j, i]: computed so, the matrix is symmetric
    information = np.diag(weights.sum(axis=1)) - weights
    return gradient, information


def _uphill(theta: FloatArray, step: FloatArray, points: FloatArray,
            before: float) -> tuple[FloatArray, float]:
    """``theta + t * step`` for the largest t in 1, 1/2, 1/4, ... that does not go downhill
    from ``theta``'s log-likelihood ``before``, and its log-likelihood."""
    scale = 1.0
    for _ in range(40):
        candidate = theta + scale * step
        after = log_likelihood(candidate / NAT, points)
        if after >= before - 1e-12:
            return candidate, after
        scale /= 2.0
    return theta, before


def _check_game(game: Game, players: int) -> None:
    for index in (game.a, game.b):
        if not 0 <= index < players:
            raise RatingError(f"player index {index!r} out of range 0..{players - 1} in {game}")
    if game.a == game.b:
        raise RatingError(f"a player cannot play itself: {game}")
    if game.score not in (0.0, 0.5, 1.0):
        raise RatingError(f"score must be 1, 0.5 or 0, got {game.score!r} in {game}")
