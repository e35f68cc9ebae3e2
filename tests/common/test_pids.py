"""Stamped pids: a pid with its start time names one process, never a later holder."""

from __future__ import annotations

import os
import subprocess

from arena.services.common import pids


def test_a_stamp_names_its_process_while_it_runs_and_nothing_after() -> None:
    child = subprocess.Popen(["sleep", "60"])
    try:
        stamped = pids.stamp(child.pid)
        assert pids.running(stamped) == child.pid
        child.kill()
        child.wait()
    finally:
        if child.poll() is None:
            child.kill()
    assert pids.running(stamped) is None


def test_a_zombie_is_not_running() -> None:
    child = subprocess.Popen(["true"])
    stamped = pids.stamp(child.pid)
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # ended, not yet reaped
    assert pids.start_of(child.pid) is None and pids.running(stamped) is None
    child.wait()


def test_the_same_pid_with_another_start_is_another_process() -> None:
    """What a reused pid looks like: the number runs, the stamp's start is not its own."""
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        start = pids.start_of(bystander.pid)
        assert start is not None
        stale = f"{bystander.pid} {start - 1}"
        assert pids.running(stale) is None
        assert pids.send(stale) is False
        assert bystander.poll() is None  # not signalled
        assert pids.send(pids.stamp(bystander.pid)) is True
        assert bystander.wait(timeout=10) == -15
    finally:
        if bystander.poll() is None:
            bystander.kill()


def test_anything_but_a_stamp_names_no_process() -> None:
    for junk in (None, "", "garbage", str(os.getpid()), f"{os.getpid()} x", 12, "1 2 3"):
        assert pids.running(junk) is None
    assert pids.running(pids.stamp()) == os.getpid()
