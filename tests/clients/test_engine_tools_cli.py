"""The in-process engine tools (`arena engine train|perft|...`) as a user meets them:
bad options refused before any work, Ctrl-C stopping a long computation at once."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.engine.api import DEFAULT_TIME_MS
from tests.clients.conftest import REPO, RunArena, assert_one_line_error

CORES = os.cpu_count() or 1


@pytest.mark.parametrize(("game", "extra", "needle"), [
    # Found as an outsider: a missing folder was reported after the whole self-play.
    ("othello", ["--output", "no/such/folder/w.npz"], "folder 'no/such/folder' does not exist"),
    ("gomoku", ["--output", "."], "is a folder"),
    ("othello", ["--output", "weights/"], "is a folder"),
    # The task list of 10^11 games alone would fill the memory.
    ("gomoku", ["--games", "99999999999"], "--games must be in 2..100000"),
    # Thousands of processes for a machine of two cores.
    ("othello", ["--jobs", str(CORES + 1)], f"--jobs must be in 1..{CORES}"),
    ("othello", ["--holdout", "1"], "--holdout must be between 0 and 1"),
    ("othello", ["--depth", "0"], "--depth must be in 1..10"),
    ("othello", ["--random-moves", "99"], "--random-moves must be in 0.."),
    ("othello", ["--ridge", "nan"], "--ridge must be a finite number of 0 or more"),
    ("othello", ["--ridge", "inf"], "--ridge must be a finite number of 0 or more, got inf"),
    ("othello", ["--stages", "0"], "--stages must be in 1..61"),
    ("gomoku", ["--l2", "nan"], "--l2 must be a finite number of 0 or more"),
    ("gomoku", ["--l2", "inf"], "--l2 must be a finite number of 0 or more, got inf"),
    ("gomoku", ["--board", "--hidden", "8"], "--board cannot go with --hidden"),
])
def test_training_refuses_bad_options_before_playing(
    run_arena: RunArena, tmp_path: Path, game: str, extra: list[str], needle: str
) -> None:
    (tmp_path / "weights").mkdir()
    suffix = ".npz" if game == "othello" else ".json"
    result = run_arena("engine", "train", game, "--games", "4", "--depth", "1",
                       "--output", f"w{suffix}", *extra)
    assert_one_line_error(result, needle)
    assert "games" not in result.stdout  # refused before the first game
    assert not list(tmp_path.glob("w.*")) and not list(tmp_path.glob("weights.*"))


@pytest.mark.parametrize(("command", "extra", "needle"), [
    # Found as an outsider: a traceback from the compiled kernel's argument.
    ("analyze", ["--nodes", "9" * 20], "--nodes: must be at most 4611686018427387904"),
    # Ran 24 s and answered a "depth 0" move.
    ("analyze", ["--time-ms", "9" * 20], "--time-ms: must be at most 2592000000"),
    ("analyze", ["--time-ms", "-5"], "--time-ms: must be at least 1, got -5"),
    ("analyze", ["--depth", "0"], "--depth: must be at least 1, got 0"),
    # named the engine's 'time_ms', where the person typed --time-ms
    ("solve", ["--time-ms", "-1"], "--time-ms: must be at least 1, got -1"),
])
def test_engine_tools_refuse_absurd_limits_naming_the_option(
        run_arena: RunArena, command: str, extra: list[str], needle: str) -> None:
    result = run_arena("engine", command, "start.obf" if command == "solve" else "start",
                       *extra)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert f"error: argument {needle}" in result.stderr.splitlines()[-1], result.stderr
    assert result.stdout == ""


def test_analyze_searches_its_whole_time(run_arena: RunArena) -> None:
    """Found as an outsider: at 100 ms the answer came from depth 0 after 366 ms, the
    kernels' loading having taken the time; they are loaded before the clock starts."""
    result = run_arena("engine", "analyze", "start", "--preset", "arena-strong",
                       "--time-ms", "100", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["depth"] >= 3, result.stdout


def test_analyze_searches_either_games_positions(run_arena: RunArena) -> None:
    """The bot's evaluator says the game: a Gomoku preset analyzes a Gomoku position (it
    was refused as an unknown preset, the tool being Othello's alone). The position is
    also taken as `--position`, as `arena analyze` names it."""
    from arena.games import game

    gomoku = game("gomoku").new_position()
    for move in ("h8", "h9", "i8", "i9", "j8"):
        gomoku.push(gomoku.parse_move(move))
    result = run_arena("engine", "analyze", "--position", gomoku.to_text(), "--preset",
                       "arena-gomoku", "--depth", "3", "--json")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["game"] == "gomoku" and answer["depth"] >= 1
    # Black has three in a row (h8 i8 j8) with both ends open: White must block one end
    # (or lose to an open four), so the move is one of them.
    assert answer["move"] in ("g8", "k8"), answer
    assert gomoku.is_legal(gomoku.parse_move(answer["pv"][0]))

    # Found as an outsider: with no limit at all, Arena's Gomoku bot searched on for hours
    # (its own depth, 20, out of reach) and printed nothing; it now takes DEFAULT_TIME_MS.
    quiet = game("gomoku").new_position()
    for square in (112, 113, 97, 127, 98, 96):  # no threat: no early proof ends the search
        quiet.push(square)
    unlimited = run_arena("engine", "analyze", "--position", quiet.to_text(), "--preset",
                          "arena-gomoku", "--json")
    assert unlimited.returncode == 0, unlimited.stderr
    assert json.loads(unlimited.stdout)["depth"] >= 3
    helped = run_arena("engine", "analyze", "--help").stdout
    assert f"no --depth or --nodes: {DEFAULT_TIME_MS})" in " ".join(helped.split())

    othello = run_arena("engine", "analyze", "start", "--preset", "lab-advanced", "--json")
    assert othello.returncode == 0, othello.stderr
    assert json.loads(othello.stdout)["game"] == "othello"

    assert_one_line_error(run_arena("engine", "analyze", "--preset", "arena-gomoku"),
                          "a position is needed")
    both = run_arena("engine", "analyze", "start", "--preset", "arena-strong", "--position",
                     gomoku.to_text())
    assert both.returncode == 2 and "Traceback" not in both.stderr
    assert both.stderr.splitlines()[-1] == (
        "arena engine analyze: error: argument --position: not allowed with argument position")
    wrong = run_arena("engine", "analyze", gomoku.to_text(), "--preset", "arena-strong")
    assert_one_line_error(wrong, "Othello text form must be")
    assert_one_line_error(run_arena("engine", "analyze", "start", "--config",
                                    '{"evaluator": "chess"}'),
                          "--config: evaluator must be one of arena, arena-gomoku")


def test_probcut_refuses_a_missing_folder_before_searching(
    run_arena: RunArena, tmp_path: Path
) -> None:
    result = run_arena("engine", "probcut", "othello", "--output", "no/such/folder/p.json")
    assert_one_line_error(result, "folder 'no/such/folder' does not exist")
    assert result.stdout == ""


def test_training_holds_out_at_least_one_game(run_arena: RunArena, tmp_path: Path) -> None:
    # 3 games at the default 10 %: rounding held none out and the held-out errors were nan.
    result = run_arena("engine", "train", "othello", "--games", "3", "--depth", "1",
                       "--solve-empties", "4", "--output", "w.npz", "--json")
    assert result.returncode == 0, result.stderr
    metrics = json.loads(result.stdout)["metrics"]
    assert metrics["positions"]["heldout"] > 0
    assert math.isfinite(metrics["heldout"]["trained"]["mse"])


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _interrupt_when_busy(tmp_path: Path, args: list[str], stdin: str = "") -> int:
    """Run ``arena ARGS``, feed it ``stdin``, send SIGINT once it has used four seconds of
    CPU (imports and loading the cached kernels take about one), and return its exit
    status; it must end within ten seconds of the signal."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env["PYTHONPATH"] = str(REPO)
    process = subprocess.Popen(
        [sys.executable, "-m", "arena.clients", *args], cwd=tmp_path, env=env,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert process.stdin is not None
        process.stdin.write(stdin)
        process.stdin.flush()  # left open: a brain waits for more commands
        deadline = time.monotonic() + 60
        while _cpu_seconds(process.pid) < 4:
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=10)
    finally:
        process.kill()
        process.wait()
    assert "Traceback" not in err
    return process.returncode


def test_ctrl_c_stops_a_perft_at_once(run_arena: RunArena, tmp_path: Path) -> None:
    """Found as an outsider: `arena engine perft --depth 30` went on after Ctrl-C (the
    compiled kernel never returns to Python's handler), for hours."""
    assert run_arena("engine", "perft", "--depth", "1").returncode == 0  # kernels compiled
    status = _interrupt_when_busy(tmp_path, ["engine", "perft", "--depth", "30",
                                             "--max-time", "0"])  # no limit: it runs
    assert status == -signal.SIGINT


ENDGAME = "XXXXXXXXOOOOOOOOXXXXXXXXOOOOOOOOXXXXXXXXOOOOOOOOXXXXXXXX-------- X"


def test_perft_refuses_a_depth_it_cannot_finish(run_arena: RunArena) -> None:
    """Found by a review: `arena engine perft --depth 99` counted until stopped (for some
    10^100 years). A count its shallower ones foretell to take longer than --max-time
    (default 600 s) is refused at once, with the depth that fits; a count that ends
    (every line a finished game) is never refused, however deep."""
    refused = run_arena("engine", "perft", "--depth", "99")
    assert_one_line_error(refused, "perft 99 would take about 10^", "years here",
                          "more than --max-time 600 s allows: depth ", " fits; give a "
                          "longer --max-time, or 0 for no limit")
    assert refused.stdout == ""
    ended = run_arena("engine", "perft", "--depth", "99", "--position", ENDGAME, "--json")
    assert ended.returncode == 0 and json.loads(ended.stdout)["leaves"] == 8122, ended.stderr
    for options, said in ((["--depth", "-1"], "--depth must be 0 or more, got -1"),
                          (["--depth", "5", "--max-time", "nan"],
                           "--max-time must be 0 (no limit) or more seconds, got nan"),
                          (["--depth", "5", "--max-time", "-1"], "--max-time must be 0")):
        assert_one_line_error(run_arena("engine", "perft", *options), said)


def test_ctrl_c_stops_a_brain_in_a_long_search(tmp_path: Path) -> None:
    """The same for a protocol server searching a move its manager gave ten minutes."""
    status = _interrupt_when_busy(
        tmp_path, ["engine", "gomocup", "--preset", "arena-gomoku"],
        "START 15\nINFO timeout_turn 600000\nTURN 7,7\n")
    assert status == -signal.SIGINT


def test_train_refuses_to_overwrite_a_file_without_force(run_arena: RunArena,
                                                         tmp_path: Path) -> None:
    """`engine train --output` overwrote a file that was there without a word, where `match
    export`, `bot export` and `play --save` refuse it without --force."""
    (tmp_path / "tw.npz").write_bytes(b"kept")
    assert_one_line_error(run_arena("engine", "train", "othello", "--games", "2", "--depth",
                                    "1", "--output", "tw.npz"),
                          "tw.npz exists (use --force to overwrite)")
    assert (tmp_path / "tw.npz").read_bytes() == b"kept"
