"""The SPRT against a brute-force constrained likelihood and Wald's bounds."""

from __future__ import annotations

import math

import pytest

from arena.ratings import (
    RatingError,
    SprtDecision,
    expected_score,
    log_likelihood_ratio,
    pentanomial,
    sprt,
    sprt_bounds,
    trinomial,
)
from arena.ratings.sprt import EPSILON


def _best_trinomial_loglik(wins: int, draws: int, losses: int, mean: float) -> float:
    """max of the (regularised) trinomial likelihood with mean score ``mean``, by grid search
    over the draw rate: with the mean fixed, p_win = mean - p_draw / 2."""
    w, d, l_ = wins + EPSILON, draws + EPSILON, losses + EPSILON
    best = -math.inf
    steps = 200_000
    for k in range(1, steps):
        p_draw = k / steps
        p_win = mean - p_draw / 2
        p_loss = 1 - p_win - p_draw
        if p_win <= 0 or p_loss <= 0:
            continue
        best = max(best, w * math.log(p_win) + d * math.log(p_draw) + l_ * math.log(p_loss))
    return best


def test_bounds_are_walds() -> None:
    lower, upper = sprt_bounds(0.05, 0.05)
    assert lower == pytest.approx(math.log(0.05 / 0.95))
    assert upper == pytest.approx(math.log(0.95 / 0.05))


@pytest.mark.parametrize(("wins", "draws", "losses"), [(120, 200, 90), (40, 10, 60), (5, 90, 5)])
def test_trinomial_llr_matches_a_brute_force_maximisation(
    wins: int, draws: int, losses: int
) -> None:
    elo0, elo1 = 0.0, 10.0
    counts = trinomial(wins, draws, losses)
    brute = _best_trinomial_loglik(
        wins, draws, losses, expected_score(elo1)
    ) - _best_trinomial_loglik(wins, draws, losses, expected_score(elo0))
    # The brute force also weighs the epsilon pseudo-counts; their share is far below 0.02.
    assert log_likelihood_ratio(counts, elo0, elo1) == pytest.approx(brute, abs=0.02)


def test_llr_sign_follows_the_observed_score() -> None:
    assert log_likelihood_ratio(trinomial(60, 20, 40), 0, 5) > 0
    assert log_likelihood_ratio(trinomial(40, 20, 60), 0, 5) < 0


def test_decisions_for_clear_cases_and_continue_in_between() -> None:
    strong = sprt(trinomial(700, 600, 500), elo0=0, elo1=10)
    assert strong.decision is SprtDecision.ACCEPT_H1 and strong.samples == 1800
    weak = sprt(trinomial(500, 600, 700), elo0=0, elo1=10)
    assert weak.decision is SprtDecision.ACCEPT_H0
    unsure = sprt(trinomial(12, 10, 10), elo0=0, elo1=10)
    assert unsure.decision is SprtDecision.CONTINUE
    assert unsure.lower_bound < unsure.llr < unsure.upper_bound
    empty = sprt(trinomial(0, 0, 0))
    assert empty.llr == 0.0 and empty.decision is SprtDecision.CONTINUE


def test_pentanomial_counts_pairs_and_prefers_h1_for_a_winning_record() -> None:
    counts = pentanomial([2, 1.5, 1, 1, 0.5, 1.5, 2, 1] * 40)
    assert counts == {0.0: 0.0, 0.25: 40.0, 0.5: 120.0, 0.75: 80.0, 1.0: 80.0}
    assert sprt(counts, 0, 20).decision is SprtDecision.ACCEPT_H1
    with pytest.raises(RatingError):
        pentanomial([3])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"elo0": 5, "elo1": 0}, "elo1"), ({"alpha": 0.7}, "alpha"), ({"beta": 0}, "beta"),
     ({"elo0": float("nan")}, "finite"), ({"elo1": float("inf")}, "finite"),
     # Hypotheses whose expected score is 0 or 1 in floats: a clear error, not an
     # OverflowError (elo0 -130,000) or the MLE's complaint about its mean (elo1 10,000).
     ({"elo0": -130_000}, "elo0=-130000 expects a score of 0"),
     ({"elo1": 10_000}, "elo1=10000 expects a score of 1")],
)
def test_bad_parameters_raise(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(RatingError, match=message):
        sprt(trinomial(1, 1, 1), **kwargs)


def _dual_best(counts: dict[float, float], mean: float) -> float:
    """max over lam of sum n_x log(1 + lam (x - mean)), by golden-section search: the dual
    of the mean-constrained maximum likelihood (its value is the primal's, negated, plus a
    constant that cancels in the ratio)."""
    values = sorted(counts)
    low, high = -1.0 / (values[-1] - mean) + 1e-12, 1.0 / (mean - values[0]) - 1e-12

    def g(lam: float) -> float:
        return sum(n * math.log(1.0 + lam * (x - mean)) for x, n in counts.items())

    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(300):
        a, b = high - ratio * (high - low), low + ratio * (high - low)
        if g(a) < g(b):
            low = a
        else:
            high = b
    return g((low + high) / 2)


@pytest.mark.parametrize("pairs", [
    [2, 1.5, 1, 1, 0.5, 1.5, 2, 1] * 5,
    [1, 1, 1, 0.5, 1.5, 0, 2, 1, 1, 1],
    [0.5, 1, 0.5, 0, 1, 1, 0.5, 1.5],
])
def test_pentanomial_llr_matches_the_dual_problem(pairs: list[float]) -> None:
    elo0, elo1 = -3.0, 12.0
    counts = pentanomial(pairs)
    regular = {x: n + EPSILON for x, n in counts.items()}
    dual = (_dual_best(regular, expected_score(elo0)) - _dual_best(regular, expected_score(elo1)))
    # The library sums the log-ratio over observed outcomes only; the epsilon pseudo-counts'
    # share of the dual is below 1e-3 here.
    assert log_likelihood_ratio(counts, elo0, elo1) == pytest.approx(dual, abs=2e-3)


@pytest.mark.parametrize(("pairs", "elo1"), [(8, 200.0), (12, 100.0), (23, 50.0)])
def test_perfect_pairs_against_the_two_point_closed_form(pairs: int, elo1: float) -> None:
    """Every pair won 2-0: the best distributions put all mass on 0 and 2 points, so the LLR
    is pairs * log(p1 / p0) with p the hypothesis' expected score (up to the pseudo-counts),
    and these are the first pair counts at which the test accepts H1 (alpha = beta = 0.05)."""
    closed = pairs * math.log(expected_score(elo1) / expected_score(0.0))
    result = sprt(pentanomial([2.0] * pairs), 0.0, elo1)
    assert result.llr == pytest.approx(closed, abs=0.01)
    assert result.decision is SprtDecision.ACCEPT_H1
    assert sprt(pentanomial([2.0] * (pairs - 1)), 0.0, elo1).decision is SprtDecision.CONTINUE
