"""Bad input and unreachable servers: one line on stderr, a non-zero exit, no traceback."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.clients.conftest import RunArena, assert_one_line_error


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


SERVICE_COMMANDS = [
    ("match", "list"),
    ("match", "show", "m-1"),
    ("match", "watch", "m-1"),
    ("match", "replay", "m-1"),
    ("match", "tree", "m-1", "--ply", "1"),
    ("match", "export", "m-1"),
    ("match", "delete", "m-1"),
    ("match", "create", "--black", "lucy", "--white", "ryo"),
    ("ladder", "list"),
    ("ladder", "standings", "l-1"),
    ("ladder", "watch", "l-1"),
    ("ladder", "cancel", "l-1"),
    ("ladder", "create", "lucy", "ryo"),
    ("analyze", "--bot", "lucy"),
]


@pytest.mark.parametrize("command", SERVICE_COMMANDS, ids=" ".join)
def test_unreachable_server(run_arena: RunArena, command: tuple[str, ...]) -> None:
    port = _closed_port()
    env = {f"ARENA_{role}": f"127.0.0.1:{port}"
           for role in ("REGISTRY", "REFEREE", "LADDER", "ENGINE")}
    result = run_arena(*command, env=env)
    assert_one_line_error(result, "unreachable", f"127.0.0.1:{port}")


def test_no_stack_running_says_how_to_start_one(run_arena: RunArena) -> None:
    assert_one_line_error(run_arena("match", "list"), "no referee address", "arena up")
    assert_one_line_error(run_arena("ladder", "list"), "no ladder address")


def test_global_option_overrides_the_environment(run_arena: RunArena) -> None:
    port = _closed_port()
    result = run_arena("--ladder", f"127.0.0.1:{port}", "ladder", "list",
                       env={"ARENA_LADDER": "127.0.0.1:1"})
    assert_one_line_error(result, f"127.0.0.1:{port}")


def test_corrupt_stack_file(run_arena: RunArena, tmp_path: Path) -> None:
    (tmp_path / ".arena").mkdir()
    (tmp_path / ".arena" / "stack.json").write_text("{not json")
    assert_one_line_error(run_arena("match", "list"), "stack file")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("match", "replay", "missing.json"), "no such game record file"),
        (("match", "create", "--black", "@x", "--white", "ryo"), "bad bot reference"),
        (("match", "create", "--black", "a", "--white", "b", "--opening", "zz"),
         "invalid Othello move"),
        (("match", "create", "--black", "a", "--white", "b", "--opening", "a1"), "illegal"),
        (("match", "create", "--black", "a", "--white", "b", "--start", "XO"), "Othello"),
        (("analyze", "--config", "missing.json"), "no such engine configuration file"),
        (("play", "--board", "missing.brd"), "no such board file"),
        (("play", "--start", "nonsense X"), "Othello"),
        (("play", "--mode", "bot-bot", "--bot", "nosuchbot"), "unknown bot 'nosuchbot'"),
        (("play", "--game", "gomoku", "--size", "4"), "size"),
        (("play", "--variant", "chess"), "unknown Othello variant"),
        (("play", "--mode", "human-human", "--black", "lucy"), "human on that side"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else v,
)
def test_bad_input(run_arena: RunArena, args: tuple[str, ...], needle: str) -> None:
    assert_one_line_error(run_arena(*args), needle)


def test_bad_replay_file(run_arena: RunArena, tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text('{"format": "arena-replay",\n "version": 1,')
    assert_one_line_error(run_arena("match", "replay", "broken.json"), "line")
    (tmp_path / "wrong.json").write_text('{"format": "something-else"}')
    assert_one_line_error(run_arena("match", "replay", "wrong.json"))


def test_bad_engine_config_file(run_arena: RunArena, tmp_path: Path) -> None:
    (tmp_path / "bot.json").write_text("[1, 2]")
    assert_one_line_error(run_arena("play", "--mode", "bot-bot", "--bot", "bot.json"),
                          "JSON object")
