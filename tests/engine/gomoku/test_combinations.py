"""arena-gomoku's threat combinations: forced wins at the leaves against an opponent
without fours, and the cell kinds (four line classes) the evaluation counts."""

from __future__ import annotations

import numpy as np
import pytest

from arena.engine.api import Limits
from arena.engine.gomoku import choose_move
from arena.engine.gomoku.board import FREESTYLE
from arena.engine.gomoku.evaluation import QUAD_INDEX, QUADS
from arena.engine.gomoku.patterns import (
    FIVE,
    FOUR,
    NONE,
    OPEN_FOUR,
    OPEN_THREE,
    OPEN_TWO,
    ST_CANDIDATES,
    ST_LIST,
    THREE,
    TWO,
    cell_code,
    cell_quad,
    setup,
)
from arena.engine.gomoku.search import EVAL_BOUND, WIN, _leaf_score, cell_features
from arena.engine.gomoku.work import new_work

from .positions import interleave, xy

CORNERS = [xy(0, 0), xy(14, 0), xy(0, 14), xy(14, 14)]
# Black to move: (8, 7) makes a four (blocked at (4, 7)) and an open three (column 8).
FOUR_THREE = interleave([xy(5, 7), xy(6, 7), xy(7, 7), xy(8, 5), xy(8, 6)],
                        [xy(4, 7), *CORNERS])
# Black to move: (8, 7) makes two fours (row 7 blocked at (4, 7), column 8 at (8, 3)).
DOUBLE_FOUR = interleave([xy(5, 7), xy(6, 7), xy(7, 7), xy(8, 4), xy(8, 5), xy(8, 6)],
                         [xy(4, 7), xy(8, 3), *CORNERS])
# Black to move: (8, 7) makes two open threes (row 7 and column 8).
DOUBLE_THREE = interleave([xy(6, 7), xy(7, 7), xy(8, 5), xy(8, 6)], CORNERS)
# As FOUR_THREE, but White can make a four on the top row: no longer forced.
WHITE_THREE = interleave([xy(5, 7), xy(6, 7), xy(7, 7), xy(8, 5), xy(8, 6), xy(10, 12)],
                         [xy(4, 7), xy(1, 0), xy(2, 0), xy(3, 0), xy(14, 14), xy(0, 14)])


def leaf(moves: list[int], ply: int = 3) -> int:
    st = setup(15, FREESTYLE, moves)[2]
    score, forced = _leaf_score(st, new_work(), 1 + len(moves) % 2, 0, ply, -WIN, WIN)
    assert forced == -1
    return int(score)


@pytest.mark.parametrize(("moves", "plies"), [(FOUR_THREE, 4), (DOUBLE_FOUR, 2), (DOUBLE_THREE, 4)])
def test_a_four_combination_wins_against_no_four(moves: list[int], plies: int) -> None:
    # The five comes ``plies`` plies after the leaf's own ply.
    assert leaf(moves, ply=3) == WIN - 3 - plies
    assert leaf(moves, ply=6) == WIN - 6 - plies


def test_an_opponent_that_can_make_a_four_gets_an_evaluation() -> None:
    assert abs(leaf(WHITE_THREE)) <= EVAL_BOUND


def test_a_single_open_three_is_no_combination() -> None:
    assert abs(leaf(DOUBLE_THREE[:-2])) <= EVAL_BOUND  # without (8, 6) and a corner


def test_the_root_plays_a_forced_win_it_sees_without_threat_searches() -> None:
    # Black to move can make an open four; no VCF or VCT search at the root. The root
    # used to take the open-four rule as its score and report no move at depth 0.
    moves = interleave([xy(6, 7), xy(7, 7), xy(8, 7)], CORNERS[:3])
    config = {"evaluator": "arena-gomoku", "vcf_plies": 0, "vct_plies": 0, "max_depth": 1}
    result = choose_move(15, "freestyle", moves, config, Limits())
    assert result.move in {xy(5, 7), xy(9, 7)} and result.pv == [result.move]
    assert result.exact and result.depth == 1 and not result.cut_short, result


@pytest.mark.parametrize(("moves", "classes"), [
    (FOUR_THREE, (FOUR, OPEN_THREE, NONE, NONE)), (DOUBLE_FOUR, (FOUR, FOUR, NONE, NONE)),
    (DOUBLE_THREE, (OPEN_THREE, OPEN_THREE, NONE, NONE)),
    # Without (8, 6), column 8 holds (8, 5) alone: (8, 7) makes an open (split) two there.
    (DOUBLE_THREE[:-2], (OPEN_THREE, OPEN_TWO, NONE, NONE)),
])
def test_cell_kinds_are_the_four_lines_of_a_cell(
        moves: list[int], classes: tuple[int, int, int, int]) -> None:
    st = setup(15, FREESTYLE, moves)[2]
    kind = QUAD_INDEX[classes]
    assert cell_quad(cell_code(st, 1, xy(8, 7))) == kind
    black = cell_features(st, 1).tolist()  # Black is to move
    assert black[kind] >= 1
    assert sum(black[:QUADS]) == sum(black[QUADS:]) == len(candidate_cells(st))
    assert cell_features(st, 2).tolist() == black[QUADS:] + black[:QUADS]
    # White's corner stones make nothing there.
    assert cell_quad(cell_code(st, 2, xy(8, 7))) == QUAD_INDEX[NONE, NONE, NONE, NONE]


def test_cell_kinds_ignore_the_order_of_the_lines_and_count_a_five_as_an_open_four() -> None:
    def code(*classes: int) -> int:
        return sum(c << (3 * d) for d, c in enumerate(classes))

    assert cell_quad(code(TWO, NONE, FOUR, THREE)) == QUAD_INDEX[FOUR, THREE, TWO, NONE]
    assert cell_quad(code(NONE, FOUR, THREE, TWO)) == QUAD_INDEX[FOUR, THREE, TWO, NONE]
    assert cell_quad(code(FIVE, OPEN_TWO, NONE, NONE)) == (
        QUAD_INDEX[OPEN_FOUR, OPEN_TWO, NONE, NONE])
    kinds = {cell_quad(c) for c in range(1 << 12)}
    assert kinds == set(range(QUADS))  # every kind is some code's, and no code is left out


def candidate_cells(st: np.ndarray) -> list[int]:
    return st[ST_LIST : ST_LIST + st[ST_CANDIDATES]].tolist()
