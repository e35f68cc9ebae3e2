"""`arena --help` works on every level: the root, each group and each subcommand."""

from __future__ import annotations

import argparse
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from arena.clients.cli import _command_parser, build_parser

from tests.clients.conftest import RunArena


def _command_paths(
    parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()
) -> list[tuple[str, ...]]:
    paths = [prefix]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                paths += _command_paths(child, (*prefix, name))
    return paths


PATHS = _command_paths(build_parser())


def test_the_issue_commands_are_all_there() -> None:
    expected = {
        ("up",), ("demo",), ("play",), ("analyze",), ("worker",),
        *[("match", c) for c in ("create", "watch", "show", "replay", "tree", "export",
                                 "delete", "list")],
        *[("ladder", c) for c in ("create", "watch", "standings", "list", "cancel")],
    }
    assert expected <= set(PATHS)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "arena")
def test_help_on_every_level(run_arena: RunArena, path: tuple[str, ...]) -> None:
    result = run_arena(*path, "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: arena"), result.stdout
    assert "Traceback" not in result.stderr


def _usage(path: tuple[str, ...]) -> str:
    return _command_parser(build_parser(), path).format_help()


def test_only_commands_that_reach_services_say_where_they_are() -> None:
    """The engine tools run in this process: their usage listed eleven options saying
    where the services are (`arena engine perft --home ... --tls-key ...`), which they
    never read. Commands that call services keep them."""
    where = "where the services are"
    for path in PATHS:
        if len(path) == 2 and path[0] == "engine" and path[1] != "list":
            assert where not in _usage(path) and "--registry" not in _usage(path), path
    for path in [("engine", "list"), ("bot", "list"), ("match", "create"), ("analyze",),
                 ("status",), ("play",)]:
        assert where in _usage(path) and "--token" in _usage(path), path
    assert where not in _usage(("up",))


def test_a_game_left_out_is_told_as_each_command_settles_it() -> None:
    """`arena ladder ratings` names no bot, yet its help said the game left out was 'the
    one the bots play'. Each command with --game and bots (or a preset) says so."""
    for path in PATHS:
        usage = " ".join(_usage(path).split())
        if "--game {" not in usage:
            continue
        bots = path in {("match", "create"), ("ladder", "create"), ("ladder", "test"),
                        ("analyze",), ("test",)}
        assert ("game (default: the one the bots play" in usage) is bots, path


def test_no_command_is_a_usage_error(run_arena: RunArena) -> None:
    result = run_arena()
    assert result.returncode == 2
    assert "usage: arena" in result.stderr


def test_the_command_line_loads_no_compiler_to_start() -> None:
    """Every command's options (the bot options come from the engines' presets) without
    numba: importing it took `arena --help` from 0.3 s to 0.7 s, and every command paid it
    (bench/cli_startup.py prints the times). The engines load it when they search. Nor
    numpy: the parser once loaded it for a stop flag's array (0.13 s of the 0.65 s of
    `arena --version`)."""
    probe = ("import sys; from arena.clients.cli import build_parser; build_parser(); "
             "import arena.engine.othello, arena.engine.gomoku; "
             "print(len(arena.engine.othello.PRESETS) + len(arena.engine.gomoku.PRESETS)); "
             "print(sorted(m for m in ('numba', 'llvmlite', 'numpy') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    presets, loaded = result.stdout.splitlines()
    assert int(presets) > 10 and loaded == "[]"


def test_version_is_the_installed_one(run_arena: RunArena) -> None:
    project = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml")
                            .read_text())["project"]
    result = run_arena("--version")
    assert result.returncode == 0 and result.stdout == f"arena {project['version']}\n"
