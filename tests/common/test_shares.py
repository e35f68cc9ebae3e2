"""FairSlots: a freed slot goes to the caller that has waited longest, never to one that
came later, however fast it asks. Turns: each holder's calls queue in a line of their own,
bounded in how many may wait."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from arena.services.common.shares import FairSlots, Refusal, Turns


def _until(condition: Callable[[], bool]) -> None:
    """Wait (however busy the machine) until ``condition`` holds."""
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_a_waiting_caller_is_never_overtaken() -> None:
    slots = FairSlots(1)
    assert slots.acquire(0) is None
    got: list[str] = []
    waiter = threading.Thread(
        target=lambda: got.append("waiter" if slots.acquire(10) is None else ""))
    waiter.start()
    _until(lambda: bool(slots._queue))  # the waiter is queued
    slots.release()
    # A newcomer asking the instant the slot is freed (threading.Semaphore would give it
    # the slot before the waiter woke up) finds the waiter ahead of it.
    assert slots.acquire(0) is Refusal.LATE
    waiter.join(10)
    assert got == ["waiter"]
    assert slots.acquire(0.1) is Refusal.LATE  # the waiter holds it
    slots.release()
    assert slots.acquire(0) is None


def test_a_caller_that_gives_up_leaves_the_queue() -> None:
    slots = FairSlots(1)
    assert slots.acquire(0) is None
    assert slots.acquire(0.1) is Refusal.LATE  # timed out: not left at the head
    slots.release()
    assert slots.acquire(0) is None


def test_a_full_line_refuses_at_once() -> None:
    turns = Turns(waiting=1)
    assert turns.take("alice", 1, 0) is None
    waiter = threading.Thread(target=turns.take, args=("alice", 1, 10))
    waiter.start()
    _until(lambda: bool(turns._lines["alice"][0]._queue))
    started = time.monotonic()
    assert turns.take("alice", 1, 10) is Refusal.QUEUE
    assert time.monotonic() - started < 5  # not after its timeout
    turns.give_back("alice")
    waiter.join(10)
    assert turns.take("alice", 1, 0.05) is Refusal.LATE  # room to wait, no slot
    turns.give_back("alice")
    assert turns.holders() == 0


def test_all_lines_together_hold_at_most_so_many_waiting_calls() -> None:
    """A waiting call holds a server thread: however many holders, at most
    ``most_waiting`` wait at once; past that a call that would wait is refused at once,
    while one that can run at once still runs."""
    turns = Turns(waiting=4, most_waiting=3)
    for holder in ("alice", "bob"):
        assert turns.take(holder, 1, 0) is None
    waiters = [threading.Thread(target=turns.take, args=(holder, 1, 10))
               for holder in ("alice", "alice", "bob")]
    for thread in waiters:
        thread.start()
    _until(lambda: sum(len(line._queue) for line, _ in turns._lines.values()) == 3)
    started = time.monotonic()
    assert turns.take("bob", 1, 10) is Refusal.TOTAL
    assert turns.take("carol", 1, 10) is None  # runs at once: waits for nobody
    assert time.monotonic() - started < 5
    assert turns.take("carol", 1, 10) is Refusal.TOTAL
    # A call that ends makes room: the first of alice's waiting runs, and one may wait.
    turns.give_back("alice")
    _until(lambda: sum(len(line._queue) for line, _ in turns._lines.values()) == 2)
    waiter = threading.Thread(target=turns.take, args=("carol", 1, 10))
    waiter.start()
    _until(lambda: sum(len(line._queue) for line, _ in turns._lines.values()) == 3)
    for holder in ("alice", "alice", "bob", "bob", "carol", "carol"):
        turns.give_back(holder)
    for thread in (*waiters, waiter):
        thread.join(10)
    assert turns.holders() == 0 and turns._waiting == 0


def test_each_holder_waits_in_its_own_line() -> None:
    turns = Turns(waiting=2)
    order: list[str] = []

    def call(holder: str, name: str) -> None:
        if turns.take(holder, 1, 10) is None:
            order.append(name)
            turns.give_back(holder)

    assert turns.take("alice", 1, 0) is None  # alice's one call at once runs
    waiting = [threading.Thread(target=call, args=("alice", f"alice-{n}")) for n in (2, 3)]
    for queued, thread in enumerate(waiting, 1):
        thread.start()
        _until(lambda queued=queued: len(turns._lines["alice"][0]._queue) == queued)
    # Two wait (twice her share); a third is refused at once, not queued.
    assert turns.take("alice", 1, 10) is Refusal.QUEUE
    # Bob does not queue behind alice's line.
    assert turns.take("bob", 1, 0) is None
    turns.give_back("bob")
    assert turns.holders() == 1
    turns.give_back("alice")
    for thread in waiting:
        thread.join(10)
    assert order == ["alice-2", "alice-3"]  # in the order they came
    assert turns.holders() == 0  # lines of holders with nothing running are dropped


def test_a_share_of_two_runs_two_at_once() -> None:
    turns = Turns(waiting=1)
    assert turns.take("carol", 2, 0) is None
    assert turns.take("carol", 2, 0) is None
    assert turns.take("carol", 2, 0.05) is Refusal.LATE
    turns.give_back("carol")
    assert turns.take("carol", 2, 0) is None
