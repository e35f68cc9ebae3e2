"""The sandbox itself: what a started process really gets (limits, namespace, folder,
environment, groups), and the fallbacks where the machine gives no cgroups. Where the
machine lacks a protection, the tests check that the protections report says so."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from arena.services.common import pids
from arena.services.worker.engines import view as view_module
from arena.services.worker.engines.cgroups import name_prefix
from arena.services.worker.engines.client import PlayLimits
from arena.services.worker.engines.failures import EngineFailure, FailureReason
from arena.services.worker.engines.pool import EnginePool
from arena.services.worker.engines.sandbox import (
    MARKER,
    Sandbox,
    SandboxedProcess,
    SandboxLimits,
)
from arena.services.worker.engines.view import EXIT_NOT_IN_VIEW, INNER_ID, View, plan_view

from arena.engine import numba_cache_base
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


def run_for_json(sandbox: Sandbox, command: list[str], env: dict[str, str],
                 readable: list[str] | None = None) -> Any:
    """What ``command`` printed as JSON, run to its end (exit 0) in the sandbox."""
    process = sandbox.start(command, SandboxLimits(), env, readable or ())
    try:
        assert process.popen.wait(timeout=60) == 0
        assert process.popen.stdout is not None
        return json.loads(process.popen.stdout.read())
    finally:
        stop(process)


def test_a_process_gets_its_limits_folder_and_environment(sandbox: Sandbox) -> None:
    limits = SandboxLimits(memory_mb=200, cpu_s=50, open_files=32, processes=7, output_kb=99)
    process = sandbox.start(SLEEPER, limits, {"EXTRA": "1", MARKER: "forged"})
    try:
        pid, leader = process.pid, process.popen.pid
        assert os.getpgid(leader) == leader and os.getsid(leader) == leader  # own session
        assert os.getpgid(pid) == leader and os.getsid(pid) == leader  # the engine is in it
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
        if protections.network_isolated:  # once it has unshared (a view's script does)
            deadline = time.monotonic() + 10
            while (os.readlink(f"/proc/{pid}/ns/net") == os.readlink("/proc/self/ns/net")
                   and time.monotonic() < deadline):
                time.sleep(0.01)
            assert os.readlink(f"/proc/{pid}/ns/net") != os.readlink("/proc/self/ns/net")
    finally:
        stop(process)
    assert not process.workdir.exists()


# Run inside the sandbox: tries what a hostile engine would, prints what happened.
PROBER = """
import ctypes, json, os, sys
secret, cache, data = os.environ["SECRET"], os.environ["CACHE"], sys.argv[1].split("=", 1)[1]
worker = int(os.environ["WORKER"])
def attempt(action):
    try:
        found = action()
        return "ok" if found is None else found
    except OSError as exc:
        return type(exc).__name__ + ":" + str(exc.errno)
def write(path):
    with open(path, "w") as f:
        f.write("x")
libc = ctypes.CDLL(None, use_errno=True)
print(json.dumps({
    "secret": attempt(lambda: open(secret).read()),
    "secret_folder": attempt(lambda: os.listdir(os.path.dirname(secret))),
    "processes": attempt(lambda: sorted(int(n) for n in os.listdir("/proc") if n.isdigit())),
    "me": os.getpid(), "parent": os.getppid(),
    "worker_environ": attempt(lambda: open(f"/proc/{worker}/environ").read()),
    "parent_environ": attempt(lambda: open(f"/proc/{os.getppid()}/environ").read()),
    "signal_worker": attempt(lambda: os.kill(worker, 0)),  # 0: asks, sends nothing
    "signal_everyone": attempt(lambda: os.kill(-1, 0)),
    "root": sorted(os.listdir("/")),
    "data": open(data).read(),
    "write_data_folder": attempt(lambda: write(os.path.join(os.path.dirname(data), "new"))),
    "write_python": attempt(lambda: write(os.path.join(sys.prefix, "planted"))),
    "write_root": attempt(lambda: write("/planted")),
    "write_home": attempt(lambda: write(os.path.join(os.environ["HOME"], "mine"))),
    "write_cache": attempt(lambda: write(os.path.join(cache, "planted"))),
    "mount": libc.mount(b"tmpfs", os.environ["HOME"].encode(), b"tmpfs", 0, None),
    "uid": os.getuid(),
}), flush=True)
"""


def test_an_engine_sees_only_the_system_python_its_files_and_its_folder(
        sandbox: Sandbox, tmp_path: Path) -> None:
    """What a hostile engine tries: the stack's secrets, other processes' environment
    through /proc, signalling the worker or every process it may (``kill(-1)``: a whole
    stack of one user), planting files where the worker (or other engines) would read
    them. Signal 0 only asks whether a signal would be delivered."""
    if not sandbox.protections.view:
        assert "filesystem: NOT isolated" in "\n".join(sandbox.protections.describe())
        return
    secret = tmp_path / "home" / "admin.token"
    secret.parent.mkdir()
    secret.write_text("the admin token")
    data = tmp_path / "engine" / "weights.dat"
    data.parent.mkdir()
    data.write_text("weights")
    cache = numba_cache_base()
    assert os.path.isdir(cache)  # the kernels are compiled before any engine starts
    command = [sys.executable, "-c", PROBER, f"--weights={data}"]
    seen = run_for_json(sandbox, command, {"SECRET": str(secret), "CACHE": cache,
                                           "WORKER": str(os.getpid())})
    assert seen["secret"] == seen["secret_folder"] == "FileNotFoundError:2"
    assert seen["signal_worker"] == seen["signal_everyone"] == "ProcessLookupError:3"
    # Its processes only: the namespace's init (pid 1, the view's script) and itself.
    assert seen["me"] == 2 and seen["parent"] == 1
    if sandbox.protections.own_proc:
        assert seen["processes"] == [1, 2]
    assert seen["worker_environ"] == "FileNotFoundError:2"
    assert seen["parent_environ"] in ("PermissionError:13", "FileNotFoundError:2")
    assert "home" not in seen["root"]
    assert seen["data"] == "weights"  # named in its command: readable
    read_only = "OSError:30"  # EROFS
    assert seen["write_data_folder"] == seen["write_python"] == seen["write_root"] == read_only
    assert seen["write_home"] == "ok"
    # The numba cache takes writes into a private layer: the workers' cache is unchanged.
    assert seen["write_cache"] == "ok" and not os.path.exists(os.path.join(cache, "planted"))
    assert seen["mount"] == -1 and seen["uid"] == INNER_ID
    assert not (data.parent / "new").exists() and not (Path(sys.prefix) / "planted").exists()


def test_the_report_says_what_is_active(sandbox: Sandbox) -> None:
    report = "\n".join(sandbox.protections.describe())
    assert ("filesystem: its own" in report) == sandbox.protections.view
    assert ("other processes: isolated" in report) == sandbox.protections.view
    assert ("its own /proc" in report) == sandbox.protections.own_proc
    assert ("network: isolated" in report) == sandbox.protections.network_isolated
    assert ("memory: cgroup" in report) == ("memory" in sandbox.protections.cgroups)
    assert ("SIGSTOP to every process of its cgroup" in report) == bool(
        sandbox.protections.cgroups)
    assert ("move: every process of its cgroup" in report) == (
        "cpuacct" in sandbox.protections.cgroups)
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


def host_processes_naming(word: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if word.encode() in (entry / "cmdline").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_what_an_engine_leaves_running_ends_with_it(bare_sandbox: Sandbox) -> None:
    """A process that left the engine's group and cleaned its environment escapes both
    the group kill and the marker sweep; in the engine's own process namespace it ends
    when the engine does, before the worker stops anything."""
    if not bare_sandbox.protections.view:
        assert "other processes: NOT isolated" in "\n".join(bare_sandbox.protections.describe())
        return
    tag = f"left-behind-{os.getpid()}-{time.monotonic_ns()}"
    leaver = [sys.executable, "-c",
              "import os, subprocess, sys\n"
              f"subprocess.Popen(['/usr/bin/env', '-i', sys.executable, '-c', "
              f"'import time; time.sleep(60)', {tag!r}], start_new_session=True,"
              " stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)\n"
              "print('left one', flush=True)\n"]
    process = bare_sandbox.start(leaver, SandboxLimits())
    try:
        assert process.popen.stdout is not None
        assert process.popen.stdout.readline() == b"left one\n"
        assert process.popen.wait(timeout=30) == 0
        deadline = time.monotonic() + 5
        while host_processes_naming(tag) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert host_processes_naming(tag) == []
    finally:
        for pid in host_processes_naming(tag):
            os.kill(pid, signal.SIGKILL)
        stop(process)


@pytest.mark.parametrize("ending", ["exit 3", "SIGSEGV", "SIGPIPE"])
def test_the_worker_sees_how_the_engine_ended(sandbox: Sandbox, ending: str) -> None:
    """The exit status the worker reads is the engine's own, through the view's helpers:
    its exit code, or the signal that killed it (even one the engine is shielded from
    as a namespace's first process)."""
    if ending.startswith("exit"):
        code, expected = f"raise SystemExit({ending.split()[1]})", int(ending.split()[1])
    else:
        code = (f"import os, signal; signal.signal(signal.{ending}, signal.SIG_DFL); "
                f"os.kill(os.getpid(), signal.{ending})")
        expected = -getattr(signal, ending)
    process = sandbox.start([sys.executable, "-c", code], SandboxLimits())
    try:
        assert process.popen.wait(timeout=30) == expected
    finally:
        stop(process)


def test_a_worker_removes_the_groups_of_dead_workers(sandbox: Sandbox) -> None:
    if not sandbox.protections.cgroups:
        assert "no writable cgroup" in sandbox.protections.cgroup_note
        return
    # A child process makes a group, named as a worker names them, and one named as an
    # older version did (its pid alone), and dies: both are stale.
    hierarchy = next(iter(sandbox.protections.cgroups.values()))
    pid = os.fork()
    if pid == 0:
        (hierarchy.parent / f"{name_prefix()}1").mkdir()
        (hierarchy.parent / f"arena-engine-{os.getpid()}-1").mkdir()
        os._exit(0)
    stamped = pids.stamp(pid)
    os.waitpid(pid, 0)
    stale = [hierarchy.parent / f"{name_prefix(stamped)}1",
             hierarchy.parent / f"arena-engine-{pid}-1"]
    assert all(group.is_dir() for group in stale)
    fresh = Sandbox(sandbox.protections, root=sandbox.root)
    assert fresh.stale_groups_removed >= 2 and not any(group.exists() for group in stale)


def test_a_process_that_holds_a_dead_workers_pid_does_not_keep_its_groups(
        sandbox: Sandbox) -> None:
    """A pid comes round again: the process that holds a dead worker's pid is another
    process (another start time), and the worker's groups are removed all the same.
    Those of a worker that runs (the pid's holder itself) stay."""
    if not sandbox.protections.cgroups:
        assert "no writable cgroup" in sandbox.protections.cgroup_note
        return
    hierarchy = next(iter(sandbox.protections.cgroups.values()))
    bystander = subprocess.Popen(["sleep", "60"])
    made: list[Path] = []
    try:
        start = pids.start_of(bystander.pid)
        assert start is not None
        stale = hierarchy.parent / f"{name_prefix(f'{bystander.pid} {start - 1}')}1"
        live = hierarchy.parent / f"{name_prefix(pids.stamp(bystander.pid))}1"
        for group in (stale, live):
            group.mkdir()
            made.append(group)
        Sandbox(sandbox.protections, root=sandbox.root)
        assert not stale.exists()
        assert live.is_dir()
        assert bystander.poll() is None  # the sweep left the pid's holder alone
    finally:
        bystander.kill()
        bystander.wait()
        for group in made:
            if group.exists():
                group.rmdir()


# A worker in its own process: starts an engine that writes a file in its folder, says
# where, and waits to be killed.
DYING_WORKER = """
import json, sys, time
from pathlib import Path
from arena.services.worker.engines.sandbox import Sandbox, SandboxLimits
box = Sandbox(root=Path(sys.argv[1]))
engine = box.start([sys.executable, "-c", "open('notes', 'w').write('x' * 4096); "
                    "print('written', flush=True); input()"], SandboxLimits())
assert engine.popen.stdout.readline() == b"written\\n"
print(json.dumps(str(engine.workdir)), flush=True)
time.sleep(600)
"""


def test_a_worker_removes_the_folders_of_dead_workers(sandbox: Sandbox) -> None:
    """A worker killed with its engines running cannot remove their folders (nor what
    the engines wrote there): the next worker to start does, and no live worker's."""
    live = sandbox.start(SLEEPER, SandboxLimits())
    try:
        dying = subprocess.Popen([sys.executable, "-c", DYING_WORKER, str(sandbox.root)],
                                 stdout=subprocess.PIPE, text=True)
        assert dying.stdout is not None
        workdir = Path(json.loads(dying.stdout.readline()))
        dying.kill()
        dying.wait(timeout=30)
        assert (workdir / "notes").stat().st_size == 4096
        fresh = Sandbox(sandbox.protections, root=sandbox.root)
        assert fresh.stale_folders_removed == 1
        assert not workdir.exists() and not workdir.with_name(workdir.name + ".view").exists()
        assert live.workdir.is_dir()  # this worker's engine is alive: its folder stays
    finally:
        stop(live)


def test_a_command_that_cannot_start_leaves_nothing(sandbox: Sandbox) -> None:
    before = set(sandbox.root.iterdir())
    with pytest.raises(OSError):
        sandbox.start(["/nonexistent/engine"], SandboxLimits())
    time.sleep(0.01)
    assert set(sandbox.root.iterdir()) == before


def test_a_sandbox_that_cannot_be_set_up_says_why_and_leaves_nothing(sandbox: Sandbox
                                                                     ) -> None:
    """A failure between fork and exec (here an unshare the kernel refuses) is an OSError
    with the reason, not subprocess's bare 'Exception occurred in preexec_fn'."""
    broken = Sandbox(replace(sandbox.protections, network_flags=0x1, view=False),
                     root=sandbox.root)  # 0x1 is no namespace: EINVAL
    before = set(sandbox.root.iterdir())
    reason = r"could not be set up: \[Errno 22\] unshare: Invalid argument"
    with pytest.raises(OSError, match=reason):
        broken.start(SLEEPER, SandboxLimits())
    assert set(sandbox.root.iterdir()) == before


# Run in a mount namespace of its own, with the temporary folder (where the engines' working
# folders go) on a tmpfs mounted as many machines mount /tmp: noexec, nosuid, nodev, noatime.
ON_STRICT_TMP = """
import json, subprocess, sys, tempfile
folder = sys.argv[1]
subprocess.run(["mount", "-t", "tmpfs", "-o", "noexec,nosuid,nodev,noatime", "tmpfs", folder],
               check=True)
tempfile.tempdir = folder
from arena.services.worker.engines.sandbox import Sandbox, SandboxLimits
box = Sandbox()
process = box.start([sys.executable, "-c", "print('in its view')"], SandboxLimits())
out = process.popen.stdout.read().decode()
process.kill_all()
process.release()
print(json.dumps({"view": box.protections.view, "note": box.protections.view_note,
                  "out": out}))
"""


def test_the_view_keeps_the_flags_its_folders_are_mounted_with(
        sandbox: Sandbox, tmp_path: Path) -> None:
    """A new user namespace locks each mount's flags (noexec, nosuid, nodev, the atime
    rule): a bind that dropped one was refused, and the view then failed on any machine
    whose /tmp is mounted noexec or noatime."""
    if not sandbox.protections.view:
        assert "filesystem: NOT isolated" in "\n".join(sandbox.protections.describe())
        return
    private = ["unshare", "--mount", "--propagation", "private"]
    if os.geteuid() != 0:
        private[1:1] = ["--user", "--map-root-user"]
    folder = tmp_path / "strict-tmp"
    folder.mkdir()
    done = subprocess.run([*private, sys.executable, "-c", ON_STRICT_TMP, str(folder)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen == {"view": True, "note": "", "out": "in its view\n"}


def test_a_planned_view_reaches_its_script_whole(tmp_path: Path) -> None:
    """The plan crosses to the script as text: every step, with the flags it keeps."""
    (tmp_path / "work").mkdir()
    view = plan_view(tmp_path / "view", tmp_path / "work", [sys.executable])
    command = view.command(["/usr/bin/true", "-x"])
    assert command[:4] == [sys.executable, "-I", "-S", view_module.__file__]
    assert View.parse(command[4]) == view and command[5:] == ["/usr/bin/true", "-x"]
    noatime = replace(view, steps=(replace(view.steps[0], flags=0x400), *view.steps[1:]))
    assert View.parse(noatime.command(["/usr/bin/true"])[4]) == noatime


READER = """
import json, os
wanted = json.loads(os.environ["WANTED"])
seen = {}
for name in wanted:
    try:
        with open(name) as handle:
            seen[name] = handle.read()
    except OSError as exc:
        seen[name] = f"{type(exc).__name__}:{exc.errno}"
try:
    open(os.path.join(os.path.dirname(wanted[0]), "planted"), "w").close()
    seen["write"] = "ok"
except OSError as exc:
    seen["write"] = f"{type(exc).__name__}:{exc.errno}"
print(json.dumps(seen))
"""


def test_an_engine_reads_a_data_folder_named_in_its_files(
        sandbox: Sandbox, tmp_path: Path) -> None:
    """A catalog folder (``files = ["data"]``) is readable whole, read-only; a file
    beside it that is not named stays out of view (the paths reach the engine in its
    environment: paths in its command would be readable)."""
    if not sandbox.protections.view:
        assert "filesystem: NOT isolated" in "\n".join(sandbox.protections.describe())
        return
    data = tmp_path / "engine" / "data"
    (data / "nets").mkdir(parents=True)
    (data / "nets" / "model.bin").write_text("weights")
    (data / "book.txt").write_text("f5 d6")
    other = tmp_path / "engine" / "other.txt"
    other.write_text("not named")
    wanted = [str(data / "nets" / "model.bin"), str(data / "book.txt"), str(other)]
    seen = run_for_json(sandbox, [sys.executable, "-c", READER],
                        {"WANTED": json.dumps(wanted)}, [str(data)])
    assert seen[wanted[0]] == "weights" and seen[wanted[1]] == "f5 d6"
    assert seen[wanted[2]] == "FileNotFoundError:2"
    assert seen["write"] == "OSError:30" and not (data / "nets" / "planted").exists()


def test_an_engine_whose_interpreter_is_out_of_view_says_so(
        sandbox: Sandbox, tmp_path: Path) -> None:
    """A script whose interpreter is nowhere the engine may look fails to start, with a
    line that says why (its stderr reaches the start failure)."""
    if not sandbox.protections.view:
        assert "filesystem: NOT isolated" in "\n".join(sandbox.protections.describe())
        return
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    interpreter = hidden / "sh"
    interpreter.write_bytes(Path("/bin/sh").read_bytes())
    interpreter.chmod(0o755)
    engine = tmp_path / "engine" / "run"
    engine.parent.mkdir()
    engine.write_text(f"#!{interpreter}\necho hello\n")
    engine.chmod(0o755)
    process = sandbox.start([str(engine)], SandboxLimits())
    try:
        assert process.popen.wait(timeout=60) == EXIT_NOT_IN_VIEW
        assert process.popen.stderr is not None
        said = process.popen.stderr.read().decode()
    finally:
        stop(process)
    assert f"arena sandbox: cannot start {engine} in its view" in said
    assert "its folder, its command or its catalog files" in said
    # Named as one of its files, the interpreter is there.
    process = sandbox.start([str(engine)], SandboxLimits(), readable=[str(interpreter)])
    try:
        assert process.popen.wait(timeout=60) == 0
        assert process.popen.stdout is not None and process.popen.stdout.read() == b"hello\n"
    finally:
        stop(process)
