"""FairSlots: a freed slot goes to the caller that has waited longest, never to one that
came later, however fast it asks."""

from __future__ import annotations

import threading
import time

from arena.services.common.shares import FairSlots


def test_a_waiting_caller_is_never_overtaken() -> None:
    slots = FairSlots(1)
    assert slots.acquire(0)
    got: list[str] = []
    waiter = threading.Thread(target=lambda: got.append("waiter" if slots.acquire(10) else ""))
    waiter.start()
    deadline = time.monotonic() + 10
    while not slots._queue:  # the waiter is queued (however busy the machine)
        assert time.monotonic() < deadline
        time.sleep(0.01)
    slots.release()
    # A newcomer asking the instant the slot is freed (threading.Semaphore would give it
    # the slot before the waiter woke up) finds the waiter ahead of it.
    assert not slots.acquire(0)
    waiter.join(10)
    assert got == ["waiter"]
    assert not slots.acquire(0.1)  # the waiter holds it
    slots.release()
    assert slots.acquire(0)


def test_a_caller_that_gives_up_leaves_the_queue() -> None:
    slots = FairSlots(1)
    assert slots.acquire(0)
    assert not slots.acquire(0.1)  # timed out: not left at the head, blocking the next
    slots.release()
    assert slots.acquire(0)
