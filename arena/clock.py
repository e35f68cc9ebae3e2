"""A game's clock: what is left of a side's game budget, as the referee charges it (it
sizes each move's limit from it) and as the pages show it."""

from __future__ import annotations

from collections.abc import Iterable

from arena.games import PASS
from arena.v1 import common_pb2, match_pb2


def game_time_left_ms(tc: common_pb2.TimeControl, records: Iterable[match_pb2.MoveRecord],
                      color: common_pb2.Color.ValueType) -> int:
    """The side's budget (``game_time_ms``), plus the increment for each move it made (a
    pass the referee played for it earns none), less the time charged for its moves; 0
    when the match has no game budget."""
    if tc.game_time_ms <= 0:
        return 0
    left = tc.game_time_ms
    for record in records:
        if record.color == color:
            left += (tc.increment_ms if record.move.square != PASS else 0) - (
                record.charged_ms or record.time_ms)
    return max(0, int(left))
