"""A game's clock: what is left of a side's game budget, as the referee charges it (it
sizes each move's limit from it) and as the pages show it; a clock as a key and in words."""

from __future__ import annotations

from collections.abc import Iterable

from arena.games import PASS
from arena.v1 import common_pb2, match_pb2

DEFAULT_MOVE_TIME_MS = 1000  # a time control's move time of 0
MAX_MOVE_TIME_MS = 600_000
MAX_GRACE_MS = 10_000

ClockKey = tuple[int, int, int]  # move time, game budget, increment (ms)


def clock_key(tc: common_pb2.TimeControl) -> ClockKey:
    """What makes two games' clocks the same: move time (0 is the default), game budget
    and increment; grace is a tolerance, not part of the clock."""
    return (tc.move_time_ms or DEFAULT_MOVE_TIME_MS, tc.game_time_ms, tc.increment_ms)


def clock_problems(tc: common_pb2.TimeControl) -> list[tuple[str, str]]:
    """What makes ``tc`` no clock a game may have, as (its field, the problem); a move time
    of 0 is the default."""
    problems = []
    move = tc.move_time_ms or DEFAULT_MOVE_TIME_MS
    if not 1 <= move <= MAX_MOVE_TIME_MS:
        problems.append(("move_time_ms", f"must be in 1..{MAX_MOVE_TIME_MS}, got {move}"))
    if tc.game_time_ms < 0:
        problems.append(("game_time_ms", "must not be negative"))
    if not 0 <= tc.increment_ms <= MAX_MOVE_TIME_MS:
        problems.append(("increment_ms",
                         f"must be in 0..{MAX_MOVE_TIME_MS}, got {tc.increment_ms}"))
    elif tc.increment_ms and tc.game_time_ms <= 0:
        problems.append(("increment_ms", "is added to the game budget: give game_time_ms too"))
    if not 0 <= tc.grace_ms <= MAX_GRACE_MS:
        problems.append(("grace_ms", f"must be in 0..{MAX_GRACE_MS}, got {tc.grace_ms}"))
    return problems


def clock_of(key: ClockKey) -> common_pb2.TimeControl:
    return common_pb2.TimeControl(move_time_ms=key[0], game_time_ms=key[1],
                                  increment_ms=key[2])


def clock_label(tc: common_pb2.TimeControl) -> str:
    """``1,000 ms a move`` or ``1,000 ms a move, 60,000 ms a game + 500 ms a move``."""
    move, budget, increment = clock_key(tc)
    text = f"{move:,} ms a move"
    if budget > 0:
        text += f", {budget:,} ms a game"
        if increment:
            text += f" + {increment:,} ms a move"
    return text


def change_ms(tc: common_pb2.TimeControl, record: match_pb2.MoveRecord) -> int:
    """What a recorded move does to its side's budget: the increment (a pass the referee
    played for it earns none), less the time charged for it."""
    earned = tc.increment_ms if record.move.square != PASS else 0
    return earned - int(record.charged_ms or record.time_ms)


def game_time_left_ms(tc: common_pb2.TimeControl, records: Iterable[match_pb2.MoveRecord],
                      color: common_pb2.Color.ValueType) -> int:
    """The side's budget (``game_time_ms``) changed by each of its moves (``change_ms``);
    0 when the match has no game budget."""
    if tc.game_time_ms <= 0:
        return 0
    left = tc.game_time_ms + sum(change_ms(tc, r) for r in records if r.color == color)
    return max(0, left)
