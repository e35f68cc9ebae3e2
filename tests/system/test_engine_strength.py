"""``bench/engine_strength.py`` end to end: a real stack (the launcher) plays Arena's built-in
bot against Arena's own protocol executables from the project's catalog (``arena-nboard``,
``pbrain-arena``), and every figure the command prints is recomputed here from the games it
printed: the score, both Elo intervals, the SPRT (and the ladder service's agrees), and the
move counts behind the per-side times."""

from __future__ import annotations

import json
import math
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from arena.engine.api import Limits
from arena.engine.gomoku import PRESETS, choose_move
from arena.engine.gomoku.train import KeptPositions, Positions, save_positions
from arena.games import GomokuBoard
from arena.openings import load_suite
from arena.ratings import ScoreElo, pentanomial, score_elo, sprt, trinomial
from arena.records import read_record

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "engine_strength.py"
GAME = re.compile(r"  game \d+ \S+: (\S+) (black|white), opening (\S+): (\S+) \((\w+), "
                  r"(\d+) moves")
SIDE = re.compile(r"  (\S+): (\d+) moves, charged mean ([\d.]+) median ([\d.]+) max (\d+); "
                  r"wall mean ([\d.]+) median ([\d.]+)")
NUMBER = r"([+-]?(?:\d+(?:\.\d+)?|inf))"


def run_script(script: str, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """``bench/<script>`` with ``args``, as a user runs it; its exit code and output."""
    return subprocess.run([sys.executable, str(ROOT / "bench" / script), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def run_bench(*args: str) -> str:
    done = run_script(BENCH.name, *args)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def shown(value: float) -> str:
    return f"{value:+.0f}" if math.isfinite(value) else ("+inf" if value > 0 else "-inf")


def check_elo_line(output: str, label: str, expected: ScoreElo) -> None:
    line = re.search(rf"Elo difference, {label}: {NUMBER} Elo, 95% \[{NUMBER}, {NUMBER}\] "
                     r"\(score ([\d.]+)% \+- ([\d.]+)\)", output)
    assert line, output
    assert line.group(1, 2, 3) == (shown(expected.elo), shown(expected.low),
                                   shown(expected.high))
    assert float(line.group(4)) == pytest.approx(100 * expected.score, abs=0.05)
    assert float(line.group(5)) == pytest.approx(100 * 1.96 * expected.stderr, abs=0.1)


def check_figures(output: str, builtin: str, engine: str, move_ms: int,
                  elo0: float, elo1: float) -> list[tuple[str, float, int]]:
    """Every figure against the printed games; returns (opening, points, moves) per game."""
    games = []
    sides: dict[tuple[str, str], list[float]] = {}
    for bot, side, opening, points, how, moves in GAME.findall(output):
        assert bot == builtin
        assert how in ("normal", "board_full"), output  # nobody forfeited
        games.append((opening, float(points), int(moves)))
        sides.setdefault((opening, side), []).append(float(points))
    scores = [points for _, points, _ in games]
    wins, draws, losses = scores.count(1.0), scores.count(0.5), scores.count(0.0)
    assert (f"score of {builtin} against {engine}: {len(games)} games, +{wins} ={draws} "
            f"-{losses}, {100 * sum(scores) / len(games):.1f}%") in output
    check_elo_line(output, "single games", score_elo(trinomial(wins, draws, losses)))
    openings = {opening for opening, _ in sides}
    for opening in openings:  # every opening played with each colour equally often
        assert len(sides[opening, "black"]) == len(sides[opening, "white"]), sides
    pairs = [b + w for opening in openings
             for b, w in zip(sides[opening, "black"], sides[opening, "white"], strict=True)]
    assert len(pairs) == len(games) // 2
    counts = pentanomial(pairs)
    check_elo_line(output, "colour-swapped pairs", score_elo(counts))
    test = sprt(counts, elo0, elo1)
    assert (f"on {len(pairs)} pairs, pentanomial {[round(counts[v]) for v in sorted(counts)]}: "
            f"LLR {test.llr:+.3f}, bounds [{test.lower_bound:.3f}, {test.upper_bound:.3f}], "
            f"verdict {test.decision.value}") in output
    sides = {m.group(1): m.groups()[1:] for m in SIDE.finditer(output)}
    assert set(sides) == {builtin, engine}, output
    asked = 0
    for moves, mean, median, top, wall_mean, wall_median in sides.values():
        assert int(moves) > 0
        assert 0 <= float(mean) <= int(top) and 0 <= float(median) <= int(top)
        assert float(wall_mean) >= 0 and float(wall_median) >= 0
        assert int(top) <= move_ms + 200  # over the limit and the default grace: a forfeit
        asked += int(moves)
    assert asked <= sum(moves for _, _, moves in games)  # forced passes are not asked
    return games


def test_othello_sprt_match_against_the_nboard_executable() -> None:
    output = run_bench("--game", "othello", "--engine", "arena-nboard-fast", "--bot",
                       "arena-fast", "--move-ms", "100", "--games", "4", "--sprt=-10/10")
    games = check_figures(output, "arena-fast", "arena-nboard-fast", 100, -10.0, 10.0)
    assert 2 <= len(games) <= 4
    bench_llr = re.search(r"verdict \w+\nladder service's SPRT: LLR ([+-][\d.]+) on (\d+) pairs",
                          output)
    assert bench_llr, output
    mine = re.search(r"LLR ([+-][\d.]+), bounds", output)
    assert mine and bench_llr.group(1) == mine.group(1)
    assert int(bench_llr.group(2)) == len(games) // 2


def test_gomoku_fixed_match_against_the_gomocup_executable(tmp_path: Path) -> None:
    kept, records = tmp_path / "games.jsonl", tmp_path / "records"
    records.mkdir()
    output = run_bench("--game", "gomoku", "--engine", "pbrain-arena", "--move-ms", "100",
                       "--games", "2", "--fixed", "--keep-games", str(kept),
                       "--keep-records", str(records),
                       "--set", "vct_nodes=50000", "--set", "width=12")
    assert "registered with vct_nodes=50000, width=12\n" in output  # as the registry keeps it
    games = check_figures(output, "arena-gomoku", "pbrain-arena", 100, 0.0, 5.0)
    assert len(games) == 2  # a fixed match plays every game
    moves = re.findall(r"  \S+: (\d+) moves, charged", output)
    assert sum(map(int, moves)) == sum(m for _, _, m in games)  # Gomoku has no passes
    assert "ladder service's SPRT" not in output
    # --keep-games wrote each printed game, and each replays legally to its end.
    written = [json.loads(line) for line in kept.read_text().splitlines()]
    assert " gomoku-wide15 openings, " in output  # the default suite, 200 openings
    wide = {opening.moves for opening in load_suite("gomoku-wide15").openings}
    assert all(tuple(game["opening"]) in wide for game in written)
    printed = GAME.findall(output)
    assert len(written) == len(printed) == 2
    proven: dict[tuple[str, str], int] = {}
    for game, (_bot, side, opening, points, _how, count) in zip(written, printed, strict=True):
        assert game["builtin"] == side and game["points"] == float(points)
        assert "-".join(map(str, game["opening"])) == opening
        assert len(game["moves"]) == int(count)
        board = GomokuBoard(15, "freestyle")
        for move in game["opening"] + game["moves"]:
            assert not board.is_game_over()
            board.push(move)
        assert board.is_game_over()
        # --keep-records wrote its record: the same game, which the training reads.
        _format, replay = read_record((records / f"{game['match']}.json").read_text())
        assert [m.move for m in replay.moves] == game["opening"] + game["moves"]
        # Each side's first move whose search reported a forced win, numbered like the
        # game lines (after the opening; Black plays the even plies of the empty board).
        skipped = len(game["opening"])
        for number, move in enumerate(replay.moves[skipped:], 1):
            black = (skipped + number) % 2 == 1
            bot = "arena-gomoku" if black == (game["builtin"] == "black") else "pbrain-arena"
            if move.exact and (move.score or 0) > 0:
                proven.setdefault((bot, game["match"]), number)
    assert "2 records written to" in output
    for bot in ("arena-gomoku", "pbrain-arena"):
        firsts = [number for (who, _), number in proven.items() if who == bot]
        line = f"  {bot}: {len(firsts)} of 2 games"
        if firsts:
            line += f", at move {statistics.median(firsts):g} (median; {min(firsts)}-{max(firsts)})"
        assert line + "\n" in output, output


# A game the built-in bot (White) loses: it plays in a corner while Black makes five.
LOST = {"match": "m1", "builtin": "white", "points": 0.0, "opening": [112],
        "moves": [0, 113, 1, 114, 2, 115, 3, 116], "termination": "TERMINATION_NORMAL"}


def judge_catalog(folder: Path) -> Path:
    """A catalog whose engine ``judge`` is Arena's own brain at depth 2."""
    brain = shutil.which("pbrain-arena", path=str(Path(sys.executable).parent))
    assert brain, "pbrain-arena is not installed beside this Python (make setup)"
    catalog = folder / "teacher.toml"
    catalog.write_text(f"""
[engines.judge]
games = ["gomoku"]
protocol = "gomocup"
command = ["{brain}", "--preset", "arena-gomoku", "--depth", "2"]
limits = {{ memory_mb = 1024, startup_ms = 180000, grace_ms = 500 }}
""")
    return catalog


def judged_chance(moves: list[int]) -> float:
    """What ``judge`` makes of the position after ``moves``, as the benches read it."""
    own = choose_move(15, "freestyle", moves, {"evaluator": "arena-gomoku"}, Limits(depth=2))
    if own.exact:
        return 0.0 if own.score > 0 else 1.0 if own.score < 0 else 0.5
    return 1 / (1 + math.exp(own.score / 1000))


def test_the_losses_of_kept_games_are_judged_by_a_teacher(tmp_path: Path) -> None:
    # bench/gomoku_losses.py on a game the built-in bot did not win: its chance after each
    # of its moves is the teacher's score (Arena's own brain at depth 2, recomputed here),
    # and the first move after which the teacher proves the loss is named.
    lost = LOST
    (tmp_path / "lost.jsonl").write_text(json.dumps(lost) + "\n")
    catalog = judge_catalog(tmp_path)
    done = run_script("gomoku_losses.py", str(tmp_path / "lost.jsonl"), "--teacher", "judge",
                      "--catalog", str(catalog), "--teacher-scale", "1000", timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    moves = lost["opening"] + lost["moves"]
    expected = []
    for ply in (1, 3, 5, 7):  # White's moves; Black to move after each
        chance = judged_chance(moves[: ply + 1])
        expected.append(f"{ply}:{'L' if chance == 0 else round(100 * chance)}")
    assert f"    {' '.join(expected)}\n" in done.stdout
    decisive = next(e for e in expected if e.endswith(":L")).split(":")[0]
    assert f"m1 (white, 0): decisive move at ply {decisive}" in done.stdout
    assert "1 games, 1 not won by the built-in bot" in done.stdout


def test_the_move_quality_bench_judges_each_variants_moves(tmp_path: Path) -> None:
    # bench/gomoku_move_quality.py at a fixed depth: each variant's move in each of the
    # built-in bot's positions, recomputed here, and the teacher's chance after it.
    games = tmp_path / "games.jsonl"
    games.write_text(json.dumps(LOST) + "\n")
    done = run_script("gomoku_move_quality.py", str(games), "--teacher", "judge", "--catalog",
                      str(judge_catalog(tmp_path)), "--teacher-scale", "1000", "--depth", "2",
                      "--every", "1", "--variant", "", "--variant", "width=2", timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    moves = LOST["opening"] + LOST["moves"]
    asked = [moves[:ply] for ply in (1, 3, 5, 7)]  # before each of White's moves
    assert done.stdout.startswith("4 positions of the built-in bot from 1 games; depth 2; "
                                  "judged by judge\n"), done.stdout
    means = {}
    chosen = {}
    for name, overrides in (("'arena-gomoku'", {}), ("'width=2'", {"width": 2})):
        config = {**PRESETS["arena-gomoku"], **overrides}
        chosen[name] = [choose_move(15, "freestyle", position, config, Limits(depth=2)).move
                        for position in asked]
        chances = [judged_chance([*position, move])
                   for position, move in zip(asked, chosen[name], strict=True)]
        means[name] = [100 * c for c in chances]
        other = sum(a != b for a, b in zip(chosen[name], chosen["'arena-gomoku'"], strict=True))
        assert (f"  {name}: mean chance {sum(means[name]) / 4:.2f}%, {other} moves other than "
                "the first variant's\n") in done.stdout, done.stdout
    diff = [a - b for a, b in zip(means["'width=2'"], means["'arena-gomoku'"], strict=True)]
    assert f"'width=2' - 'arena-gomoku': {sum(diff) / 4:+.2f} points of chance a move" in (
        done.stdout)


@pytest.mark.parametrize(("variant", "message"), [
    ("width=1000", "--variant 'width=1000': width: must be in 2..64, got 1000"),
    ("width", "--variant 'width': --set needs PATH=VALUE, got 'width'"),
    ("no_such_knob=1", "--variant 'no_such_knob=1': no_such_knob: unknown key"),
    ("move_ms=0", "--variant 'move_ms=0': move_ms: time_ms must be in 1..2592000000, got 0"),
    ("width=8,move_ms=fast", "--variant 'width=8,move_ms=fast': move_ms: invalid literal"),
])
def test_the_move_quality_bench_refuses_a_bad_variant_in_one_line(
    tmp_path: Path, variant: str, message: str
) -> None:
    games = tmp_path / "games.jsonl"
    games.write_text(json.dumps(LOST) + "\n")
    done = run_script("gomoku_move_quality.py", str(games), "--teacher", "judge", "--catalog",
                      "none.toml", "--variant", "", "--variant", variant, timeout=120)
    assert done.returncode == 1 and done.stderr.startswith(message), done.stderr
    assert done.stderr.count("\n") == 1  # one line, no traceback


def test_the_move_quality_bench_refuses_a_game_that_is_no_game(tmp_path: Path) -> None:
    games = tmp_path / "games.jsonl"
    games.write_text(json.dumps({**LOST, "moves": [112, 113, 1]}) + "\n")  # 112 is taken
    done = run_script("gomoku_move_quality.py", str(games), "--teacher", "judge", "--catalog",
                      "none.toml", "--variant", "", "--depth", "1000", timeout=120)
    assert done.returncode == 2 and "depth must be in 1..127, got 1000" in done.stderr
    done = run_script("gomoku_move_quality.py", str(games), "--teacher", "judge", "--catalog",
                      str(judge_catalog(tmp_path)), "--variant", "", "--every", "1",
                      timeout=600)
    assert done.returncode == 1 and done.stderr == (
        "game m1, before ply 3: move h8 at ply 1 is taken\n"), done.stderr


@pytest.mark.parametrize(("options", "message"), [
    ("--keep-games /no/such/folder/games.jsonl", "--keep-games: no folder '/no/such/folder'"),
    ("--keep-records /no/such/folder", "--keep-records: no folder '/no/such/folder'"),
    ("--set width=wide", "the built-in bot's config was refused: invalid request: "
                         "spec.builtin.config.width: must be an integer in 2..64, got 'wide'"),
    ("--set =3", "--set needs PATH=VALUE, got '=3'"),
    ("--set width", "--set needs PATH=VALUE, got 'width'"),
    ("--set width=1000",
     "the built-in bot's config was refused: invalid request: spec.builtin.config.width"),
    ("--set no_such_knob=1", "the built-in bot's config was refused: invalid request: "
                             "spec.builtin.config.no_such_knob: unknown key"),
])
def test_bad_options_are_refused_in_one_line(options: str, message: str) -> None:
    done = run_script(BENCH.name, "--game", "gomoku", "--engine", "pbrain-arena", "--games",
                      "2", *options.split(" "), timeout=600)
    assert done.returncode != 0 and message in done.stderr, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "ladder" not in done.stdout  # nothing played


@pytest.mark.parametrize(("text", "message"), [
    ("not json\n", ":1: not JSON"),
    ('{"match": "m"}\n', ":1: not a kept game (fields match, builtin, points, opening, moves)"),
])
@pytest.mark.parametrize("script", ["gomoku_losses.py", "gomoku_speed.py"])
def test_the_benches_of_kept_games_refuse_a_file_of_no_kept_games(
    tmp_path: Path, text: str, message: str, script: str
) -> None:
    games = tmp_path / "games.jsonl"
    games.write_text(text)
    options = {"gomoku_losses.py": [str(games), "--teacher", "judge", "--catalog", "none.toml"],
               "gomoku_speed.py": ["--vct-games", str(games)]}[script]
    done = run_script(script, *options, timeout=120)
    assert done.returncode == 1 and done.stderr.startswith(f"{games}{message}"), done.stderr
    assert done.stderr.count("\n") == 1  # one line, no traceback


@pytest.mark.parametrize("every", ["0", "-4"])
def test_the_speed_bench_refuses_a_share_of_positions_that_is_none(every: str) -> None:
    done = run_script("gomoku_speed.py", "--vct-games", "bench/data/gomoku-games-vs-rapfi.jsonl",
                      "--vct-every", every, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"--vct-every: {every} is not a positive count" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_the_speed_bench_takes_every_nth_position_of_the_kept_games() -> None:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from bench.gomoku_speed import workload

    games = str(ROOT / "bench" / "data" / "gomoku-games-vs-rapfi.jsonl")
    every = workload([games])["vct_positions"]
    fourth = workload([games], 4)["vct_positions"]
    assert len(every) == 4766 and len(fourth) == 1192 and fourth == every[::4]


@pytest.mark.parametrize(("moves", "message"), [
    ([112, 113, 112, 114], "game m1, before ply 3: move h8 at ply 2 is taken"),
    ([112, 113, 999], "game m1, before ply 2: the last move, 999, is no empty cell"),
    ([112, 113, 112], "game m1, before ply 2: the last move, 112, is no empty cell"),
    ([112, 0, 113, 1, 114, 2, 115, 3, 116, 4, 5], "game m1, before ply 10: the game was "
                                                  "already won at ply 8"),
])
def test_the_losses_bench_refuses_a_game_that_is_no_game(
    tmp_path: Path, moves: list[int], message: str
) -> None:
    # Every move of every game is checked when the file is read, the last one included
    # (which the losses bench asks the teacher about), before any engine starts.
    games = tmp_path / "games.jsonl"
    games.write_text(json.dumps({**LOST, "opening": [], "moves": moves}) + "\n")
    done = run_script("gomoku_losses.py", str(games), "--teacher", "judge", "--catalog",
                      "none.toml", timeout=120)
    assert done.returncode == 1 and done.stderr == message + "\n", done.stderr


def _full_board_draw() -> list[int]:
    """Moves that fill the board with no five: White on the cells where x + y // 2 is
    odd (112 of them), Black on the others, alternately, Black's the last."""
    cells = [(y * 15 + x, (x + y // 2) % 2) for y in range(15) for x in range(15)]
    black = [cell for cell, odd in cells if not odd]
    white = [cell for cell, odd in cells if odd]
    return [m for pair in zip(black, white, strict=False) for m in pair] + black[len(white):]


def test_a_move_that_fills_the_board_is_a_draw_to_both_benches(tmp_path: Path) -> None:
    # The built-in bot (Black) fills the board with its last move: both benches read the
    # position after it as a draw (0.5) without asking the teacher, which cannot play on a
    # full board (the losses bench once stopped there; the move quality bench counted it a
    # won game).
    moves = _full_board_draw()
    assert len(moves) == 225 and len(set(moves)) == 225
    games = tmp_path / "games.jsonl"
    games.write_text(json.dumps({"match": "d1", "builtin": "black", "points": 0.5,
                                 "opening": [], "moves": moves}) + "\n")
    catalog = str(judge_catalog(tmp_path))
    done = run_script("gomoku_losses.py", str(games), "--teacher", "judge", "--catalog",
                      catalog, "--teacher-scale", "1000", timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert " 224:50\n" in done.stdout, done.stdout
    done = run_script("gomoku_move_quality.py", str(games), "--teacher", "judge", "--catalog",
                      catalog, "--teacher-scale", "1000", "--depth", "1", "--every", "112",
                      "--variant", "", timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    first = choose_move(15, "freestyle", [], PRESETS["arena-gomoku"], Limits(depth=1)).move
    mean = (judged_chance([first]) + 0.5) / 2  # the empty board, and the last move's draw
    assert f"  'arena-gomoku': mean chance {100 * mean:.2f}%, 0 moves" in done.stdout, (
        done.stdout)


@pytest.mark.parametrize("script", ["gomoku_losses.py", "gomoku_move_quality.py"])
@pytest.mark.parametrize(("options", "message"), [
    (["--teacher-scale", "0"], "--teacher-scale must be a finite number above 0, got 0"),
    (["--teacher-scale", "nan"], "--teacher-scale must be a finite number above 0, got nan"),
    (["--teacher-ms", "0"], "--teacher-ms must be in 1..600000, got 0"),
])
def test_the_teacher_benches_check_the_teachers_options_as_training_does(
    tmp_path: Path, script: str, options: list[str], message: str
) -> None:
    games = tmp_path / "games.jsonl"
    games.write_text(json.dumps(LOST) + "\n")
    variant = ["--variant", ""] if script == "gomoku_move_quality.py" else []
    done = run_script(script, str(games), "--teacher", "judge", "--catalog", "none.toml",
                      *variant, *options, timeout=120)
    assert done.returncode == 2 and done.stderr.endswith(f"error: {message}\n"), done.stderr


def test_a_tiny_teacher_scale_reads_as_near_certainty(tmp_path: Path) -> None:
    # A scale of 1e-6 turns the judge's scores into exponents far past math.exp's range;
    # the chances are then near 0 or 1 but the bench still reports them.
    games = tmp_path / "lost.jsonl"
    games.write_text(json.dumps(LOST) + "\n")
    done = run_script("gomoku_losses.py", str(games), "--teacher", "judge", "--catalog",
                      str(judge_catalog(tmp_path)), "--teacher-scale", "1e-6", timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "m1 (white, 0): decisive move at ply" in done.stdout


def _positions_file(path: Path, rows: list[tuple[list[int], float]],
                    teacher: dict[str, object] | None) -> Path:
    """A positions file as ``arena engine train gomoku --keep-positions`` writes it, one
    game a position, with these labels."""
    moves = [tuple(m) for m, _ in rows]
    data = Positions(np.zeros((len(rows), 1)), np.array([label for _, label in rows]),
                     np.array([len(m) for m in moves]), np.arange(len(rows)), moves)
    made_by = {"command": "a test", "seed": 1, **({"teacher": teacher} if teacher else {})}
    return save_positions(path, KeptPositions(data, len(rows), made_by))


def _cross_entropy(label: float, chance: float) -> float:
    return -(label * math.log(chance) + (1 - label) * math.log(1 - chance))


def test_the_judgement_bench_reads_each_judges_proofs_and_chances(tmp_path: Path) -> None:
    # bench/gomoku_judgement.py at depth 2, the built-in bot and the same brain as a
    # protocol engine judging: Black to move with a five to play (the teacher agrees, and
    # in a copy labelled 0.2 it does not), Black to move against an open four (lost), and
    # a quiet position. The three proofs read as 0.99 and 0.01 whatever the scale; the
    # quiet one costs at least the entropy of its label and at most log 2.
    five = [0, 113, 1, 114, 2, 115, 3, 100]
    open_four = [0, 112, 2, 113, 4, 114, 6, 115]
    rows = [(five, 0.99), (open_four, 0.01), (five, 0.2), ([112], 0.6)]
    path = _positions_file(tmp_path / "p.npz", rows, {"engine": "someone"})
    done = run_script("gomoku_judgement.py", str(path), "--first-game", "0", "--depth", "2",
                      "--engine", "judge", "--catalog", str(judge_catalog(tmp_path)),
                      timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    entropy = statistics.fmean(_cross_entropy(y, y) for _, y in rows)
    assert done.stdout.startswith(
        f"4 positions of p.npz: 25.0% labelled won and 25.0% lost for the side to move; the "
        f"labels' entropy {entropy:.4f}; arena-gomoku at depth 2\n"), done.stdout
    proven = (_cross_entropy(0.99, 0.99) + _cross_entropy(0.01, 0.01)
              + _cross_entropy(0.2, 0.99))
    for judge in ("arena-gomoku", "judge"):
        found = re.search(rf"^{judge}:\n  log-loss ([\d.]+) \(scale \S+\); proves 100.0% "
                          r"\(1/1\) of those labelled won, 100.0% \(1/1\) of those labelled "
                          r"lost; 1 against the label\n  sure to neither \(1\): log-loss ([\d.]+) ",
                          done.stdout, re.MULTILINE)
        assert found, done.stdout
        loss, quiet = float(found[1]), float(found[2])
        assert _cross_entropy(0.6, 0.6) - 1e-4 <= quiet <= math.log(2) + 1e-4
        assert loss == pytest.approx((proven + quiet) / 4, abs=2e-4)
    assert re.search(r"^judge:(\n  .*){2}\n  \d+ s$", done.stdout, re.MULTILINE), done.stdout


@pytest.mark.parametrize(("options", "message"), [
    (["--limit", "0"], "error: --limit must be at least 1, --depth at least 0"),
    (["--engine", "judge"], "error: --engine needs --catalog"),
    (["--variant", "width=1"], "--variant 'width=1': width: must be in 2..64, got 1"),
    (["--first-game", "9"], "p.npz: no position from game 9 on (1 games)"),
])
def test_the_judgement_bench_refuses_bad_options_in_one_line(
        tmp_path: Path, options: list[str], message: str) -> None:
    path = _positions_file(tmp_path / "p.npz", [([112], 0.6)], {"engine": "someone"})
    done = run_script("gomoku_judgement.py", str(path), *options, timeout=120)
    assert done.returncode != 0 and done.stderr.strip().endswith(message), done.stderr
    assert "Traceback" not in done.stderr


def test_the_judgement_bench_needs_a_teacher_s_labels(tmp_path: Path) -> None:
    path = _positions_file(tmp_path / "p.npz", [([112], 1.0)], None)
    done = run_script("gomoku_judgement.py", str(path), timeout=120)
    assert done.returncode == 1 and "labelled by game results, not by a teacher" in done.stderr


def test_the_judgement_bench_refuses_a_finished_game_in_one_line(tmp_path: Path) -> None:
    five = [0, 100, 1, 101, 2, 102, 3, 103, 4]  # Black's five: nothing left to judge
    path = _positions_file(tmp_path / "p.npz", [([112], 0.6), (five, 0.01)], {"engine": "x"})
    done = run_script("gomoku_judgement.py", str(path), "--first-game", "0", "--depth", "1",
                      timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.strip() == ("position 1 asked (9 stones): the game is over: the last "
                                   "move won"), done.stderr
