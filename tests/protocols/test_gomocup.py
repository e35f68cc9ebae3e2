"""The Gomocup codec: every command and reply parses back to itself, garbage raises
``ProtocolError`` (never anything else), and positions survive the BOARD round trip."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.protocols import gomocup
from arena.protocols.errors import ProtocolError
from arena.protocols.report import SearchReport

coordinate = st.integers(0, gomocup.MAX_COORDINATE)
free_text = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1,
                    max_size=30).map(str.strip).filter(bool)
info_key = st.from_regex(r"[a-z_][a-z0-9_]{0,15}", fullmatch=True)
commands = st.one_of(
    st.builds(gomocup.Start, st.integers(0, 999)),
    st.builds(gomocup.RectStart, coordinate, coordinate),
    st.builds(gomocup.Info, info_key, free_text),
    st.builds(gomocup.Board, st.lists(st.builds(gomocup.Stone, coordinate, coordinate,
                                                st.sampled_from([1, 2, 3])),
                                      max_size=20).map(tuple)),
    st.builds(gomocup.Turn, coordinate, coordinate),
    st.builds(gomocup.Takeback, coordinate, coordinate),
    st.sampled_from([gomocup.Begin(), gomocup.Restart(), gomocup.End(), gomocup.About()]),
)
about_value = st.text(st.characters(min_codepoint=32, max_codepoint=126, exclude_characters='"'),
                      max_size=20)
replies = st.one_of(
    st.just(gomocup.Ok()),
    st.builds(gomocup.MoveReply, coordinate, coordinate),
    st.builds(gomocup.Suggest, coordinate, coordinate),
    st.builds(gomocup.Message, free_text),
    st.builds(gomocup.Debug, free_text),
    st.builds(gomocup.Error, free_text),
    st.builds(gomocup.Unknown, free_text),
    st.builds(gomocup.AboutReply, st.lists(
        st.tuples(st.from_regex(r"[a-z][a-z_]{0,9}", fullmatch=True), about_value),
        min_size=1, max_size=4).map(tuple)),
)


def parse_all(text: str) -> list[gomocup.Command]:
    parser = gomocup.CommandParser()
    found = [parser.feed(line) for line in text.splitlines()]
    return [command for command in found if command is not None]


@given(commands)
def test_every_command_round_trips(command: gomocup.Command) -> None:
    assert parse_all(gomocup.format_command(command)) == [command]


@given(replies)
def test_every_reply_round_trips(reply: gomocup.Reply) -> None:
    assert gomocup.parse_reply(gomocup.format_reply(reply)) == reply


@given(st.text(max_size=60))
def test_garbage_replies_raise_protocol_error_only(text: str) -> None:
    try:
        reply = gomocup.parse_reply(text)
    except ProtocolError as exc:
        assert repr(text.strip()[:200]) in str(exc)
    else:
        assert gomocup.parse_reply(gomocup.format_reply(reply)) == reply


@given(st.lists(st.text(max_size=20), max_size=8))
def test_garbage_commands_raise_protocol_error_only(lines: list[str]) -> None:
    parser = gomocup.CommandParser()
    for line in lines:
        with contextlib.suppress(ProtocolError):
            parser.feed(line)


@pytest.mark.parametrize(("line", "command"), [
    ("START 15", gomocup.Start(15)),
    ("start 20", gomocup.Start(20)),
    ("RECTSTART 20,15", gomocup.RectStart(20, 15)),
    ("INFO timeout_turn 5000", gomocup.Info("timeout_turn", "5000")),
    ("INFO folder /tmp/with space", gomocup.Info("folder", "/tmp/with space")),
    ("INFO THREAD_NUM 1", gomocup.Info("thread_num", "1")),
    ("TURN 10, 3", gomocup.Turn(10, 3)),
    ("BEGIN", gomocup.Begin()),
    ("TAKEBACK 1,2", gomocup.Takeback(1, 2)),
])
def test_commands_as_managers_send_them(line: str, command: gomocup.Command) -> None:
    assert parse_all(line) == [command]


@pytest.mark.parametrize("line", ["BOARDS", "PLAY", "PLAY 3,3", "turnip 3,3"])
def test_unknown_commands(line: str) -> None:
    with pytest.raises(ProtocolError, match="not a Gomocup command") as caught:
        gomocup.CommandParser().feed(line)
    assert not isinstance(caught.value, gomocup.BadArguments)


@pytest.mark.parametrize(("line", "takes"), [
    ("START", "a size"), ("START -1", "a size"), ("START \u00b2", "a size"),
    ("START 1\u00b2", "a size"), ("TURN 3", "x,y"), ("TURN a,b", "x,y"),
    ("turn -1,-1", "x,y"), ("TAKEBACK 1000,1", "x,y"), ("INFO", "a key and a value"),
    ("RECTSTART 3", "width,height"), ("BEGIN now", "nothing"), ("BOARD 3", "nothing"),
])
def test_known_commands_with_bad_arguments(line: str, takes: str) -> None:
    """A brain answers these ERROR (the command is known), not UNKNOWN."""
    with pytest.raises(gomocup.BadArguments, match=f"takes {takes}"):
        gomocup.CommandParser().feed(line)


def test_a_bad_board_line_drops_the_block() -> None:
    parser = gomocup.CommandParser()
    assert parser.feed("BOARD") is None
    assert parser.feed("7,7,1") is None
    with pytest.raises(ProtocolError, match="bad BOARD line '7,7,9'"):
        parser.feed("7,7,9")
    assert parser.feed("BEGIN") == gomocup.Begin()  # back outside the block


@pytest.mark.parametrize(("line", "reply"), [
    ("OK", gomocup.Ok()),
    (" 7,8 ", gomocup.MoveReply(7, 8)),
    ("MESSAGE depth 4", gomocup.Message("depth 4")),
    ("DEBUG", gomocup.Debug("")),
    ("ERROR unsupported size", gomocup.Error("unsupported size")),
    ("UNKNOWN what", gomocup.Unknown("what")),
    ('name="Rapfi", version="0.43.02 (g++ 12.2.0 on Linux SSE41 AVX2 BMI2)", '
     'author="Rapfi developers (see AUTHORS file)", country="China"',
     gomocup.AboutReply((("name", "Rapfi"),
                         ("version", "0.43.02 (g++ 12.2.0 on Linux SSE41 AVX2 BMI2)"),
                         ("author", "Rapfi developers (see AUTHORS file)"),
                         ("country", "China")))),
])
def test_replies_as_brains_send_them(line: str, reply: gomocup.Reply) -> None:
    assert gomocup.parse_reply(line) == reply


@pytest.mark.parametrize("line", ["", "7,8,1", "7 8", "okay", 'name="x', "-1,3", "x,y"])
def test_malformed_replies(line: str) -> None:
    with pytest.raises(ProtocolError, match="not a Gomocup reply"):
        gomocup.parse_reply(line)


@given(st.lists(st.integers(0, 224), max_size=40, unique=True))
def test_board_for_the_side_to_move_round_trips(moves: list[int]) -> None:
    board = gomocup.board_for(moves, 15)
    assert gomocup.moves_from_board(board, 15) == moves
    mover = len(moves) % 2
    assert [s.field for s in board.stones] == [
        gomocup.OWN if ply % 2 == mover else gomocup.OPPONENT for ply in range(len(moves))]


def test_board_fields_mark_the_side_to_move_as_own() -> None:
    board = gomocup.board_for([112, 0, 113], 15)  # White to move
    assert [s.field for s in board.stones] == [2, 1, 2]
    assert board.stones[0] == gomocup.Stone(7, 7, 2)


@pytest.mark.parametrize(("stones", "message"), [
    ([(7, 7, 1), (7, 7, 2)], "twice"),
    ([(7, 7, 1), (8, 8, 1)], "cannot be the side to move"),
    ([(15, 0, 1)], "off the 15x15 board"),
    ([(1, 1, 3)], "continuous"),
])
def test_impossible_boards(stones: list[tuple[int, int, int]], message: str) -> None:
    board = gomocup.Board(tuple(gomocup.Stone(*s) for s in stones))
    with pytest.raises(ProtocolError, match=message):
        gomocup.moves_from_board(board, 15)


def test_rule_codes() -> None:
    assert gomocup.rule_code("freestyle") == 0
    assert gomocup.rule_code("exact-five") == 1
    assert gomocup.rule_name(0) == "freestyle"
    assert gomocup.rule_name(1) == "exact-five"
    assert gomocup.rule_name(3) == "exact-five"  # continuous bit ignored
    for code in (4, 8, -1):
        with pytest.raises(ProtocolError):
            gomocup.rule_name(code)
    with pytest.raises(ProtocolError):
        gomocup.rule_code("renju")


def test_search_messages_of_rapfi() -> None:
    """Rapfi 0.43's brief and UCI-like message modes (its PV names points like h8: the
    column letter from a, the row from 1)."""
    brief = gomocup.parse_search_message(
        "Speed 10000 | Depth 6-2 | Eval +M3 | Node 10 | Time 1ms", 15)
    assert brief == SearchReport(depth=6, score=gomocup.MATE_SCORE - 3.0, nodes=10,
                                 time_ms=1.0, exact=True)
    assert gomocup.parse_search_message("Bestline G8", 15) == SearchReport(pv=(7 * 15 + 6,))
    uci = gomocup.parse_search_message("depth 10-15 ev -35 n 1.2M n/ms 12 tm 88 pv h8 i9", 15)
    assert uci == SearchReport(depth=10, score=-35.0, nodes=1_200_000, time_ms=88.0,
                               pv=(7 * 15 + 7, 8 * 15 + 8))
    assert gomocup.parse_search_message("Evaluator set to classical.", 15) is None


@given(st.builds(SearchReport, st.none() | st.integers(0, 99),
                 st.none() | st.integers(-10**6 + 1000, 10**6 - 1000).map(float),
                 st.none() | st.integers(0, 10**12), st.none() | st.integers(0, 10**7).map(float),
                 st.lists(st.integers(0, 224), max_size=10).map(tuple)))
def test_search_messages_round_trip(report: SearchReport) -> None:
    parsed = gomocup.parse_search_message(gomocup.format_search_message(report, 15), 15)
    assert (parsed or SearchReport()) == report
