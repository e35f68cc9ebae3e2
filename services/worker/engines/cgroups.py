"""One control group per engine process, where the machine lets the worker make them.

A group gives what resource limits cannot: a memory cap on resident memory that the kernel
enforces and reports when it kills for it (``oom_kill``), a cap on processes that holds
even for root, and the list of every process the engine started, so that stopping it kills
the ones that left its process group too, and stopping it between moves stops them too (a
child that called ``setsid`` could think on the opponent's time). Signals, not the freezer:
a frozen process of cgroup v1 does not die of ``SIGKILL`` until it is thawed. And the CPU
time of all of them (``cpuacct``): a move is charged what the engine's children computed.

Both cgroup versions are read; each controller (``memory``, ``pids``, ``cpuacct``: in
version 2 every group's ``cpu.stat``) is used from whichever hierarchy the worker can
create groups in. Groups are named ``arena-engine-<worker pid>-<worker start>-<n>``: the
worker's stamp (``arena.services.common.pids``), its pid and its start time. A worker
removes the groups of dead workers when it starts (workers that share a machine share its
process numbering), judging each by its stamp: a pid alone is handed out again, and
whichever process holds it then would keep a dead worker's group for as long as it runs.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from arena.services.common import pids

CONTROLLERS = ("memory", "pids", "cpuacct")
PREFIX = "arena-engine-"
# A group's name: the worker's pid and start time, or its pid alone (an older version's).
_GROUP_RE = re.compile(re.escape(PREFIX) + r"(\d+)-(?:(\d+)-)?\w+")
_KILL_ROUNDS = 20


@dataclass(frozen=True)
class Hierarchy:
    """Where groups for one controller are made: ``parent`` is the worker's own group."""

    controller: str
    version: int
    parent: Path


def find_hierarchies(
    proc_self: Path = Path("/proc/self"),
) -> tuple[dict[str, Hierarchy], str]:
    """The usable hierarchy of each controller, and a note on any that is missing."""
    found: dict[str, Hierarchy] = {}
    for candidate in _candidates(proc_self):
        if candidate.controller not in found and _try_group(candidate):
            found[candidate.controller] = candidate
    missing = [c for c in CONTROLLERS if c not in found]
    note = "" if not missing else (
        f"no writable cgroup for {', '.join(missing)} (needs a cgroup the worker may create "
        "groups in: root, or a delegated cgroup v2 subtree)")
    return found, note


def _candidates(proc_self: Path) -> list[Hierarchy]:
    try:
        memberships = (proc_self / "cgroup").read_text().splitlines()
        mounts = (proc_self / "mountinfo").read_text().splitlines()
    except OSError:
        return []
    v1_paths: dict[str, str] = {}
    v2_path = None
    for line in memberships:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            v2_path = parts[2]
        for controller in parts[1].split(","):
            v1_paths[controller] = parts[2]
    found = []
    for mount_root, mount_point, fstype, options in _cgroup_mounts(mounts):
        if fstype == "cgroup":
            for controller in CONTROLLERS:
                if controller in options.split(",") and controller in v1_paths:
                    where = _inside(mount_point, mount_root, v1_paths[controller])
                    if where is not None:
                        found.append(Hierarchy(controller, 1, where))
        elif fstype == "cgroup2" and v2_path is not None:
            where = _inside(mount_point, mount_root, v2_path)
            if where is not None:
                found += [Hierarchy(c, 2, where) for c in _v2_controllers(where)]
    return sorted(found, key=lambda h: h.version)  # v1 first where both offer a controller


def _cgroup_mounts(mounts: list[str]) -> list[tuple[str, str, str, str]]:
    result = []
    for line in mounts:
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if sep and len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
            result.append((fields[3], fields[4], tail[0], tail[2]))
    return result


def _inside(mount_point: str, mount_root: str, group_path: str) -> Path | None:
    """The folder of ``group_path`` under a mount of the hierarchy's ``mount_root``."""
    root = mount_root.rstrip("/")
    if root and not (group_path == root or group_path.startswith(root + "/")):
        return None
    relative = group_path[len(root):].lstrip("/")
    return Path(mount_point) / relative if relative else Path(mount_point)


def _v2_controllers(where: Path) -> list[str]:
    try:
        available = (where / "cgroup.controllers").read_text().split()
    except OSError:
        return []
    available.append("cpuacct")  # version 2 counts CPU in every group: tried by the probe
    return [c for c in CONTROLLERS if c in available]


def _try_group(hierarchy: Hierarchy) -> bool:
    """Make, limit and remove a probe group: exactly what an engine's group will need."""
    probe = hierarchy.parent / f"{name_prefix()}probe"
    try:
        if hierarchy.version == 2 and hierarchy.controller != "cpuacct":
            _write(hierarchy.parent / "cgroup.subtree_control", f"+{hierarchy.controller}")
        probe.mkdir(exist_ok=True)
        try:
            _set_up(hierarchy, probe, 1 << 30, 64)
        finally:
            probe.rmdir()
    except (OSError, ValueError):
        return False
    return True


def _cpu_usage_ns(hierarchy: Hierarchy, group: Path) -> int:
    """The CPU time the group's processes used (also those gone), in nanoseconds."""
    if hierarchy.version == 1:
        return int((group / "cpuacct.usage").read_text())
    for line in (group / "cpu.stat").read_text().splitlines():
        key, _, value = line.partition(" ")
        if key == "usage_usec":
            return int(value) * 1000
    raise ValueError(f"no usage_usec in {group / 'cpu.stat'}")


def _write(path: Path, value: str) -> None:
    with open(path, "w") as handle:
        handle.write(value)


def _set_up(hierarchy: Hierarchy, group: Path, memory_bytes: int, max_pids: int) -> None:
    """What an engine's group needs of its controller: its cap (``memory``, ``pids``), or
    a CPU account that reads (``cpuacct``)."""
    if hierarchy.controller == "cpuacct":
        _cpu_usage_ns(hierarchy, group)
    elif hierarchy.controller == "pids":
        _write(group / "pids.max", str(max_pids))
    elif hierarchy.version == 1:
        _write(group / "memory.limit_in_bytes", str(memory_bytes))
        # No swapping past the cap either, where swap accounting is on.
        with contextlib.suppress(OSError):
            _write(group / "memory.memsw.limit_in_bytes", str(memory_bytes))
    else:
        _write(group / "memory.max", str(memory_bytes))
        with contextlib.suppress(OSError):
            _write(group / "memory.swap.max", "0")


class EngineCgroup:
    """The groups (one per controller) holding one engine process and its children."""

    def __init__(self, groups: dict[str, tuple[Hierarchy, Path]]) -> None:
        self.groups = groups

    @classmethod
    def create(cls, hierarchies: dict[str, Hierarchy], name: str, memory_bytes: int,
               max_pids: int) -> EngineCgroup:
        made = cls({})
        try:
            for controller, hierarchy in hierarchies.items():
                group = hierarchy.parent / name
                group.mkdir()
                made.groups[controller] = (hierarchy, group)
                _set_up(hierarchy, group, memory_bytes, max_pids)
        except (OSError, ValueError):
            made.remove()
            raise
        return made

    def procs_files(self) -> tuple[bytes, ...]:
        """The files the child writes ``0`` into to join its groups before it execs."""
        folders = {group for _, group in self.groups.values()}
        return tuple(bytes(folder / "cgroup.procs") for folder in sorted(folders))

    def oom_kills(self) -> int:
        """How many processes the kernel killed for the memory cap."""
        if "memory" not in self.groups:
            return 0
        hierarchy, group = self.groups["memory"]
        source = "memory.oom_control" if hierarchy.version == 1 else "memory.events"
        try:
            for line in (group / source).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def pids(self, one_group: bool = False) -> set[int]:
        """Every process in any of the groups (each is in all: it joined them before it
        exec'd, or inherited them; one that left a group is still found in the others).
        ``one_group`` reads one group's list only, for a listing done at every move."""
        found: set[int] = set()
        paths = self.procs_files()
        for path in paths[:1] if one_group else paths:
            try:
                with open(path, "rb") as procs:
                    found.update(map(int, procs.read().split()))
            except (OSError, ValueError):
                continue
        return found

    def cpu_seconds(self) -> float | None:
        """The CPU time of every process of the engine so far; None without an account."""
        if "cpuacct" not in self.groups:
            return None
        try:
            return _cpu_usage_ns(*self.groups["cpuacct"]) / 1e9
        except (OSError, ValueError):
            return None

    def signal_all(self, signum: int) -> None:
        """Send ``signum`` to every process of the engine (one group's list: it is done at
        every move), and to any that appears (a fork between the listing and the signal),
        until a listing shows none new."""
        sent: set[int] = set()
        for _ in range(_KILL_ROUNDS):
            new = self.pids(one_group=True) - sent
            if not new:
                return
            _send(new, signum)
            sent |= new

    def kill(self) -> None:
        """SIGKILL every process in the groups, until none is left (a fork between the
        listing and the kill is caught by the next round)."""
        for _ in range(_KILL_ROUNDS):
            pids = self.pids()
            if not pids:
                return
            _send(pids, signal.SIGKILL)
            time.sleep(0.005)

    def remove(self) -> None:
        for _, group in self.groups.values():
            _remove_group(group)
        self.groups = {}


def _send(pids: set[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):  # gone, or not ours
            os.kill(pid, signum)


def _remove_group(group: Path) -> None:
    for _ in range(50):  # a killed process leaves its group a moment after it dies
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.01)


def name_prefix(stamped: str | None = None) -> str:
    """``arena-engine-<pid>-<start>-``: how the names of the groups (and working folders)
    of the worker of ``stamped`` (``pids.stamp``; by default this process) begin."""
    pid, start = (stamped or pids.stamp()).split()
    return f"{PREFIX}{pid}-{start}-"


def worker_gone(pid: int, start: str | None) -> bool:
    """Whether the worker named in a group's (or folder's) name is gone: the process of
    that pid and start time no longer runs. A name without a start time was made by an
    older version, which may still run beside this one (a worker of the machine not yet
    upgraded): it is judged by its pid alone, as that version did, so that its engines
    are not killed; a reused pid keeps such a group only while its new holder runs."""
    if start is None:
        return pids.start_of(pid) is None
    return pids.running(f"{pid} {start}") is None


def sweep_stale(hierarchies: dict[str, Hierarchy]) -> int:
    """Kill and remove the engine groups whose worker is gone; returns how many."""
    removed = 0
    for hierarchy in hierarchies.values():
        try:
            children = list(hierarchy.parent.iterdir())
        except OSError:
            continue
        for group in children:
            match = _GROUP_RE.fullmatch(group.name)
            if (match is None or not group.is_dir()
                    or not worker_gone(int(match.group(1)), match.group(2))):
                continue
            stale = EngineCgroup({hierarchy.controller: (hierarchy, group)})
            stale.kill()
            stale.remove()
            removed += 1
    return removed
