"""An engine's files changed in place while a worker runs: the build a bot pinned is no
longer on disk, so its moves are refused (``WORKER_FAULT``: no fault of the bot's; the
worker hands the job back for a worker that has the build, and stops reading its stream)
instead of being played by the new files under the old checksum, and the worker stops
offering it (the stack's side: ``tests/system/test_protocol_bots.py``). Real engine
processes in the real sandbox, a real Redis for the worker's heartbeat."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from arena.services.common.protocol import workers
from arena.services.worker.engines.catalog import Catalog, EngineSpec, parse_catalog
from arena.services.worker.engines.host import EngineHost
from arena.services.worker.engines.pool import EnginePool
from arena.services.worker.engines.sandbox import Sandbox
from arena.services.worker.telemetry import Presence

from arena.games import GomokuBoard
from arena.v1 import bots_pb2, engine_pb2
from tests.protocol_engines.conftest import FAKE_ENGINE, gomoku_job

pytestmark = pytest.mark.usefixtures("no_orphans")
LIMIT_MS = 5000


@pytest.fixture
def engine(tmp_path: Path) -> EngineSpec:
    """A Gomocup brain as an operator installs one: an executable (a script that execs the
    fake engine) and a weights file, both hashed into its checksum."""
    script = tmp_path / "pbrain-fake"
    script.write_text(f'#!/bin/sh\nexec {sys.executable} "$1" gomocup play\n')
    script.chmod(0o755)
    (tmp_path / "weights.bin").write_bytes(b"\x00" * 4096)
    catalog = parse_catalog(f"""
[engines.brain]
games = ["gomoku"]
protocol = "gomocup"
command = ["./pbrain-fake", "{FAKE_ENGINE}"]
files = ["weights.bin"]
limits = {{ memory_mb = 256, startup_ms = 20000 }}
""", tmp_path)
    return catalog.get("brain")


@pytest.fixture
def host(engine: EngineSpec, sandbox: Sandbox) -> Iterator[EngineHost]:
    served = EngineHost(Catalog({engine.name: engine}), EnginePool(sandbox))
    try:
        yield served
    finally:
        served.close()


def pinned(engine: EngineSpec) -> bots_pb2.BotVersion:
    """A bot registered on ``engine`` as the worker offered it: its checksum pinned."""
    return bots_pb2.BotVersion(spec=bots_pb2.BotSpec(protocol=bots_pb2.ProtocolEngine(
        engine=engine.name, checksum=engine.checksum)))


def move(host: EngineHost, bot: bots_pb2.BotVersion) -> engine_pb2.MoveResult:
    """A move as the worker plays one: the engine readied before the clock, then asked."""
    job = gomoku_job(bot, GomokuBoard(15, "freestyle"), LIMIT_MS)
    return host.ready(job) or host.play(job)


def change(engine: EngineSpec, which: str) -> tuple[Path, bytes]:
    """Change the executable (a line added: it still runs) or the weights file (a byte
    rewritten: the same size) in place, the same inode, as ``cp`` onto it does; the file
    and its old bytes."""
    path = Path(engine.command[0] if which == "executable" else engine.files[0])
    before = path.read_bytes()
    with open(path, "ab" if which == "executable" else "r+b") as handle:
        handle.write(b"# build 2\n" if which == "executable" else b"\x01")
    return path, before


@pytest.mark.parametrize("which", ["executable", "files"])
def test_an_engine_changed_in_place_is_not_played_under_its_pinned_checksum(
        host: EngineHost, engine: EngineSpec, which: str) -> None:
    """The outsider's report: edit the engine's file, kill its warm process, and the next
    move started the modified file and played it under the old checksum (the worker
    compared the bot's checksum with the one it took when it read its catalog)."""
    bot = pinned(engine)
    assert move(host, bot).HasField("move")
    assert [offer.checksum for offer in host.offers()] == [engine.checksum]
    path, before = change(engine, which)
    for pid in host.pool.running():  # the warm process goes: the next move starts one
        os.kill(pid, 9)
    refused = move(host, bot)
    assert refused.error == engine_pb2.MOVE_ERROR_WORKER_FAULT, refused
    assert "changed on this worker" in refused.error_detail
    assert engine.checksum[:12] in refused.error_detail
    assert host.pool.running() == []  # nothing was started from the changed files
    assert host.offers() == []  # the heartbeat no longer offers the build
    path.unlink()  # gone: refused too, saying why
    gone = move(host, bot)
    assert gone.error == engine_pb2.MOVE_ERROR_WORKER_FAULT
    assert "cannot be read (No such file or directory" in gone.error_detail
    # The files as they were (a new inode, the same bytes): the build is back.
    path.write_bytes(before)
    path.chmod(0o755)
    assert move(host, bot).HasField("move")
    assert [offer.checksum for offer in host.offers()] == [engine.checksum]


def test_a_warm_engine_whose_file_changed_is_stopped_and_refused(
        host: EngineHost, engine: EngineSpec) -> None:
    """A warm process was started from the pinned files, but the build is no longer what
    the worker has: the move is refused all the same (as on any other worker that reads
    the changed files) and the process stopped."""
    bot = pinned(engine)
    assert move(host, bot).HasField("move")
    assert len(host.pool.running()) == 1
    change(engine, "files")
    assert move(host, bot).error == engine_pb2.MOVE_ERROR_WORKER_FAULT
    assert host.pool.running() == []


def test_touching_the_files_keeps_the_build(host: EngineHost, engine: EngineSpec) -> None:
    """A new mtime with the same bytes (``touch``, a copy of the same build) is hashed
    again and found unchanged: the build is still played."""
    bot = pinned(engine)
    assert move(host, bot).HasField("move")
    later = time.time_ns() + 10**9
    for path in (engine.command[0], *engine.files):
        os.utime(path, ns=(later, later))
    assert move(host, bot).HasField("move")
    assert len(host.offers()) == 1


def test_the_heartbeat_stops_offering_a_changed_build(
        host: EngineHost, engine: EngineSpec, redis_client: redis.Redis) -> None:
    """What the registry reads to pin a version and to accept a match (the workers'
    presence keys) loses the build within a heartbeat or two of the change, with no move
    played: a new match of its bots is refused at creation, not left waiting."""
    presence = Presence(redis_client, "worker-changed-build", lambda: None, lambda: 0,
                        ["gomoku"], offers=host.offers).start()

    def offered() -> list[str]:
        return [offer.checksum for worker in workers.alive(redis_client)
                for offer in worker.protocol_engines]

    try:
        deadline = time.monotonic() + 5
        while offered() != [engine.checksum] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert offered() == [engine.checksum]
        change(engine, "executable")
        deadline = time.monotonic() + 2 * workers.ADVERTISE_EVERY_S + 1
        while offered() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert offered() == []
        assert [w.worker_id for w in workers.alive(redis_client)] == ["worker-changed-build"]
    finally:
        presence.stop()
