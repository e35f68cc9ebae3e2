"""The search kernels release the interpreter lock: threads search side by side.

Measured per thread with schedstat (see ``threadtime``): a thread that waits for the
interpreter lock is *blocked*; one that only waits for a busy core is not. So these
checks hold on a loaded machine, and fail at once when a kernel keeps the lock (then
one search blocks for about as long as the other runs).
"""

from __future__ import annotations

import threading

import pytest

from arena.engine.api import Limits, SearchResult
from arena.engine.gomoku import PRESETS, choose_move, warm_up

from .positions import SHARED
from .threadtime import Span, ThreadTimes

OPENINGS = SHARED / "balanced-openings-freestyle15.txt"
# Allowed share of blocked time: the Python prologue and epilogue of a search take the
# lock, and a spinning Python thread hands it over only every switch interval (5 ms).
BLOCKED_SHARE = 0.25


def opening(index: int) -> list[int]:
    line = [row for row in OPENINGS.read_text().splitlines() if not row.startswith("#")][index]
    pairs = [pair.split(",") for pair in line.split("|")[1].split()]
    return [int(y) * 15 + int(x) for x, y in pairs]


# Fixed searches of about half a second of CPU each on this machine (arena-gomoku version
# 7: 0.39 s at depth 10; at depth 8 it had come down to 0.05-0.07 s, too short to tell).
SEARCHES = {
    "arena-gomoku": (opening(1), PRESETS["arena-gomoku"], Limits(depth=10)),
    "sharpmoku": (opening(0), {"evaluator": "sharpmoku", "depth": 5}, Limits()),
}


@pytest.fixture(scope="module", autouse=True)
def compiled() -> None:
    warm_up()


def _timed_search(name: str, start: threading.Barrier, out: dict[str, object]) -> None:
    moves, config, limits = SEARCHES[name]
    start.wait()
    with Span() as times:
        out["result"] = choose_move(15, "freestyle", moves, config, limits)
    out["times"] = times


@pytest.mark.parametrize("pair", [("arena-gomoku", "arena-gomoku"), ("arena-gomoku", "sharpmoku")])
def test_two_searches_in_two_threads_run_at_once(pair: tuple[str, str]) -> None:
    alone = [choose_move(15, "freestyle", *SEARCHES[name]) for name in pair]
    start = threading.Barrier(len(pair))
    reports: list[dict[str, object]] = [{} for _ in pair]
    threads = [threading.Thread(target=_timed_search, args=(name, start, report))
               for name, report in zip(pair, reports, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for name, report, single in zip(pair, reports, alone, strict=True):
        times = report["times"]
        result = report["result"]
        assert isinstance(times, ThreadTimes) and isinstance(result, SearchResult)
        assert times.cpu > 0.05, (name, times)  # a real search, not an instant answer
        # Wall time is CPU time plus waiting for a core, not waiting for the other search.
        assert times.blocked < BLOCKED_SHARE * times.cpu, (name, times)
        assert (result.move, result.score, result.nodes) == (single.move, single.score,
                                                              single.nodes)


@pytest.mark.parametrize("name", sorted(SEARCHES))
def test_a_python_thread_keeps_running_during_a_search(name: str) -> None:
    done = threading.Event()

    def search() -> None:
        choose_move(15, "freestyle", *SEARCHES[name])
        done.set()

    searcher = threading.Thread(target=search)
    count = 0
    with Span() as counter:
        searcher.start()
        while not done.is_set():
            count += 1
    searcher.join()
    assert counter.wall > 0.05, counter
    assert counter.blocked < BLOCKED_SHARE * counter.wall, counter
    assert count > 10_000
