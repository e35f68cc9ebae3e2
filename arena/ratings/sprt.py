"""Sequential probability ratio test for "is the new version stronger?" (fishtest style).

H0: the Elo difference is ``elo0``; H1: it is ``elo1`` (logistic Elo, e.g. 0 and 5). After
every game (or game pair) the log-likelihood ratio ``LLR`` of H1 against H0 is compared with
Wald's bounds ``log(beta / (1 - alpha))`` and ``log((1 - beta) / alpha)``: below the first
H0 is accepted, above the second H1 is accepted, in between the test continues.

The LLR is the generalised one (GSPRT): the outcome distribution is not assumed, it is the
maximum-likelihood multinomial over the observed outcome values whose mean score equals the
hypothesis' expected score. Results can be fed as single games (trinomial: loss, draw, win)
or as colour-swapped game pairs (pentanomial: 0 to 2 points per pair), which is what a
ladder plays and what fishtest uses, because pairs cancel most of the opening's bias.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from arena.ratings.elo import RatingError, expected_score

# Pseudo-count added to every outcome, so a hypothesis outside the observed range (say all
# draws so far) still has a finite likelihood; fishtest regularises the same way.
EPSILON = 1e-3
TRINOMIAL_VALUES = (0.0, 0.5, 1.0)
PENTANOMIAL_VALUES = (0.0, 0.25, 0.5, 0.75, 1.0)


class SprtDecision(StrEnum):
    CONTINUE = "continue"
    ACCEPT_H0 = "H0"  # no better than elo0
    ACCEPT_H1 = "H1"  # at least elo1


@dataclass(frozen=True)
class SprtResult:
    llr: float
    lower_bound: float
    upper_bound: float
    decision: SprtDecision
    samples: int


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's (lower, upper) LLR bounds for error rates alpha (false H1) and beta (false H0)."""
    for name, value in (("alpha", alpha), ("beta", beta)):
        if not 0.0 < value < 0.5:
            raise RatingError(f"{name} must be strictly between 0 and 0.5, got {value!r}")
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def trinomial(wins: int, draws: int, losses: int) -> dict[float, float]:
    """Outcome counts of single games, keyed by the score of the tested side."""
    return {0.0: float(losses), 0.5: float(draws), 1.0: float(wins)}


def pentanomial(pair_points: Iterable[float]) -> dict[float, float]:
    """Outcome counts of game pairs from the points (0, 0.5, ..., 2) the tested side made."""
    counts = dict.fromkeys(PENTANOMIAL_VALUES, 0.0)
    for points in pair_points:
        value = points / 2.0
        if value not in counts:
            raise RatingError(f"a game pair scores 0, 0.5, 1, 1.5 or 2 points, got {points!r}")
        counts[value] += 1.0
    return counts


def constrained_mle(counts: Mapping[float, float], mean: float) -> dict[float, float]:
    """The distribution over ``counts``' values closest in likelihood to the empirical one
    whose mean is ``mean``: p_k = phat_k / (1 + lam (x_k - mean)), lam found by bisection."""
    values = sorted(counts)
    total = sum(counts.values())
    phat = {x: counts[x] / total for x in values}
    if not values[0] < mean < values[-1]:
        raise RatingError(f"mean {mean!r} is outside the outcome range {values[0]}..{values[-1]}")
    # 1 + lam (x - mean) > 0 for every x bounds lam to an open interval.
    low = -1.0 / (values[-1] - mean)
    high = 1.0 / (mean - values[0])

    def excess(lam: float) -> float:  # decreasing in lam; zero at the solution
        return sum(phat[x] * (x - mean) / (1.0 + lam * (x - mean)) for x in values)

    for _ in range(200):
        middle = (low + high) / 2.0
        if excess(middle) > 0.0:
            low = middle
        else:
            high = middle
    lam = (low + high) / 2.0
    return {x: phat[x] / (1.0 + lam * (x - mean)) for x in values}


def log_likelihood_ratio(counts: Mapping[float, float], elo0: float, elo1: float) -> float:
    """GSPRT log-likelihood ratio of H1 (elo1) against H0 (elo0) for the outcome counts."""
    regular = {x: c + EPSILON for x, c in counts.items()}
    under0 = constrained_mle(regular, expected_score(elo0))
    under1 = constrained_mle(regular, expected_score(elo1))
    return sum(c * math.log(under1[x] / under0[x]) for x, c in counts.items() if c > 0)


def sprt(
    counts: Mapping[float, float],
    elo0: float = 0.0,
    elo1: float = 5.0,
    alpha: float = 0.05,
    beta: float = 0.05,
) -> SprtResult:
    """Run the test on outcome counts from ``trinomial`` or ``pentanomial``."""
    if not (math.isfinite(elo0) and math.isfinite(elo1) and elo1 > elo0):
        raise RatingError(f"elo1 must be greater than elo0, both finite; got elo0={elo0} "
                          f"elo1={elo1}")
    if any(c < 0 for c in counts.values()) or len(counts) < 2:
        raise RatingError(f"need non-negative counts over at least two outcomes, got {counts}")
    for name, elo in (("elo0", elo0), ("elo1", elo1)):
        if not 0.0 < expected_score(elo) < 1.0:
            raise RatingError(f"{name}={elo:g} expects a score of {expected_score(elo):g}, "
                              "which no games can test: keep |Elo| within a few thousand")
    lower, upper = sprt_bounds(alpha, beta)
    samples = round(sum(counts.values()))
    llr = log_likelihood_ratio(counts, elo0, elo1) if samples else 0.0
    decision = SprtDecision.CONTINUE
    if llr >= upper:
        decision = SprtDecision.ACCEPT_H1
    elif llr <= lower:
        decision = SprtDecision.ACCEPT_H0
    return SprtResult(llr, lower, upper, decision, samples)
