"""`arena engine openings gomoku`: balanced openings judged by a real protocol engine
(Arena's own brain at a fixed depth, `pbrain-arena`, through the worker's pool), made and
refused as a user runs the command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from arena.clients.cli import main as arena
from arena.services.worker.engines.teacher import catalog_teacher

from arena.engine.teacher import Position
from arena.openings.balance import canonical
from arena.openings.gomoku import parse_compact, read_suite

from .conftest import TEACHER_DEPTH, teacher_catalog

pytestmark = pytest.mark.usefixtures("no_orphans")
JUDGE = f"arena-d{TEACHER_DEPTH}"
WINDOW = 300  # pbrain-arena's units: 1,000 per unit of log-odds


def _make(catalog: Path, output: Path, *more: str) -> int:
    return arena(["engine", "openings", "gomoku", "--judge", JUDGE, "--catalog", str(catalog),
                  "--window", str(WINDOW), "--output", str(output), *more])


def _body(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if not line.startswith("#")]


def test_the_openings_are_what_the_judge_calls_even_distinct_and_seeded(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every kept opening is legal, of the stones asked for, unlike the others under the
    board's symmetries, and the judge asked again scores it as the file says, within the
    window and not won; the same seed gives the same suite whatever the processes (the
    judge is deterministic per position), another seed another one."""
    catalog = teacher_catalog(tmp_path)
    suite = tmp_path / "wide.txt"
    assert _make(catalog, suite, "--count", "8", "--seed", "3", "--stones", "3-6",
                 "--jobs", "2") == 0
    out = capsys.readouterr().out
    assert f"wrote {suite}: 8 openings" in out
    # within the first batch of 50, every 5 judged (a judge at its time limit is slow)
    assert out.startswith("judged 5\njudged 10\n")
    text = suite.read_text()
    assert (f"# made by: arena engine openings gomoku --judge {JUDGE} --catalog "
            f"teachers.toml --judge-ms 10000 --window {WINDOW} --count 8 --seed 3 --stones "
            "3-6 --jobs 2 --output wide.txt\n") in text
    compacts = read_suite(text)
    assert len(compacts) == 8
    openings = [parse_compact(c) for c in compacts]  # legal moves, or it raises
    assert all(3 <= len(o.moves) <= 6 for o in openings)
    assert len({canonical(o.moves) for o in openings}) == 8
    recorded = [float(line.split("|")[1]) for line in _body(suite)]
    judge = catalog_teacher(str(catalog), JUDGE, "gomoku", 10_000)
    again = judge.judge([Position(o.position, o.moves) for o in openings], 1)
    assert [j.score for j in again] == recorded
    assert all(abs(j.score) <= WINDOW and not j.exact for j in again)

    alone = tmp_path / "alone.txt"
    assert _make(catalog, alone, "--count", "8", "--seed", "3", "--stones", "3-6") == 0
    assert _body(alone) == _body(suite)
    other = tmp_path / "other.txt"
    assert _make(catalog, other, "--count", "8", "--seed", "4", "--stones", "3-6") == 0
    assert _body(other) != _body(suite)


def test_a_screen_goes_first_and_the_judge_sees_only_what_it_passes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same engine as screen, with a narrower window than the judge's: every kept
    opening is within the screen's window, and the file says so."""
    catalog = teacher_catalog(tmp_path)
    suite = tmp_path / "screened.txt"
    assert _make(catalog, suite, "--count", "6", "--seed", "3", "--stones", "3-6",
                 "--screen", JUDGE, "--screen-window", "60") == 0
    out = capsys.readouterr().out
    text = suite.read_text()
    assert f"--judge {JUDGE} --screen {JUDGE} --screen-window 60 --catalog" in text
    assert f'\n# screen: {{"catalog": "{catalog}"' in text
    drawn, screened, judged = (int(n) for n in re.findall(
        r"# (\d+) drawn, (\d+) screened, (\d+) judged, 6 kept", text)[0])
    assert drawn >= screened > judged >= 6 and f"{drawn} drawn, {screened} screened" in out
    scores = [float(line.split("|")[1]) for line in _body(suite)]
    assert len(scores) == 6 and all(abs(score) <= 60 for score in scores)
    assert _make(catalog, tmp_path / "x.txt", "--screen-window", "60") == 1
    assert "--screen-window applies only with --screen" in capsys.readouterr().err


@pytest.mark.parametrize(("more", "said"), [
    (["--window", "0"], "--window must be a finite number above 0, got 0"),
    (["--window", "nan"], "--window must be a finite number above 0, got nan"),
    (["--window", "inf"], "--window must be a finite number above 0, got inf"),
    (["--count", "0"], "--count must be in 1..1000, got 0"),
    (["--stones", "9-3"], "--stones must be FEWEST-MOST with 1 <= FEWEST <= MOST <= 20, "
                          "got 9-3"),
    (["--stones", "three"], "--stones must be FEWEST-MOST (like 3-9) or one number, got "
                            "'three'"),
    (["--judge-ms", "0"], "--judge-ms must be in 1..600000, got 0"),
    (["--screen", JUDGE, "--screen-window", "-1"],
     "--screen-window must be a finite number above 0, got -1"),
    (["--screen", "nobody"], "nobody"),
    (["--jobs", "0"], "--jobs must be in 1.."),
    (["--judge", "nobody"], "nobody"),
    (["--judge", "othello-only"], "engine 'othello-only' plays othello, not gomoku"),
    (["--output", "suite.json"], "--output is a .txt file here, got 'suite.json'"),
    (["--output", "missing/suite.txt"], "--output's folder"),
])
def test_bad_options_are_refused_before_anything_is_judged(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], more: list[str], said: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = teacher_catalog(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert _make(catalog, tmp_path / "suite.txt", *more) == 1
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err, err
    assert not (tmp_path / "suite.txt").exists() and not (tmp_path / "suite.json").exists()


def test_asking_for_more_than_the_draws_can_give_says_so_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One stone within 5 points of the centre is one of 21 openings under the board's
    symmetries: 30 of them cannot be found, however wide the window."""
    catalog = teacher_catalog(tmp_path)
    suite = tmp_path / "suite.txt"
    assert arena(["engine", "openings", "gomoku", "--judge", JUDGE, "--catalog",
                  str(catalog), "--window", "1e9", "--stones", "1", "--count", "30",
                  "--output", str(suite)]) == 1
    err = capsys.readouterr().err
    assert "only 21 of 21 openings judged were within 1e+09 of even (1200 drawn" in err, err
    assert not suite.exists()
