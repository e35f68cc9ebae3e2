"""Stable discs (the endgame solver's cutoff): sound on random play-outs, exact on known cases."""

from __future__ import annotations

import random

import numpy as np

from arena.engine.othello.bitboard import parse_position
from arena.engine.othello.stability import stable_discs
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
