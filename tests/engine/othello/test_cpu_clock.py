"""Time limits on the searching thread's CPU clock (``Limits(clock="cpu")``).

Each test that needs a loaded machine starts a bounded CPU hog: one busy-looping process per
core, which stops by itself after a few seconds and is killed when the test ends. Under it,
CPU-clocked searches end within their budget of thread CPU time, wall-clocked ones still stop
at the wall deadline, and fixed-depth searches return exactly what they return on an idle
machine.
"""

from __future__ import annotations

import statistics
import time

import pytest

from arena.engine.api import Limits
from arena.engine.othello import PASS, PRESETS, choose_move, solve, warm_up
from arena.engine.othello.budget import TimeBudget, stop_margin_ns
from tests.engine.othello.conftest import random_boards, read_obf
from tests.support.load import cpu_hog, frozen_heap

_BOARDS = [b for b in random_boards(3000, seed=41) if b.legal_moves() != [PASS]]
MIDGAME = [b.to_text() for b in _BOARDS if 24 <= b.empties <= 48][:10]
ENDGAME = [b.to_text() for b in _BOARDS if 19 <= b.empties <= 22][:6]
UNLIMITED = {**PRESETS["arena-strong"], "time_ms": 600_000}
def test_the_stop_margin_is_small_and_never_eats_the_limit() -> None:
    assert stop_margin_ns(1_000_000) == 500_000
    assert 2_000_000 <= stop_margin_ns(100_000_000) <= 4_000_000
    assert stop_margin_ns(2_000_000_000) <= 0.05 * 2_000_000_000
    with pytest.raises(ValueError, match="clock"):
        TimeBudget.start("sundial", 100)  # type: ignore[arg-type]


def test_every_search_reports_its_thread_cpu_time() -> None:
    warm_up()
    for clock in ("wall", "cpu"):
        started = time.thread_time()
        result = choose_move(MIDGAME[0], UNLIMITED, Limits(depth=6, clock=clock))
        spent_ms = (time.thread_time() - started) * 1000
        assert 0 < result.cpu_ms <= spent_ms
    text, _ = read_obf("fforum-1-19.obf")[0]
    assert solve(text, limits=Limits(clock="cpu")).cpu_ms > 0


def test_cpu_clocked_searches_stay_within_their_budget_under_load() -> None:
    warm_up()
    limit_ms = 60
    used: list[float] = []
    with frozen_heap(), cpu_hog(seconds=20.0):  # frozen: a worker's heap is (frozen_heap)
        for text in MIDGAME + ENDGAME:
            started = time.thread_time()
            result = choose_move(text, UNLIMITED, Limits(time_ms=limit_ms, clock="cpu"))
            spent_ms = (time.thread_time() - started) * 1000
            assert spent_ms < limit_ms, (text, spent_ms)
            if result.cut_short:
                used.append(spent_ms)
    # The searches did run on their CPU budget (not stopped early by the wall clock):
    # those the limit cut used at least the 45% share past which no iteration starts.
    assert used and min(used) >= 0.4 * limit_ms, used


def test_wall_clocked_searches_still_stop_at_the_wall_deadline_under_load() -> None:
    warm_up()
    limit_ms = 60
    config = {**UNLIMITED, "endgame_empties": 0}
    late: list[float] = []  # of the searches that ran into the deadline
    with cpu_hog(seconds=20.0):
        for board in _BOARDS[::10]:
            result = choose_move(board.to_text(), config, Limits(time_ms=limit_ms))
            assert result.elapsed_ms <= 5 * limit_ms
            # Many stop early (no new iteration past 45% of the limit); the others stop
            # at the deadline, on the wall clock although they had less CPU than that.
            if result.elapsed_ms >= 0.85 * limit_ms:
                late.append(result.elapsed_ms - limit_ms)
            if len(late) >= 6:
                break
    # The scheduler may run a sample late; the median stops at the deadline.
    assert len(late) >= 6 and statistics.median(late) <= 10, sorted(late)


def test_fixed_depth_results_do_not_depend_on_load() -> None:
    warm_up()
    searches = [(text, "arena-strong", 5) for text in MIDGAME[:6]]
    searches += [(text, "terra", 6) for text in MIDGAME[6:]]
    searches += [(text, "arena-strong", 4) for text in ENDGAME[:2]]

    def run() -> list[tuple[int, int, int, int]]:
        out = []
        for text, preset, depth in searches:
            # The bot's own clock (KReversi's 3 s, arena-strong's 2 s) counts CPU time too.
            result = choose_move(text, PRESETS[preset], Limits(depth=depth, clock="cpu"))
            assert not result.cut_short, (text, preset)
            out.append((result.move, result.score, result.depth, result.nodes))
        return out

    idle = run()
    with cpu_hog(seconds=20.0):
        loaded = run()
    assert loaded == idle
