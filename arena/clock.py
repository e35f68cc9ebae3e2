"""A game's clock: what is left of a side's game budget, as the referee charges it (it
sizes each move's limit from it) and as the pages show it."""

from __future__ import annotations

from collections.abc import Iterable

from arena.games import PASS
from arena.v1 import common_pb2, match_pb2


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
