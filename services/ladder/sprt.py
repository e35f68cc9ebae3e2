"""SPRT ladders: a version test of two bots (fishtest's), played as colour-swapped pairs.

An SPRT ladder is a two-bot ladder whose ``games_per_pairing`` is the test's maximum:
the schedule plays games 2k and 2k+1 on the same opening with the colours swapped, so
they form pair k. After each counted result the test is run again on the pairs both of
whose games have a result (a pair with a void game counts for nothing), from the first
bot's points in each pair (0, 0.5, ..., 2: the pentanomial); a void game that the ladder
plays again (``replay_void``) counts with its replay's result. When the log-likelihood
ratio leaves Wald's bounds the ladder is concluded: it finishes with the verdict stored,
and the games still running are cancelled. A test that reaches its maximum first ends
like any ladder, without a verdict.
"""

from __future__ import annotations

from collections.abc import Mapping

from arena.services.common.ladder_limits import MAX_GAMES
from arena.services.common.protocol.ladders import ResultRecord
from arena.services.ladder.schedule import even_games

from arena.errors import FieldViolation
from arena.ratings import RatingError, SprtDecision, pentanomial, sprt, sprt_bounds
from arena.v1 import ladder_pb2

DEFAULT_ELO1 = 5.0
MAX_ELO = 1000.0  # an Elo difference of 1000 is a 99.7 % score: nothing beyond is tested
DEFAULT_ERROR_RATE = 0.05
DEFAULT_MAX_GAMES = 1000
_VERDICTS = {
    SprtDecision.CONTINUE: ladder_pb2.SPRT_VERDICT_CONTINUE,
    SprtDecision.ACCEPT_H0: ladder_pb2.SPRT_VERDICT_ACCEPT_H0,
    SprtDecision.ACCEPT_H1: ladder_pb2.SPRT_VERDICT_ACCEPT_H1,
}


def check_config(config: ladder_pb2.LadderConfig, out: list[FieldViolation]) -> None:
    """Fill in the test's defaults and its maximum as ``games_per_pairing``; flag what
    cannot be tested."""
    if config.format != ladder_pb2.LADDER_FORMAT_SPRT:
        if config.HasField("sprt"):
            out.append(FieldViolation("config.sprt", "is for the SPRT format only"))
        return
    test = config.sprt
    if len(config.bots) != 2:
        out.append(FieldViolation("config.bots", f"an SPRT test compares 2 bots (the new one "
                                                 f"first), got {len(config.bots)}"))
    if not test.elo0 and not test.elo1:
        test.elo1 = DEFAULT_ELO1
    bad_elo = False
    for name, elo in (("elo0", test.elo0), ("elo1", test.elo1)):
        if not -MAX_ELO <= elo <= MAX_ELO:  # NaN too: it compares false with everything
            out.append(FieldViolation(f"config.sprt.{name}",
                                      f"must be in -{MAX_ELO:g}..{MAX_ELO:g}, got {elo:g}"))
            bad_elo = True
    if not bad_elo and test.elo1 <= test.elo0:
        out.append(FieldViolation("config.sprt.elo1", f"must be greater than elo0 "
                                                      f"({test.elo0:g}), got {test.elo1:g}"))
    test.alpha = test.alpha or DEFAULT_ERROR_RATE
    test.beta = test.beta or DEFAULT_ERROR_RATE
    try:
        sprt_bounds(test.alpha, test.beta)
    except RatingError as exc:  # the message names alpha or beta
        out.append(FieldViolation("config.sprt", str(exc)))
    asked = test.max_games or DEFAULT_MAX_GAMES
    if not 2 <= asked <= MAX_GAMES:  # checked before it is rounded up: 2**31 - 1 overflowed
        out.append(FieldViolation("config.sprt.max_games",
                                  f"must be in 2..{MAX_GAMES}, got {asked}"))
        return
    test.max_games = even_games(asked, 0)
    config.games_per_pairing = test.max_games


def sprt_state(config: ladder_pb2.LadderConfig, members: Mapping[str, int],
               results: Mapping[str, ResultRecord]) -> ladder_pb2.SprtState:
    """The test on the counted results (``members``: match id -> the planned game it
    plays; the replay of a void game, when the ladder replays them, completes its pair)."""
    scores: dict[int, dict[int, float]] = {}  # pair -> game index -> the first bot's score
    for match_id, record in results.items():
        index = members.get(match_id)
        if index is None or record.score is None:
            continue
        first_bot_score = record.score if record.black == 0 else 1.0 - record.score
        scores.setdefault(index // 2, {})[index] = first_bot_score
    pairs = [list(games.values()) for games in scores.values() if len(games) == 2]
    counts = pentanomial(sum(pair) for pair in pairs)
    test = config.sprt
    result = sprt(counts, test.elo0, test.elo1, test.alpha, test.beta)
    singles = [score for pair in pairs for score in pair]
    return ladder_pb2.SprtState(
        llr=result.llr, lower_bound=result.lower_bound, upper_bound=result.upper_bound,
        verdict=_VERDICTS[result.decision], pairs=len(pairs),
        pentanomial=[round(counts[value]) for value in sorted(counts)],
        wins=singles.count(1.0), draws=singles.count(0.5), losses=singles.count(0.0))


def decided(state: ladder_pb2.SprtState) -> bool:
    return state.verdict in (ladder_pb2.SPRT_VERDICT_ACCEPT_H0,
                             ladder_pb2.SPRT_VERDICT_ACCEPT_H1)
