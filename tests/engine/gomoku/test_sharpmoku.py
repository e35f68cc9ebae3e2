"""SharpMoku's evaluator term by term (the table in the seed facts) and its search."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from arena.engine.api import Limits
from arena.engine.gomoku import (
    PRESETS,
    choose_move,
    evaluator_hash,
    validate_config,
)
from arena.engine.gomoku import sharpmoku as sm
from arena.engine.gomoku.position import position_from_moves

from .positions import interleave, xy


def board_with(black: list[int], white: list[int], size: int = 15) -> np.ndarray:
    cells = np.zeros(size * size, dtype=np.int8)
    cells[black] = 1
    cells[white] = 2
    return cells


def counts_of(**named: int) -> np.ndarray:
    counts = np.zeros(6, dtype=np.int64)
    for name, value in named.items():
        counts[sm.CLASS_NAMES.index(name)] = value
    return counts


@pytest.mark.parametrize(
    ("named", "score"),
    [
        ({"win": 1}, 1_000_000_000),
        ({"win": 2}, 2_000_000_000),
        ({"open4": 1}, 100_000_000),
        ({"blocked4": 2}, 10_000_000),
        ({"open3": 1, "blocked4": 1}, 1_000_000),
        ({"open3": 2}, 100_000),
        ({"open3": 1, "open2": 3}, 40_000),
        ({"open3": 1, "open2": 2}, 38_000),
        ({"open3": 1, "open2": 1}, 35_000),
        ({"open3": 1}, 3_450),
        ({"blocked4": 1, "open2": 3}, 4_500),
        ({"blocked4": 1, "open2": 2}, 4_200),
        ({"blocked4": 1, "open2": 1}, 4_100),
        ({"blocked4": 1}, 4_050),
        ({"blocked3": 3, "open2": 1}, 2_800),
        ({"blocked3": 2, "open2": 2}, 3_000),
        ({"blocked3": 2, "open2": 1}, 2_900),
        ({"blocked3": 1, "open2": 3}, 3_400),
        ({"blocked3": 1, "open2": 2}, 3_300),
        ({"blocked3": 1, "open2": 1}, 3_100),
        ({"open2": 4}, 2_700),
        ({"open2": 3}, 2_500),
        ({"open2": 2}, 2_000),
        ({"open2": 1}, 1_000),
        ({"blocked3": 1}, 0),
        ({}, 0),
    ],
)
def test_score_ladder(named: dict[str, int], score: int) -> None:
    assert sm.score_by_pattern(counts_of(**named)) == score


@pytest.mark.parametrize(("cls", "pattern"), sm.PATTERNS)
def test_each_pattern_is_classified(cls: int, pattern: tuple[int, ...]) -> None:
    # Lay the pattern along row 7 from column 3, walls of opponent stones beyond it so
    # the window holds exactly the pattern; the centre is one of its own stones.
    size = 15
    own = [xy(3 + i, 7) for i, v in enumerate(pattern) if v == 1]
    opp = [xy(3 + i, 7) for i, v in enumerate(pattern) if v == -1]
    opp += [xy(2, 7), xy(3 + len(pattern), 7)]
    cells = board_with(opp, own)  # White is "own", as the source writes its patterns
    window = np.zeros(sm.WINDOW, dtype=np.int64)
    classes = set()
    for stone in own:
        length = sm.line_window(cells, size, stone, 1, 0, sm.FREESTYLE_REACH, window)
        classes.add(sm.line_class(window, length, False))
    assert min(classes) <= cls  # some stone sees this class or an earlier-listed one
    assert cls in classes or min(classes) < cls


def test_window_stops_after_first_opponent_and_at_edge() -> None:
    size = 15
    cells = board_with([xy(0, 0), xy(1, 0), xy(2, 0), xy(3, 0)], [xy(6, 0), xy(7, 0)])
    window = np.zeros(sm.WINDOW, dtype=np.int64)
    length = sm.line_window(cells, size, xy(1, 0), 1, 0, sm.FREESTYLE_REACH, window)
    assert window[:length].tolist() == [1, 1, 1, 1, 0, 0]  # 1 back (edge), 4 forward
    length = sm.line_window(cells, size, xy(3, 0), 1, 0, sm.FREESTYLE_REACH, window)
    assert window[:length].tolist() == [1, 1, 1, 1, 0, 0, -1]  # stops after the opponent
    # A four against the edge with nothing beyond matches nothing (edge is no block).
    cells = board_with([xy(0, 5), xy(1, 5), xy(2, 5), xy(3, 5)], [xy(4, 5)])
    counts = np.zeros(6, dtype=np.int64)
    sm.class_counts(cells, size, xy(0, 5), False, counts)
    assert counts.tolist() == [0, 0, 0, 0, 0, 0]


def test_get_score_is_two_player_plus_enemy_and_restores_the_board() -> None:
    size = 15
    # Black open three through (7,7); white stones above would be blocked by it.
    cells = board_with([xy(5, 7), xy(6, 7), xy(7, 7)], [xy(7, 5), xy(7, 6), xy(7, 8)])
    before = cells.copy()
    player = sm.stone_value(cells, size, xy(7, 7), False)
    cells[xy(7, 7)] = 2
    enemy = sm.stone_value(cells, size, xy(7, 7), False)
    cells[xy(7, 7)] = 1
    assert sm.get_score(cells, size, xy(7, 7), False) == 2 * player + enemy
    assert (cells == before).all()
    assert player == 3_450


def test_scores_are_int64_where_the_source_overflows() -> None:
    size = 15
    black = [xy(x, 7) for x in (3, 4, 5, 6)] + [xy(7, y) for y in (3, 4, 5, 6)] + [xy(7, 7)]
    cells = board_with(black, [])
    assert sm.get_score(cells, size, xy(7, 7), False) == 2 * 2_000_000_000


def minimax(cells: np.ndarray, near1: np.ndarray, near2: np.ndarray, size: int, colour: int,
            depth: int, ply: int, last: int) -> int:
    """Plain minimax with SharpMoku's leaves and move lists (the reference for pruning)."""
    moves = np.zeros(size * size, dtype=np.int64)
    count = sm.root_moves(cells, near1, near2, moves) if ply == 0 else sm.candidates(
        cells, near1, moves)
    if depth == 0 or count == 0:
        return int(sm.get_score(cells, size, last, False))
    values = []
    for move in moves[:count].tolist():
        sm.place(cells, near1, near2, size, move, colour)
        values.append(minimax(cells, near1, near2, size, 3 - colour, depth - 1, ply + 1, move))
        sm.remove(cells, near1, near2, size, move)
    return max(values) if ply % 2 == 0 else min(values)


@pytest.mark.parametrize("moves", [[112, 113, 96], [112, 128, 113, 97], [60, 61, 75, 62, 90]])
def test_alpha_beta_value_equals_minimax(moves: list[int]) -> None:
    pos = position_from_moves(15, "freestyle", moves)
    expected = minimax(pos.cells.copy(), pos.near1.copy(), pos.near2.copy(), 15,
                       pos.to_move, 2, 0, -1)
    result = choose_move(15, "freestyle", moves, PRESETS["sharpmoku-normal"], Limits())
    if result.score < sm.ROOT_BLOCK_THRESHOLD:  # decided by the search, not a root check
        assert result.score == expected


def test_root_checks_win_and_block() -> None:
    # Black to move with an open three: the win check (>= 1e7) plays the open four.
    black = [xy(6, 7), xy(7, 7), xy(8, 7)]
    white = [xy(0, 0), xy(0, 2), xy(0, 4)]
    result = choose_move(15, "freestyle", interleave(black, white), PRESETS["sharpmoku-hard"],
                         Limits())
    assert result.move in (xy(5, 7), xy(9, 7))
    # White to move facing that open three blocks it.
    moves = interleave(black, white[:2])
    result = choose_move(15, "freestyle", moves, PRESETS["sharpmoku-normal"], Limits())
    assert result.move in (xy(5, 7), xy(9, 7))


def test_first_move_is_random_but_never_on_the_last_row_or_column() -> None:
    seen = set()
    for seed in range(40):
        move = choose_move(9, "freestyle", [], PRESETS["sharpmoku-normal"], Limits(),
                           seed=seed).move
        assert move % 9 < 8 and move // 9 < 8
        seen.add(move)
    assert len(seen) > 10


def test_tree_capture_for_sharpmoku() -> None:
    moves = [112, 113, 96]
    result = choose_move(15, "freestyle", moves, PRESETS["sharpmoku-normal"], Limits(),
                         tree_budget=50)
    assert result.tree is not None and 0 < len(result.tree) <= 50
    root = result.tree[0]
    assert root.parent == -1 and root.kind == "max" and root.pv
    assert all(node.kind in ("min", "leaf") for node in result.tree if node.parent == 0)
    # plain minimax at Normal's depth 2: each level has one ply fewer left to search
    assert root.depth == 2
    assert all(node.depth == result.tree[node.parent].depth - 1 for node in result.tree[1:])


def root_values(moves: list[int]) -> dict[int, int]:
    """Each root move's minimax value at SharpMoku Normal's depth (2)."""
    pos = position_from_moves(15, "freestyle", moves)
    cells, near1, near2 = pos.cells.copy(), pos.near1.copy(), pos.near2.copy()
    roots = np.zeros(225, dtype=np.int64)
    values = {}
    for move in roots[: sm.root_moves(cells, near1, near2, roots)].tolist():
        sm.place(cells, near1, near2, 15, move, pos.to_move)
        values[move] = minimax(cells, near1, near2, 15, 3 - pos.to_move, 1, 1, move)
        sm.remove(cells, near1, near2, 15, move)
    return values


def from_centre(move: int) -> tuple[int, int]:
    return (move % 15 - 7) ** 2 + (move // 15 - 7) ** 2, move


@pytest.mark.parametrize("moves", [[112], [112, 113], [112, 113, 96], [112, 128, 113, 97]])
def test_equal_moves_faithfully_in_board_order_or_toward_the_centre(moves: list[int]) -> None:
    values = root_values(moves)
    best = max(values.values())
    ties = sorted(move for move, value in values.items() if value == best)
    assert len(ties) > 1
    faithful = choose_move(15, "freestyle", moves, PRESETS["sharpmoku-normal"], Limits())
    assert faithful.score == best and faithful.move == ties[-1]  # the source's last of ties
    centred = choose_move(15, "freestyle", moves, PRESETS["sharpmoku-normal-centre"], Limits())
    assert centred.score == best and centred.move == min(ties, key=from_centre)


def test_root_block_check_breaks_ties_toward_the_centre_on_request() -> None:
    # Black's open three near the top left corner: either end blocks it.
    moves = interleave([xy(2, 3), xy(3, 3), xy(4, 3)], [xy(10, 10), xy(10, 12)])
    for preset, block in (("sharpmoku-hard", xy(1, 3)), ("sharpmoku-hard-centre", xy(5, 3))):
        assert choose_move(15, "freestyle", moves, PRESETS[preset], Limits()).move == block


def test_centre_ties_is_a_validated_switch_in_the_hash() -> None:
    base: dict[str, object] = {"evaluator": "sharpmoku", "depth": 4}
    assert validate_config({**base, "centre_ties": True}) == []
    for bad in (1, "yes", None):
        assert [v.field for v in validate_config({**base, "centre_ties": bad})] == [
            "centre_ties"]
    assert [v.field for v in validate_config({"evaluator": "arena-gomoku",
                                              "centre_ties": True})] == ["centre_ties"]
    faithful = evaluator_hash(base)
    assert evaluator_hash({**base, "centre_ties": False}) == faithful
    assert evaluator_hash({**base, "centre_ties": True}) != faithful
    # The faithful configurations keep the hash they had before the switch existed.
    assert faithful == hashlib.sha256(
        b'{"depth":4,"engine":"gomoku-1","evaluator":"sharpmoku"}').hexdigest()


def test_the_centre_presets_differ_by_the_switch_only() -> None:
    for name in ("sharpmoku-normal", "sharpmoku-hard"):
        assert PRESETS[f"{name}-centre"] == {**PRESETS[name], "centre_ties": True}


def classes_along_row(cells: np.ndarray, stone: int, exact: bool) -> int:
    window = np.zeros(sm.WINDOW, dtype=np.int64)
    reach = sm.EXACT_REACH if exact else sm.FREESTYLE_REACH
    length = sm.line_window(cells, 15, stone, 1, 0, reach, window)
    return int(sm.line_class(window, length, exact))


def test_exact_five_counts_only_fives_that_stay_five() -> None:
    five = board_with([], [xy(x, 7) for x in range(3, 8)])
    six = board_with([], [xy(x, 7) for x in range(3, 9)])
    for exact in (False, True):
        assert classes_along_row(five, xy(3, 7), exact) == sm.WIN
    # Six in a row: a win in freestyle, none under exact-five, read from its far end too
    # (the sixth stone is 5 cells away, past the source's 4-cell window).
    assert classes_along_row(six, xy(3, 7), False) == sm.WIN
    assert classes_along_row(six, xy(3, 7), True) != sm.WIN
    # _ O O O O _ O: the left end makes five, the gap makes six: no longer an open four.
    four = board_with([], [xy(x, 7) for x in (4, 5, 6, 7, 9)])
    assert classes_along_row(four, xy(4, 7), False) == sm.OPEN4
    assert classes_along_row(four, xy(4, 7), True) != sm.OPEN4
    # X O O O O _ O: blocked on the left, the gap makes six: no four at all.
    blocked = board_with([xy(3, 7)], [xy(x, 7) for x in (4, 5, 6, 7, 9)])
    assert classes_along_row(blocked, xy(4, 7), False) == sm.BLOCKED4
    assert classes_along_row(blocked, xy(4, 7), True) not in (sm.WIN, sm.OPEN4, sm.BLOCKED4)


def test_exact_five_root_checks_neither_play_nor_fear_a_six() -> None:
    # Black X X X _ X X on row 7 (White's stones far away): the gap makes six.
    black = [xy(x, 7) for x in (2, 3, 4, 6, 7)]
    white = [xy(12, 0), xy(12, 2), xy(12, 4), xy(12, 6), xy(12, 8)]
    gap = xy(5, 7)
    black_to_move = interleave(black, white)  # 5 + 5 stones: Black moves
    free = choose_move(15, "freestyle", black_to_move, PRESETS["sharpmoku-normal"], Limits())
    assert free.move == gap and free.score >= sm.WIN_SCORE
    exact = choose_move(15, "exact-five", black_to_move, PRESETS["sharpmoku-normal"], Limits())
    assert exact.move != gap and exact.score < sm.WIN_SCORE
    # White to move facing it: freestyle must block the gap, exact-five sees no threat there.
    pos = position_from_moves(15, "freestyle", interleave(black, white[:4]))
    cells, near1 = pos.cells.copy(), pos.near1.copy()
    for exact_rule, threatened in ((False, True), (True, False)):
        move, threat = sm.best_single_move(cells, near1, 15, 1, False, exact_rule)
        assert (move == gap and threat >= sm.ROOT_WIN_THRESHOLD) == threatened


def test_exact_five_is_unchanged_where_no_six_is_near() -> None:
    # With no overline in sight, both rules give SharpMoku the same moves and scores.
    for moves in ([112, 113, 96], [112, 128, 113, 97], [60, 61, 75, 62, 90]):
        free = choose_move(15, "freestyle", moves, PRESETS["sharpmoku-hard"], Limits())
        exact = choose_move(15, "exact-five", moves, PRESETS["sharpmoku-hard"], Limits())
        assert (free.move, free.score) == (exact.move, exact.score)
