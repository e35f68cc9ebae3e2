"""``arena engine train gomoku --records``: the evaluation fitted on the positions of game
records (PSQ files, Arena's native replays, folders of them) instead of self-play, through
the engine tools' command line."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import numpy as np
import pytest

from arena.engine.gomoku import evaluation as ev
from arena.engine.gomoku import train
from arena.engine.gomoku.board import FREESTYLE
from arena.engine.gomoku.patterns import FIVE, setup, stat
from arena.engine.tools import main as engine_cli
from arena.formats.psq import psq_from_moves, write_psq
from arena.formats.replay import Replay, ReplayMove, write_replay
from arena.games import GomokuBoard

from .positions import PLAIN_FIVE
from .test_board import random_game


def _games(count: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    return [random_game(15, "freestyle", rng) for _ in range(count)]


def _write_psq(path: Path, moves: list[int]) -> Path:
    path.write_text(write_psq(psq_from_moves(15, moves, names=("alice", "bob"))))
    return path


def _board(moves: list[int]) -> GomokuBoard:
    board = GomokuBoard(15, "freestyle")
    for move in moves:
        board.push(move)
    return board


def _over(moves: list[int]) -> bool:
    return _board(moves).is_game_over()


def _black_score(moves: list[int]) -> float:
    outcome = _board(moves).outcome()
    assert outcome is not None
    return 0.5 if outcome.winner is None else float(outcome.winner.value == 0)


def test_records_are_fitted_on_their_quiet_positions_labelled_by_their_results(
    tmp_path: Path
) -> None:
    games = _games(40, 7)
    folder = tmp_path / "psq"
    folder.mkdir()
    for index, moves in enumerate(games[:30]):
        _write_psq(folder / f"game{index:02}.psq", moves)
    native = tmp_path / "native"
    native.mkdir()
    for index, moves in enumerate(games[30:], start=30):  # Arena's own replays too
        replay = Replay.new(GomokuBoard(15, "freestyle"), "carol", "dave")
        replay.moves = [ReplayMove(move=move, time_ms=0) for move in moves]
        replay.outcome = replay.final_position().outcome()
        (native / f"game{index:02}.json").write_text(write_replay(replay))
    kept, out = tmp_path / "kept.npz", tmp_path / "w.json"
    assert engine_cli(["train", "gomoku", "--records", str(folder), "--records", str(native),
                       "--holdout", "0.25", "--l2", "0.3", "--keep-positions", str(kept),
                       "--output", str(out), "--json"]) == 0
    body = json.loads(out.read_text())
    assert body["command"] == ("arena engine train gomoku --records psq --records native "
                               "--l2 0.3 --holdout 0.25 --output w.json")
    digest = hashlib.sha256()
    for path in [*sorted(folder.iterdir()), *sorted(native.iterdir())]:
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    assert body["records"] == {"games": 40, "sha256": digest.hexdigest()}
    assert body["metrics"]["games"] == 40 and ev.read_weights(out).shape == (ev.FEATURES,)

    # What was fitted, computed here on its own: every position from the third stone on
    # where neither side has a five point and the game is not over, at most 24 a game
    # evenly spaced, the game's result from the side to move's view.
    data = train.load_positions(kept).data
    expected_moves, expected_labels, expected_games = [], [], []
    for index, moves in enumerate(games):
        quiet = []
        for ply in range(3, len(moves) + 1):
            _cells, _pat, st, _table = setup(15, FREESTYLE, moves[:ply], ev.HAND_WEIGHTS)
            if stat(st, 1, FIVE) == 0 and stat(st, 2, FIVE) == 0 and not _over(moves[:ply]):
                quiet.append(tuple(moves[:ply]))
        chosen = train.spread(quiet, train.MAX_POSITIONS_PER_GAME)
        black = _black_score(moves)
        expected_moves += chosen
        expected_labels += [black if len(m) % 2 == 0 else 1 - black for m in chosen]
        expected_games += [index] * len(chosen)
    assert data.moves == expected_moves
    assert np.array_equal(data.label, expected_labels)
    assert np.array_equal(data.game, expected_games)
    assert 0 < len(data) <= 40 * train.MAX_POSITIONS_PER_GAME


def test_a_game_ended_by_a_five_gives_no_finished_position() -> None:
    """No evaluation, nor a teacher, judges a finished game (a teacher refuses one, which
    stopped a whole labelling): a record's final position is left out when a five ended
    the game there, and kept when the game stopped short of its end."""
    assert _over(PLAIN_FIVE) and not _has_five_point(PLAIN_FIVE)
    unfinished = PLAIN_FIVE[:6]  # stopped short: its last position is quiet and kept
    data = train.record_positions([(PLAIN_FIVE, 1.0), (unfinished, None)])
    kept = set(data.moves)
    assert tuple(PLAIN_FIVE) not in kept and tuple(unfinished) in kept
    assert not any(_over(list(m)) for m in data.moves)


def _has_five_point(moves: list[int]) -> bool:
    _cells, _pat, st, _table = setup(15, FREESTYLE, moves, ev.HAND_WEIGHTS)
    return bool(stat(st, 1, FIVE) or stat(st, 2, FIVE))


def test_a_record_without_a_result_is_left_out_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    games = _games(6, 3)
    for index, moves in enumerate(games):
        _write_psq(tmp_path / f"g{index}.psq", moves)
    _write_psq(tmp_path / "unfinished.psq", games[0][:9])  # no five: no result
    assert engine_cli(["train", "gomoku", "--records", str(tmp_path), "--holdout", "0.3",
                       "--output", str(tmp_path / "w.json")]) == 0
    said = capsys.readouterr().out
    assert "left out 1 record(s) without a result" in said and "6 recorded games" in said


@pytest.mark.parametrize(("make", "message"), [
    (lambda d: d / "none", "'{d}/none': no such file or folder"),
    (lambda d: Path("/dev/null"), "'/dev/null': not a file or folder"),
    (lambda d: _write_psq(d / "one.psq", _games(1, 1)[0]), "1 record(s); at least 2"),
    (lambda d: (d / "o.txt").write_text("f5d6c3") and d / "o.txt",
     "a othello game (standard, size 8); the evaluation is trained on freestyle Gomoku"),
    (lambda d: (d / "b.psq").write_text("Piskvorky 19x19, 0:0, 0\n10,10,0\n") and d / "b.psq",
     "size 19"),
    (lambda d: (d / "x.psq").write_bytes(b"\xff\xfe\x00") and d / "x.psq",
     "x.psq': the record is not UTF-8 text: byte 1 is 0xff"),
    (lambda d: (d / "bad.psq").write_text("Piskvorky 15x15, 0:0, 0\n1,1,0\n1,1,0\n")
     and d / "bad.psq", "'{d}/bad.psq': line 3"),
])
def test_bad_records_are_one_line_errors_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: object, message: str
) -> None:
    assert callable(make)
    given = make(tmp_path)
    other = _write_psq(tmp_path / "fine.psq", _games(1, 2)[0])
    records = [str(given)] if "at least 2" in message else [str(given), str(other)]
    args = ["train", "gomoku", *(a for r in records for a in ("--records", r)),
            "--output", str(tmp_path / "w.json")]
    assert engine_cli(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("arena engine: error:") and "Traceback" not in err
    assert message.format(d=tmp_path) in err
    assert not (tmp_path / "w.json").exists()


@pytest.mark.parametrize(("extra", "message"), [
    (["--games", "10"], "--games cannot go with --records"),
    (["--seed", "2", "--depth", "3"], "--depth, --seed cannot go with --records"),
    (["--positions", "p.npz"], "--records cannot go with --positions"),
])
def test_records_refuse_the_self_play_options(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert engine_cli(["train", "gomoku", "--records", ".", *extra, "--output", "w.json"]) == 2
    assert message in capsys.readouterr().err


def _full_board_draw() -> list[int]:
    """A freestyle game that fills the board without five in a row: Black on the cells of
    colour 0 of ((column + 2 row) // 2) mod 2 (113 of them), White on the others."""
    cells = [(r * 15 + c, ((c + 2 * r) // 2) % 2) for r in range(15) for c in range(15)]
    black = [cell for cell, colour in cells if colour == 0]
    white = [cell for cell, colour in cells if colour == 1]
    return [move for pair in zip(black, [*white, None], strict=True) for move in pair
            if move is not None]


def test_draws_alone_give_no_accuracy_and_the_files_stay_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Accuracy counts the positions of decided games; with none it was NaN, which JSON
    does not have (the weights file and --json held 'NaN')."""
    moves = _full_board_draw()
    assert _black_score(moves) == 0.5 and len(moves) == 225
    for name in ("a.psq", "b.psq"):
        _write_psq(tmp_path / name, moves)
    out = tmp_path / "w.json"
    assert engine_cli(["train", "gomoku", "--records", str(tmp_path / "a.psq"), "--records",
                       str(tmp_path / "b.psq"), "--holdout", "0.5", "--output", str(out)]) == 0
    said = capsys.readouterr().out
    assert "accuracy -" in said and "nan" not in said
    body = json.loads(out.read_text(), parse_constant=lambda word: pytest.fail(word))
    assert body["metrics"]["heldout"]["trained"]["accuracy"] is None
    assert body["metrics"]["heldout"]["trained"]["log_loss"] == pytest.approx(0.6931, abs=1e-3)
