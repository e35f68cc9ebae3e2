"""The engine catalog: a valid file gives checksummed specs; every problem of a bad one is
reported at once, field by field."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest
from arena.services.worker.engines.catalog import (
    CatalogError,
    EngineLimits,
    catalog_file,
    checksum,
    load_catalog,
    parse_catalog,
    sample_catalog_path,
)

from arena.errors import NotFoundError


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    engine = tmp_path / "bin" / "pbrain-test"
    engine.parent.mkdir()
    engine.write_text("#!/bin/sh\nexit 0\n")
    engine.chmod(0o755)
    (tmp_path / "weights.bin").write_bytes(b"\x00" * 100)
    return tmp_path


GOOD = """
[engines.tester]
description = "a test brain"
games = ["gomoku"]
protocol = "gomocup"
command = ["bin/pbrain-test", "--fast"]
files = ["weights.bin"]
options = { thread_num = 1, hash_size = 64 }
limits = { memory_mb = 256, grace_ms = 100 }
env = { TESTER = "yes" }

[engines.edaxish]
games = ["othello"]
protocol = "nboard"
command = "bin/pbrain-test -nboard"
options = { depth = 8, version = 1 }
"""


def test_a_good_catalog(folder: Path) -> None:
    catalog = parse_catalog(GOOD, folder)
    tester = catalog.get("tester")
    assert tester.command == (str(folder / "bin" / "pbrain-test"), "--fast")
    assert tester.games == ("gomoku",) and tester.protocol == "gomocup"
    assert tester.options == (("hash_size", 64), ("thread_num", 1))
    assert tester.limits == EngineLimits(memory_mb=256, grace_ms=100)
    assert tester.env == (("TESTER", "yes"),)
    content = (folder / "bin" / "pbrain-test").read_bytes() + (folder / "weights.bin").read_bytes()
    assert tester.checksum == hashlib.sha256(content).hexdigest()
    edax = catalog.get("edaxish")
    assert edax.command[1:] == ("-nboard",) and edax.option("depth") == 8
    assert [s.name for s in catalog.for_game("othello")] == ["edaxish"]


def test_a_changed_file_is_a_different_engine(folder: Path) -> None:
    before = parse_catalog(GOOD, folder).get("tester")
    (folder / "weights.bin").write_bytes(b"\x01" * 100)
    after = parse_catalog(GOOD, folder).get("tester")
    assert before.checksum != after.checksum and before != after


def test_a_data_folder_is_hashed_file_by_file(folder: Path) -> None:
    """A folder in ``files`` (an engine's book, networks, configuration): its checksum
    covers every file under it, by path and content, so a changed, renamed, added or
    removed file is a different engine."""
    data = folder / "data"
    (data / "nets").mkdir(parents=True)
    (data / "config.toml").write_text("threads = 1\n")
    (data / "nets" / "a.bin").write_bytes(b"\x02" * 10)
    (data / "to-a.bin").symlink_to(data / "nets" / "a.bin")  # a link to a file counts
    (data / "to-nets").symlink_to(data / "nets")  # a link to a folder is not followed
    text = GOOD.replace('files = ["weights.bin"]', 'files = ["weights.bin", "data"]')
    tester = parse_catalog(text, folder).get("tester")
    assert tester.files == (str(folder / "weights.bin"), str(data))
    content = ((folder / "bin" / "pbrain-test").read_bytes()
               + (folder / "weights.bin").read_bytes()
               + b"config.toml\0threads = 1\n" + b"nets/a.bin\0" + b"\x02" * 10
               + b"to-a.bin\0" + b"\x02" * 10)
    assert tester.checksum == hashlib.sha256(content).hexdigest()
    sums = {tester.checksum}
    for change in (lambda: (data / "nets" / "a.bin").write_bytes(b"\x03" * 10),
                   lambda: (data / "nets" / "a.bin").rename(data / "nets" / "b.bin"),
                   lambda: (data / "nets" / "c.bin").write_bytes(b""),
                   lambda: (data / "config.toml").unlink()):
        change()
        sums.add(parse_catalog(text, folder).get("tester").checksum)
    assert len(sums) == 5


def test_bare_names_are_found_on_path_and_beside_python(folder: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(folder / "bin"))
    text = """
        [engines.on-path]
        games = ["gomoku"]
        protocol = "gomocup"
        command = ["pbrain-test"]

        [engines.beside-python]
        games = ["gomoku"]
        protocol = "gomocup"
        command = ["pbrain-arena"]
    """
    catalog = parse_catalog(text, Path("/"))
    assert catalog.get("on-path").command[0] == str(folder / "bin" / "pbrain-test")
    assert catalog.get("beside-python").command[0] == str(
        Path(sys.executable).parent / "pbrain-arena")


def test_a_linked_interpreter_runs_where_it_is_linked(folder: Path) -> None:
    """A virtualenv's python is a link: run through the target, it would not find the
    virtualenv's packages. The checksum is of the target's bytes."""
    link = folder / "venv-python"
    link.symlink_to(Path(sys.executable).resolve())
    text = f"""
        [engines.linked]
        games = ["othello"]
        protocol = "nboard"
        command = ["{link}", "engine.py"]
    """
    engine = parse_catalog(text, folder).get("linked")
    assert engine.command[0] == str(link)
    assert engine.checksum == checksum(Path(sys.executable).resolve())


def test_every_problem_is_reported_at_once(folder: Path) -> None:
    text = """
        colour = "red"

        [engines.Bad_Name]
        games = ["gomoku"]

        [engines.wrong]
        games = ["othello", "chess"]
        protocol = "gomocup"
        command = ["bin/nothing"]
        files = ["missing.bin"]
        options = { timeout_turn = 5, "Bad Key" = 1 }
        limits = { memory_mb = 0, cpu_s = "lots", speed = 3 }
        env = { "1X" = "y" }
        extra = true

        [engines.nboard-options]
        games = ["othello"]
        protocol = "nboard"
        command = ["bin/pbrain-test"]
        options = { depth = 0, contempt = "high", colour = 1, version = 3 }

        [engines.no-protocol]
        games = []
        command = []
    """
    with pytest.raises(CatalogError) as caught:
        parse_catalog(text, folder, "engines.toml")
    fields = {v.field for v in caught.value.violations}
    assert fields == {
        "colour", "engines.Bad_Name",
        "engines.wrong.games", "engines.wrong.command", "engines.wrong.files",
        "engines.wrong.options.timeout_turn", "engines.wrong.options.Bad Key",
        "engines.wrong.limits.memory_mb", "engines.wrong.limits.cpu_s",
        "engines.wrong.limits.speed", "engines.wrong.env.1X", "engines.wrong.extra",
        "engines.nboard-options.options.depth", "engines.nboard-options.options.contempt",
        "engines.nboard-options.options.colour", "engines.nboard-options.options.version",
        "engines.no-protocol.protocol", "engines.no-protocol.games",
        "engines.no-protocol.command",
    }
    message = str(caught.value)
    assert message.startswith("bad engine catalog engines.toml")
    assert "gomocup engines play ['gomoku'], not 'othello'" in message
    assert "no executable 'bin/nothing'" in message


def test_unreadable_catalogs(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match=r"cannot read the engine catalog .*the name 'arena' is "
                                           r"the catalog of Arena's own engines"):
        load_catalog(tmp_path / "absent.toml")
    (tmp_path / "broken.toml").write_text("[engines\n")
    with pytest.raises(CatalogError, match="is not TOML"):
        load_catalog(tmp_path / "broken.toml")


def test_the_name_arena_is_the_shipped_catalog(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # wherever the command runs
    assert catalog_file("arena") == sample_catalog_path()
    shipped = load_catalog("arena")
    assert {"arena-nboard-fast", "pbrain-arena"} <= set(shipped.engines)
    assert shipped.engines == load_catalog(sample_catalog_path()).engines
    (tmp_path / "arena").write_text("")  # a file of one's own so named: ./arena
    assert catalog_file("./arena") == Path("arena")
    assert load_catalog("./arena").engines == {}


def test_a_script_without_execute_permission_is_not_an_engine(folder: Path) -> None:
    os.chmod(folder / "bin" / "pbrain-test", 0o644)
    with pytest.raises(CatalogError, match="no executable"):
        parse_catalog(GOOD, folder)


def test_unknown_engines_and_bot_options(folder: Path) -> None:
    catalog = parse_catalog(GOOD, folder, "engines.toml")
    with pytest.raises(NotFoundError, match=r"no engine 'edax' .*has: edaxish, tester"):
        catalog.get("edax")
    edax = catalog.get("edaxish")
    # The catalog's options win: a bot's depth 12 (registered before the operator set
    # depth 8, say) plays at 8; what the catalog leaves out is the bot's to set.
    assert edax.with_options({"depth": 12}) == edax == edax.with_options({"depth": 8})
    bolder = edax.with_options({"contempt": 3})
    assert bolder.option("contempt") == 3 and bolder.option("depth") == 8 and bolder != edax
    tester = catalog.get("tester")
    assert tester.with_options({"thread_num": 64, "hash_size": 1 << 24}) == tester
    with pytest.raises(CatalogError, match=r"options\.depth: must be int in 1\.\.60"):
        edax.with_options({"depth": 61})
    with pytest.raises(CatalogError, match="the worker sets"):
        catalog.get("tester").with_options({"max_memory": 1})


def test_gtp_engines_play_othello_and_take_only_a_clock(folder: Path) -> None:
    gtp = """
        [engines.gtpish]
        games = ["othello"]
        protocol = "gtp"
        command = "bin/pbrain-test -gtp"
        options = { clock = true }
    """
    spec = parse_catalog(gtp, folder).get("gtpish")
    assert spec.protocol == "gtp" and spec.option("clock") is True
    assert spec.with_options({"clock": False}).option("clock") is True  # the catalog's
    with pytest.raises(CatalogError, match=r"options\.clock: must be true or false"):
        spec.with_options({"clock": 1})
    with pytest.raises(CatalogError, match=r"options\.depth: unknown GTP option \(known: clock"):
        spec.with_options({"depth": 12})
    with pytest.raises(CatalogError, match=r"gtp engines play \['othello'\], not 'gomoku'"):
        parse_catalog(gtp.replace('["othello"]', '["gomoku"]'), folder)
