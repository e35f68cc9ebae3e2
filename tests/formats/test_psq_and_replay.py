"""Piskvork PSQ records and Arena's JSON replay."""

from __future__ import annotations

import json
import re

import pytest

from arena.formats import (
    REPLAY_VERSION,
    FormatError,
    PsqGame,
    PsqMove,
    Replay,
    ReplayMove,
    parse_psq,
    parse_replay,
    psq_from_moves,
    write_psq,
    write_replay,
)
from arena.games import Color, GomokuBoard, OthelloBoard, Outcome, Termination
from arena.text import shown

# As Piskvork writes a tournament game: 1-based x,y,time lines, engine names, error code.
PISKVORK_RECORD = """Piskvorky 15x15, 0:0, 1
8,8,0
9,9,1250
9,8,312
10,8,4021
7,8,15
6,8,900
11,8,77
pbrain-alpha.exe
pbrain-beta.exe
-1
"""


def test_psq_as_written_by_piskvork_parses() -> None:
    game = parse_psq(PISKVORK_RECORD)
    assert game.size == 15 and game.flag == 1 and game.levels == (0, 0)
    assert game.moves[0] == PsqMove(7, 7, 0)
    assert game.moves[1] == PsqMove(8, 8, 1250)
    assert game.trailer == ("pbrain-alpha.exe", "pbrain-beta.exe", "-1")
    board = game.final_board()
    assert board.move_to_str(game.move_indices()[0]) == "h8"
    assert write_psq(game) == PISKVORK_RECORD
    assert parse_psq(write_psq(game)) == game


def test_psq_records_a_won_game() -> None:
    board = GomokuBoard(15)
    for text in ["h8", "a1", "i8", "a2", "j8", "a3", "k8", "a4", "l8"]:
        board.push_str(text)
    assert board.outcome() is not None
    game = psq_from_moves(15, board.move_stack, times_ms=list(range(9)), names=("x", "y"))
    again = parse_psq(write_psq(game))
    assert again == game and again.final_board() == board
    rule_game = parse_psq(write_psq(game), rule="exact-five")
    assert rule_game.rule == "exact-five"


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("", 1),
        ("Piskvorky 15x16, 0:0, 0\n", 1),
        ("Piskvorky 99x99, 0:0, 0\n", 1),
        ("Piskvorky 15x15, 0:0, 0\n16,1,0\n", 2),
        ("Piskvorky 15x15, 0:0, 0\n1,1,0\n1,1,0\n", 3),  # occupied
        ("hello", 1),
        # Move lines out of range were once read as the start of the trailer: the moves
        # from there on were dropped without a word.
        ("Piskvorky 15x15, 0:0, 0\n8,8,0\n-1,3,0\n9,9,0\n", 3),
        ("Piskvorky 15x15, 0:0, 0\n1,99999999999999999999,0\n", 2),
        ("Piskvorky 15x15, 0:0, 0\n8,8,0\n9,9,12345678901\n", 3),
        ("Piskvorky 15x15, 0:0, 0\n8,8\n 9 , 9 \n", 3),
        # So were move lines with a time that is no whole number, or without their commas:
        # the line and the moves after it became the player names.
        ("Piskvorky 15x15, 0:0, 0\n8,8,0\n9,9,x\n10,10,0\n", 3),
        ("Piskvorky 15x15, 0:0, 0\n8,8,0\n9,9,1.5\n10,10,0\n", 3),
        ("Piskvorky 15x15, 0:0, 0\n8,8,0\n9,9,nan\n", 3),
        ("Piskvorky 15x15, 0:0, 0\n8,8,0\n9 9 0\n10,10,0\n", 3),
    ],
)
def test_psq_errors_name_the_line(text: str, line: int) -> None:
    with pytest.raises(FormatError) as error:
        parse_psq(text)
    assert error.value.line == line


def test_a_move_line_out_of_range_is_named() -> None:
    line = "1," + "9" * 600 + ",0"  # quoted as every refused value is: cut (text.shown)
    assert len(shown(line)) < len(line)
    with pytest.raises(FormatError, match=f"line 2, column 1: move {re.escape(shown(line))} is "
                       r"not 'x,y,time' with x and y in 1\.\.15 and a time of 0\.\.999999999 ms"):
        parse_psq(f"Piskvorky 15x15, 0:0, 0\n{line}\n")


@pytest.mark.parametrize(("text", "line", "digit"), [
    ("Piskvorky 15x15, 0:0, 0\n\u0668,\u0668,0\n", 2, "U+0668"),  # Arabic-Indic 8
    ("Piskvorky 15x15, 0:0, 0\n8,8,0\n\uff19,\uff19,0\n", 3, "U+FF19"),  # full-width 9
    ("Piskvorky 15x15, 0:0, 0\n8,8,\u0661\n", 2, "U+0661"),
    ("Piskvorky \uff11\uff15x\uff11\uff15, 0:0, 0\n8,8,0\n", 1, "U+FF11"),
], ids=["arabic-indic", "full-width", "time", "header"])
def test_psq_numbers_are_ascii_digits(text: str, line: int, digit: str) -> None:
    """Python's ``\\d`` takes any script's digits: '\u0668,\u0668' was read as the move 8,8."""
    fix = re.escape(f"{digit}: write numbers with the digits 0-9")
    with pytest.raises(FormatError, match=fix) as error:
        parse_psq(text)
    assert error.value.line == line


@pytest.mark.parametrize("trailer", [
    ("pbrain-alpha.exe", "pbrain-beta.exe", "-1"),
    ("AlphaZero 1", "AlphaZero 2", "-1", "1,Freestyle"),  # a result line after the code
    ("-1",),
    ("1,Freestyle",),
    ("12 Angry Men", "x"),
])
def test_psq_trailer_begins_with_a_name_or_a_number(trailer: tuple[str, ...]) -> None:
    """What follows the moves stays the trailer: only a line that begins with two numbers
    is taken for a move."""
    text = "Piskvorky 15x15, 0:0, 0\n8,8,0\n9,9,5\n" + "\n".join(trailer) + "\n"
    game = parse_psq(text)
    assert len(game.moves) == 2 and game.trailer == trailer
    assert write_psq(game) == text


@pytest.mark.parametrize("first", ["3,4,5", "0,0", "-1,-1,0", "9,9,x", "9 9 0"])
def test_psq_writer_refuses_ambiguous_trailer(first: str) -> None:
    with pytest.raises(FormatError):
        write_psq(PsqGame(15, (), trailer=(first,)))


# --- replay --------------------------------------------------------------------------------


def finished_othello_replay() -> Replay:
    board = OthelloBoard()
    replay = Replay.new(board, "alpha@3", "beta@1")
    step = 0
    while not board.is_game_over():
        move = board.legal_moves()[step % len(board.legal_moves())]
        replay.moves.append(
            ReplayMove(
                move,
                10 + step,
                score=step - 5,
                depth=step % 7,
                nodes=step * 100,
                pv=[move],
                worker=f"w{step % 2}",
                exact=step > 50,
                notes=[f"MESSAGE step {step}", "DEBUG x"] if step % 5 == 0 else [],
            )
        )
        board.push(move)
        step += 1
    replay.outcome = board.outcome()
    replay.metadata = {"match_id": "m-1", "ladder": "spring"}
    return replay


def test_replay_round_trips_losslessly() -> None:
    replay = finished_othello_replay()
    text = write_replay(replay)
    assert json.loads(text)["version"] == REPLAY_VERSION
    assert text.count("\n") > len(replay.moves)  # one move per line
    assert text.count('"notes"') == sum(1 for move in replay.moves if move.notes)
    again = parse_replay(text)
    assert again == replay
    assert again.final_position().outcome() == replay.outcome


def test_replay_of_a_forfeit_and_of_gomoku() -> None:
    board = GomokuBoard(9, "exact-five")
    replay = Replay.new(board, "a", "b")
    replay.moves.append(ReplayMove(40, 5))
    replay.outcome = Outcome(Color.WHITE, Termination.TIMEOUT, 0, 1)
    replay.forfeit = "black exceeded 5000 ms (took 5123 ms)"
    assert parse_replay(write_replay(replay)) == replay
    empty = Replay.new(OthelloBoard.international(), "a", "b")
    assert parse_replay(write_replay(empty)) == empty


def edit(replay: Replay, path: list[str | int], value: object) -> str:
    data = json.loads(write_replay(replay))
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return json.dumps(data)


@pytest.mark.parametrize(
    ("path", "value", "fragment"),
    [
        (["version"], 2, "version"),
        (["format"], "pgn", "format"),
        (["moves", 3, "time_ms"], "12", "moves[3].time_ms"),
        (["moves", 3, "score"], True, "moves[3].score"),
        (["moves", 0, "move"], 0, "moves[0]"),  # illegal: a1 at the start
        (["moves", 2, "pv"], [1, "x"], "moves[2].pv"),
        # a made-up search of any length was stored (and counted in match_bytes)
        (["moves", 2, "pv"], [19] * 100_000, "moves[2].pv holds 100,000 moves; at most 128"),
        (["moves", 2, "notes"], "MESSAGE hi", "moves[2].notes"),
        (["moves", 2, "notes"], ["ok", 3], "moves[2].notes"),
        (["outcome", "winner"], "red", "outcome.winner"),
        (["outcome", "black_score"], 0, "outcome: the record says"),
        (["game"], "gomoku", "start"),
        (["variant"], "international", "start position is"),
        (["metadata", "x"], 3, "metadata.x"),
        (["forfeit"], "timeout", "forfeit"),
    ],
)
def test_replay_errors_name_the_field(path: list[str | int], value: object, fragment: str) -> None:
    with pytest.raises(FormatError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
        parse_replay(edit(finished_othello_replay(), path, value))


def test_a_field_left_out_is_said_to_be_missing() -> None:
    """It said 'moves[0].time_ms must be int, got None'."""
    data = json.loads(write_replay(finished_othello_replay()))
    del data["moves"][0]["time_ms"]
    with pytest.raises(FormatError, match=r"^moves\[0\]\.time_ms is missing \(it must be int\)"):
        parse_replay(json.dumps(data))


def test_an_outcome_the_moves_do_not_give_is_said_in_words() -> None:
    replay = finished_othello_replay()
    final = replay.outcome
    assert final is not None and final.winner is not None
    other = "black" if final.winner is Color.WHITE else "white"
    with pytest.raises(FormatError) as error:
        parse_replay(edit(replay, ["outcome", "winner"], other))
    count = len(replay.moves)
    said = (f"{final.black_score}-{final.white_score} (normal end"
            f"{f', {final.empties} empty' if final.empties else ''})")
    assert str(error.value) == (f"outcome: the record says {other} wins {said}; its {count} "
                                f"moves give {final.winner.name.lower()} wins {said}")
    short = json.loads(write_replay(replay))
    short["moves"] = short["moves"][:10]
    with pytest.raises(FormatError, match=r"; its 10 moves give a game not over$"):
        parse_replay(json.dumps(short))


def test_replay_json_syntax_errors_name_line_and_column() -> None:
    text = write_replay(finished_othello_replay())
    broken = text.replace('"black":', '"black" ', 1)
    with pytest.raises(FormatError) as error:
        parse_replay(broken)
    assert error.value.line == 8 and error.value.column is not None
    with pytest.raises(FormatError):
        parse_replay("[" * 100000)
