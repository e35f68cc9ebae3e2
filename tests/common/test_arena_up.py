"""`arena up` as a real process: everything answers health, SIGTERM leaves nothing behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from arena.services.common.server import check_health
from arena.services.web.server import check_http_health


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "zombie" not in status.read_text()


def _wait_for_manifest(path: Path, process: subprocess.Popen[bytes]) -> dict[str, object]:
    deadline = time.monotonic() + 120
    while not path.exists():
        assert process.poll() is None, "arena up exited early"
        assert time.monotonic() < deadline, "arena up did not come up in 120 s"
        time.sleep(0.1)
    return dict(json.loads(path.read_text()))


def _start_up(home: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "arena.clients", "up", "--workers", "2"],
        env=dict(os.environ, ARENA_HOME=str(home)),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )


def _wait_all_gone(pids: dict[str, int]) -> list[str]:
    deadline = time.monotonic() + 10
    while any(_alive(int(pid)) for pid in pids.values()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return [name for name, pid in pids.items() if _alive(int(pid))]


def test_arena_up_serves_health_and_sigterm_leaves_no_process(tmp_path: Path) -> None:
    process = _start_up(tmp_path)
    try:
        manifest = _wait_for_manifest(tmp_path / "stack.json", process)
        services = manifest["services"]
        assert isinstance(services, dict)
        assert set(services) == {"registry", "referee", "ladder", "worker-1", "worker-2"}
        for target in services.values():
            assert check_health(target)
        web = manifest["web"]  # the web gateway, for browsers
        assert isinstance(web, str) and web.startswith("http://127.0.0.1:")
        assert check_http_health(web.removeprefix("http://"))
        pids = manifest["pids"]
        assert isinstance(pids, dict) and len(pids) == 8
        process.send_signal(signal.SIGTERM)
        out, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, out.decode()
    assert b"stopped." in out
    assert _wait_all_gone(pids) == []
    assert not (tmp_path / "stack.json").exists()
    assert (tmp_path / "admin.token").stat().st_mode & 0o077 == 0


def test_a_killed_arena_up_takes_its_children_with_it(tmp_path: Path) -> None:
    process = _start_up(tmp_path)
    try:
        pids = _wait_for_manifest(tmp_path / "stack.json", process)["pids"]
        assert isinstance(pids, dict)
        process.kill()  # no chance to clean up: the children must notice on their own
        process.wait(timeout=10)
        leftovers = _wait_all_gone(pids)
    finally:
        for pid in (pids if "pids" in locals() else {}).values():
            if _alive(int(pid)):
                os.kill(int(pid), signal.SIGKILL)
    assert leftovers == []
