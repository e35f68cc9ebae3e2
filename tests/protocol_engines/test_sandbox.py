"""The sandbox itself: what a started process really gets (limits, namespace, folder,
environment, groups), and the fallbacks where the machine gives no cgroups. Where the
machine lacks a protection, the tests check that the protections report says so."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from arena.services.worker.engines.client import PlayLimits
from arena.services.worker.engines.failures import EngineFailure, FailureReason
from arena.services.worker.engines.pool import EnginePool
from arena.services.worker.engines.sandbox import (
    MARKER,
    Sandbox,
    SandboxedProcess,
    SandboxLimits,
)

from tests.protocol_engines.conftest import FakeSpec
from tests.protocol_engines.test_misbehaving import GOMOKU_AFTER_ONE

pytestmark = pytest.mark.usefixtures("no_orphans")
SLEEPER = [sys.executable, "-c", "import sys; sys.stdin.read()"]


@pytest.fixture
def bare_sandbox(sandbox: Sandbox) -> Sandbox:
    """The same machine as if it had no cgroups: the rlimit and marker fallbacks."""
    return Sandbox(replace(sandbox.protections, cgroups={}), root=sandbox.root)


def limits_of(pid: int) -> dict[str, str]:
    rows = Path(f"/proc/{pid}/limits").read_text().splitlines()[1:]
    return {row[:26].strip(): row[26:].split()[0] for row in rows}


def stop(process: SandboxedProcess) -> None:
    process.kill_all()
    process.release()


def test_a_process_gets_its_limits_folder_and_environment(sandbox: Sandbox) -> None:
    limits = SandboxLimits(memory_mb=200, cpu_s=50, open_files=32, processes=7, output_kb=99)
    process = sandbox.start(SLEEPER, limits, {"EXTRA": "1", MARKER: "forged"})
    try:
        pid = process.pid
        assert os.getpgid(pid) == pid and os.getsid(pid) == pid  # its own session
        found = limits_of(pid)
        assert found["Max cpu time"] == "50" and found["Max open files"] == "32"
        assert found["Max file size"] == str(99 << 10) and found["Max core file size"] == "0"
        environ = dict(item.split("=", 1) for item in
                       Path(f"/proc/{pid}/environ").read_text().split("\0") if "=" in item)
        assert environ["HOME"] == str(process.workdir) == environ["TMPDIR"]
        assert environ[MARKER] == process.sandbox_id != "forged"
        assert environ["EXTRA"] == "1" and "ARENA_TOKEN" not in environ
        assert Path(f"/proc/{pid}/cwd").resolve() == process.workdir.resolve()
        protections = sandbox.protections
        if "memory" in protections.cgroups:
            assert process.cgroup is not None
            hierarchy, group = process.cgroup.groups["memory"]
            name = "memory.limit_in_bytes" if hierarchy.version == 1 else "memory.max"
            assert int((group / name).read_text()) == 200 << 20
            assert pid in process.cgroup.pids()
        else:
            assert found["Max address space"] == str(200 << 20)
        if protections.network_isolated:
            assert os.readlink(f"/proc/{pid}/ns/net") != os.readlink("/proc/self/ns/net")
    finally:
        stop(process)
    assert not process.workdir.exists()


def test_the_report_says_what_is_active(sandbox: Sandbox) -> None:
    report = "\n".join(sandbox.protections.describe())
    assert ("network: isolated" in report) == sandbox.protections.network_isolated
    assert ("memory: cgroup" in report) == ("memory" in sandbox.protections.cgroups)
    if "pids" not in sandbox.protections.cgroups and os.geteuid() == 0:
        assert "processes: NOT limited" in report


def test_the_process_cap(sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    """An engine that starts many processes hits its cap (where the machine has one)."""
    if "pids" not in sandbox.protections.cgroups and os.geteuid() == 0:
        assert "processes: NOT limited" in "\n".join(sandbox.protections.describe())
        return
    forker = [sys.executable, "-c",
              "import subprocess, sys\n"
              "quiet = dict(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)\n"
              "kids = [subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'],"
              " **quiet) for _ in range(12)]\nprint('all started', flush=True)\n"]
    process = sandbox.start(forker, SandboxLimits(processes=4))
    try:
        assert process.popen.wait(timeout=60) != 0
        assert b"all started" not in (process.popen.stdout.read() if process.popen.stdout
                                      else b"")
    finally:
        stop(process)


def test_without_cgroups_memory_is_capped_by_the_address_space_limit(
        bare_sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    pool = EnginePool(bare_sandbox)
    try:
        with pytest.raises(EngineFailure) as caught:
            pool.play(fake_spec("gomocup", "memory", memory_mb=128), GOMOKU_AFTER_ONE, [112],
                      PlayLimits(10_000))
        assert caught.value.reason is FailureReason.MEMORY_LIMIT
        assert "MemoryError" in caught.value.stderr_tail
    finally:
        pool.close()


def test_without_cgroups_escaped_children_are_found_by_their_marker(
        bare_sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    pool = EnginePool(bare_sandbox)
    try:
        pool.play(fake_spec("gomocup", "escape"), GOMOKU_AFTER_ONE, [112], PlayLimits(5000))
    finally:
        pool.close()  # no_orphans checks the escaped child is gone


def test_a_worker_removes_the_groups_of_dead_workers(sandbox: Sandbox) -> None:
    if not sandbox.protections.cgroups:
        assert "no writable cgroup" in sandbox.protections.cgroup_note
        return
    # A child process makes a group and dies: its group is stale.
    hierarchy = next(iter(sandbox.protections.cgroups.values()))
    pid = os.fork()
    if pid == 0:
        (hierarchy.parent / f"arena-engine-{os.getpid()}-1").mkdir()
        os._exit(0)
    os.waitpid(pid, 0)
    stale = hierarchy.parent / f"arena-engine-{pid}-1"
    assert stale.is_dir()
    fresh = Sandbox(sandbox.protections, root=sandbox.root)
    assert fresh.stale_groups_removed >= 1 and not stale.exists()


def test_a_command_that_cannot_start_leaves_nothing(sandbox: Sandbox) -> None:
    before = set(sandbox.root.iterdir())
    with pytest.raises(OSError):
        sandbox.start(["/nonexistent/engine"], SandboxLimits())
    time.sleep(0.01)
    assert set(sandbox.root.iterdir()) == before
