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
