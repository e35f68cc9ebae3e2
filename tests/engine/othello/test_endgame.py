"""Exact endgame solver: FFO 1-19 and a brute-force cross-check on small endgames."""

from __future__ import annotations

import pytest

from arena.engine.api import Limits, StopFlag
from arena.engine.othello import solve
from arena.engine.othello.bitboard import parse_square
from arena.games.othello import OthelloBoard
from tests.engine.othello.conftest import random_boards, read_obf

FFO_1_19 = read_obf("fforum-1-19.obf")


def brute_force(board: OthelloBoard) -> int:
    """Plain negamax over the reference rules: final disc difference, empties to the winner."""
    moves = board.legal_moves()
    if not moves:
        me = board.count(board.turn)
        them = board.count(board.turn.other)
        empties = 64 - me - them
        diff = me - them
        return diff + empties if diff > 0 else diff - empties if diff < 0 else 0
    best = -100
    for move in moves:
        board.push(move)
        best = max(best, -brute_force(board))
        board.pop()
    return best


@pytest.mark.parametrize(("text", "scores"), FFO_1_19, ids=[f"ffo{i + 1}" for i in range(19)])
def test_ffo_1_19_solved_exactly(text: str, scores: dict[str, int]) -> None:
    result = solve(text)
    best = max(scores.values())
    assert result.score == best
    assert result.exact
    # The chosen move is one of the moves the file scores as best.
    assert scores[f"{'abcdefgh'[result.move % 8]}{result.move // 8 + 1}"] == best
    assert result.pv and result.pv[0] == result.move


def test_small_endgames_match_brute_force() -> None:
    checked = 0
    for board in random_boards(3000, seed=7):
        if board.empties > 7 or not board.legal_moves():
            continue
        expected = brute_force(board.copy())
        assert solve(board.to_text()).score == expected, board.to_text()
        wld = solve(board.to_text(), wld=True).score
        assert (wld > 0) == (expected > 0) and (wld < 0) == (expected < 0)
        checked += 1
        if checked == 60:
            break
    assert checked == 60


def test_finished_game_scores_with_empties_to_the_winner() -> None:
    text = "X" * 10 + "-" * 54 + " O"
    assert solve(text).score == -64


def test_stop_flag_and_node_limit_end_a_solve() -> None:
    text = FFO_1_19[0][0]
    flag = StopFlag()
    flag.set()
    with pytest.raises(TimeoutError):
        solve(text, stop=flag)
    with pytest.raises(TimeoutError):
        solve(text, limits=Limits(nodes=1000))
    assert parse_square("g8") == solve(text).move
