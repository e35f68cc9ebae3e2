"""International Reversi: the engine plays the four centre placements, then plain Othello.

Games are checked move by move with the rules library (``arena.games.othello``), which the
referee uses; the engine's own parser, move list, ``play`` and perft agree with it.
"""

from __future__ import annotations

import pytest

from arena.engine.api import Limits
from arena.engine.othello import PRESETS, choose_move, perft, solve, warm_up
from arena.engine.othello.bitboard import PositionTextError, legal_moves, parse_position
from arena.games.othello import OthelloBoard
from arena.games.othello import perft as reference_perft

EMPTY = "-" * 64 + " X international"
# Searches capped by depth and nodes (never by the clock): the games are reproducible.
LIMITS = Limits(depth=3, nodes=200_000)


def _play_game(black: str, white: str, seed: int) -> list[int]:
    """A whole international game between two presets; every move checked legal."""
    board = OthelloBoard.international()
    while not board.is_game_over():
        name = black if board.turn.name == "BLACK" else white
        result = choose_move(board.to_text(), PRESETS[name], LIMITS, seed=seed)
        assert board.is_legal(result.move), (name, board.to_text(), result.move)
        board.push(result.move)
    return board.move_stack


def test_engine_parser_and_moves_follow_the_rules_library() -> None:
    board = OthelloBoard.international()
    for ply in range(8):
        text = board.to_text()
        pos = parse_position(text)
        assert pos.to_text() == text
        assert pos.in_opening() == board.in_opening()
        assert legal_moves(pos) == board.legal_moves()
        move = board.legal_moves()[ply % len(board.legal_moves())]
        board.push(move)
        assert pos.play(move).to_text() == board.to_text()
    assert not parse_position(board.to_text()).in_opening()
    assert parse_position(board.to_text()).international


@pytest.mark.parametrize(
    "text",
    [
        "X" + "-" * 63 + " O international",  # a disc off the centre
        "-" * 27 + "X" + "-" * 36 + " X international",  # black placed, black to move again
        "-" * 27 + "O" + "-" * 36 + " O international",  # white placed first
    ],
)
def test_unreachable_opening_positions_are_refused(text: str) -> None:
    with pytest.raises(PositionTextError):
        parse_position(text)


def test_perft_through_the_opening_matches_the_rules_library() -> None:
    start = OthelloBoard.international()
    for depth in range(1, 7):
        assert perft(EMPTY, depth) == reference_perft(start, depth), depth


def test_every_preset_plays_a_whole_international_game() -> None:
    warm_up()  # a kernel compiled inside a move would eat that move's own time limit
    names = list(PRESETS)
    for index, black in enumerate(names):
        white = names[(index + 1) % len(names)]
        game = _play_game(black, white, seed=index)
        assert len(game) >= 30, (black, white, game)
        assert _play_game(black, white, seed=index) == game, (black, white)


def test_placements_are_drawn_with_the_seed_among_the_empty_centre_squares() -> None:
    arrangements = set()
    for seed in range(60):
        pos = parse_position(EMPTY)
        for _ in range(4):
            result = choose_move(pos.to_text(), PRESETS["arena-strong"], Limits(), seed=seed)
            assert result.ties == legal_moves(pos) and result.move in result.ties
            assert not result.cut_short and result.pv == [result.move]
            pos = pos.play(result.move)
        arrangements.add((pos.black, pos.white))
    # Black on two of the four centre squares: six arrangements, crossed or parallel.
    assert len(arrangements) == 6


def test_no_exact_solve_during_the_opening() -> None:
    with pytest.raises(ValueError, match="opening"):
        solve(EMPTY)
