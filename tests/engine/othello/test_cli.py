"""The engine tools, run in-process through ``main``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from arena.engine.tools import add_tool_commands, main
from tests.engine.othello.conftest import DATA


def _json(capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    out = capsys.readouterr().out
    loaded = json.loads(out)
    assert isinstance(loaded, dict)
    return loaded


def test_perft(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["perft", "--depth", "6", "--json"]) == 0
    payload = _json(capsys)
    assert payload["leaves"] == 8200 and payload["depth"] == 6
    assert main(["perft", "--depth", "4"]) == 0
    assert "244 leaves" in capsys.readouterr().out


def test_perft_divide_counts_below_each_root_move(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["perft", "--depth", "5", "--divide"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:4] == ["d3: 349", "c4: 349", "f5: 349", "e6: 349"]
    assert lines[4].startswith("perft 5: 1396 leaves")
    # A forced pass is the one root move; after the game's end there is none.
    black_must_pass = "OX" + "-" * 62 + " X"  # White's a1 takes c1 over Black's b1
    assert main(["perft", "--depth", "2", "--divide", "--json", "--position", black_must_pass]
                ) == 0
    payload = _json(capsys)
    assert payload["divide"] == [{"move": "PA", "leaves": 1}] and payload["leaves"] == 1
    assert main(["perft", "--depth", "3", "--divide", "--json", "--position",
                 "O" * 64 + " X"]) == 0
    payload = _json(capsys)
    assert payload["divide"] == [] and payload["leaves"] == 1


def test_solve_obf_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    lines = (DATA / "fforum-1-19.obf").read_text().splitlines()[:3]
    file = tmp_path / "three.obf"
    file.write_text("\n".join(lines) + "\n")
    assert main(["solve", str(file), "--json"]) == 0
    payload = _json(capsys)
    assert payload["all_match"] is True
    positions = payload["positions"]
    assert isinstance(positions, list) and [p["score"] for p in positions] == [18, 10, 2]
    wrong = tmp_path / "wrong.obf"
    wrong.write_text(lines[0].replace("G8:+18", "G8:+20") + "\n")
    assert main(["solve", str(wrong)]) == 1
    assert "SOME SCORES DIFFER" in capsys.readouterr().out
    # A game over has no move ('PA', a pass, was shown); a forced pass is one.
    ended = tmp_path / "ended.obf"
    ended.write_text("X" * 62 + "OO X\n" + "OX" + "-" * 62 + " X\n")
    assert main(["solve", str(ended), "--json"]) == 0
    moves = [p["move"] for p in _json(capsys)["positions"]]  # type: ignore[union-attr]
    assert moves == ["-", "PA"]


def test_analyze(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", "start", "--preset", "lab-advanced", "--json"]) == 0
    payload = _json(capsys)
    assert payload["move"] == "d3" and payload["depth"] == 4
    config = json.dumps({"evaluator": "arena", "depth": 3, "endgame_empties": 0})
    assert main(["analyze", "start", "--config", config]) == 0
    assert "depth 3" in capsys.readouterr().out


def test_bad_input_is_a_clean_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", "nonsense"]) == 2
    assert "error" in capsys.readouterr().err
    assert main(["analyze", "start", "--preset", "nobody"]) == 2
    assert main(["perft", "--depth", "-1"]) == 2


def test_mounts_under_a_parent_parser() -> None:
    parser = argparse.ArgumentParser(prog="arena")
    engine = parser.add_subparsers(dest="command").add_parser("engine")
    add_tool_commands(engine.add_subparsers(dest="engine_command", required=True))
    args = parser.parse_args(["engine", "perft", "--depth", "3", "--json"])
    assert args.func(args) == 0
