"""Time limits on the wall clock or the searching thread's CPU clock, under load.

Every search here runs while busy processes keep both cores loaded (``hog``): a
CPU-clocked search must still get its whole budget and end under it, a wall-clocked one
must still stop at the wall deadline, and fixed-depth searches must not change at all.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from arena.engine.api import Limits, SearchResult
from arena.engine.gomoku import PRESETS, choose_move, warm_up
from arena.engine.gomoku.bots import SOFT_TIME_SHARE
from arena.engine.gomoku.budget import STOP_MARGIN_MS, stop_margin_ns
from tests.support.load import cpu_hog, frozen_heap

from .test_concurrency import opening
from .threadtime import Span

ARENA = PRESETS["arena-gomoku"]



@dataclass(frozen=True)
class TimedCase:
    config: dict[str, object]
    time_ms: int
    used_share: float  # the least share of the limit the bot uses before it stops
    openings: list[list[int]]  # where the bot is still searching when the time runs out


TIMED = {
    # Iterative deepening starts no iteration after its soft share of the time.
    "arena-gomoku": TimedCase(ARENA, 300, SOFT_TIME_SHARE, [opening(3), opening(8),
                                                           opening(11)]),
    # SharpMoku at its deepest level stops only at the deadline.
    "sharpmoku-6": TimedCase({"evaluator": "sharpmoku", "depth": 6}, 200, 0.9,
                             [opening(0), opening(2), opening(4)]),
}
FIXED = [
    (opening(1), ARENA, Limits(depth=6)),
    (opening(4), ARENA, Limits(depth=5)),
    (opening(0), PRESETS["sharpmoku-hard"], Limits()),
    (opening(5), {"evaluator": "sharpmoku", "depth": 5}, Limits()),
]


def _fixed_results() -> list[tuple[int, int, int, int, list[int]]]:
    results = [choose_move(15, "freestyle", moves, config, limits)
               for moves, config, limits in FIXED]
    return [(r.move, r.score, r.depth, r.nodes, r.pv) for r in results]


@pytest.fixture(scope="module")
def idle_fixed_results() -> list[tuple[int, int, int, int, list[int]]]:
    warm_up()
    return _fixed_results()


@pytest.fixture(scope="module")
def loaded(idle_fixed_results: object) -> Iterator[None]:
    """Both cores busy for the tests of this module (the idle results are taken first),
    and the heap frozen (``frozen_heap``: a worker's is, and a collection of this test
    process's heap would be charged to the search it falls in)."""
    with frozen_heap(), cpu_hog(seconds=60.0):
        yield


def _timed(moves: list[int], config: dict[str, object], limits: Limits) -> tuple[
    SearchResult, float, float, dict[str, float]
]:
    """The result, this thread's CPU ms around the call, its run-queue wait in ms, and
    where its CPU time went (``ThreadTimes.costs``, for the failure messages)."""
    with Span() as span:
        result = choose_move(15, "freestyle", moves, config, limits)
    return result, span.cpu * 1000, span.waited * 1000, span.costs


@pytest.mark.parametrize("name", sorted(TIMED))
def test_cpu_clocked_searches_get_their_budget_and_end_within_it(loaded: None, name: str) -> None:
    case = TIMED[name]
    waited = 0.0
    for moves in case.openings:
        limits = Limits(time_ms=case.time_ms, clock="cpu")
        result, cpu_ms, run_wait, costs = _timed(moves, case.config, limits)
        waited += run_wait
        assert result.cut_short, result  # the limit, not the search, ended it
        assert 0 < result.cpu_ms <= cpu_ms <= case.time_ms, (result, cpu_ms, costs)
        # On the CPU clock the load takes nothing from the search.
        assert cpu_ms >= case.used_share * case.time_ms, (result, cpu_ms)
    assert waited > 0, "the hog did not load the machine"


@pytest.mark.parametrize("name", sorted(TIMED))
def test_wall_clocked_searches_still_stop_at_the_wall_deadline(loaded: None, name: str) -> None:
    case = TIMED[name]
    for moves in case.openings:
        result, cpu_ms, run_wait, _costs = _timed(moves, case.config,
                                                  Limits(time_ms=case.time_ms))
        assert result.cut_short and result.cpu_ms <= cpu_ms
        assert result.elapsed_ms >= case.used_share * case.time_ms, result
        # Late only by the time the machine kept this thread waiting for a core.
        assert result.elapsed_ms <= case.time_ms + run_wait + 20, (result, run_wait)


def test_fixed_depth_results_do_not_change_under_load(
    loaded: None, idle_fixed_results: list[tuple[int, int, int, int, list[int]]]
) -> None:
    assert _fixed_results() == idle_fixed_results


def test_every_search_reports_its_cpu_time() -> None:
    for moves, config, limits in FIXED[:1] + FIXED[2:3]:
        with Span() as span:
            result = choose_move(15, "freestyle", moves, config, limits)
        assert 0 < result.cpu_ms <= span.cpu * 1000
    opened = choose_move(15, "freestyle", [], ARENA, Limits())
    assert opened.cpu_ms >= 0 and opened.move == 112


def test_the_stop_margin() -> None:
    assert stop_margin_ns(1000) == (STOP_MARGIN_MS + 20) * 1_000_000
    assert stop_margin_ns(4) == 2_000_000  # never more than half the limit
