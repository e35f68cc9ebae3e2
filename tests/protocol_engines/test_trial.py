"""The operator and author tool: smoke positions, a local match against an Arena bot, and
the command line's clean errors."""

from __future__ import annotations

import subprocess
import sys

import pytest
from arena.services.worker.engines.catalog import load_catalog, sample_catalog_path
from arena.services.worker.engines.client import PlayLimits
from arena.services.worker.engines.pool import EnginePool
from arena.services.worker.engines.sandbox import Sandbox
from arena.services.worker.engines.trial import (
    MatchSettings,
    gomocup_smoke_positions,
    obf_smoke_positions,
    play_match,
    run_smoke,
)

from tests.data import shared_data_dir
from tests.protocol_engines.conftest import FakeSpec

pytestmark = pytest.mark.usefixtures("no_orphans")


def test_smoke_files_are_read_with_their_answers() -> None:
    gomoku = gomocup_smoke_positions(
        (shared_data_dir() / "gomoku" / "protocol-smoke-positions.txt").read_text())
    assert [(s.name, sorted(s.right)) for s in gomoku] == [
        ("A", [7 * 15 + 6, 7 * 15 + 11]), ("B", [7 * 15 + 6]), ("C", [7 * 15 + 6, 7 * 15 + 10])]
    assert len(gomoku[0].history) == 8 and gomoku[1].position.endswith(" O")
    othello = obf_smoke_positions(
        (shared_data_dir() / "othello" / "fforum-1-19.obf").read_text())
    assert len(othello) == 19 and othello[0].score == 18 and othello[0].right == {62}


def test_arenas_brain_passes_the_gomocup_smoke_positions(sandbox: Sandbox) -> None:
    spec = load_catalog(sample_catalog_path()).get("pbrain-arena")
    positions = gomocup_smoke_positions(
        (shared_data_dir() / "gomoku" / "protocol-smoke-positions.txt").read_text())
    lines: list[str] = []
    pool = EnginePool(sandbox)
    try:
        assert run_smoke(spec, positions, pool, PlayLimits(10_000), lines.append) == 3
    finally:
        pool.close()
    assert all(line.startswith("ok") for line in lines)


def test_a_match_against_an_arena_bot(sandbox: Sandbox) -> None:
    spec = load_catalog(sample_catalog_path()).get("arena-nboard-lab")
    lines: list[str] = []
    pool = EnginePool(sandbox)
    try:
        score = play_match(spec, "lab-beginner", MatchSettings(games=2, opening_plies=2),
                           pool, lines.append)
    finally:
        pool.close()
    assert score.wins + score.draws + score.losses == 2 and score.failures == []
    assert len(score.engine_ms) >= 50 and pool.stats.starts == 1
    assert lines[0].startswith("game 1: arena-nboard-lab as black vs lab-beginner: ")


def test_an_engine_that_fails_loses_the_game_with_its_reason(
        sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    lines: list[str] = []
    pool = EnginePool(sandbox)
    try:
        score = play_match(fake_spec("nboard", "crash"), "lab-beginner",
                           MatchSettings(games=2), pool, lines.append)
    finally:
        pool.close()
    assert (score.losses, score.failures) == (2, ["crash", "crash"])
    assert "crashing on purpose" in lines[0]


@pytest.mark.parametrize(("arguments", "message"), [
    (["match", "--engine", "nope"], "error: no engine 'nope' in the catalog"),
    (["match", "--engine", "pbrain-arena", "--against", "terra"],
     "error: unknown gomoku preset 'terra'"),
    (["--catalog", "/nonexistent.toml", "check"], "error: cannot read the engine catalog"),
    (["smoke", "--engine", "pbrain-arena", "--positions", "/bin/sh"],
     "error: the positions file /bin/sh is not UTF-8 text: byte "),
])
def test_the_command_line_fails_cleanly(arguments: list[str], message: str) -> None:
    done = subprocess.run([sys.executable, "-m", "arena.services.worker.engines", *arguments],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.startswith(message) and "Traceback" not in done.stderr
