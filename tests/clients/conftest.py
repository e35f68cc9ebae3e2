"""Helpers for running the real `arena` command in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

RunArena = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run_arena(tmp_path: Path) -> RunArena:
    """Run ``python -m arena.clients ARGS`` in ``tmp_path`` with an isolated ARENA_HOME
    (so no real stack is found unless a test points at one)."""

    def run(*args: str, stdin: str = "", env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
        full_env["ARENA_HOME"] = str(tmp_path / ".arena")
        full_env["PYTHONPATH"] = str(REPO)
        full_env.update(env or {})
        return subprocess.run(
            [sys.executable, "-m", "arena.clients", *args], input=stdin, text=True,
            capture_output=True, cwd=tmp_path, env=full_env, timeout=timeout,
        )

    return run


def assert_one_line_error(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    """A failed command: non-zero exit, one line on stderr, no traceback."""
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("arena: error: "), lines[0]
    for needle in needles:
        assert needle in lines[0], lines[0]
