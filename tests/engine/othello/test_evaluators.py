"""Evaluator terms against hand-computed values, and the lab player against a plain port."""

from __future__ import annotations

import numpy as np
import pytest

from arena.engine.api import Limits
from arena.engine.othello import PASS, PRESETS, START_TEXT, choose_move, evaluate_position
from arena.engine.othello.bitboard import parse_position
from arena.engine.othello.evaluate import stable_discs
from arena.games.othello import OthelloBoard, flip_bits, legal_move_bits
from tests.engine.othello.conftest import random_boards

ZERO = [[0] * 8 for _ in range(8)]
ONES = [[1] * 8 for _ in range(8)]


def kreversi(**overrides: object) -> dict[str, object]:
    """A KReversi config with every term off unless overridden."""
    config: dict[str, object] = {
        "evaluator": "kreversi",
        "position_tables": {"begin": ZERO, "middle": ZERO, "end": ZERO},
        "mobility": {"begin": 0, "middle": 0, "end": 0},
        "stable_disc_score": 0,
        "force_pass_score": 0,
    }
    config.update(overrides)
    return config


def board_text(rows: list[str], turn: str) -> str:
    """Rows 1..8 top to bottom, '.' for empty; missing rows are empty."""
    rows = rows + ["........"] * (8 - len(rows))
    return "".join(rows).replace(".", "-") + " " + turn


AFTER_D3 = board_text(["........", "........", "...X....", "...XX...", "...XO..."], "O")


def test_calculate1_start_plus_d3() -> None:
    # seed-facts 1.5: all-1s table, stable 20, mobility 30 -> bot (Black) 94, opponent 91.
    config = kreversi(
        position_tables={"begin": ONES, "middle": ONES, "end": ONES},
        stable_disc_score=20,
        mobility={"begin": 30, "middle": 30, "end": 30},
    )
    black_view = AFTER_D3.replace(" O", " X")
    assert evaluate_position(black_view, config) == 3
    assert evaluate_position(AFTER_D3, config) == -3
    flips_config = {**config, "mobility_counts_flips": True}
    assert evaluate_position(black_view, flips_config) == 3


def test_position_table_term() -> None:
    table = [[10 * r + c for c in range(8)] for r in range(8)]
    config = kreversi(position_tables={"begin": table, "middle": ZERO, "end": ZERO})
    # Black on d3 (23), d4 (33), e4 (34), d5 (43); White on e5 (44): 133 - 44.
    assert evaluate_position(AFTER_D3.replace(" O", " X"), config) == 133 - 44


def test_mobility_counts_moves_by_default_and_flips_on_request() -> None:
    config = kreversi(mobility={"begin": 10, "middle": 10, "end": 10})
    flips_config = {**config, "mobility_counts_flips": True}
    differing = 0
    for board in random_boards(200, seed=4)[::10]:
        text = board.to_text()
        other = OthelloBoard.from_bits(board.black_bits, board.white_bits, 1 - board.turn)
        mine, theirs = board.legal_moves(), other.legal_moves()
        if PASS in mine or PASS in theirs or not mine or not theirs:
            continue
        by_moves = 10 * (len(mine) - len(theirs))
        my_flips = sum(bin(board.flips(m)).count("1") for m in mine)
        their_flips = sum(bin(other.flips(m)).count("1") for m in theirs)
        assert evaluate_position(text, config) == by_moves
        assert evaluate_position(text, flips_config) == 10 * (my_flips - their_flips)
        differing += by_moves != 10 * (my_flips - their_flips)
    assert differing >= 3


def _stable_count(rows: list[str], color: str) -> int:
    pos = parse_position(board_text(rows, "X"))
    own, other = (pos.black, pos.white) if color == "X" else (pos.white, pos.black)
    return bin(int(stable_discs(np.uint64(own), np.uint64(other)))).count("1")


def test_stable_from_corner_matches_original_vectors() -> None:
    assert _stable_count(["XXXOO...", "XXOOO...", "X......."], "X") == 6
    assert _stable_count(["XXXOO...", "XXOOO...", "........", "X......."], "X") == 5


def test_stable_on_full_edges() -> None:
    # Original vectors: "WWBBBBBW" -> 5 for B and "BWWWWWWB" -> 6 for W agree with ours.
    assert _stable_count(["OOXXXXXO"], "X") == 5
    assert _stable_count(["XOOOOOOX"], "O") == 6
    # The original drops a run ending at the corner ("WWBBBBBB" -> 0); every disc on a full
    # edge is stable, so we count all 6 (documented difference).
    assert _stable_count(["OOXXXXXX"], "X") == 6


def test_stable_term_counts_each_disc_once() -> None:
    # Calculate2's row 1 all black: the original doubles corner counts and stops at 7 (560 at
    # score 20); the intent is 8 stable discs, 160.
    text = board_text(["XXXXXXXX", "........", "...OX...", "...XO..."], "X")
    config = kreversi(stable_disc_score=20)
    assert evaluate_position(text, config) == 8 * 20


def test_force_pass_and_game_end() -> None:
    config = kreversi(force_pass_score=1000)
    # White to move has no move; Black has: White's view gets -1000.
    text = board_text(["XO......"], "O")
    assert evaluate_position(text, config) == -1000
    assert evaluate_position(text.replace(" O", " X"), config) == 1000
    finished = board_text(["XXXX...."], "O")
    assert evaluate_position(finished, config) == -1_000_000
    assert evaluate_position(finished.replace(" O", " X"), config) == 1_000_000


def test_lab_evaluation_hand_examples() -> None:
    lab = PRESETS["lab-beginner"]
    assert evaluate_position(START_TEXT, lab) == 0
    # After d3: white - black = 1 - 4 = -3, from White's view.
    assert evaluate_position(AFTER_D3, lab) == -3
    assert evaluate_position(AFTER_D3.replace(" O", " X"), lab) == 3
    # White a1 corner (100), black b1 edge (10), black interior c3 (1): 100 - 10 - 1 = 89.
    text = board_text(["OX......", "........", "..X....."], "O")
    assert evaluate_position(text, lab) == 89
    # Finished, Black ahead: -100 (a1) - 30 (b1..d1) - 10,000, from White's view.
    finished = board_text(["XXXX...."], "O")
    assert evaluate_position(finished, lab) == -10_130
    assert evaluate_position(finished.replace(" O", " X"), lab) == 10_130


def _lab_value(black: int, white: int) -> int:
    """The lab's EvaluateTest, written from its description (White minus Black)."""
    value = 0
    for sq in range(64):
        sign = 1 if white >> sq & 1 else -1 if black >> sq & 1 else 0
        row, col = divmod(sq, 8)
        edge_r, edge_c = row in (0, 7), col in (0, 7)
        value += sign * (100 if edge_r and edge_c else 10 if edge_r or edge_c else 1)
    if not legal_move_bits(black, white) and not legal_move_bits(white, black):
        diff = bin(white).count("1") - bin(black).count("1")
        value += 10_000 if diff > 0 else -10_000 if diff < 0 else 0
    return value


def _lab_minimax(black: int, white: int, color: int, look_ahead: int) -> tuple[int, int]:
    """The lab's example player (White = +1 maximises), ported over the reference rules."""
    me, them = (white, black) if color == 1 else (black, white)
    best_move, best_rank = -1, 0
    for sq in range(64):
        if not legal_move_bits(me, them) >> sq & 1:
            continue
        f = flip_bits(me, them, sq)
        new_me, new_them = me | f | (1 << sq), them & ~f
        nb, nw = (new_them, new_me) if color == 1 else (new_me, new_them)
        nxt = -color
        if not legal_move_bits(*((nw, nb) if nxt == 1 else (nb, nw))):
            nxt = color
        over = not legal_move_bits(nb, nw) and not legal_move_bits(nw, nb)
        if over or look_ahead == 0:
            rank = _lab_value(nb, nw)
        else:
            rank = _lab_minimax(nb, nw, nxt, look_ahead - 1)[1]
        if best_move == -1 or color * rank > color * best_rank:
            best_move, best_rank = sq, rank
    return best_move, best_rank


def test_lab_player_hand_checked_start() -> None:
    # Every first move leaves white - black = -3; Black minimises, ties keep the first (d3).
    assert choose_move(START_TEXT, PRESETS["lab-beginner"], Limits()).move == 19


@pytest.mark.parametrize(
    ("preset", "look_ahead", "count"),
    [
        ("lab-beginner", 0, 40),
        ("lab-intermediate", 1, 20),
        ("lab-advanced", 3, 3),
    ],
)
def test_lab_player_reproduces_the_example_player(preset: str, look_ahead: int, count: int) -> None:
    checked = 0
    for board in random_boards(600, seed=look_ahead + 100):
        if board.legal_moves() in ([], [64]):
            continue
        color = 1 if board.turn == 1 else -1
        expected, rank = _lab_minimax(board.black_bits, board.white_bits, color, look_ahead)
        result = choose_move(board.to_text(), PRESETS[preset], Limits())
        assert result.move == expected, board.to_text()
        assert result.score == (rank if color == 1 else -rank)
        assert result.depth == look_ahead + 1
        checked += 1
        if checked == count:
            break
    assert checked == count
