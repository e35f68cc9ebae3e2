"""Stable discs (the endgame solver's cutoff): sound on random play-outs, exact on known cases."""

from __future__ import annotations

import random

import numpy as np

from arena.engine.othello.bitboard import parse_position
from arena.engine.othello.stability import full_diagonals, stable_discs
from arena.games.othello import OthelloBoard
from tests.engine.othello.conftest import random_boards


def _stable(own: int, other: int) -> int:
    return int(stable_discs(np.uint64(own), np.uint64(other)))


def test_stable_discs_never_flip_in_random_playouts() -> None:
    rng = random.Random(3)
    claimed = 0
    for board in random_boards(600, seed=21):
        if board.empties > 30:
            continue
        black = _stable(board.black_bits, board.white_bits)
        white = _stable(board.white_bits, board.black_bits)
        claimed += bin(black | white).count("1")
        for _ in range(3):
            game = board.copy()
            while not game.is_game_over():
                game.push(rng.choice(game.legal_moves()))
                assert game.black_bits & black == black, board.to_text()
                assert game.white_bits & white == white, board.to_text()
    assert claimed > 2000  # the property is not vacuous: many discs were claimed stable


def test_known_stable_sets() -> None:
    # A full board: everything is stable.
    full = parse_position("XO" * 32 + " X")
    assert _stable(full.black, full.white) == full.black
    # A lone corner disc is stable; its neighbours in an open position are not.
    corner = parse_position("XO" + "-" * 62 + " X")
    assert _stable(corner.black, corner.white) == 1
    assert _stable(corner.white, corner.black) == 0
    # A full first row of black: every disc of it is stable (full line, edge, corner chain).
    row = parse_position("X" * 8 + "O" * 8 + "-" * 48 + " X")
    assert _stable(row.black, row.white) == 0xFF
    # Start position: nothing is stable.
    start = OthelloBoard.start()
    assert _stable(start.black_bits, start.white_bits) == 0


def _full_diagonals_by_scan(occupied: int, step_col: int) -> int:
    """Squares whose diagonal (``step_col`` 1: a1-h8 way, -1: h1-a8 way) is fully occupied."""
    full = 0
    for sq in range(64):
        row, col = divmod(sq, 8)
        line = [
            r * 8 + c
            for r in range(8)
            for c in range(8)
            if (c - col == r - row if step_col == 1 else c - col == row - r)
        ]
        if all(occupied >> s & 1 for s in line):
            full |= 1 << sq
    return full


def test_full_diagonals_match_a_scan() -> None:
    rng = random.Random(5)
    boards = [0, (1 << 64) - 1, 0x8100000000000081, 0x8040201008040201, 0x0102040810204080]
    boards += [rng.getrandbits(64) | rng.getrandbits(64) | rng.getrandbits(64) for _ in range(300)]
    found = 0
    for occupied in boards:
        d9, d7 = full_diagonals(np.uint64(occupied))
        assert int(d9) == _full_diagonals_by_scan(occupied, 1), hex(occupied)
        assert int(d7) == _full_diagonals_by_scan(occupied, -1), hex(occupied)
        found += bin(int(d9) | int(d7)).count("1") >= 12
    assert found > 50  # many boards have full diagonals beyond the one-square corner ones
