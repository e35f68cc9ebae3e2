"""Exact endgame solver: FFO 1-19 and a brute-force cross-check on small endgames."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from arena.engine.api import Limits, StopFlag
from arena.engine.othello import solve
from arena.engine.othello.bitboard import parse_position, parse_square
from arena.engine.othello.endgame import _solve_tail
from arena.engine.othello.stability import stable_discs
from arena.games.othello import OthelloBoard
from tests.engine.othello.conftest import random_boards, read_obf

FFO_1_19 = read_obf("fforum-1-19.obf")
FFO_20_29 = read_obf("fforum-20-39.obf")[:10]  # 6-20 empties, about 3 s in all


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


@pytest.mark.parametrize(("text", "scores"), FFO_20_29, ids=[f"ffo{i + 20}" for i in range(10)])
def test_ffo_20_29_solved_exactly(text: str, scores: dict[str, int]) -> None:
    assert solve(text).score == max(scores.values())


def test_small_solvers_are_fail_soft_in_every_window() -> None:
    """The last-empties solvers (1 to 6 empties, passes included) against brute force: a
    result inside the window is exact, one at or below alpha an upper bound, one at or
    above beta a lower bound (the lazy last-move count returns such bounds)."""
    checked = 0
    for board in random_boards(6000, seed=31):
        if board.empties > 6 or not board.legal_moves():
            continue
        exact = brute_force(board.copy())
        pos = parse_position(board.to_text())
        p, o = np.uint64(pos.player), np.uint64(pos.opponent)
        for alpha, beta in ((-64, 64), (exact - 1, exact + 1), (exact, exact + 1),
                            (exact - 3, exact - 2), (exact + 2, exact + 3), (-1, 0)):
            value, _ = _solve_tail(p, o, alpha, beta, board.empties)
            if alpha < value < beta:
                assert value == exact, (board.to_text(), alpha, beta, value)
            elif value <= alpha:
                assert exact <= value, (board.to_text(), alpha, beta, value)
            else:
                assert exact >= value, (board.to_text(), alpha, beta, value)
        checked += 1
        if checked == 100:
            break
    assert checked == 100


def test_small_solver_stability_cutoff_returns_a_sound_bound() -> None:
    """From 4 empties on, a high alpha lets the small solver stop at once when the
    opponent's stable discs already cap the result: that cap is an upper bound of the
    exact score (and every other answer keeps the fail-soft contract)."""
    cutoffs = 0
    checked = 0
    for board in random_boards(6000, seed=43):
        if not 4 <= board.empties <= 6 or not board.legal_moves():
            continue
        exact = brute_force(board.copy())
        pos = parse_position(board.to_text())
        p, o = np.uint64(pos.player), np.uint64(pos.opponent)
        cap = 64 - 2 * bin(int(stable_discs(o, p))).count("1")
        for alpha in range(-10, 64, 2):
            value, nodes = _solve_tail(p, o, alpha, alpha + 1, board.empties)
            if value <= alpha:
                assert exact <= value, (board.to_text(), alpha, value)
            else:
                assert exact >= value, (board.to_text(), alpha, value)
            if nodes == 1 and value == cap and alpha >= cap:
                cutoffs += 1
        checked += 1
        if checked == 80:
            break
    assert checked == 80
    assert cutoffs > 20  # the cutoff did fire, on many (position, alpha) pairs


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


def test_a_solve_counts_the_same_nodes_whatever_the_thread_solved_before(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The shared cache wants a solve's move, score and nodes the same every time; the
    solver's table keeps earlier solves' entries, which must count as empty. A solve whose
    random generation was an earlier one's found that one's entries competing as its own
    (a CI run: 27 nodes more under load, the earlier solves differing). Here every solve
    draws the same salt, the collision made certain; and the generations wrap."""
    from arena.engine.othello import search
    from arena.engine.othello.endgame import EndgameSolver
    from arena.engine.othello.search import ST_NODES

    monkeypatch.setattr(search, "_SALTS", itertools.repeat(12345))
    positions = [parse_position(text) for text, _ in FFO_20_29[1:3]]  # 15, 17 empties

    def nodes(solver: EndgameSolver) -> list[int]:
        found = []
        for pos in positions:
            score, st = solver.solve(pos.player, pos.opponent, -64, 64, 0, np.zeros(1, np.int64))
            found.append((score, int(st[ST_NODES])))
        return found

    fresh = nodes(EndgameSolver(tt_bits=16))
    used = EndgameSolver(tt_bits=16)
    assert nodes(used) == fresh and nodes(used) == fresh  # the table full of the first
    used.generation = 65534  # solves 65535, then 1 (the table cleared), then 2
    assert nodes(used) == fresh
    assert nodes(EndgameSolver(tt_bits=16)) == fresh
