"""The GTP codec: commands and responses round-trip, Edax's forms parse, garbage raises
``ProtocolError`` only, and a game is replayed from the standard start exactly (positions
GTP cannot reach are refused)."""

from __future__ import annotations

import contextlib
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.games import PASS, Color, OthelloBoard
from arena.protocols import gtp
from arena.protocols.errors import ProtocolError

colors = st.sampled_from([Color.BLACK, Color.WHITE])
moves = st.integers(0, 63) | st.just(PASS)
seconds = st.integers(0, 10**6)
commands = st.one_of(
    st.sampled_from([gtp.ProtocolVersion(), gtp.Name(), gtp.Version(), gtp.ListCommands(),
                     gtp.ClearBoard(), gtp.Undo(), gtp.Quit()]),
    st.builds(gtp.KnownCommand, st.sampled_from([*gtp.COMMAND_NAMES, "showboard"])),
    st.builds(gtp.BoardSize, st.integers(1, 25)),
    st.builds(gtp.Komi, st.integers(-200, 200).map(lambda n: n / 2)),
    st.builds(gtp.Play, colors, moves),
    st.builds(gtp.GenMove, colors),
    st.builds(gtp.TimeSettings, seconds, seconds, st.integers(0, 100)),
    st.builds(gtp.TimeLeft, colors, seconds, st.integers(0, 100)),
)
line_text = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1,
                    max_size=20)
responses = st.builds(
    gtp.Response, st.booleans(),
    st.just("") | st.lists(line_text, min_size=1, max_size=4).map("\n".join),
    st.none() | st.integers(0, 10**6))


@given(commands, st.none() | st.integers(0, 10**6))
def test_every_command_round_trips(command: gtp.Command, command_id: int | None) -> None:
    assert gtp.parse_command(gtp.format_command(command, command_id)) == (command_id, command)


@given(responses)
def test_every_response_round_trips(response: gtp.Response) -> None:
    reader = gtp.ResponseReader(id_sent=response.command_id is not None)
    lines = gtp.format_response(response).split("\n")
    assert lines[-2:] == ["", ""]  # the closing empty line
    read = [reader.feed(line) for line in lines[:-1]]
    assert read[:-1] == [None] * (len(read) - 1) and read[-1] == response
    assert not reader.pending


@given(st.text(max_size=60))
def test_garbage_raises_protocol_error_only(text: str) -> None:
    with contextlib.suppress(ProtocolError):
        gtp.parse_command(text)
    with contextlib.suppress(ProtocolError):
        gtp.parse_response_head(text)
    with contextlib.suppress(ProtocolError):
        gtp.parse_vertex(text)


@pytest.mark.parametrize(("lines", "response"), [
    (["= f5", ""], gtp.Response(True, "f5")),  # Edax's genmove
    (["= pass", ""], gtp.Response(True, "pass")),
    (["= ", ""], gtp.Response(True, "")),  # Edax's empty success: "= " then an empty line
    (["= 2", ""], gtp.Response(True, "2")),  # protocol_version: 2 is the text, not an id
    (["? unacceptable size", ""], gtp.Response(False, "unacceptable size")),
    (["", "", "=", ""], gtp.Response(True, "")),  # empty lines between responses
    (["= protocol_version", "name", "quit", ""], gtp.Response(True, "protocol_version\nname\n"
                                                                    "quit")),
])
def test_responses_as_engines_send_them(lines: list[str], response: gtp.Response) -> None:
    reader = gtp.ResponseReader()
    read = [reader.feed(line) for line in lines]
    assert read[-1] == response and all(r is None for r in read[:-1])


def test_ids_in_responses() -> None:
    assert gtp.parse_response_head("=12 f5", id_sent=True) == gtp.Response(True, "f5", 12)
    assert gtp.parse_response_head("= 12 f5", id_sent=True) == gtp.Response(True, "f5", 12)
    assert gtp.parse_response_head("?3", id_sent=True) == gtp.Response(False, "", 3)
    with pytest.raises(ProtocolError, match="with an id"):
        gtp.parse_response_head("=12 f5")  # an id nobody sent


@pytest.mark.parametrize("line", ["f5", "I think, therefore I am", "=== F5", "status", " x"])
def test_lines_that_are_no_response(line: str) -> None:
    with pytest.raises(ProtocolError, match="not a GTP response"):
        gtp.ResponseReader().feed(line)


@pytest.mark.parametrize(("line", "command"), [
    ("boardsize 8", (None, gtp.BoardSize(8))),
    ("7 genmove black", (7, gtp.GenMove(Color.BLACK))),
    ("PLAY W F5", (None, gtp.Play(Color.WHITE, 37))),
    ("play\tb  pass  # a comment", (None, gtp.Play(Color.BLACK, PASS))),
    ("play b\x01 a1\r", (None, gtp.Play(Color.BLACK, 0))),
    ("time_left white 30 1", (None, gtp.TimeLeft(Color.WHITE, 30, 1))),
    ("komi 6.5", (None, gtp.Komi(6.5))),
])
def test_commands_as_managers_send_them(line: str, command: tuple[int | None, gtp.Command]
                                        ) -> None:
    assert gtp.parse_command(line) == command


@pytest.mark.parametrize("line", ["", "# only a comment", "boardsize", "boardsize eight",
                                  "play b", "play b z9", "play b resign", "play red f5",
                                  "genmove", "genmove b w", "time_left b 1", "time_left b -1 0",
                                  "komi much", "quit now", "-1 name"])
def test_malformed_commands(line: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        gtp.parse_command(line)
    assert not isinstance(caught.value, gtp.UnknownCommand) or line == "-1 name"


def test_unknown_commands_are_told_apart() -> None:
    with pytest.raises(gtp.UnknownCommand):
        gtp.parse_command("5 showboard")
    assert gtp.split_id("5 showboard") == (5, ["showboard"])


@pytest.mark.parametrize(("text", "move"), [("a1", 0), ("H8", 63), ("f5", 37), ("PASS", PASS),
                                            ("resign", gtp.RESIGN)])
def test_vertices(text: str, move: int) -> None:
    assert gtp.parse_vertex(text) == move
    assert gtp.parse_vertex(gtp.vertex_text(move)) == move


@pytest.mark.parametrize("text", ["i1", "a9", "a0", "", "f55", "pa", "5f"])
def test_bad_vertices(text: str) -> None:
    with pytest.raises(ProtocolError):
        gtp.parse_vertex(text)


def test_a_genmove_answer_is_one_vertex() -> None:
    assert gtp.parse_move_response(gtp.Response(True, "F5")) == 37
    for bad in (gtp.Response(True, ""), gtp.Response(True, "f5 f6"),
                gtp.Response(False, "f5"), gtp.Response(True, "z9")):
        with pytest.raises(ProtocolError):
            gtp.parse_move_response(bad)


def game_with_passes() -> tuple[OthelloBoard, list[int]]:
    """A random game from the start that contains a forced pass."""
    for seed in range(1000):
        rng = random.Random(seed)
        board, moves = OthelloBoard(), []
        while not board.is_game_over():
            move = rng.choice(board.legal_moves())
            board.push(move)
            moves.append(move)
            if move == PASS and len(moves) < 55:
                return board, moves
    raise AssertionError("no pass in 1000 random games")


def moves_from_start(position_text: str, history: list[int]) -> list[gtp.Command]:
    """What a manager sends after clear_board, checked to reach the position."""
    target = gtp.standard_position(position_text)
    board = OthelloBoard()
    commands = gtp.continue_game(board, history)
    gtp.check_reached(board, target, len(history))
    return commands


def test_a_game_is_replayed_from_the_standard_start_with_its_passes() -> None:
    board, moves = game_with_passes()
    replayed = moves_from_start(board.to_text(), moves)
    assert [c.move for c in replayed if isinstance(c, gtp.Play)] == moves
    assert any(c == gtp.Play(c.color, PASS) for c in replayed if isinstance(c, gtp.Play))
    check = OthelloBoard()
    for command in replayed:
        assert isinstance(command, gtp.Play) and command.color is check.turn
        check.push(command.move)
    assert check == board
    halfway = OthelloBoard()
    gtp.continue_game(halfway, moves[:-2])
    assert gtp.continue_game(halfway, moves[-2:]) == replayed[-2:] and halfway == board


def test_positions_gtp_cannot_reach_are_refused() -> None:
    board, moves = game_with_passes()
    with pytest.raises(ValueError, match="do not lead to"):
        moves_from_start(board.to_text(), moves[:-2])  # not the whole game
    with pytest.raises(ValueError, match="not a game from the standard start"):
        moves_from_start(board.to_text(), moves[3:])  # only its end
    with pytest.raises(ValueError, match="not a game from the standard start"):
        moves_from_start(board.to_text(), [0, *moves])
    with pytest.raises(ValueError, match="international variant"):
        moves_from_start(OthelloBoard("international").to_text(), [])
    custom = "X" + OthelloBoard().to_text()[1:]  # a disc in a corner from the start
    with pytest.raises(ValueError, match="standard start"):
        moves_from_start(custom, [])
    with pytest.raises(ValueError):
        moves_from_start("nonsense", [])


def test_a_response_cannot_carry_an_empty_line() -> None:
    with pytest.raises(ProtocolError):
        gtp.format_response(gtp.Response(True, "a\n\nb"))
