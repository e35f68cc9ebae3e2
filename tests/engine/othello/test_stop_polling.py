"""The time limit's mechanism, tested directly: how often the kernels look at the stop flag
and the clock, that a raised flag or a passed deadline ends them at the next look, and that
searches which cannot finish end at the deadline (lateness measured as in timing.py)."""

from __future__ import annotations

import time
from functools import partial

import numpy as np
import pytest

from arena.engine.othello import PRESETS, warm_up
from arena.engine.othello.bitboard import parse_position
from arena.engine.othello.budget import TimeBudget
from arena.engine.othello.config import compile_config
from arena.engine.othello.endgame import EndgameSolver
from arena.engine.othello.engine import search_template
from arena.engine.othello.search import (
    POLL_NODES,
    ST_ABORTED,
    ST_DEADLINE,
    ST_NODES,
    ST_POLLS,
    SearchBuffers,
)
from tests.engine.othello.conftest import random_boards, read_obf
from tests.engine.othello.timing import Overshoots

MIDGAME = [b for b in random_boards(200, seed=17) if 30 <= b.empties <= 50][:8]
# Positions the solver cannot finish within the limits used here (24-26 empties).
DEEP_ENDGAMES = [text for text, _ in read_obf("fforum-20-39.obf")[18:20]]
ARENA = compile_config({**PRESETS["arena-fast"], "endgame_empties": 0})
_BUFFERS = SearchBuffers(tt_bits=16)


def _no_stop() -> np.ndarray:
    return np.zeros(1, dtype=np.int64)


def _midgame(text_index: int, depth: int, stop_ext: np.ndarray, deadline: int) -> np.ndarray:
    """The state after one iteration at ``depth`` plies (nodes, polls, aborted)."""
    pos = parse_position(MIDGAME[text_index].to_text())
    template = search_template(ARENA, pos, TimeBudget("wall", 0))
    template[ST_DEADLINE] = deadline
    _BUFFERS.deepen(pos.player, pos.opponent, pos.turn, (depth, depth), pos.empties(), -1, 0,
                    0, False, ARENA.params, template, stop_ext)
    return _BUFFERS.st.copy()


def _endgame(text: str, stop_ext: np.ndarray, deadline: int, node_limit: int = 0) -> np.ndarray:
    pos = parse_position(text)
    _, st = _SOLVER.solve(pos.player, pos.opponent, -64, 64, node_limit, stop_ext, deadline)
    return st


_SOLVER = EndgameSolver(tt_bits=16)


def test_kernels_look_at_flag_and_clock_every_poll_interval() -> None:
    for index in range(3):
        st = _midgame(index, 7, _no_stop(), 0)
        assert st[ST_NODES] > 3 * POLL_NODES
        # One look at the first node, then one per POLL_NODES nodes.
        assert st[ST_POLLS] == 1 + (st[ST_NODES] - 1) // POLL_NODES
    # The solver looks at nodes with many empties only; a subtree of <= 6 empties in between
    # has well under POLL_NODES nodes, so the gap stays below two intervals.
    for text, _ in read_obf("fforum-1-19.obf")[:4]:
        st = _endgame(text, _no_stop(), 0)
        assert st[ST_NODES] > 3 * POLL_NODES
        assert st[ST_POLLS] >= st[ST_NODES] // (2 * POLL_NODES)


def test_raised_flag_or_passed_deadline_stops_at_the_first_look() -> None:
    raised = np.ones(1, dtype=np.int64)
    passed = time.monotonic_ns() - 1
    for st in (
        _midgame(0, 8, raised, 0),
        _midgame(0, 8, _no_stop(), passed),
        _endgame(DEEP_ENDGAMES[0], raised, 0),
        _endgame(DEEP_ENDGAMES[0], _no_stop(), passed),
    ):
        assert st[ST_ABORTED] == 1 and st[ST_NODES] == 1


@pytest.mark.parametrize("limit_ms", [20, 60])
def test_searches_that_cannot_finish_end_at_the_deadline(limit_ms: int) -> None:
    warm_up()

    def midgame(index: int) -> np.ndarray:
        return _midgame(index, 60, _no_stop(), time.monotonic_ns() + limit_ms * 1_000_000)

    def endgame(text: str) -> np.ndarray:
        return _endgame(text, _no_stop(), time.monotonic_ns() + limit_ms * 1_000_000)

    overshoots = Overshoots(limit_ms)
    for index in range(len(MIDGAME)):
        assert overshoots.measure(partial(midgame, index))[ST_ABORTED] == 1
    for text in DEEP_ENDGAMES * 2:
        assert overshoots.measure(partial(endgame, text))[ST_ABORTED] == 1
    overshoots.check(min_bound=len(overshoots.wall))
