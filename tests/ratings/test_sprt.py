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
    [({"elo0": 5, "elo1": 0}, "elo1"), ({"alpha": 0.7}, "alpha"), ({"beta": 0}, "beta")],
)
def test_bad_parameters_raise(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(RatingError, match=message):
        sprt(trinomial(1, 1, 1), **kwargs)
