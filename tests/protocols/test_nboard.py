"""The NBoard codec: commands and replies round-trip, Edax's and the protocol page's forms
parse, garbage raises ``ProtocolError`` only, and ``set game`` carries a position exactly."""

from __future__ import annotations

import contextlib
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.formats.ggf import parse_ggf
from arena.games import PASS, OthelloBoard
from arena.protocols import nboard
from arena.protocols.errors import ProtocolError
from arena.protocols.report import SearchReport

square = st.integers(0, 64)
hundredths = st.integers(-6400, 6400).map(lambda n: n / 100)
words = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=12)
free_text = st.lists(words, min_size=1, max_size=4).map(" ".join)
commands = st.one_of(
    st.builds(nboard.Hello, st.integers(0, 9)),
    st.builds(nboard.SetDepth, st.integers(0, 60)),
    st.builds(nboard.SetGame, free_text),
    st.builds(nboard.SetContempt, hundredths),
    st.builds(nboard.PlayedMove, square, st.none() | hundredths, st.none() | hundredths),
    st.builds(nboard.Hint, st.integers(1, 30)),
    st.builds(nboard.Ping, st.integers(0, 10**6)),
    st.sampled_from([nboard.Go(), nboard.Learn(), nboard.Quit()]),
)
pv = st.lists(square, min_size=1, max_size=8).map(tuple)
replies = st.one_of(
    st.builds(nboard.BestMove, square, st.none() | hundredths, st.none() | hundredths),
    st.builds(nboard.Status, st.just("") | free_text),
    st.builds(nboard.SearchLine, pv, hundredths, st.none() | st.integers(0, 60),
              st.just("")),
    st.builds(nboard.SearchLine, pv, hundredths, st.integers(0, 60), free_text),
    st.builds(nboard.BookLine, pv, hundredths, st.integers(0, 10**6),
              st.none() | st.integers(0, 60), st.just("")),
    st.builds(nboard.Pong, st.integers(0, 10**6)),
    st.builds(nboard.MyName, free_text),
    st.just(nboard.Learned()),
    st.builds(nboard.NodeStats, st.integers(0, 10**12).map(float), hundredths.map(abs)),
)


@given(commands)
def test_every_command_round_trips(command: nboard.Command) -> None:
    assert nboard.parse_command(nboard.format_command(command)) == command


@given(replies)
def test_every_reply_round_trips(reply: nboard.Reply) -> None:
    assert nboard.parse_reply(nboard.format_reply(reply)) == reply


@given(st.text(max_size=60))
def test_garbage_raises_protocol_error_only(text: str) -> None:
    for parse in (nboard.parse_reply, nboard.parse_command):
        with contextlib.suppress(ProtocolError):
            parse(text)


@pytest.mark.parametrize(("line", "reply"), [
    ("=== d6 -1.00 0.0", nboard.BestMove(43, -1.0, 0.0)),  # Edax, and the protocol page
    ("=== F5/2.50/1.5", nboard.BestMove(37, 2.5, 1.5)),
    ("=== F5//1.5", nboard.BestMove(37, None, 1.5)),
    ("=== PA", nboard.BestMove(PASS)),
    ("search E6F4     1 0 12", nboard.SearchLine((44, 29), 1.0, 12)),  # Edax pads its PV
    ("search F5-D6-C3 (1.5,2.5) 0 22@73% more", nboard.SearchLine((37, 43, 18), 1.5, 22,
                                                                   "more")),
    ("book F5d6 0.50 123 24", nboard.BookLine((37, 43), 0.5, 123, 24)),
    ("status Edax is thinking", nboard.Status("Edax is thinking")),
    ("status", nboard.Status("")),
    ("set myname Edax6", nboard.MyName("Edax6")),
    ("nodestats 35805 0.00", nboard.NodeStats(35805.0, 0.0)),
    ("pong 3", nboard.Pong(3)),
    ("learned", nboard.Learned()),
])
def test_replies_as_engines_send_them(line: str, reply: nboard.Reply) -> None:
    assert nboard.parse_reply(line) == reply


@pytest.mark.parametrize("line", ["", "=== ", "=== Z9", "=== F5 x", "search F5 1.0",
                                  "search F5D 1.0 0 3", "pong", "pong x", "nodestats 1",
                                  "I think therefore I am", "book F5 1.0 many 3"])
def test_malformed_replies(line: str) -> None:
    with pytest.raises(ProtocolError):
        nboard.parse_reply(line)


@pytest.mark.parametrize(("line", "command"), [
    ("nboard 2", nboard.Hello(2)),
    ("set depth 6", nboard.SetDepth(6)),
    ("set contempt -1.5", nboard.SetContempt(-1.5)),
    ("move F5/1.00/2.5", nboard.PlayedMove(37, 1.0, 2.5)),
    ("move F5", nboard.PlayedMove(37)),
    ("F5", nboard.PlayedMove(37)),  # NBoard 1.1 sent bare moves
    ("hint 3", nboard.Hint(3)),
    ("ping 12", nboard.Ping(12)),
])
def test_commands_as_guis_send_them(line: str, command: nboard.Command) -> None:
    assert nboard.parse_command(line) == command


@pytest.mark.parametrize("line", ["", "set", "set depth x", "set colour red", "go now",
                                  "move Z9", "move F5/a/b", "analyze", "ping -1"])
def test_malformed_commands(line: str) -> None:
    with pytest.raises(ProtocolError):
        nboard.parse_command(line)


def random_game(seed: int) -> tuple[OthelloBoard, list[int]]:
    rng = random.Random(seed)
    board, moves = OthelloBoard(), []
    for _ in range(rng.randrange(0, 61)):
        if board.is_game_over():
            break
        move = rng.choice(board.legal_moves())
        board.push(move)
        moves.append(move)
    return board, moves


@pytest.mark.parametrize("seed", range(20))
def test_set_game_carries_the_position(seed: int) -> None:
    board, _moves = random_game(seed)
    ggf = nboard.game_for(board.to_text())
    assert nboard.board_of_game(ggf) == board
    assert parse_ggf(ggf).moves == ()


def test_set_game_keeps_the_international_variant() -> None:
    board = OthelloBoard("international")
    board.push(27)
    assert nboard.board_of_game(nboard.game_for(board.to_text())) == board


def test_a_bad_set_game_is_a_protocol_error() -> None:
    with pytest.raises(ProtocolError, match="bad GGF"):
        nboard.board_of_game("(;GM[Chess];)")


def test_search_report_from_what_an_engine_said() -> None:
    said = [nboard.Status("thinking"), nboard.SearchLine((19, 18), 2.0, 8),
            nboard.SearchLine((37, 43, 18), 1.5, 10), nboard.NodeStats(35805, 0.25),
            nboard.BestMove(37, 1.5, 0.3)]
    assert nboard.search_report(said) == SearchReport(
        depth=10, score=1.5, nodes=35805, time_ms=300.0, pv=(37, 43, 18))
    # A best move other than the PV's first: the PV is dropped, the move stays.
    assert nboard.search_report([*said[:3], nboard.BestMove(19)]).pv == (19,)
