"""Every record format round-trips on random games; garbage raises ValueErrors only."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.formats import (
    ObfPosition,
    PsqGame,
    Replay,
    ReplayMove,
    ggf_from_moves,
    parse_ggf,
    parse_ggf_games,
    parse_obf,
    parse_obf_file,
    parse_psq,
    parse_replay,
    parse_transcript,
    psq_from_moves,
    write_ggf,
    write_obf,
    write_psq,
    write_replay,
    write_transcript,
)
from arena.formats.ggf import MAX_MOVE_SECONDS
from arena.games import GomokuBoard, OthelloBoard, Position, new_position
from arena.games.othello import PASS

PROFILE = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@st.composite
def othello_games(draw: st.DrawFn) -> OthelloBoard:
    board = OthelloBoard(draw(st.sampled_from(["standard", "international"])))
    for _ in range(draw(st.integers(0, 70))):
        moves = board.legal_moves()
        if not moves:
            break
        board.push(draw(st.sampled_from(moves)))
    return board


@st.composite
def gomoku_games(draw: st.DrawFn) -> GomokuBoard:
    board = GomokuBoard(
        draw(st.sampled_from([9, 15])), draw(st.sampled_from(["freestyle", "exact-five"]))
    )
    for _ in range(draw(st.integers(0, 80))):
        moves = board.legal_moves()
        if not moves:
            break
        board.push(draw(st.sampled_from(moves)))
    return board


def start_of(board: OthelloBoard) -> OthelloBoard:
    return OthelloBoard(board.variant)


@PROFILE
@given(othello_games(), st.sampled_from(["pass", "PA"]))
def test_transcript_round_trip(board: OthelloBoard, style: str) -> None:
    moves = board.move_stack
    start = start_of(board)
    assert parse_transcript(write_transcript(moves, passes=style), start) == moves  # type: ignore[arg-type]
    if not moves or moves[-1] != PASS:
        assert parse_transcript(write_transcript(moves), start) == moves


@PROFILE
@given(othello_games(), st.data())
def test_ggf_round_trip(board: OthelloBoard, data: st.DataObject) -> None:
    moves = board.move_stack
    evals = data.draw(st.lists(st.none() | finite, min_size=len(moves), max_size=len(moves)))
    seconds = st.floats(0, MAX_MOVE_SECONDS)  # a time a match can keep, in milliseconds
    times = data.draw(st.lists(st.none() | seconds, min_size=len(moves), max_size=len(moves)))
    names = data.draw(st.tuples(st.text(max_size=12), st.text(max_size=12)))
    game = ggf_from_moves(
        start_of(board), moves, black=names[0], white=names[1], evals=evals, times=times,
        outcome=board.outcome(),
    )  # fmt: skip
    assert parse_ggf(write_ggf(game)) == game
    assert game.final_board() == board


@PROFILE
@given(othello_games(), st.data())
def test_obf_round_trip(board: OthelloBoard, data: st.DataObject) -> None:
    standard = OthelloBoard.from_text(board.to_text().split(" international")[0])
    moves = standard.legal_moves()
    chosen = data.draw(st.lists(st.sampled_from(moves), unique=True) if moves else st.just([]))
    scores = tuple((m, data.draw(st.integers(-64, 64))) for m in chosen)
    comment = data.draw(st.text(alphabet="abc %;:XO-", max_size=10)).strip()
    position = ObfPosition(standard, scores, comment)
    assert parse_obf(write_obf(position)) == position


@PROFILE
@given(gomoku_games(), st.data())
def test_psq_round_trip(board: GomokuBoard, data: st.DataObject) -> None:
    moves = board.move_stack
    times = data.draw(st.lists(st.integers(0, 10**6), min_size=len(moves), max_size=len(moves)))
    game = psq_from_moves(board.size, moves, rule=board.rule, times_ms=times, names=("a", "b"))
    assert parse_psq(write_psq(game), board.rule) == game
    assert game.final_board() == board


@PROFILE
@given(st.one_of(othello_games(), gomoku_games()), st.data())
def test_replay_round_trip(board: Position, data: st.DataObject) -> None:
    start = new_position(board.game, board.variant, board.size)
    replay = Replay.new(start, data.draw(st.text(max_size=8)), data.draw(st.text(max_size=8)))
    optional_score = st.none() | st.integers(-(2**40), 2**40)
    optional_count = st.none() | st.integers(0, 2**30)  # depths, nodes: never negative
    for move in board.move_stack:
        replay.moves.append(
            ReplayMove(
                move,
                data.draw(st.integers(0, 10**7)),
                data.draw(optional_score),
                data.draw(optional_count),
                data.draw(optional_count),
                data.draw(st.lists(st.integers(0, 64), max_size=4)),
                data.draw(st.none() | st.text(max_size=6)),
                data.draw(st.booleans()),
            )
        )
    replay.outcome = board.outcome()
    replay.metadata = data.draw(st.dictionaries(st.text(max_size=5), st.text(max_size=5)))
    assert parse_replay(write_replay(replay)) == replay


PARSERS: list[Callable[[str], object]] = [
    parse_transcript,
    parse_ggf,
    parse_ggf_games,
    parse_obf,
    parse_obf_file,
    parse_psq,
    parse_replay,
]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_random_bytes_raise_only_value_errors(data: bytes) -> None:
    text = data.decode("utf-8", errors="replace")
    for parse in PARSERS:
        with contextlib.suppress(ValueError):
            parse(text)


GRAMMAR_PIECES = ["(;", ";)", "GM[Othello]", "B[", "W[", "]", "BO[8 ", "PA", "f5", "/", "1.5",
                  "Piskvorky 9x9, 0:0, 0\n", "3,4,5\n", "{", "}", '"moves"', ":", "[", "X", "O",
                  "-" * 64, " X;", "D3:+2;", "%", "\n", "\\"]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(GRAMMAR_PIECES), max_size=30))
def test_near_miss_records_raise_only_value_errors(pieces: list[str]) -> None:
    text = "".join(pieces)
    for parse in PARSERS:
        with contextlib.suppress(ValueError):
            parse(text)
    with contextlib.suppress(ValueError):
        write_psq(PsqGame(9, (), trailer=tuple(text.split("\n"))))
