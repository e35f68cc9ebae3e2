"""Real engine processes for the worker's protocol engine tests: a shared sandbox, specs of
the misbehaving fake engine, and a check that a test leaves no engine process behind."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from arena.services.worker.engines.catalog import Catalog, EngineLimits, EngineSpec, checksum
from arena.services.worker.engines.cgroups import PREFIX
from arena.services.worker.engines.host import EngineHost
from arena.services.worker.engines.pool import EnginePool
from arena.services.worker.engines.sandbox import MARKER, Protections, Sandbox

from arena.games import GomokuBoard
from arena.v1 import bots_pb2, common_pb2, engine_pb2

FAKE_ENGINE = Path(__file__).with_name("fake_engine.py")
TEACHER_DEPTH = 2
OTHELLO_START = "---------------------------OX------XO--------------------------- X"
FakeSpec = Callable[..., EngineSpec]


def empty_gomoku(size: int = 15, rule: str = "freestyle") -> str:
    return f"{size} {rule} {'/'.join(['-' * size] * size)} X"


def hosted(spec: EngineSpec, sandbox: Sandbox) -> tuple[EngineHost, bots_pb2.BotVersion]:
    """A worker's engine host offering ``spec`` alone, and a bot that plays it."""
    host = EngineHost(Catalog({spec.name: spec}), EnginePool(sandbox))
    bot = bots_pb2.BotVersion(spec=bots_pb2.BotSpec(protocol=bots_pb2.ProtocolEngine(
        engine=spec.name, checksum=spec.checksum)))
    return host, bot


def gomoku_job(bot: bots_pb2.BotVersion, board: GomokuBoard, limit_ms: int
               ) -> engine_pb2.MoveJob:
    """The move job timed on CPU a match sends for ``bot`` in ``board``'s position."""
    return engine_pb2.MoveJob(game=common_pb2.GAME_KIND_GOMOKU, bot=bot,
                              position=common_pb2.Position(text=board.to_text()),
                              history=board.move_stack, time_budget_ms=limit_ms,
                              cpu_clock=True)


def sandboxed_pids(worker_pid: int | None = None) -> list[int]:
    """Live processes started by the sandboxes of a process (by default this one)."""
    prefix = f"{MARKER}={PREFIX}{worker_pid or os.getpid()}-".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and any(v.startswith(prefix) for v in environ.split(b"\0")):
            found.append(int(entry.name))
    return found


def leftover_groups(protections: Protections) -> list[Path]:
    mine = f"{PREFIX}{os.getpid()}-"
    return [group for hierarchy in protections.cgroups.values()
            for group in hierarchy.parent.iterdir() if group.name.startswith(mine)]


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    box = Sandbox(root=tmp_path_factory.mktemp("engines"))
    print("\n".join(["sandbox protections:", *box.protections.describe()]))
    return box


@pytest.fixture
def no_orphans(sandbox: Sandbox) -> Iterator[None]:
    """The test must leave no engine process, cgroup or working folder behind."""
    yield
    assert sandboxed_pids() == []
    assert leftover_groups(sandbox.protections) == []
    assert [p for p in sandbox.root.iterdir() if p.name.startswith(PREFIX)] == []


@pytest.fixture
def fake_spec() -> FakeSpec:
    """``fake_spec(protocol, mode, arg="", **limits)``: the fake engine as a catalog entry."""

    def make(protocol: str, mode: str, arg: str = "", **limits: int) -> EngineSpec:
        games = ("othello",) if protocol in ("nboard", "gtp") else ("gomoku",)
        base = EngineLimits(memory_mb=256, startup_ms=20_000, grace_ms=300)
        command = (sys.executable, str(FAKE_ENGINE), protocol, mode, *([arg] if arg else []))
        return EngineSpec(f"fake-{protocol}-{mode}", protocol, games, command,
                          checksum(sys.executable), limits=replace(base, **limits))

    return make


def teacher_catalog(tmp_path: Path) -> Path:
    """A catalog of Arena's own brain at a fixed depth (deterministic, `arena-d2`) and of
    fake engines that misbehave, as a training's teacher or opponent finds them."""
    brain = shutil.which("pbrain-arena", path=str(Path(sys.executable).parent))
    assert brain, "pbrain-arena is not installed beside this Python (make setup)"
    path = tmp_path / "teachers.toml"
    path.write_text(f"""
[engines.arena-d{TEACHER_DEPTH}]
games = ["gomoku"]
protocol = "gomocup"
command = ["{brain}", "--preset", "arena-gomoku", "--depth", "{TEACHER_DEPTH}"]
limits = {{ memory_mb = 1024, startup_ms = 180000, grace_ms = 500 }}

[engines.mute]
games = ["gomoku"]
protocol = "gomocup"
command = ["{sys.executable}", "{FAKE_ENGINE}", "gomocup", "play"]

[engines.crashing]
games = ["gomoku"]
protocol = "gomocup"
command = ["{sys.executable}", "{FAKE_ENGINE}", "gomocup", "crash"]

[engines.othello-only]
games = ["othello"]
protocol = "nboard"
command = ["{sys.executable}", "{FAKE_ENGINE}", "nboard", "play"]
""")
    return path
