"""Property tests over every game through the shared ``Position`` interface."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.games import (
    GAMES,
    Color,
    GomokuBoard,
    OthelloBoard,
    Position,
    Termination,
    UnknownGameError,
    new_position,
    position_from_text,
)

PROFILE = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

VARIANTS = [
    ("othello", "standard", None),
    ("othello", "international", None),
    ("gomoku", "freestyle", 9),
    ("gomoku", "exact-five", 9),
    ("gomoku", "freestyle", 15),
]


@st.composite
def playouts(draw: st.DrawFn) -> tuple[Position, list[Position]]:
    """A random game prefix; returns the final position and a copy before each move."""
    game, variant, size = draw(st.sampled_from(VARIANTS))
    position = new_position(game, variant, size)
    before: list[Position] = []
    for _ in range(draw(st.integers(0, 90))):
        moves = position.legal_moves()
        if not moves:
            break
        before.append(position.copy())
        position.push(draw(st.sampled_from(moves)))
    return position, before


@PROFILE
@given(playouts())
def test_push_and_pop_are_exact_inverses(case: tuple[Position, list[Position]]) -> None:
    position, before = case
    stack = position.move_stack
    assert len(stack) == len(before)
    for expected, move in zip(reversed(before), reversed(stack), strict=True):
        assert position.pop() == move
        assert position == expected
        assert position.to_text() == expected.to_text()
        assert position.legal_moves() == expected.legal_moves()


@PROFILE
@given(playouts())
def test_text_form_and_repr_round_trip(case: tuple[Position, list[Position]]) -> None:
    position, _ = case
    text = position.to_text()
    again = position_from_text(position.game, text)
    assert again == position and hash(again) == hash(position)
    assert again.to_text() == text
    assert again.legal_moves() == position.legal_moves()
    assert again.outcome() == position.outcome()
    namespace = {"OthelloBoard": OthelloBoard, "GomokuBoard": GomokuBoard}
    assert eval(repr(position), namespace) == position
    for move in position.legal_moves():
        assert position.parse_move(position.move_to_str(move)) == move


@PROFILE
@given(playouts())
def test_legal_moves_sorted_and_outcome_consistent(case: tuple[Position, list[Position]]) -> None:
    position, _ = case
    moves = position.legal_moves()
    assert moves == sorted(set(moves))
    outcome = position.outcome()
    assert (outcome is None) == bool(moves)
    assert position.is_game_over() == (outcome is not None)
    if outcome is None:
        return
    assert outcome.termination in (Termination.NORMAL, Termination.FULL_BOARD)
    if isinstance(position, OthelloBoard):
        black, white = position.count(Color.BLACK), position.count(Color.WHITE)
        assert (outcome.black_score, outcome.white_score) == (black, white)
        expected = None if black == white else Color.BLACK if black > white else Color.WHITE
        assert outcome.winner == expected
        assert outcome.empties == 64 - black - white
    else:
        assert outcome.winner is None or outcome.winner is position.turn.other


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300), st.sampled_from(GAMES))
def test_random_bytes_raise_only_value_errors(data: bytes, game: str) -> None:
    text = data.decode("latin-1")
    position = new_position(game)
    for call in (
        lambda: position_from_text(game, text),
        lambda: position.parse_move(text),
        lambda: OthelloBoard.from_start_text(text),
    ):
        with contextlib.suppress(ValueError):
            call()
    if isinstance(position, GomokuBoard):
        with contextlib.suppress(ValueError):
            position.parse_xy(text)


def test_registry() -> None:
    assert new_position("othello") == OthelloBoard()
    assert new_position("othello", "international") == OthelloBoard.international()
    assert new_position("gomoku").size == 15
    assert new_position("gomoku", "exact-five", 9) == GomokuBoard(9, "exact-five")
    for args in [("chess",), ("othello", "anti"), ("othello", None, 10), ("gomoku", None, 20)]:
        with pytest.raises(UnknownGameError):
            new_position(*args)  # type: ignore[arg-type]
    with pytest.raises(UnknownGameError):
        position_from_text("go", "")
    assert isinstance(new_position("gomoku"), Position)
