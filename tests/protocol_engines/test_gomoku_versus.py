"""`bench/gomoku_versus.py`: games of an arena-gomoku preset against a catalog's protocol
engine (Arena's own brain at a fixed depth here, a real engine process), run as a user
runs the bench, kept as records that `arena engine train gomoku --records` trains on."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from arena.clients.cli import main as arena

from arena.formats.psq import parse_psq
from arena.openings import load_suite

from .conftest import TEACHER_DEPTH, teacher_catalog

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "gomoku_versus.py"
pytestmark = pytest.mark.usefixtures("no_orphans")


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gomoku_versus", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(catalog: Path, engine: str, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCH), "--engine", engine, "--catalog",
                           str(catalog), "--output", str(out), "--seed", "5", *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)


def test_games_against_an_engine_are_finished_reproducible_records(tmp_path: Path) -> None:
    catalog = teacher_catalog(tmp_path)
    engine = f"arena-d{TEACHER_DEPTH}"
    two, one = tmp_path / "two", tmp_path / "one"
    done = _run(catalog, engine, two, "--games", "3", "--nodes", "3000", "--jobs", "2")
    assert done.returncode == 0, done.stderr
    assert f"3 games of arena-gomoku-board (3000 nodes a move) against {engine}" in done.stdout
    names = sorted(p.name for p in two.iterdir())
    assert names == ["g5-00000.psq", "g5-00001.psq", "g5-00002.psq"]
    bench = _bench()
    for index, name in enumerate(names):
        game = parse_psq((two / name).read_text())
        moves = game.move_indices()
        opening, _colour = bench.start(5, index, 2)
        assert moves[:len(opening)] == opening  # the balanced opening and two random moves
        assert game.final_board().is_game_over()  # played to its end
    # The bot searches a fixed number of nodes and this engine a fixed depth: the same
    # games whatever the number of processes.
    again = _run(catalog, engine, one, "--games", "3", "--nodes", "3000", "--jobs", "1")
    assert again.returncode == 0, again.stderr
    assert [(one / n).read_bytes() for n in names] == [(two / n).read_bytes() for n in names]
    assert arena(["engine", "train", "gomoku", "--records", str(two), "--holdout", "0.34",
                  "--output", str(tmp_path / "w.json")]) == 0


def test_the_openings_differ_by_game_and_stay_near_the_stones() -> None:
    bench = _bench()
    starts = [bench.start(1, game, 2) for game in range(40)]
    assert len({tuple(opening) for opening, _c in starts}) == 40
    assert {colour for _o, colour in starts} == {0, 1}
    for opening, _colour in starts:
        assert len(set(opening)) == len(opening)
        for extra in opening[-2:]:
            assert any(abs(extra // 15 - m // 15) <= 2 and abs(extra % 15 - m % 15) <= 2
                       for m in opening if m != extra)


def test_the_wide_suite_gives_its_own_openings_and_the_default_the_twelve() -> None:
    bench = _bench()
    wide = {o.moves for o in load_suite("gomoku-wide15").openings}
    twelve = {o.moves for o in load_suite("gomoku-balanced15").openings}
    starts = [tuple(bench.start(1, game, 0, "gomoku-wide15")[0]) for game in range(60)]
    assert set(starts) <= wide and len(set(starts)) >= 45  # 60 draws of 200
    assert all(tuple(bench.start(1, game, 0)[0]) in twelve for game in range(60))


@pytest.mark.parametrize(("engine", "extra", "message"), [
    ("crashing", [], "gomoku_versus.py: error: crashing: game "),
    ("crashing", ["--jobs", "2"], "gomoku_versus.py: error: crashing: game "),
    ("othello-only", [], "engine 'othello-only' plays othello, not gomoku"),
    ("no-such", [], "no engine 'no-such' in the catalog"),
    ("crashing", ["--nodes", "0"], "--nodes must be in 1.."),
    ("crashing", ["--bot", "sharpmoku-hard"], "--bot must be one of arena-gomoku"),
    ("crashing", ["--output", __file__], "test_gomoku_versus.py': File exists"),
    ("crashing", ["--random-moves", "5"], "--random-moves must be in 0..4"),
    ("crashing", ["--openings", "othello-balanced"], "--openings: opening suite "
                                                     "'othello-balanced' is for othello"),
    ("crashing", ["--openings", "none"], "--openings must be a 15x15 Gomoku suite"),
])
def test_bad_runs_are_one_line_errors(tmp_path: Path, engine: str, extra: list[str],
                                      message: str) -> None:
    done = _run(teacher_catalog(tmp_path), engine, tmp_path / "out", "--games", "2", *extra)
    assert done.returncode != 0
    assert message in done.stderr and "Traceback" not in done.stderr, done.stderr
