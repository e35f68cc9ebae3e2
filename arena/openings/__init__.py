"""Opening suites for ladders: balanced Othello positions, international Reversi, Gomoku."""

from __future__ import annotations

from arena.openings.othello import canonical_key, distinct_openings
from arena.openings.suites import (
    CUSTOM,
    MAX_CUSTOM_MOVES,
    MAX_CUSTOM_OPENINGS,
    SUITE_NAMES,
    Opening,
    OpeningMoveError,
    OpeningSuite,
    UnknownSuiteError,
    custom_suite,
    load_suite,
    move_words,
    play_opening,
    select_openings,
    start_position_after,
)

__all__ = [
    "CUSTOM",
    "MAX_CUSTOM_MOVES",
    "MAX_CUSTOM_OPENINGS",
    "SUITE_NAMES",
    "Opening",
    "OpeningMoveError",
    "OpeningSuite",
    "UnknownSuiteError",
    "canonical_key",
    "custom_suite",
    "distinct_openings",
    "load_suite",
    "move_words",
    "play_opening",
    "select_openings",
    "start_position_after",
]
