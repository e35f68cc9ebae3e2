"""Opening suites for ladders: balanced Othello positions, international Reversi, Gomoku."""

from __future__ import annotations

from arena.openings.othello import canonical_key, distinct_openings
from arena.openings.suites import (
    SUITE_NAMES,
    Opening,
    OpeningSuite,
    UnknownSuiteError,
    load_suite,
    select_openings,
    start_position_after,
)

__all__ = [
    "SUITE_NAMES",
    "Opening",
    "OpeningSuite",
    "UnknownSuiteError",
    "canonical_key",
    "distinct_openings",
    "load_suite",
    "select_openings",
    "start_position_after",
]
