"""The Elo fit against independent computations: closed forms and a brute-force search."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

from arena.ratings import (
    Game,
    RatingError,
    compute_standings,
    elo_from_score,
    expected_score,
    fit_elo,
    fit_totals,
    los_from_wins,
    pair_totals,
    pentanomial,
    score_elo,
    trinomial,
)


def _games(a: int, b: int, wins: int, draws: int, losses: int) -> list[Game]:
    return [Game(a, b, 1.0)] * wins + [Game(a, b, 0.5)] * draws + [Game(b, a, 1.0)] * losses


def _brute_loglik(elo: tuple[float, ...], games: list[Game], prior: float) -> float:
    """The log-likelihood written out game by game, sharing no code with the fit."""
    total = 0.0
    met: set[tuple[int, int]] = set()
    for game in games:
        p = 1.0 / (1.0 + 10.0 ** ((elo[game.b] - elo[game.a]) / 400.0))
        total += game.score * math.log(p) + (1.0 - game.score) * math.log(1.0 - p)
        met.add((min(game.a, game.b), max(game.a, game.b)))
    for a, b in met:  # the virtual draws
        p = 1.0 / (1.0 + 10.0 ** ((elo[b] - elo[a]) / 400.0))
        total += prior * (0.5 * math.log(p) + 0.5 * math.log(1.0 - p))
    return total


def _grid_maximum(games: list[Game], prior: float) -> tuple[float, float, float]:
    """Ratings of three players (mean 0) by a coarse-to-fine grid search of the likelihood."""
    best = (0.0, 0.0)
    span = 800.0
    for _ in range(14):
        step = span / 10
        grid = (
            [best[0] + step * k for k in range(-10, 11)],
            [best[1] + step * k for k in range(-10, 11)],
        )
        best = max(
            itertools.product(*grid),
            key=lambda r: _brute_loglik((r[0], r[1], -r[0] - r[1]), games, prior),
        )
        span /= 4
    return best[0], best[1], -best[0] - best[1]


@pytest.mark.parametrize(("wins", "draws", "losses"), [(7, 2, 3), (3, 10, 1), (1, 0, 9), (5, 5, 5)])
def test_two_players_match_the_closed_form(wins: int, draws: int, losses: int) -> None:
    fit = fit_elo(2, _games(0, 1, wins, draws, losses), prior_draws=0)
    score = (wins + draws / 2) / (wins + draws + losses)
    assert fit.elo[0] - fit.elo[1] == pytest.approx(400 * math.log10(score / (1 - score)), abs=1e-6)
    assert fit.elo[0] + fit.elo[1] == pytest.approx(0.0, abs=1e-9)  # anchored at mean 0


def test_two_players_with_virtual_draws_and_a_perfect_score() -> None:
    prior = 2.0
    fit = fit_elo(2, _games(0, 1, 10, 0, 0), prior_draws=prior)
    shrunk = (10 + prior / 2) / (10 + prior)
    assert fit.elo[0] - fit.elo[1] == pytest.approx(elo_from_score(shrunk), abs=1e-6)
    with pytest.raises(RatingError, match="did not converge"):
        fit_elo(2, _games(0, 1, 10, 0, 0), prior_draws=0)


def test_two_player_interval_is_the_inverse_fisher_information() -> None:
    wins, draws, losses = 30, 20, 10
    fit = fit_elo(2, _games(0, 1, wins, draws, losses), prior_draws=0)
    n = wins + draws + losses
    p = expected_score(float(fit.elo[0] - fit.elo[1]))
    # Var(theta_diff) = 1 / (n p (1 - p)) in natural units; each rating carries a quarter.
    nat = math.log(10) / 400
    sd_diff = 1 / math.sqrt(n * p * (1 - p)) / nat
    assert fit.difference_stddev(0, 1) == pytest.approx(sd_diff, rel=1e-6)
    low, high = fit.interval(0)
    assert (high - low) / 2 == pytest.approx(1.959964 * sd_diff / 2, rel=1e-5)
    assert fit.los(0, 1) == pytest.approx(
        0.5 * (1 + math.erf((fit.elo[0] - fit.elo[1]) / sd_diff / math.sqrt(2))), rel=1e-9
    )


@pytest.mark.parametrize("prior", [0.0, 1.0])
def test_three_players_match_a_brute_force_grid_search(prior: float) -> None:
    games = _games(0, 1, 6, 3, 3) + _games(1, 2, 4, 4, 2) + _games(0, 2, 5, 1, 2)
    fit = fit_elo(3, games, prior_draws=prior)
    expected = _grid_maximum(games, prior)
    assert fit.elo == pytest.approx(np.array(expected), abs=0.05)
    # And the maximum is a maximum: nudging any rating lowers the likelihood.
    at_best = _brute_loglik(tuple(fit.elo), games, prior)
    for i in range(3):
        nudged = list(fit.elo)
        nudged[i] += 1.0
        assert _brute_loglik(tuple(nudged), games, prior) < at_best


def test_fit_recovers_known_ratings_from_many_simulated_games() -> None:
    truth = [150.0, 0.0, -50.0, -100.0]
    rng = random.Random(7)
    games = []
    for a, b in itertools.combinations(range(4), 2):
        p = expected_score(truth[a] - truth[b])
        games += [Game(a, b, 1.0 if rng.random() < p else 0.0) for _ in range(800)]
    fit = fit_elo(4, games, prior_draws=0)
    centred = np.array(truth) - np.mean(truth)
    for i in range(4):
        low, high = fit.interval(i)
        assert low < centred[i] < high
    assert list(np.argsort(-fit.elo)) == [0, 1, 2, 3]


def test_los_from_wins_and_standings_table() -> None:
    assert los_from_wins(0, 0) == 0.5
    assert los_from_wins(10, 10) == pytest.approx(0.5)
    assert los_from_wins(15, 5) == pytest.approx(
        0.5 * (1 + math.erf(10 / math.sqrt(40) / math.sqrt(2)))
    )
    games = _games(0, 1, 1, 2, 3) + _games(2, 0, 4, 0, 0) + _games(2, 1, 3, 1, 0)
    table = compute_standings(4, games)  # player 3 never played
    assert [row.player for row in table.rows] == [2, 1, 0, 3]
    by_player = {row.player: row for row in table.rows}
    assert (by_player[0].record.wins, by_player[0].record.draws, by_player[0].record.losses) == (
        1,
        2,
        7,
    )
    assert by_player[0].record.score_pct == pytest.approx(20.0)
    assert by_player[3].record.games == 0 and by_player[3].elo_low == float("-inf")
    assert [row.rank for row in table.rows] == [1, 2, 3, 4]
    lines = {(h.player, h.opponent): h for h in table.head_to_head}
    assert len(lines) == 12
    assert lines[(2, 0)].record.wins == 4 and lines[(0, 2)].record.losses == 4
    for (i, j), line in lines.items():
        assert line.los + lines[(j, i)].los == pytest.approx(1.0)


@pytest.mark.parametrize(
    "game", [Game(0, 0, 1.0), Game(0, 5, 1.0), Game(0, 1, 0.7), Game(-1, 1, 0.0)]
)
def test_bad_games_raise_rating_errors(game: Game) -> None:
    with pytest.raises(RatingError):
        fit_elo(2, [game])
    assert issubclass(RatingError, ValueError)


def test_score_elo_of_single_games_matches_the_hand_computed_interval() -> None:
    # 6 wins, 2 draws, 2 losses: mean 0.7; mean of squares (6 + 2 * 0.25) / 10 = 0.65, so
    # the variance is 0.65 - 0.49 = 0.16 and the standard error sqrt(0.016).
    found = score_elo(trinomial(6, 2, 2))
    se = math.sqrt(0.016)
    assert found.samples == 10
    assert found.score == pytest.approx(0.7)
    assert found.stderr == pytest.approx(se)
    assert found.elo == pytest.approx(400 * math.log10(0.7 / 0.3))
    low, high = 0.7 - 1.959963984540054 * se, 0.7 + 1.959963984540054 * se
    assert found.low == pytest.approx(400 * math.log10(low / (1 - low)))
    assert found.high == pytest.approx(400 * math.log10(high / (1 - high)))
    assert found.low < found.elo < found.high


def test_score_elo_of_pairs_uses_the_pair_spread() -> None:
    # Pairs scoring 2, 1, 1, 1 points: pair values 1, .5, .5, .5 -> mean .625, variance
    # (.375^2 + 3 * .125^2) / 4 = 0.046875; the same games as singles (W W, W L x3, say)
    # spread wider.
    pairs = score_elo(pentanomial([2.0, 1.0, 1.0, 1.0]))
    assert pairs.samples == 4
    assert pairs.score == pytest.approx(0.625)
    assert pairs.stderr == pytest.approx(math.sqrt(0.046875 / 4))
    singles = score_elo(trinomial(5, 0, 3))
    assert singles.score == pytest.approx(pairs.score)
    assert singles.high - singles.low > pairs.high - pairs.low


def test_score_elo_at_the_edges() -> None:
    even = score_elo(trinomial(0, 8, 0))  # all draws: no spread, no doubt
    assert (even.elo, even.low, even.high, even.stderr) == (0.0, 0.0, 0.0, 0.0)
    # A sweep has no spread either: its lower bound is the exact one of n straight wins.
    sweep = score_elo(trinomial(12, 0, 0))
    assert sweep.elo == math.inf and sweep.high == math.inf
    assert sweep.low == pytest.approx(400 * math.log10(0.025 ** (1 / 12) / (1 - 0.025 ** (1 / 12))))
    assert 170 < sweep.low < 185 and score_elo(trinomial(40, 0, 0)).low > sweep.low
    swept = score_elo(pentanomial([0.0] * 6))  # six lost pairs
    assert swept.elo == -math.inf and swept.low == -math.inf
    assert swept.high == pytest.approx(-400 * math.log10(0.025 ** (1 / 6) / (1 - 0.025 ** (1 / 6))))
    # Near a sweep the normal interval leaves 0..1 on the far side; Wilson's bound keeps
    # it finite there, below the estimate, and the near side stays the normal one.
    lost = score_elo(trinomial(1, 0, 9))
    se = math.sqrt(0.09 / 10)
    assert 0.1 - 1.959963984540054 * se < 0  # where the normal interval gives up
    assert math.isfinite(lost.low) and lost.low < lost.elo < lost.high < 0
    assert lost.low == pytest.approx(400 * math.log10(0.01787 / (1 - 0.01787)), abs=1.0)
    assert lost.high == pytest.approx(elo_from_score(0.1 + 1.959963984540054 * se))
    assert -lost.low == pytest.approx(score_elo(trinomial(9, 0, 1)).high)
    assert score_elo(trinomial(1, 0, 59)).low < lost.low
    with pytest.raises(RatingError):
        score_elo(trinomial(0, 0, 0))
    with pytest.raises(RatingError):
        score_elo({0.0: -1.0, 1.0: 2.0})


def test_one_sided_records_converge() -> None:
    """A sweep or near-sweep of any length has a finite fit with the prior draws (34, 36,
    43 and 53 straight wins once failed to converge: GetStandings refused such a ladder),
    and its interval is the inverse Fisher information, as for any record. (Half of these
    records once came out of the pseudo-inverse as [+503, +503] after 164 straight wins, or
    as billions of Elo wide: the information matrix, built with 1 - p where p is nearly 1,
    was not quite symmetric, and its zero eigenvalue came out above the cut-off.)"""
    nat = math.log(10) / 400
    for games in range(1, 81):
        for draws, losses in ((0, 0), (1, 0), (0, 1)):
            record = [Game(0, 1, 1.0)] * games + [Game(0, 1, 0.5)] * draws
            record += [Game(0, 1, 0.0)] * losses
            fit = fit_elo(2, record)
            n = games + draws + losses + 1  # the prior's draw
            expected = (games + draws / 2 + 0.5) / n
            assert expected_score(float(fit.elo[0] - fit.elo[1])) == pytest.approx(expected)
            sd_diff = 1 / math.sqrt(n * expected * (1 - expected)) / nat
            low, high = fit.interval(0)
            assert (high - low) / 2 == pytest.approx(1.959964 * sd_diff / 2, rel=1e-5)
            top = compute_standings(2, record).rows[0]  # what a ladder's standings show
            assert (top.elo_low, top.elo_high) == pytest.approx((low, high))


def _connected_games(seed: int, players: int, count: int, spread: int) -> list[Game]:
    """A chain through every player, then ``count`` games where a higher index is
    stronger (by ``1 / spread`` of a score per index)."""
    rng = np.random.default_rng(seed)
    games = [Game(i, i + 1, float(rng.choice([0.0, 0.5, 1.0]))) for i in range(players - 1)]
    for _ in range(count):
        a, b = rng.choice(players, size=2, replace=False)
        games.append(Game(int(a), int(b), float(rng.random() < 0.5 + (b - a) / spread)))
    return games


@pytest.mark.parametrize("seed", range(5))
def test_a_connected_fit_is_the_pseudo_inverse_fit(seed: int) -> None:
    """The rating list's faster steps (``connected=True``) reach the same ratings and
    covariance as the pseudo-inverse, for any connected set of players."""
    players = 30
    counts, points = pair_totals(players, _connected_games(seed, players, 300, 80))
    plain, fast = fit_totals(counts, points), fit_totals(counts, points, connected=True)
    assert np.allclose(plain.elo, fast.elo, atol=1e-6)
    assert np.allclose(plain.covariance, fast.covariance, atol=1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_a_fit_started_from_the_last_one_reaches_the_same_ratings_sooner(seed: int) -> None:
    """The rating list refits after each game from its previous ratings (``start``): the
    same maximum and covariance as a fit from zero, in fewer Newton steps; a start far off
    (or shifted: the mean is not identified) reaches it too."""
    players = 40
    games = _connected_games(seed, players, 400, 100)
    rng = np.random.default_rng(seed)
    before = fit_totals(*pair_totals(players, games), connected=True)
    counts, points = pair_totals(players, [*games, Game(0, players - 1, 1.0)])
    cold = fit_totals(counts, points, connected=True)
    for start, fewer in ((before.elo, True), (before.elo + 500.0, False),
                         (rng.normal(0, 400, players), False)):
        warm = fit_totals(counts, points, connected=True, start=start)
        assert np.allclose(warm.elo, cold.elo, atol=1e-6)
        assert np.allclose(warm.covariance, cold.covariance, atol=1e-6)
        if fewer:
            assert warm.iterations < cold.iterations, (warm.iterations, cold.iterations)


@pytest.mark.parametrize("difference", [-130_000.0, -1e300, float("-inf")])
def test_expected_score_of_a_hopeless_difference_is_zero_not_an_overflow(
    difference: float,
) -> None:
    assert expected_score(difference) == 0.0
    assert expected_score(-difference) == 1.0
