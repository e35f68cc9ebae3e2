"""Every benchmark under ``bench/`` says how it runs (``--help``) without running: the
README sends a reader there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HELPERS = {"arena_common.py"}  # imported by the benchmarks, not run
BENCHES = sorted(p.name for p in (ROOT / "bench").glob("*.py") if p.name not in HELPERS)


def test_the_benchmarks_are_found() -> None:
    assert {"engine_strength.py", "gomoku_judgement.py", "perft_rules.py"} <= set(BENCHES)


@pytest.mark.parametrize("name", BENCHES)
def test_a_benchmark_answers_help(name: str) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / name), "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: {name}"), done.stdout[:300]
    assert not done.stderr, done.stderr


def test_the_endgame_bench_solves_a_file(tmp_path: Path) -> None:
    """One bench run end to end (its help alone once passed while a helper it imported
    had changed shape under it, and the bench stopped at its first file), on a file saved
    as Windows Notepad saves one: a byte order mark, CRLF newlines."""
    from tests.data import shared_data_dir

    positions = (shared_data_dir() / "othello" / "fforum-1-19.obf").read_text().splitlines()
    given = tmp_path / "two.obf"
    given.write_bytes(("\ufeff" + "\r\n".join(positions[:2]) + "\r\n").encode())
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "othello_solve.py"),
                           "--files", str(given), "--runs", "1"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "0 wrong score(s)" in done.stdout, done.stdout
    assert len([line for line in done.stdout.splitlines() if " yes " in line]) == 2
