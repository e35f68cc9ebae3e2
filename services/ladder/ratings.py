"""The arena's rating list: every counted game of every ladder of one game, pooled.

A ladder's standings rate its bots against each other only. The rating list of a game (its
kind, variant and board size) fits one maximum-likelihood Elo (``arena.ratings``, with the
same virtual draws as a ladder's standings) over the counted games of all its ladders,
whatever their format; a void game has no result and does not count. Each bot version is
a player. A list pools every clock, or takes the ladders of one clock only (a list per
time control, as rating lists of engines keep them); either way it says which clocks the
game's ladders were played at. Bots that never met, not even through other bots, cannot be
compared, so each connected set of bots (a pool) is fitted on its own, its mean rated 0;
pools are numbered by size, the largest first.

Reading it costs one GET while no ladder has counted a game (the store's results version
has not moved); otherwise one round trip for every ladder's ``games_done``, then only what
changed: a ladder's game and bots are read once (a config never changes), its results
again only when its count of games done has moved, and each is kept as a small tally per
ordered pair and result. The fitted list of a game is kept for as long as no ladder of
that game has counted another game.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from arena.services.common.lru import LruCache
from arena.services.common.protocol.ladders import LadderStore

from arena.clock import ClockKey, clock_key, clock_of, clock_problems
from arena.errors import FieldViolation, InvalidArgumentError
from arena.games import UnknownGameError, game
from arena.ratings import DEFAULT_PRIOR_DRAWS, Record, add_prior_draws, fit_totals
from arena.v1 import common_pb2, ladder_pb2

GameKey = tuple[int, str, int]  # kind, variant, board size
BotKey = tuple[str, int]  # name, version
LADDERS_KEPT = 1 << 20  # a ladder's game and bots: a few dozen bytes each
LISTS_KEPT = 64  # fitted lists (of each kind, variant and size; all clocks or one)
ListKey = tuple[GameKey, ClockKey | None]  # None: every clock


def game_key(spec: common_pb2.GameSpec) -> GameKey:
    return (int(spec.kind), spec.variant, int(spec.board_size))


@dataclass(frozen=True)
class LadderKind:
    """What never changes about a ladder: its game, its clock and its bots."""

    game: GameKey
    clock: ClockKey
    bots: tuple[BotKey, ...]


@dataclass(frozen=True)
class LadderGames:
    """What one ladder adds to its game's list: (black, white, black's score) -> games,
    at its clock."""

    done: int
    clock: ClockKey
    tally: Counter[tuple[BotKey, BotKey, float]]


@dataclass(frozen=True)
class _Kept:
    """A fitted list, the results version it was last found current at, and the ladders
    (id, games done) it was fitted on."""

    version: int | None
    signature: frozenset[tuple[str, int]]
    ratings: ladder_pb2.Ratings


@dataclass
class _Player:
    bot: BotKey
    scores: Counter[float] = field(default_factory=Counter)  # its points in a game -> games
    ladders: set[str] = field(default_factory=set)
    opponents: set[BotKey] = field(default_factory=set)

    @property
    def record(self) -> Record:
        return Record(self.scores[1.0], self.scores[0.5], self.scores[0.0])


class RatingList:
    """The rating lists of a ladder service; safe to call from several threads (a race
    only repeats work)."""

    def __init__(self, store: LadderStore, prior_draws: float = DEFAULT_PRIOR_DRAWS) -> None:
        self.store = store
        self.prior_draws = prior_draws
        self._kinds: LruCache[str, LadderKind] = LruCache(LADDERS_KEPT)
        self._tallies: LruCache[str, LadderGames] = LruCache(LADDERS_KEPT)
        self._lists: LruCache[ListKey, _Kept] = LruCache(LISTS_KEPT)
        self._swept: tuple[int | None, dict[str, int]] = (None, {})  # version, games done

    def ratings(self, spec: common_pb2.GameSpec,
                clock: common_pb2.TimeControl | None = None) -> ladder_pb2.Ratings:
        """The list of ``spec``'s game (an empty variant or size: the game's default), of
        the ladders at ``clock`` only (None: at every clock)."""
        spec = _complete(spec)
        key = (game_key(spec), None if clock is None else _clock_key(clock))
        # Read before anything else: a game counted after it moves it again, and the next
        # call looks again.
        version = self.store.results_version()
        kept = self._lists.get(key)
        if kept is not None and version is not None and kept.version == version:
            return kept.ratings
        games = {}  # the game's ladders with games done, at any clock
        for ladder_id, count in self._games_done(version).items():
            kind = self._kinds.get(ladder_id)
            if kind is not None and kind.game == key[0] and count > 0:
                games[ladder_id] = count
        signature = frozenset(games.items())
        if kept is None or kept.signature != signature:
            ratings = self._list(spec, key[1], self._tallies_of(games),
                                 None if kept is None else kept.ratings)
        else:
            ratings = kept.ratings
        self._lists.put(key, _Kept(version, signature, ratings))
        return ratings

    def _list(self, spec: common_pb2.GameSpec, clock: ClockKey | None,
              tallies: dict[str, LadderGames],
              before: ladder_pb2.Ratings | None = None) -> ladder_pb2.Ratings:
        """The list of ``tallies``; ``before``, the list before its last games, gives the
        fit its starting ratings (the same maximum, in fewer steps)."""
        clocks: dict[ClockKey, tuple[int, int]] = {}  # clock -> (games, ladders)
        ours = {}
        for ladder_id, ladder in tallies.items():
            if ladder.tally:
                games, ladders = clocks.get(ladder.clock, (0, 0))
                clocks[ladder.clock] = (games + ladder.tally.total(), ladders + 1)
            if clock is None or ladder.clock == clock:
                ours[ladder_id] = ladder
        start = {} if before is None else {
            (row.standing.bot.name, row.standing.bot.version): row.standing.elo
            for row in before.rows}
        ratings = _fit(spec, ours, self.prior_draws, start)
        if clock is not None:
            ratings.clock.CopyFrom(clock_of(clock))
        for at, (games, ladders) in sorted(clocks.items(), key=lambda c: (-c[1][0], c[0])):
            ratings.clocks.add(clock=clock_of(at), games=games, ladders=ladders)
        return ratings

    def _games_done(self, version: int | None) -> dict[str, int]:
        """Every ladder's count of games done, swept again only when ``version`` moved."""
        swept_version, done = self._swept
        if version is not None and version == swept_version:
            return done
        ids = self.store.all_ids()
        done = {ladder_id: count for ladder_id, count in zip(ids, self.store.games_done(ids),
                                                             strict=True) if count is not None}
        self._learn_kinds([ladder_id for ladder_id in done if self._kinds.get(ladder_id) is None])
        self._swept = (version, done)
        return done

    def _learn_kinds(self, ids: list[str]) -> None:
        for ladder_id, config in self.store.configs(ids).items():
            bots = tuple((bot.name, bot.version) for bot in config.bots)
            self._kinds.put(ladder_id, LadderKind(game_key(config.game),
                                                  clock_key(config.time_control), bots))

    def _tallies_of(self, done: dict[str, int]) -> dict[str, LadderGames]:
        tallies = {}
        stale = []
        for ladder_id, count in done.items():
            kept = self._tallies.get(ladder_id)
            if kept is not None and kept.done == count:
                tallies[ladder_id] = kept
            else:
                stale.append(ladder_id)
        for ladder_id, results in self.store.results_of(stale).items():
            kind = self._kinds.get(ladder_id)
            if kind is None:
                continue
            bots = kind.bots
            tally: Counter[tuple[BotKey, BotKey, float]] = Counter(
                (bots[r.black], bots[r.white], r.score) for r in results
                if r.score is not None and max(r.black, r.white) < len(bots))
            # ``done`` was read before the results, so a game counted in between is in the
            # tally but not in its count: the next call reads this ladder again.
            counted = LadderGames(done[ladder_id], kind.clock, tally)
            tallies[ladder_id] = self._tallies.put(ladder_id, counted)
        return tallies


def _complete(spec: common_pb2.GameSpec) -> common_pb2.GameSpec:
    try:
        played = game(spec.kind)
        return played.spec(spec.variant or None, spec.board_size or None)
    except UnknownGameError as exc:
        field = f"game.{exc.part}" if exc.part else "game"
        raise InvalidArgumentError.for_fields([FieldViolation(field, str(exc))]) from exc


def _clock_key(clock: common_pb2.TimeControl) -> ClockKey:
    """The key of a clock asked for, checked as a match's is (no ladder has another)."""
    problems = clock_problems(clock)
    if problems:
        raise InvalidArgumentError.for_fields(
            [FieldViolation("clock", "; ".join(f"{part} {why}" for part, why in problems))])
    return clock_key(clock)


def _pools(players: list[BotKey], met: set[tuple[BotKey, BotKey]]) -> list[list[BotKey]]:
    """The connected sets of ``players`` (each sorted), the largest first."""
    parent = {bot: bot for bot in players}

    def root(bot: BotKey) -> BotKey:
        while parent[bot] != bot:
            parent[bot] = parent[parent[bot]]
            bot = parent[bot]
        return bot

    for a, b in met:
        parent[root(a)] = root(b)
    pools: dict[BotKey, list[BotKey]] = {}
    for bot in players:
        pools.setdefault(root(bot), []).append(bot)
    return sorted((sorted(pool) for pool in pools.values()), key=lambda p: (-len(p), p[0]))


def _fit(spec: common_pb2.GameSpec, tallies: dict[str, LadderGames],
         prior_draws: float, start: dict[BotKey, float]) -> ladder_pb2.Ratings:
    players: dict[BotKey, _Player] = {}
    pair_games: Counter[tuple[BotKey, BotKey]] = Counter()  # ordered: a's points below
    pair_points: dict[tuple[BotKey, BotKey], float] = {}
    games = 0
    for ladder_id, ladder in tallies.items():
        for (black, white, score), count in ladder.tally.items():
            games += count
            for bot, other, got in ((black, white, score), (white, black, 1.0 - score)):
                player = players.get(bot)
                if player is None:
                    player = players[bot] = _Player(bot)
                player.scores[got] += count
                player.ladders.add(ladder_id)
                player.opponents.add(other)
                pair_games[bot, other] += count
                pair_points[bot, other] = pair_points.get((bot, other), 0.0) + got * count
    pools = _pools(sorted(players), set(pair_games))
    where = {bot: (number, i) for number, pool in enumerate(pools) for i, bot in enumerate(pool)}
    totals = [(np.zeros((len(pool), len(pool))), np.zeros((len(pool), len(pool))))
              for pool in pools]
    for (a, b), n in pair_games.items():
        (number, i), j = where[a], where[b][1]
        counts, points = totals[number]
        counts[i, j] = n
        points[i, j] = pair_points[a, b]
    rows = []
    for number, (pool, (counts, points)) in enumerate(zip(pools, totals, strict=True), start=1):
        add_prior_draws(counts, points, prior_draws)
        fit = fit_totals(counts, points, connected=True,  # a pool is connected
                         start=np.array([start.get(bot, 0.0) for bot in pool]))
        records = [players[bot].record for bot in pool]
        order = sorted(range(len(pool)), key=lambda i: (
            -round(float(fit.elo[i]), 9), -records[i].score_pct, pool[i]))
        for rank, i in enumerate(order, start=1):
            player, record = players[pool[i]], records[i]
            low, high = fit.interval(i)
            standing = ladder_pb2.StandingRow(
                bot=common_pb2.BotRef(name=player.bot[0], version=player.bot[1]),
                games=record.games, wins=record.wins, draws=record.draws,
                losses=record.losses, score_pct=record.score_pct, elo=float(fit.elo[i]),
                elo_low=low, elo_high=high, rank=rank)
            rows.append(ladder_pb2.RatingRow(standing=standing, pool=number,
                                             ladders=len(player.ladders),
                                             opponents=len(player.opponents)))
    ladders = sum(1 for ladder in tallies.values() if ladder.tally)
    return ladder_pb2.Ratings(game=spec, rows=rows, games=games, ladders=ladders,
                              pools=len(pools))
