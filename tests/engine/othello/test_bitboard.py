"""Bitboard core against the reference rules (arena.games.othello) and the perft data."""

from __future__ import annotations

import numpy as np
import pytest

from arena.engine.othello import PASS, START_TEXT, perft, position_key
from arena.engine.othello.bitboard import (
    PositionTextError,
    flips,
    get_moves,
    legal_moves,
    parse_position,
    parse_square,
    square_name,
)
from arena.games.othello import OthelloBoard
from tests.engine.othello.conftest import DATA


def _perft_table() -> list[tuple[int, int]]:
    rows = []
    for line in (DATA / "perft.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            depth, leaves = line.split()
            rows.append((int(depth), int(leaves)))
    return rows


@pytest.mark.parametrize(("depth", "leaves"), [r for r in _perft_table() if r[0] <= 9])
def test_perft_from_start_matches_data_file(depth: int, leaves: int) -> None:
    assert perft(START_TEXT, depth) == leaves


def test_perft_counts_passes_and_finished_games_like_the_rules_library(
    boards: list[OthelloBoard],
) -> None:
    from arena.games.othello import perft as reference_perft

    for board in boards[::500]:
        assert perft(board.to_text(), 3) == reference_perft(board, 3)


def test_moves_flips_and_texts_match_reference_on_10000_positions(
    boards: list[OthelloBoard],
) -> None:
    for board in boards:
        text = board.to_text()
        pos = parse_position(text)
        assert pos.black == board.black_bits and pos.white == board.white_bits
        assert pos.to_text() == text
        assert legal_moves(pos) == board.legal_moves()
        p, o = np.uint64(pos.player), np.uint64(pos.opponent)
        assert int(get_moves(p, o)) == board.legal_move_bits()
        for move in board.legal_moves():
            if move == PASS:
                continue
            assert int(flips(p, o, move)) == board.flips(move)
            after = board.copy()
            after.push(move)
            assert pos.play(move).to_text() == after.to_text()


def test_keys_are_unique_per_position_and_side(boards: list[OthelloBoard]) -> None:
    seen: dict[int, tuple[int, int, int]] = {}
    for board in boards:
        for turn in (0, 1):
            ident = (board.black_bits, board.white_bits, turn)
            key = position_key(*ident)
            assert seen.setdefault(key, ident) == ident
    distinct = {(b.black_bits, b.white_bits) for b in boards}
    assert len(seen) == 2 * len(distinct)


def test_key_is_a_function_of_the_position() -> None:
    pos = parse_position(START_TEXT)
    assert position_key(pos.black, pos.white, 0) == position_key(pos.black, pos.white, 0)
    assert position_key(pos.black, pos.white, 0) != position_key(pos.black, pos.white, 1)


def test_square_names_follow_obf() -> None:
    assert parse_square("d3") == 19
    assert square_name(19) == "d3"
    assert square_name(0) == "a1" and square_name(7) == "h1" and square_name(63) == "h8"
    assert parse_square("PA") == PASS
    with pytest.raises(ValueError):
        parse_square("i9")


@pytest.mark.parametrize(
    "text",
    ["", "X" * 64, "-" * 64 + " Y", "-" * 63 + "Z X", "-" * 64 + " Xjunk", 42],
)
def test_bad_position_text_raises(text: object) -> None:
    with pytest.raises(PositionTextError):
        parse_position(text)  # type: ignore[arg-type]


def test_play_rejects_illegal_moves() -> None:
    pos = parse_position(START_TEXT)
    with pytest.raises(ValueError, match="illegal"):
        pos.play(0)
    with pytest.raises(ValueError, match="pass"):
        pos.play(PASS)
    board = OthelloBoard.from_text(START_TEXT)
    board.push(19)
    assert pos.play(19).to_text() == board.to_text()


def _walk_flips(p: int, o: int, sq: int) -> int:
    """Flips by walking the eight lines square by square (any empty square, legal or not)."""
    row, col = divmod(sq, 8)
    total = 0
    for dr in (-1, 0, 1):
        for dc in (-1, 0, 1):
            run = 0
            r, c = row + dr, col + dc
            while (dr or dc) and 0 <= r < 8 and 0 <= c < 8 and o >> (r * 8 + c) & 1:
                run |= 1 << (r * 8 + c)
                r, c = r + dr, c + dc
            if (dr or dc) and 0 <= r < 8 and 0 <= c < 8 and p >> (r * 8 + c) & 1:
                total |= run
    return total


def test_flips_on_every_empty_square_of_arbitrary_bitboards() -> None:
    # Random disc sets (not reachable by play) reach edge cases games rarely do: full lines,
    # runs to the board's edge, discs on bit 0 and bit 63.
    rng = np.random.default_rng(5)
    for _ in range(1500):
        occupied = int(rng.integers(0, 2**63)) << 1 | int(rng.integers(0, 2))
        occupied |= int(rng.integers(0, 2**63)) << 1 if rng.random() < 0.5 else 0
        p = occupied & (int(rng.integers(0, 2**63)) << 1 | int(rng.integers(0, 2)))
        o = occupied & ~p
        for sq in range(64):
            if not occupied >> sq & 1:
                assert int(flips(np.uint64(p), np.uint64(o), sq)) == _walk_flips(p, o, sq)
