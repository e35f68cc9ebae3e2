"""Ratings with uncertainty: maximum-likelihood Elo, standings, LOS, and the SPRT.

>>> fit = fit_elo(2, [Game(0, 1, 1.0), Game(0, 1, 0.5)], prior_draws=0)
>>> round(float(fit.elo[0] - fit.elo[1]), 1)  # 75% score
190.8
"""

from __future__ import annotations

from arena.ratings.elo import (
    DEFAULT_PRIOR_DRAWS,
    EloFit,
    Game,
    RatingError,
    ScoreElo,
    add_prior_draws,
    elo_from_score,
    expected_score,
    fit_elo,
    fit_totals,
    log_likelihood,
    los_from_wins,
    pair_totals,
    score_elo,
)
from arena.ratings.sprt import (
    SprtDecision,
    SprtResult,
    log_likelihood_ratio,
    pentanomial,
    sprt,
    sprt_bounds,
    trinomial,
)
from arena.ratings.standings import PairLine, Record, Row, Standings, compute_standings

__all__ = [
    "DEFAULT_PRIOR_DRAWS",
    "EloFit",
    "Game",
    "PairLine",
    "RatingError",
    "Record",
    "Row",
    "ScoreElo",
    "SprtDecision",
    "SprtResult",
    "Standings",
    "add_prior_draws",
    "compute_standings",
    "elo_from_score",
    "expected_score",
    "fit_elo",
    "fit_totals",
    "log_likelihood",
    "log_likelihood_ratio",
    "los_from_wins",
    "pair_totals",
    "pentanomial",
    "score_elo",
    "sprt",
    "sprt_bounds",
    "trinomial",
]
