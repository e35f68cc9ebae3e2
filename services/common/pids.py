"""Processes named by their pid and start time, so that a reused pid is never taken for them.

Linux hands a freed pid out again once its counter comes round (``pid_max`` is 32,768 on
this machine, and thread ids take the same numbers). A pid left in a file by a process that
was killed names whichever process holds the number when the file is read: signalling it
could stop anyone's program. The start time beside it (``/proc/<pid>/stat``, field 22,
clock ticks since boot) makes the pair name one process.
"""

from __future__ import annotations

import os
import signal


def start_of(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot); None if there is no such
    process, or only its zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            stat = file.read()
    except OSError:
        return None
    fields = stat.rsplit(b")", 1)[-1].split()  # its name, in brackets, may hold anything
    if len(fields) < 20 or fields[0] == b"Z":
        return None
    return int(fields[19])


def stamp(pid: int | None = None) -> str:
    """``"<pid> <start>"`` for ``pid`` (this process by default); the stamp of a pid with
    no process behind it names nothing (``running`` gives None)."""
    pid = os.getpid() if pid is None else pid
    return f"{pid} {start_of(pid)}"


def running(stamped: object) -> int | None:
    """The pid of the stamped process if that very process still runs, else None (also
    for anything that is not a stamp)."""
    try:
        pid, start = (int(part) for part in str(stamped).split())
    except ValueError:
        return None
    return pid if start_of(pid) == start else None


def send(stamped: object, signum: int = signal.SIGTERM) -> bool:
    """Signal the stamped process if it still runs; whether it was signalled."""
    pid = running(stamped)
    if pid is None:
        return False
    try:
        os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        return False
    return True
