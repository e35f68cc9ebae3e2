"""`arena up` as a real process: everything answers health, SIGTERM leaves nothing behind."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from arena.clients.workers import stack_workers
from arena.services.common import pids as stamps
from arena.services.common.launcher import max_workers
from arena.services.common.server import STOP_DEADLINE_S, check_health
from arena.services.web.server import check_http_health

from tests.support.processes import stamp_all, wait_for_file, wait_gone
from tests.support.servers import compile_engines


def _wait_for_manifest(path: Path, process: subprocess.Popen[bytes]) -> dict[str, object]:
    wait_for_file(path, process, 120, lambda: "arena up exited early")
    return dict(json.loads(path.read_text()))


def _start_up(home: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "arena.clients", "up", "--workers", "2"],
        env=dict(os.environ, ARENA_HOME=str(home)),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )


# A service told to stop ends within its deadline, whatever hangs; then it is reaped.
STOP_WITHIN_S = STOP_DEADLINE_S + 15


def _wait_all_gone(stamped: dict[str, str]) -> list[str]:
    return wait_gone(stamped, STOP_WITHIN_S)


def _how_they_are(home: Path, stamped: dict[str, str], names: list[str]) -> str:
    """What a process left running is doing: its state, its threads' names and its log's
    last lines (a bare list of names told nothing when one outlived its launcher)."""
    told = []
    for name in names:
        pid = stamps.running(stamped[name]) or -1  # -1: it ended since
        status = _read(Path(f"/proc/{pid}/status"))
        state = next((line for line in status.splitlines() if line.startswith("State:")), "")
        threads = sorted(_read(task / "comm").strip()
                         for task in Path(f"/proc/{pid}/task").glob("*"))
        log = _read(home / "logs" / f"{name}.log").splitlines()[-12:]
        told.append(f"{name} (pid {pid}) {state}; threads {threads}; its log ends:\n"
                    + "\n".join(log))
    return "\n\n".join(told)


def _warn_of_stuck_stops(home: Path, stamped: dict[str, str]) -> None:
    """A service that ended only at its stop deadline did end, as it must; its log holds
    every thread's stack at that moment, shown here as a warning for whoever finds why."""
    for name in stamped:
        log = _read(home / "logs" / f"{name}.log")
        if "still stopping after" in log:
            stacks = log[log.index("still stopping after"):][:6000]
            warnings.warn(f"{name} hung in its stop and ended at its deadline:\n{stacks}",
                          stacklevel=2)


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def test_arena_up_serves_health_and_sigterm_leaves_no_process(tmp_path: Path) -> None:
    process = _start_up(tmp_path)
    try:
        manifest = _wait_for_manifest(tmp_path / "stack.json", process)
        services = manifest["services"]
        assert isinstance(services, dict)
        assert set(services) == {"registry", "referee", "ladder", "worker-1", "worker-2",
                                 "analyst-1"}
        for target in services.values():
            assert check_health(target)
        assert manifest["roles"] == {"registry": services["registry"],  # type: ignore[index]
                                     "referee": services["referee"],
                                     "ladder": services["ladder"],
                                     "engine": services["analyst-1"]}
        web = manifest["web"]  # the web gateway, for browsers
        assert isinstance(web, str) and web.startswith("http://127.0.0.1:")
        assert check_http_health(web.removeprefix("http://"))
        pids = manifest["pids"]
        assert isinstance(pids, dict) and len(pids) == 9  # 6 services, web, 2 Redis
        children = stamp_all(pids)
        # A second `arena up` on the same home is refused and disturbs nothing.
        second = _arena(tmp_path, "up", "--workers", "0", timeout=60)
        assert second.returncode == 1, second
        assert "already running" in second.stderr and "Traceback" not in second.stderr
        assert f"launcher pid {process.pid}" in second.stderr
        assert "Starting Arena" not in second.stdout
        assert json.loads((tmp_path / "stack.json").read_text()) == manifest
        assert check_health(services["registry"])  # type: ignore[index]
        process.send_signal(signal.SIGTERM)
        out, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, out.decode()
    assert b"stopped." in out
    assert _wait_all_gone(children) == []
    assert not (tmp_path / "stack.json").exists()
    assert (tmp_path / "admin.token").stat().st_mode & 0o077 == 0


def test_a_killed_arena_up_takes_its_children_with_it(tmp_path: Path) -> None:
    """And the workers started by hand on its stack: before, one retried the dead stack's
    Redis for good."""
    process = _start_up(tmp_path)
    try:
        pids = _wait_for_manifest(tmp_path / "stack.json", process)["pids"]
        assert isinstance(pids, dict)
        children = stamp_all(pids)
        hand_log = tmp_path / "hand.log"  # a file, not a pipe: its log cannot fill it
        with open(hand_log, "wb") as log:
            hand = subprocess.Popen(  # not a child of `arena up`: nothing kills it with it
                [sys.executable, "-m", "arena.clients", "worker", "--", "--ready-file",
                 str(tmp_path / "hand.port")],
                env=dict(os.environ, ARENA_HOME=str(tmp_path), ARENA_WARM_GAMES=""),
                stdout=subprocess.DEVNULL, stderr=log)
        _wait(lambda: (tmp_path / "hand.port").exists() or hand.poll() is not None,
              "the hand-started worker")
        assert hand.poll() is None, hand_log.read_text()
        children["hand-started worker"] = stamps.stamp(hand.pid)
        process.kill()  # no chance to clean up: the children must notice on their own
        process.wait(timeout=10)
        leftovers = _wait_all_gone(children)
        told = _how_they_are(tmp_path, children, leftovers)
        assert hand.wait(timeout=10) == 0, hand_log.read_text()
        assert "has ended: stopping" in hand_log.read_text()
        _warn_of_stuck_stops(tmp_path, children)
        # Its stack file stays behind; nothing asks the dead launcher to scale.
        scaled = _arena(tmp_path, "workers", "scale", "3", timeout=60)
        assert scaled.returncode != 0 and "Traceback" not in scaled.stderr
        assert "has no running `arena up` to ask" in scaled.stderr
        # Its lock on the home died with it: the next `arena up` starts.
        again = _start_up(tmp_path)
        _wait(lambda: stamps.running(_manifest(tmp_path).get("launcher")) == again.pid
              and again.poll() is None, "the next arena up")
        again.send_signal(signal.SIGTERM)
        out, _ = again.communicate(timeout=60)
        assert again.returncode == 0, out.decode()
    finally:
        for child in (children if "children" in locals() else {}).values():
            stamps.send(child, signal.SIGKILL)
        if "hand" in locals() and hand.poll() is None:
            hand.kill()
        if "again" in locals() and again.poll() is None:
            again.kill()
    assert leftovers == [], told


def _descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (children's children too, whichever thread started
    them); one that ends while it is read is left out."""
    children = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            children += (task / "children").read_text().split()
    found: list[int] = []
    for child in children:
        found += [int(child), *_descendants(int(child))]
    return found


def _command_line(pid: int) -> str:
    return _read(Path(f"/proc/{pid}/cmdline")).replace("\0", " ")


def _in_a_terminal(module: str, *args: str) -> list[str]:
    """``python -m module args`` with SIGINT's default action, as a terminal's foreground
    command has it: a command started in the background by a shell (this suite, run by
    `nohup make test &`) inherits SIGINT ignored, and then Ctrl-C would test nothing."""
    start = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
             "os.execv(sys.executable, [sys.executable, '-m', *sys.argv[1:]])")
    return [sys.executable, "-c", start, module, *args]


@pytest.mark.parametrize("how", ["SIGTERM", "Ctrl-C"])
def test_a_stop_signal_while_the_engines_compile_stops_at_once(tmp_path: Path,
                                                               how: str) -> None:
    """A first start compiles for minutes. SIGTERM (or Ctrl-C) then waited for the whole
    compile and start, then stopped what had just started; now the start is abandoned at
    once, the compile processes and Redis with it. Ctrl-C in a terminal reaches the whole
    process group; the compile step, in a session of its own, is stopped by `arena up` and
    leaves no KeyboardInterrupt traceback in the compile log (it left one per process)."""
    home = tmp_path / "arena"
    env = dict(os.environ, ARENA_HOME=str(home),
               NUMBA_CACHE_DIR=str(tmp_path / "kernels"))  # an empty cache: a long compile
    process = subprocess.Popen(_in_a_terminal("arena.clients", "up", "--workers", "1",
                                              "--no-web"), env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait(lambda: sum("arena.services.worker.warm" in _command_line(pid)
                          for pid in _descendants(process.pid)) == 3, "the compile step", 60)
        below = stamp_all({str(pid): pid for pid in _descendants(process.pid)})
        time.sleep(1.0)  # well inside the compile (the children import numba first)
        if how == "SIGTERM":
            process.send_signal(signal.SIGTERM)
        else:  # what a terminal does: the foreground process group
            os.killpg(process.pid, signal.SIGINT)
        out, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    text = out.decode()
    assert process.returncode == 0, text
    name = "SIGTERM" if how == "SIGTERM" else "SIGINT"
    assert f"stopped while starting ({name}): nothing is left running." in text, text
    assert "Traceback" not in text and "Arena is up" not in text
    assert _wait_all_gone(below) == []
    log = (home / "logs" / "compile.log").read_text()
    assert "Traceback" not in log and "KeyboardInterrupt" not in log, log


def test_ctrl_c_stops_the_compile_step_and_its_children_with_one_line(tmp_path: Path) -> None:
    """The compile step run by hand in a terminal: Ctrl-C (SIGINT to the process group)
    stops the step and its children at once, with one line, exit status 130."""
    env = dict(os.environ, ARENA_WARM_GAMES="othello,gomoku",
               NUMBA_CACHE_DIR=str(tmp_path / "kernels"))
    process = subprocess.Popen(_in_a_terminal("arena.services.worker.warm"), env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        _wait(lambda: len(_descendants(process.pid)) == 2, "the compile children", 60)
        children = stamp_all({str(pid): pid for pid in _descendants(process.pid)})
        time.sleep(1.0)
        os.killpg(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130, err
    assert "Traceback" not in err and "engines ready" not in out, err
    assert err == "arena-worker: compile of othello, gomoku interrupted\n", err
    assert _wait_all_gone(children) == []


def _arena(home: Path, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.clients", *args], text=True,
                          capture_output=True, timeout=timeout,
                          env=dict(os.environ, ARENA_HOME=str(home)))


def _wait(condition: Callable[[], bool], what: str, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def test_arena_up_restarts_what_dies_scales_workers_and_stops_hand_started_ones(
        tmp_path: Path) -> None:
    """A kill -9 of a worker does not stop the stack: the worker comes back on its port.
    `arena workers scale N` adds and removes workers; `arena worker` finds the stack by
    itself and is stopped with it."""
    process = subprocess.Popen(
        [sys.executable, "-m", "arena.clients", "up", "--workers", "1"],
        env=dict(os.environ, ARENA_HOME=str(tmp_path), ARENA_WARM_GAMES=""),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    extra: subprocess.Popen[bytes] | None = None
    try:
        manifest = _wait_for_manifest(tmp_path / "stack.json", process)
        pids = manifest["pids"]
        assert isinstance(pids, dict)
        victim = int(pids["worker-1"])
        os.kill(victim, signal.SIGKILL)
        target = manifest["services"]["worker-1"]  # type: ignore[index]
        _wait(lambda: check_health(target) and stamps.start_of(
            int(_manifest(tmp_path)["pids"]["worker-1"])) is not None, "the restart")
        assert process.poll() is None  # the stack lives on
        assert stamps.start_of(int(pids["registry"])) is not None
        assert stamps.start_of(int(pids["redis-durable"])) is not None

        scaled = _arena(tmp_path, "workers", "scale", "3")
        assert scaled.returncode == 0, scaled.stderr
        assert "3 workers: worker-1, worker-2, worker-3" in scaled.stdout
        for name in ("worker-2", "worker-3"):
            assert check_health(_manifest(tmp_path)["services"][name])
        # An absurd count is one line and changes nothing: it once started workers until
        # the machine stopped answering.
        absurd = _arena(tmp_path, "workers", "scale", "99999")
        assert absurd.returncode != 0 and "Traceback" not in absurd.stderr
        assert f"must be at most {max_workers()} on this machine" in absurd.stderr
        (tmp_path / "run" / "control.json").write_text('{"workers": 99999}')  # by hand
        _wait(lambda: not (tmp_path / "run" / "control.json").exists(), "the refusal")
        assert stack_workers(_manifest(tmp_path)) == ["worker-1", "worker-2", "worker-3"]
        down = _arena(tmp_path, "workers", "scale", "1")
        assert down.returncode == 0, down.stderr
        assert set(_manifest(tmp_path)["services"]) >= {"worker-1"}
        assert "worker-3" not in _manifest(tmp_path)["services"]

        extra = subprocess.Popen(  # no address given: it reads the stack file
            [sys.executable, "-m", "arena.clients", "worker", "--", "--ready-file",
             str(tmp_path / "hand.port")],
            env=dict(os.environ, ARENA_HOME=str(tmp_path), ARENA_WARM_GAMES=""),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _wait(lambda: (tmp_path / "hand.port").exists(), "the hand-started worker")
        assert check_health(f"127.0.0.1:{(tmp_path / 'hand.port').read_text()}")
        # The files of hand-started workers killed long ago: one whose pid another program
        # holds by now (this bystander; the start time differs), one unreadable.
        bystander = subprocess.Popen(["sleep", "120"])
        (tmp_path / "run" / "extra" / "1.pid").write_text(f"{bystander.pid} 1")
        (tmp_path / "run" / "extra" / "2.pid").write_text("garbage")
        process.send_signal(signal.SIGTERM)
        out, _ = process.communicate(timeout=60)
        assert extra.wait(timeout=30) == 0  # stopped with the stack, gracefully
        assert bystander.poll() is None  # not signalled: it is not the worker
        assert list((tmp_path / "run" / "extra").iterdir()) == []
    finally:
        for child in (process, extra, locals().get("bystander")):
            if child is not None and child.poll() is None:
                child.kill()
    text = out.decode()
    assert "worker-1 exited with -9; restarting" in text and "worker-1 restarted" in text
    assert "worker-3 stopped" in text
    assert "not scaled: the worker count must be at most" in text


def test_new_workers_must_fit_in_the_memory_available_now(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The bound above counts all of the machine's memory; memory other programs hold
    is not there for workers. MemAvailable (faked here, 1.2 GB) holds two more."""
    from arena.services.common import launcher

    real = launcher.available_memory()
    assert real is not None and real > 0  # this machine's /proc/meminfo is read
    monkeypatch.setattr(launcher, "available_memory", lambda: 1200 << 20)
    launcher.check_memory_for(2)
    launcher.check_memory_for(-3)  # stopping workers needs no memory
    with pytest.raises(launcher.InvalidArgumentError,
                       match="3 more workers need about 1536 MB and this machine has 1200 MB"):
        launcher.check_memory_for(3)
    with pytest.raises(launcher.InvalidArgumentError, match="need about 1536 MB"):
        launcher.Launcher(home=tmp_path / "arena", workers=3)


def test_arena_up_refuses_more_workers_than_the_machine_can_run(tmp_path: Path) -> None:
    result = _arena(tmp_path, "up", "--workers", str(max_workers() + 1), timeout=60)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert result.stderr.strip().count("\n") == 0, result.stderr  # one line
    assert f"--workers must be at most {max_workers()}" in result.stderr
    assert not (tmp_path / "stack.json").exists()  # nothing started


# Each reason reaches the user's terminal, not only a log (the CLI prints an error's first
# line). The worker's compile step is the first to read the settings; the quotas only the
# services read: that line said `registry exited with 1; see LOG:`, the reason only in the
# log. An old configuration naming the quota import_bytes (now match_bytes) is such a one.
@pytest.mark.parametrize(("name", "value", "said", "log"), [
    ("ARENA_MAX_MATCHES", "0", "ARENA_MAX_MATCHES='0': expected 1 or more", "compile.log"),
    ("ARENA_QUOTAS", '{"user": {"import_bytes": 5}}',
     "registry exited with 2: arena-registry: configuration error: bad quotas (ARENA_QUOTAS "
     "/ ARENA_QUOTAS_FILE): quota 'import_bytes' is now 'match_bytes'", "registry.log"),
    # a misspelt key set no quota; 0 and a number past 32 bits were no limit
    ("ARENA_QUOTAS", '{"usr": {"running_matches": 2}}',
     "bad quotas (ARENA_QUOTAS / ARENA_QUOTAS_FILE): unknown key 'usr'; known: 'user', "
     "'users'", "registry.log"),
    ("ARENA_QUOTAS", '{"user": {"running_ladders": 0}}',
     "quota running_ladders must be an integer in 1..2147483647 (2147483647: no limit), "
     "got 0", "registry.log"),
    ("ARENA_QUOTAS", '{"users": {"bob": {"match_bytes": 99999999999999999999}}}',
     "quota match_bytes must be an integer in 1..2147483647", "registry.log"),
    ("ARENA_QUOTAS", "[1, 2]", 'the quotas are a JSON object: {"user": {...}', "registry.log"),
    # a misspelt role made the admin meant a user; an empty token was kept; a user named
    # as the admin token is had its quotas (they go by name)
    ("ARENA_TOKENS", '{"tok-1234567890": {"name": "x", "rol": "admin"}}',
     "bad tokens in ARENA_TOKENS: entry 1: unknown key 'rol'; known: 'name', 'role'",
     "registry.log"),
    ("ARENA_TOKENS", '{"tok-1234567890": {"name": "x"}, "": {"name": "y"}}',
     "bad tokens in ARENA_TOKENS: entry 2: a token is printable ASCII", "registry.log"),
    ("ARENA_TOKENS", '{"tok-1234567890": "x"}',
     'bad tokens in ARENA_TOKENS: entry 1: an entry is {"name": NAME', "registry.log"),
    ("ARENA_TOKENS", '{"tok-1234567890": {"name": "admin"}}',
     "bad tokens: 'admin' is both a user and an admin", "registry.log"),
], ids=["setting", "quotas", "misspelt", "zero", "huge", "list", "role", "empty", "entry",
        "admin"])
def test_arena_up_that_cannot_start_says_why_in_one_line(tmp_path: Path, name: str, value: str,
                                                         said: str, log: str) -> None:
    result = subprocess.run([sys.executable, "-m", "arena.clients", "up", "--workers", "1"],
                            text=True, capture_output=True, timeout=180,
                            env=dict(os.environ, ARENA_HOME=str(tmp_path), **{name: value}))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().count("\n") == 0, result.stderr  # one line
    assert said in result.stderr, result.stderr
    assert str(tmp_path / "logs" / log) in result.stderr
    assert not (tmp_path / "stack.json").exists()


def test_arena_worker_without_a_stack_says_what_to_do(tmp_path: Path) -> None:
    result = _arena(tmp_path, "worker", timeout=60)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "no running stack" in result.stderr and "arena up" in result.stderr


def _manifest(home: Path) -> dict[str, Any]:
    return dict(json.loads((home / "stack.json").read_text()))


def test_first_start_compiles_the_engines_once_and_workers_only_load_them(
        tmp_path: Path) -> None:
    """On a fresh machine (an empty kernel cache) the launcher compiles the engines in one
    process before its workers start: two workers and an analyst each compiling everything
    at once took `make demo` past the 120 s ready timeout on 2 cores. Numba's cache log
    says who compiled (``data saved``) and who only loaded (``data loaded``)."""
    from arena.services.common.launcher import Launcher

    env = {"NUMBA_CACHE_DIR": str(tmp_path / "kernels"), "NUMBA_DEBUG_CACHE": "1",
           "ARENA_WARM_GAMES": "gomoku"}  # one game keeps the cold compile short
    with Launcher(home=tmp_path / "arena", workers=2, analysts=1, env=env) as stack:
        compile_log = (stack.home / "logs" / "compile.log").read_text()
        assert "engines ready (gomoku)" in compile_log
        assert "[cache] data saved to" in compile_log
        for name in ("worker-1", "worker-2", "analyst-1"):
            log = (stack.home / "logs" / f"{name}.log").read_text()
            assert "[cache] data loaded from" in log, name
            assert "[cache] data saved to" not in log, f"{name} compiled a kernel itself"


def _warm(games: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.services.worker.warm"],
                          env=dict(os.environ, ARENA_WARM_GAMES=games),
                          capture_output=True, text=True, timeout=600)


def test_the_compile_step_compiles_each_game_in_a_process_of_its_own() -> None:
    """The games share no kernel, so on a fresh machine each is compiled by a child of its
    own, at once, and the first start waits for the slowest game, not for the sum (the
    figures: bench/compile_engines.py). Each child reports its game, then the parent the
    whole. A game that does not exist is one line, before anything is compiled."""
    compile_engines()  # this test checks the split, not a cold compile (above)
    done = _warm("othello, gomoku")
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("engines ready")]
    # All it printed, if not: once (in a full run, not since) the othello child's line was
    # missing from the lines that start so, and what stood there instead was not kept.
    assert sorted(line.split(" in ")[0] for line in lines) == [
        "engines ready (gomoku)", "engines ready (othello)", "engines ready (othello, gomoku)"
    ], (done.stdout, done.stderr)
    assert lines[-1].startswith("engines ready (othello, gomoku)")

    wrong = _warm("othello,chess")
    assert wrong.returncode == 2 and "Traceback" not in wrong.stderr
    assert wrong.stderr.strip() == (
        "arena-worker: configuration error: unknown game 'chess'; known: othello, gomoku")
    assert "engines ready" not in wrong.stdout


def test_a_small_machine_runs_as_many_workers_as_its_memory_holds(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Cores allow 8 or more workers; memory caps them at one per 512 MB (a machine's
    memory is the boundary faked here), and never below one."""
    from arena.services.common import launcher

    pages = {"SC_PAGE_SIZE": 4096}
    monkeypatch.setattr(launcher.os, "sysconf", lambda name: pages[name])
    for memory, expected in ((64 << 30, max(8, 4 * len(os.sched_getaffinity(0)))),
                             (1 << 30, 2), (1536 << 20, 3), (100 << 20, 1)):
        pages["SC_PHYS_PAGES"] = memory // 4096
        assert launcher.max_workers() == expected, memory
    with pytest.raises(launcher.InvalidArgumentError, match="one per 512 MB of memory"):
        launcher.check_worker_count(2)


def test_a_port_taken_before_its_service_binds_it_moves_the_stack_to_other_ports(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another program may take a port between the launcher's choice and the service's
    bind (seen: two stacks starting at once, one's worker ending 'could not bind
    127.0.0.1:25021'), and the start failed. The service now exits with EXIT_PORT_TAKEN,
    and the launcher starts the stack's services again on other ports. Here the
    registry's first port is one a socket of this test listens on."""
    from arena.services.common import launcher

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        first = iter([port])
        chosen = launcher.free_port
        monkeypatch.setattr(launcher, "free_port", lambda: next(first, 0) or chosen())
        with launcher.Launcher(home=tmp_path / "arena", workers=0) as stack:
            assert port not in {p.port for p in stack.processes.values()}
            assert check_health(stack.target("registry"))
            assert check_health(stack.target("referee"))
    said = (tmp_path / "arena" / "logs" / "registry.log").read_text()
    assert f"cannot serve on 127.0.0.1:{port}: could not bind" in said, said
