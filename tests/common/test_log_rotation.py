"""A long-running stack's logs stay bounded: a referee's line a move filled 14.6 MB in
half an hour of an outsider's ladders, and nothing ever cut it. ``arena up``'s supervising
loop moves a log past its bound to NAME.log.1 and begins it again, while its process
writes on."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from arena.services.common.launcher import Launcher, Process

WRITER = """
import sys, time
n = 0
while True:
    sys.stdout.write(f"line {n:08d} " + "x" * 100 + "\\n")
    sys.stdout.flush()
    n += 1
    if n % 20 == 0:
        time.sleep(0.01)
"""


def test_a_log_past_its_bound_is_rotated_while_its_process_writes(tmp_path: Path) -> None:
    launcher = Launcher(home=tmp_path, workers=1, log_max_bytes=64 << 10)
    log = tmp_path / "logs" / "chatty.log"
    log.parent.mkdir(parents=True)
    process = Process("chatty", "referee", [], tmp_path / "chatty.port", log)
    with open(log, "ab") as out:  # as the launcher starts every service
        process.popen = subprocess.Popen([sys.executable, "-c", WRITER], stdout=out)
    launcher.processes["chatty"] = process
    try:
        rotated = log.with_name("chatty.log.1")
        deadline = time.monotonic() + 30
        while not rotated.exists():
            assert time.monotonic() < deadline, "the log was never rotated"
            launcher._next_log_check = 0.0  # the loop checks every few seconds
            assert launcher.supervise_once() == []  # the writer lives: nothing restarted
            time.sleep(0.05)
        assert rotated.stat().st_size > 64 << 10
        time.sleep(0.3)  # the writer goes on, into the emptied log from its start
        head = log.read_bytes()[:5]
        assert head == b"line ", head  # no hole of zeros where the old end was
        first_after = int(log.read_text().split()[1])
        last_before = int(rotated.read_text().splitlines()[-1].split()[1])
        assert first_after > last_before
    finally:
        process.popen.kill()
        process.popen.wait()
