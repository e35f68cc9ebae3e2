"""Othello records: transcripts, GGF and OBF (including the shared FFO files)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from arena.formats import (
    FormatError,
    GgfMove,
    ObfPosition,
    ggf_from_moves,
    ggf_result,
    parse_ggf,
    parse_ggf_games,
    parse_obf,
    parse_obf_file,
    parse_transcript,
    replay_transcript,
    write_ggf,
    write_obf,
    write_transcript,
)
from arena.games import Color, Outcome, Termination
from arena.games.othello import PASS, OthelloBoard


def game_with_a_pass(seed: int = 1) -> list[int]:
    """A random complete game that contains a pass before its last move."""
    rng = random.Random(seed)
    while True:
        board = OthelloBoard()
        while not board.is_game_over():
            board.push(rng.choice(board.legal_moves()))
        if PASS in board.move_stack[:-1]:
            return board.move_stack


# --- transcripts ---------------------------------------------------------------------------


def test_transcript_parse_and_write() -> None:
    moves = parse_transcript("f5d6c3d3c4")
    assert moves == [37, 43, 18, 19, 26]
    assert write_transcript(moves) == "f5d6c3d3c4"
    assert write_transcript(moves, uppercase=True) == "F5D6C3D3C4"
    assert parse_transcript("F5 d6\nC3") == moves[:3]
    assert replay_transcript("f5d6").move_stack == [37, 43]


def test_transcript_passes_omitted_or_explicit() -> None:
    moves = game_with_a_pass()
    omitted = write_transcript(moves)
    assert "pass" not in omitted and len(omitted) == 2 * (len(moves) - moves.count(PASS))
    assert parse_transcript(omitted) == moves
    for style in ("pass", "PA"):
        explicit = write_transcript(moves, passes=style)
        assert explicit.count(style) == moves.count(PASS)
        assert parse_transcript(explicit) == moves


def test_transcript_from_international_start() -> None:
    start = OthelloBoard.international()
    moves = parse_transcript("d4e4e5d5", start)
    assert moves == [27, 28, 36, 35]
    assert start.move_stack == []  # the caller's board is left alone


@pytest.mark.parametrize(
    ("text", "line", "column"),
    [("f5d6z9", 1, 5), ("f5d6\na1", 2, 1), ("f5pass", 1, 3), ("f5d", 1, 3)],
)
def test_transcript_errors_name_line_and_column(text: str, line: int, column: int) -> None:
    with pytest.raises(FormatError) as error:
        parse_transcript(text)
    assert (error.value.line, error.value.column) == (line, column)
    assert f"line {line}, column {column}" in str(error.value)


# --- GGF -----------------------------------------------------------------------------------

# Written the way GGS and Edax write records: upper- and lower-case squares,
# ``move/eval/time`` fields, a forced pass as PA, ratings and a time control.
OTHER_PROGRAM_GGF = """
(;GM[Othello]PC[GGS/os]DT[2003.07.18_09:14:35.GMT]PB[saio]PW[edax]RB[2553.23]
RW[2157.51]TI[10:00//02:00]TY[8]RE[+8.000]
BO[8 -------- -------- -------- ---O*--- ---*O--- -------- -------- -------- *]
B[F5//1.09]W[d6/-1.00/0.01]B[c3/0.50/2.5]W[D3/-2/0.02]B[c4//]W[f4];)
"""


def test_ggf_as_written_by_another_program_parses() -> None:
    game = parse_ggf(OTHER_PROGRAM_GGF)
    assert game.black == "saio" and game.white == "edax"
    assert game.result == "+8.000" and game.result_score() == 8.0
    assert game.tag("TI") == "10:00//02:00" and game.tag("RB") == "2553.23"
    assert game.start == OthelloBoard()
    assert [m.move for m in game.moves] == parse_transcript("f5d6c3d3c4f4")
    assert game.moves[0] == GgfMove(37, Color.BLACK, None, 1.09)
    assert game.moves[1] == GgfMove(43, Color.WHITE, -1.0, 0.01)
    assert game.moves[4] == GgfMove(26, Color.BLACK, None, None)
    assert game.final_board().move_stack == game.final_board().move_stack


def test_ggf_written_by_arena_reads_back_identically() -> None:
    moves = game_with_a_pass(3)
    board = OthelloBoard()
    for move in moves:
        board.push(move)
    outcome = board.outcome()
    assert outcome is not None
    rng = random.Random(0)
    game = ggf_from_moves(
        OthelloBoard(),
        moves,
        black="alpha [v2]",
        white="beta\\x",
        outcome=outcome,
        evals=[rng.choice([None, rng.uniform(-64, 64)]) for _ in moves],
        times=[rng.choice([None, round(rng.uniform(0, 9), 3)]) for _ in moves],
        date="2024.05.06_07:08:09.UTC",
    )
    text = write_ggf(game)
    assert text.startswith("(;GM[Othello]") and text.endswith(";)")
    assert "PA" in text
    again = parse_ggf(text)
    assert again == game
    assert again.final_board().outcome() == outcome
    assert again.result == ggf_result(outcome)
    assert parse_ggf_games(text + "\n" + text) == [game, game]


def test_ggf_omitted_pass_is_made_explicit() -> None:
    moves = game_with_a_pass(5)
    game = ggf_from_moves(OthelloBoard(), moves)
    text = write_ggf(game)
    without_passes = text.replace("B[PA]", "").replace("W[PA]", "")
    assert parse_ggf(without_passes) == game


def test_ggf_international_variant_round_trips() -> None:
    start = OthelloBoard.international()
    game = ggf_from_moves(start, parse_transcript("d4d5e5e4f4", start))
    text = write_ggf(game)
    assert "VA[international]" in text
    assert parse_ggf(text) == game and parse_ggf(text).start.variant == "international"


def test_ggf_result_strings() -> None:
    assert ggf_result(Outcome(Color.BLACK, Termination.NORMAL, 33, 30, 1)) == "+4.000"
    assert ggf_result(Outcome(None, Termination.NORMAL, 32, 32, 0)) == "+0.000"
    assert ggf_result(Outcome(Color.WHITE, Termination.TIMEOUT, 20, 10, 34)) == "-64.000:t"
    assert ggf_result(Outcome(Color.BLACK, Termination.CRASH, 2, 10, 52)) == "+64.000:r"


@pytest.mark.parametrize(("result", "number"), [
    ("+1e400", "+1e400"), ("+inf", "+inf"), ("nan", "nan"), (" -Infinity:t", "-Infinity"),
])
def test_ggf_refuses_a_result_that_is_no_finite_number(result: str, number: str) -> None:
    """RE[+1e400] was read as black winning by 1 (the exponent left out: adjudicated 32-32,
    written back as RE[+0.000], a draw); RE[+inf] and RE[nan] as stating no result."""
    with pytest.raises(FormatError) as error:
        parse_ggf(f"(;GM[Othello]PB[a]\nRE[{result}]B[f5];)")
    assert (error.value.line, error.value.column) == (2, 1)
    assert error.value.reason == f"RE[{result}]: number {number!r} is not finite"


def _finished_game(seed: int, empties: bool) -> tuple[list[int], Outcome]:
    """The moves of a random complete game (one that ends with empty squares, or not)."""
    rng = random.Random(seed)
    while True:
        board = OthelloBoard()
        while not board.is_game_over():
            board.push(rng.choice(board.legal_moves()))
        outcome = board.outcome()
        if outcome is not None and bool(outcome.empties) is empties and outcome.winner:
            return board.move_stack, outcome


def test_ggf_refuses_a_result_its_finished_game_contradicts() -> None:
    """A game whose moves end it and whose RE says otherwise was read with the RE dropped;
    a native replay is refused for the same (its outcome against its moves)."""
    moves, outcome = _finished_game(1, empties=False)
    text = write_ggf(ggf_from_moves(OthelloBoard(), moves, outcome=outcome))
    said = f"RE[{ggf_result(outcome)}]"
    assert parse_ggf(text).result == ggf_result(outcome)
    wrong = -outcome.wof_diff
    with pytest.raises(FormatError) as error:
        parse_ggf(text.replace(said, f"RE[{wrong:+d}.000]"))
    winner = "black" if wrong > 0 else "white"
    assert error.value.reason == (
        f"RE[{wrong:+d}.000]: the record says {winner} wins by {abs(wrong)}; its {len(moves)} "
        f"moves give {outcome.winner.name.lower()} wins {outcome.black_score}-"
        f"{outcome.white_score} (normal end)")
    with pytest.raises(FormatError, match="the record says a draw"):
        parse_ggf(text.replace(said, "RE[+0.000:r]"))
    # A margin with the empty squares left out is the board's too; one the moves do not end
    # may say anything (a forfeit, an adjudication); one with no number states no result.
    moves, outcome = _finished_game(2, empties=True)
    text = write_ggf(ggf_from_moves(OthelloBoard(), moves, outcome=outcome))
    disc_diff = text.replace(f"RE[{ggf_result(outcome)}]", f"RE[{outcome.disc_diff:+d}]")
    assert parse_ggf(disc_diff).result == f"{outcome.disc_diff:+d}"
    unfinished = write_ggf(ggf_from_moves(OthelloBoard(), moves[:-1]))
    for result in ("-64.000:t", "+64.000:r", "+12.000", "?"):
        assert parse_ggf(unfinished.replace(";)", f"RE[{result}];)")).result == result
    assert parse_ggf(text.replace(ggf_result(outcome), "?")).result == "?"


@pytest.mark.parametrize("board_type", [
    "8a", "8s", "8r8", "08", "10", "8k", "x", "8_r", "8 ", " 8", "s8", ""])
def test_ggf_game_types_other_than_plain_8x8_are_refused_alike(board_type: str) -> None:
    """TY[8k] (komi), TY[x], TY[8_r] and TY[8 ] were read as plain 8x8 Othello, while TY[8a]
    and TY[8r8] were refused: the type's letters were looked at one by one."""
    with pytest.raises(FormatError) as error:
        parse_ggf(f"(;GM[Othello]TY[{board_type}]B[f5];)")
    assert error.value.reason == f"TY[{board_type}]: only plain 8x8 Othello (TY[8]) is supported"
    assert error.value.column == len("(;GM[Othello]") + 1
    assert len(parse_ggf("(;GM[Othello]TY[8]B[f5];)").moves) == 1
    assert len(parse_ggf("(;GM[Othello]B[f5];)").moves) == 1  # no type: plain 8x8


def test_ggf_result_score_reads_the_whole_number() -> None:
    for result, score in [("+1e1", 10.0), ("-.5:r", -0.5), ("+4.000:t", 4.0), ("?", None),
                          ("+0.000", 0.0), ("informal", None)]:
        assert parse_ggf(f"(;GM[Othello]RE[{result}];)").result_score() == score, result


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("(;GM[Othello]B[f5]", 1),  # no closing ;)
        ("(;GM[Chess];)", 1),
        ("(;GM[Othello]\nB[a1];)", 2),  # illegal move
        ("(;GM[Othello]B[f5]B[d6];)", 1),  # out of turn
        ("(;GM[Othello]\n\nBO[8 ---];)", 3),
        ("(;GM[Othello]TY[10];)", 1),
        ("(;GM[Othello]B[f5/x];)", 1),
        ("(;GM[Othello]B[f5/1/2/3];)", 1),
        ("(;GM[Othello]B[f5/nan];)", 1),
        ("(;GM[Othello]b5[f5];)", 1),
        ("xyz", 1),
    ],
)
def test_ggf_errors_name_the_line(text: str, line: int) -> None:
    with pytest.raises(FormatError) as error:
        parse_ggf(text)
    assert error.value.line == line and error.value.column is not None


# --- OBF -----------------------------------------------------------------------------------


def obf_files(shared_data: Path) -> list[Path]:
    files = sorted((shared_data / "othello").glob("*.obf"))
    assert len(files) >= 2
    return files


def test_every_shared_obf_line_parses_with_exactly_the_legal_moves(shared_data: Path) -> None:
    total = 0
    for path in obf_files(shared_data):
        text = path.read_text()
        positions = parse_obf_file(text)
        lines = [ln for ln in text.splitlines() if ln.partition("%")[0].strip()]
        assert len(positions) == len(lines)
        for position, line in zip(positions, lines, strict=True):
            listed = sorted(move for move, _ in position.scores)
            assert listed == position.board.legal_moves(), line
            assert parse_obf(write_obf(position)) == position
            assert write_obf(position) == line.strip()
            total += 1
    assert total >= 39


def test_obf_forms_and_errors() -> None:
    start = OthelloBoard()
    position = parse_obf(start.to_text().lower().replace("-", ".") + "; d3:+0; C4:-2 % note")
    assert position.board == start
    assert position.scores == ((19, 0), (26, -2)) and position.comment == "note"
    assert position.best_score == 0 and position.score_of(26) == -2
    assert write_obf(position) == start.to_text() + "; D3:+0; C4:-2; % note"
    assert write_obf(ObfPosition(start)) == start.to_text() + ";"
    for bad, column in [
        (start.to_text() + "; A1:+2;", 69),  # illegal move
        (start.to_text() + "; D3:+x;", 69),
        (start.to_text() + "; D3:+0; D3:+0;", None),
        ("Q" + start.to_text()[1:], 1),
        (start.to_text()[:60], 1),
    ]:
        with pytest.raises(FormatError) as error:
            parse_obf(bad, line_number=7)
        assert error.value.line == 7
        assert column is None or error.value.column == column
    with pytest.raises(FormatError):
        write_obf(ObfPosition(OthelloBoard.international()))
