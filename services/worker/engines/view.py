"""What an engine sees of the filesystem: the system's programs and libraries, the Python
Arena runs on, its own files, and its working folder; nothing else.

An engine is someone else's program. Without a view of its own it could read whatever
the worker can: the stack's state folder (the admin token, TLS keys), other engines'
working folders, and through ``/proc`` the environment of every process of the worker's
user. It could also print what it read to its stderr, which reaches match results.

It could also send signals to every process of that user (the worker, the other engines,
the whole stack: ``kill(-1, SIGKILL)``), since outside its namespaces it is that user. So
each engine also gets a process namespace of its own: it sees and signals only its own
processes, and ``/proc`` shows only them.

The view is built by a fresh process: the sandbox starts this file as a script
(``python -I -S view.py PLAN COMMAND...``, standard library only). Not between fork and
exec in the worker: a worker has gRPC's threads, whose fork handlers restart them in the
child, and the kernel refuses a new user namespace to a process with threads. No
privilege is needed where the kernel allows unprivileged user namespaces; root always can.
Three processes, all in the engine's process group and control group:

- the *keeper* (the process the worker started) unshares a user, a mount, a process (and
  a network) namespace; a new process namespace only takes the caller's children, so it
  forks, waits, and ends as the engine ended (its exit status, or the signal that killed
  it), which is what the worker sees;
- the namespace's *init* (its pid 1) builds the view, mounts that namespace's ``/proc``,
  starts the engine and waits for it; when it ends, so does everything the engine left
  running (the kernel kills a namespace whose init is gone);
- the *engine* is pid 2: not pid 1, which the kernel shields from signals it has no
  handler for (``SIGXCPU`` at its CPU limit, ``SIGPIPE``) and which reaps orphans.

The view:

- the engine's user inside is ``INNER_ID``, not 0, so exec leaves it no capability: it
  cannot mount, remount or unmount anything of its view;
- the new root is a small tmpfs, read-only once built, holding read-only bind mounts of
  the system folders (``/usr``, ``/bin``, ``/lib``..., a few files of ``/etc``), Python's
  prefixes and Arena's packages, the engine's executable folder, the files its command
  names and its catalog ``files``; the working folder, read-write, at its own path; and
  ``/dev/null``, ``/dev/zero``, ``/dev/full``, ``/dev/random``, ``/dev/urandom``;
- its own ``/proc`` (its processes only; where the kernel refuses that mount, none); no
  ``/sys``, ``/home``, ``/root``, ``/tmp`` (but the working folder, which is also ``HOME``
  and ``TMPDIR``);
- the numba cache (Arena's own engines load their compiled kernels from it) is seen
  through an overlay whose writes land in a private tmpfs: an engine cannot change what
  the workers load.

Paths are planned in the worker (``plan_view``); the script only makes system calls.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import json
import os
import signal
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

INNER_ID = 1000  # the engine's user and group inside its namespace
EXIT_NO_VIEW = 125  # the script's exit status when the view cannot be built
EXIT_NOT_IN_VIEW = 127  # ... when the engine cannot be started in it (as a shell's)
HELPERS = 2  # the script's processes besides the engine: the keeper and the init
_LIBC = ctypes.CDLL(None, use_errno=True)
_CLONE_NEWUSER, _CLONE_NEWNS, _CLONE_NEWPID = 0x10000000, 0x00020000, 0x20000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
_MS_NOATIME, _MS_NODIRATIME, _MS_RELATIME = 0x400, 0x800, 0x200000
_ST_RELATIME = 0x1000
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000
_MNT_DETACH = 0x2
_PR_SET_PDEATHSIG, _PR_SET_NO_NEW_PRIVS = 1, 38

SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
                "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
                "/etc/alternatives", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf")
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
ROOT_SIZE = "size=1m,mode=755"  # the view's root only holds mount points and links
LAYER_SIZE = "size=64m,mode=755"  # what an engine writes into the numba cache's overlay


def _pivot_root_number() -> int:
    return {"x86_64": 155, "aarch64": 41, "riscv64": 41}.get(os.uname().machine, 155)


@dataclass(frozen=True)
class _Step:
    """One action of the script: ``dir`` (make a folder), ``file`` (an empty file),
    ``link`` (a symbolic link to ``source``), ``ro``/``rw``/``dev`` (bind ``source``
    there), ``overlay`` (``source`` seen through a private upper layer), ``proc`` (the
    process namespace's own ``/proc``, if the kernel allows it)."""

    kind: str
    target: bytes
    source: bytes = b""
    flags: int = 0  # the source mount's flags a bind must keep (``_kept_flags``)


@dataclass(frozen=True)
class View:
    """A planned view: the host folder its root is mounted on, the steps that fill it,
    and the namespaces to unshare besides the user and mount ones (``extra_flags``)."""

    root: bytes
    workdir: bytes
    steps: tuple[_Step, ...]
    uid_map: bytes
    gid_map: bytes
    extra_flags: int = 0

    def command(self, command: Sequence[str]) -> list[str]:
        """``command`` started through the script: its view first, then the engine."""
        plan = {"root": os.fsdecode(self.root), "workdir": os.fsdecode(self.workdir),
                "steps": [[s.kind, os.fsdecode(s.target), os.fsdecode(s.source), s.flags]
                          for s in self.steps],
                "uid_map": self.uid_map.decode(), "gid_map": self.gid_map.decode(),
                "flags": self.extra_flags}
        return [sys.executable, "-I", "-S", __file__, json.dumps(plan), *command]

    @classmethod
    def parse(cls, text: str) -> View:
        plan = json.loads(text)
        steps = tuple(_Step(kind, os.fsencode(target), os.fsencode(source), int(flags))
                      for kind, target, source, flags in plan["steps"])
        return cls(os.fsencode(plan["root"]), os.fsencode(plan["workdir"]), steps,
                   plan["uid_map"].encode(), plan["gid_map"].encode(), int(plan["flags"]))

    def unshare(self) -> None:
        """Unshare the namespaces (in the keeper: its children are in the new process
        namespace) and map the engine's user."""
        flags = _CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWPID | self.extra_flags
        _check(_LIBC.unshare(flags), b"unshare")
        _write(b"/proc/self/setgroups", b"deny")
        _write(b"/proc/self/uid_map", self.uid_map)
        _write(b"/proc/self/gid_map", self.gid_map)

    def enter(self) -> None:
        """Build the view and move into it (in the init: ``/proc`` needs a process of the
        namespace it shows)."""
        _mount(None, b"/", None, _MS_REC | _MS_PRIVATE)
        _mount(b"tmpfs", self.root, b"tmpfs", _MS_NOSUID | _MS_NODEV, ROOT_SIZE.encode())
        for step in self.steps:
            self._do(step)
        old = self.root + b"/.old"
        os.mkdir(old)
        _check(_LIBC.syscall(_pivot_root_number(), self.root, old), b"pivot_root")
        os.chdir(b"/")
        _check(_LIBC.umount2(b"/.old", _MNT_DETACH), b"umount the old root")
        os.rmdir(b"/.old")
        _mount(None, b"/", None, _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
        os.chdir(self.workdir)
        _check(_LIBC.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), b"no_new_privs")

    def _do(self, step: _Step) -> None:
        target = self.root + step.target
        if step.kind == "dir":
            with contextlib.suppress(FileExistsError):  # seen through a folder bound above
                os.mkdir(target)
        elif step.kind == "file":
            os.close(os.open(target, os.O_RDONLY | os.O_CREAT, 0o644))
        elif step.kind == "link":
            os.symlink(step.source, target)
        elif step.kind == "overlay":
            layer = self.root + b"/.layer"
            os.mkdir(layer)
            _mount(b"tmpfs", layer, b"tmpfs", _MS_NOSUID | _MS_NODEV, LAYER_SIZE.encode())
            os.mkdir(layer + b"/upper")
            os.mkdir(layer + b"/work")
            options = b"lowerdir=%s,upperdir=%s/upper,workdir=%s/work" % (
                step.source, layer, layer)
            _mount(b"overlay", target, b"overlay", _MS_NOSUID | _MS_NODEV, options)
        elif step.kind == "proc":
            # Refused where the machine's own /proc is partly hidden (some containers):
            # the engine then has none, as the probe reports.
            with contextlib.suppress(OSError):
                _mount(b"proc", target, b"proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
        else:
            _mount(step.source, target, None, _MS_BIND)
            flags = _MS_REMOUNT | _MS_BIND | _MS_NOSUID | step.flags
            flags |= {"ro": _MS_RDONLY | _MS_NODEV, "rw": _MS_NODEV, "dev": 0}[step.kind]
            _mount(None, target, None, flags)


def _kept_flags(path: str) -> int:
    """The flags of the mount ``path`` is on that a bind of it must keep: a new user
    namespace locks them (read-only, nosuid, nodev, noexec, the atime rule), and a
    remount that would drop one is refused. ``statvfs`` says them; each ``ST_`` bit is
    the ``MS_`` bit but relatime's."""
    found = os.statvfs(path).f_flag
    flags = found & (_MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC | _MS_NOATIME
                     | _MS_NODIRATIME)
    return flags | (_MS_RELATIME if found & _ST_RELATIME else 0)


def _check(result: int, what: bytes) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what.decode()}: {os.strerror(error)}")


def _mount(source: bytes | None, target: bytes, kind: bytes | None, flags: int,
           data: bytes | None = None) -> None:
    _check(_LIBC.mount(source, target, kind, flags, data), b"mount " + target)


def _write(path: bytes, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def command_paths(command: Sequence[str]) -> list[str]:
    """The paths a command names: its executable (and where a link to it points) and
    every word that is an absolute path, or ends in one after ``=`` or ``@``
    (``--weights=/opt/x``, ``@/opt/config.json``), when it exists."""
    found = [os.path.dirname(command[0]), os.path.dirname(os.path.realpath(command[0]))]
    for word in command[1:]:
        start = word.find("/")
        if start == 0 or (start > 0 and word[start - 1] in "=@"):
            found.append(word[start:])
    return [path for path in found if os.path.exists(path)]


def python_paths() -> list[str]:
    """What Arena's own engines (Python console scripts) need: Python's prefixes and the
    folders of Arena's packages (outside site-packages in an editable install)."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    for package in ("arena", "arena.services", "arena.clients"):
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            paths.update(spec.submodule_search_locations)
    return sorted(paths)


def plan_view(root: Path, workdir: Path, readable: Iterable[str], extra_flags: int = 0
              ) -> View:
    """The view of an engine whose root is mounted on ``root`` (an empty folder), working
    in ``workdir``, that may read ``readable`` besides the system and Python's paths."""
    from arena.engine import numba_cache_base  # not in the script, which has no packages

    steps: list[_Step] = []
    made: set[str] = {"/"}

    def parents(path: str) -> None:
        parent = os.path.dirname(path)
        if parent not in made:
            parents(parent)
            steps.append(_Step("dir", parent.encode()))
            made.add(parent)

    def place(path: str, kind: str, source: str = "") -> None:
        parents(path)
        if kind == "link":
            steps.append(_Step("link", path.encode(), source.encode()))
        else:
            if path not in made:  # a folder made as another path's parent is there already
                steps.append(_Step("dir" if os.path.isdir(path) else "file", path.encode()))
            origin = source or path
            steps.append(_Step(kind, path.encode(), origin.encode(), _kept_flags(origin)))
        made.add(path)

    bound: list[str] = []
    for path in sorted({*SYSTEM_PATHS, *python_paths(), *readable}):
        if not os.path.lexists(path):
            continue
        if os.path.islink(path) and os.path.dirname(path) == "/":
            place(path, "link", os.readlink(path))  # /lib -> usr/lib, as on the host
            continue
        real = os.path.realpath(path)
        if any(real == b or real.startswith(b.rstrip("/") + "/") for b in bound):
            continue  # already seen through a folder above it
        place(real, "ro")
        bound.append(real)
    for device in DEVICES:
        if os.path.exists(device):
            place(device, "dev")
    work = os.path.realpath(workdir)
    place(work, "rw")
    cache = os.path.realpath(numba_cache_base())
    if os.path.isdir(cache):
        if cache not in made and not any(cache.startswith(b + "/") for b in bound):
            parents(cache)
            steps.append(_Step("dir", cache.encode()))
        steps.append(_Step("overlay", cache.encode(), cache.encode()))
    steps += [_Step("dir", b"/proc"), _Step("proc", b"/proc")]
    return View(str(root).encode(), work.encode(), tuple(steps),
                f"{INNER_ID} {os.geteuid()} 1".encode(), f"{INNER_ID} {os.getegid()} 1".encode(),
                extra_flags)


def main(argv: Sequence[str]) -> None:
    """``view.py PLAN COMMAND...``: the keeper (the module docstring says who does what)."""
    try:
        view = View.parse(argv[0])
        view.unshare()
        null = os.open(b"/dev/null", os.O_RDWR)
        status_r, status_w = os.pipe()  # the engine's wait status, from the init
        init = os.fork()
    except (OSError, ValueError, KeyError, IndexError) as exc:
        _fail(EXIT_NO_VIEW, f"cannot build the engine's view: {exc}")
    if init == 0:
        os.close(status_r)
        _init(view, list(argv[1:]), null, status_w)
    os.close(status_w)
    _quiet(null)  # only the engine holds the worker's pipes: its end is their end
    _, status = os.waitpid(init, 0)
    said = os.read(status_r, 32)
    _end_as(int(said) if said else status)


def _init(view: View, command: list[str], null: int, status_w: int) -> NoReturn:
    """Pid 1 of the engine's process namespace: build the view, start the engine, wait
    for it, and tell the keeper how it ended."""
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the keeper killed: all end
    try:
        view.enter()
        engine = os.fork()
    except (OSError, ValueError) as exc:
        _fail(EXIT_NO_VIEW, f"cannot build the engine's view: {exc}")
    if engine == 0:
        try:
            os.execv(command[0], command)
        except OSError as exc:
            _fail(EXIT_NOT_IN_VIEW, f"cannot start {command[0]} in its view: {exc} (what an "
                  "engine runs must be in its folder, its command or its catalog files)")
    _quiet(null)
    while True:  # orphans of the engine are reparented here: reap them too
        pid, status = os.waitpid(-1, 0)
        if pid == engine:
            os.write(status_w, str(status).encode())
            os._exit(0)


def _quiet(null: int) -> None:
    for fd in (0, 1, 2):
        os.dup2(null, fd)


def _end_as(status: int) -> None:
    """End the way a wait ``status`` says a process ended: the same exit code, or killed
    by the same signal."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        with contextlib.suppress(OSError, ValueError):  # SIGKILL's action cannot be set
            signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
        os._exit(128 + number)  # a signal whose default is not to end a process
    os._exit(os.WEXITSTATUS(status))


def _fail(status: int, why: str) -> NoReturn:
    os.write(2, f"arena sandbox: {why}\n".encode())
    os._exit(status)


if __name__ == "__main__":
    main(sys.argv[1:])
