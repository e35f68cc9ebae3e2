"""Standings of a set of players: W/D/L, score %, Elo with intervals, head-to-head, LOS."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arena.ratings.elo import DEFAULT_PRIOR_DRAWS, EloFit, Game, fit_elo


@dataclass(frozen=True)
class Record:
    """Wins, draws and losses, from one side's point of view."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        return self.wins + 0.5 * self.draws

    @property
    def score_pct(self) -> float:
        """Points per game in percent (0 with no games)."""
        return 100.0 * self.points / self.games if self.games else 0.0

    def add(self, score: float) -> Record:
        if score == 1.0:
            return Record(self.wins + 1, self.draws, self.losses)
        if score == 0.5:
            return Record(self.wins, self.draws + 1, self.losses)
        return Record(self.wins, self.draws, self.losses + 1)


@dataclass(frozen=True)
class Row:
    """One player's line: index into the player list, record, Elo, interval, rank (1 = best)."""

    player: int
    record: Record
    elo: float
    elo_low: float
    elo_high: float
    rank: int


@dataclass(frozen=True)
class PairLine:
    """Results of ``player`` against ``opponent`` and the LOS of player over opponent."""

    player: int
    opponent: int
    record: Record
    los: float


@dataclass(frozen=True)
class Standings:
    rows: list[Row]  # best first
    head_to_head: list[PairLine]  # every ordered pair, in rank order of both sides
    fit: EloFit


def compute_standings(
    players: int, games: Sequence[Game], prior_draws: float = DEFAULT_PRIOR_DRAWS
) -> Standings:
    """Standings of ``players`` (indices 0..players-1) from ``games``.

    Ranked by Elo, then by score, players without games last; ties keep index order, so
    the table is deterministic. A player without games is rated 0 with the interval
    (-inf, +inf): nothing is known about it.
    """
    fit = fit_elo(players, games, prior_draws)
    totals = [Record() for _ in range(players)]
    pairs = [[Record() for _ in range(players)] for _ in range(players)]
    for game in games:
        totals[game.a] = totals[game.a].add(game.score)
        totals[game.b] = totals[game.b].add(1.0 - game.score)
        pairs[game.a][game.b] = pairs[game.a][game.b].add(game.score)
        pairs[game.b][game.a] = pairs[game.b][game.a].add(1.0 - game.score)
    order = sorted(
        range(players),
        key=lambda p: (totals[p].games == 0, -round(float(fit.elo[p]), 9), -totals[p].score_pct, p),
    )
    rows = []
    for rank, player in enumerate(order, start=1):
        low, high = fit.interval(player)
        if totals[player].games == 0:
            low, high = float("-inf"), float("inf")
        rows.append(Row(player, totals[player], float(fit.elo[player]), low, high, rank))
    head_to_head = [
        PairLine(i, j, pairs[i][j], fit.los(i, j)) for i in order for j in order if i != j
    ]
    return Standings(rows, head_to_head, fit)
