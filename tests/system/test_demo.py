"""The main job end to end: a small ladder through the CLI against the real stack, and
`arena demo` (what `make demo` runs) from start to finish."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from arena.services.common.launcher import Launcher

from tests.support.stacks import launcher

REPO = Path(__file__).resolve().parents[2]
LADDER_BOTS = {"sys-beginner": "lab-beginner", "sys-intermediate": "lab-intermediate",
               "sys-advanced": "lab-advanced", "sys-madoka": "madoka"}


def _arena(home: Path, *args: str, timeout: float = 600) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env |= {"ARENA_HOME": str(home), "PYTHONPATH": str(REPO)}
    result = subprocess.run([sys.executable, "-m", "arena.clients", *args], env=env,
                            capture_output=True, text=True, timeout=timeout, cwd=home)
    assert result.returncode == 0, result.stderr + result.stdout
    return result.stdout


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launcher]:
    with launcher(home=tmp_path_factory.mktemp("system"), workers=2) as running:
        yield running


def independent_elo(names: list[str], games: list[tuple[str, str, float]]) -> dict[str, float]:
    """Bradley-Terry ratings by Hunter's MM iteration (not Newton, unlike the service):
    draws count half, one virtual draw between every pair that met, mean rating 0."""
    points = {n: 0.0 for n in names}
    meetings: dict[tuple[str, str], float] = {}
    for a, b, score in games:
        points[a] += score
        points[b] += 1.0 - score
        key = (min(a, b), max(a, b))
        meetings[key] = meetings.get(key, 0.0) + 1.0
    for a, b in list(meetings):  # the prior: one more drawn game per pair
        meetings[(a, b)] += 1.0
        points[a] += 0.5
        points[b] += 0.5
    strength = {n: 1.0 for n in names}
    for _ in range(20000):
        new = {}
        for n in names:
            denominator = sum(count / (strength[a] + strength[b])
                              for (a, b), count in meetings.items() if n in (a, b))
            new[n] = points[n] / denominator
        scale = math.exp(sum(math.log(v) for v in new.values()) / len(new))
        new = {n: v / scale for n, v in new.items()}
        done = max(abs(math.log(new[n] / strength[n])) for n in names) < 1e-12
        strength = new
        if done:
            break
    elo = {n: 400.0 * math.log10(v) for n, v in strength.items()}
    mean = sum(elo.values()) / len(elo)
    return {n: v - mean for n, v in elo.items()}


def _score(match: dict[str, Any]) -> float:
    winner = match.get("result", {}).get("winner", "COLOR_UNSPECIFIED")
    return {"COLOR_BLACK": 1.0, "COLOR_WHITE": 0.0}.get(winner, 0.5)


def test_small_ladder_through_the_cli(stack: Launcher) -> None:
    home = stack.home
    for name, preset in LADDER_BOTS.items():
        _arena(home, "bot", "register", "--name", name, "--from-preset", preset)
    names = list(LADDER_BOTS)
    out = _arena(home, "ladder", "create", *names, "--games-per-pairing", "4",
                 "--move-time-ms", "500", "--watch")
    ladder_id = out.split()[1].rstrip(":")
    assert "24/24 100%" in out

    matches = json.loads(_arena(home, "match", "list", "--ladder", ladder_id, "--json",
                                "--limit", "0"))
    assert len(matches) == 24
    assert all(m["status"] == "MATCH_STATUS_FINISHED" for m in matches)
    games = [(m["black"]["name"], m["white"]["name"], _score(m)) for m in matches]
    record = {n: [0, 0, 0] for n in names}
    for black, white, score in games:
        for bot, points in ((black, score), (white, 1.0 - score)):
            record[bot][0 if points == 1.0 else 1 if points == 0.5 else 2] += 1

    standings = json.loads(_arena(home, "ladder", "standings", ladder_id, "--json"))
    expected_elo = independent_elo(names, games)
    rows = standings["rows"]
    assert sorted(row["bot"]["name"] for row in rows) == sorted(names)
    for row in rows:
        name = row["bot"]["name"]
        wins, draws, losses = record[name]
        assert (row.get("wins", 0), row.get("draws", 0), row.get("losses", 0)) == (
            wins, draws, losses)
        assert row["games"] == 12
        assert row.get("score_pct", 0.0) == pytest.approx(100 * (wins + draws / 2) / 12)
        assert row.get("elo", 0.0) == pytest.approx(expected_elo[name], abs=0.5)
        assert row["elo_low"] < row.get("elo", 0.0) < row["elo_high"]
    ranks = sorted(rows, key=lambda r: r["rank"])
    assert [r.get("elo", 0.0) for r in ranks] == sorted(
        (r.get("elo", 0.0) for r in rows), reverse=True)

    table = _arena(home, "ladder", "standings", ladder_id)
    for name in names:
        assert f"{name}@1" in table


@pytest.mark.slow
def test_make_demo_end_to_end(tmp_path: Path) -> None:
    """`arena demo` (the Makefile's `demo` target) on 2 workers, in a fresh state folder,
    with one opening per pairing instead of two (30 games, not 60) and 250 ms a move
    instead of 1 s (arena-strong, the one bot its time stops, took most of the run): the
    same path in 38 s instead of 99 (alone, on 2 cores)."""
    out = _arena(tmp_path, "demo", "--games-per-pairing", "2", "--move-time-ms", "250",
                 timeout=900)
    for name in ("lucy", "madoka", "ryo", "terra", "lab-advanced", "arena-strong"):
        assert f"{name}@1" in out
    assert "30/30 100%" in out and "Elo" in out and "95% interval" in out
    replays = sorted((tmp_path / "demo" / "replays").glob("*.json"))
    assert len(replays) == 30
    assert "Saved 30 replays" in out and "arena match replay" in out
    assert "Stopping everything" in out and "Done in" in out
    assert not (tmp_path / "demo" / "stack.json").exists()
    shown = _arena(tmp_path, "match", "replay", str(replays[0]), "--ply", "1")
    assert "ply 1/" in shown
