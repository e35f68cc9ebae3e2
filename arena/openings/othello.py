"""Othello openings: every distinct position a few plies from the start, up to symmetry.

The square has 8 symmetries (the dihedral group: 4 rotations, 4 reflections). Only four of
them map the standard start onto itself (identity, the half turn and the two diagonal
reflections); the other four swap the colours of the centre. Two positions that any of the
8 maps onto each other are the same opening for a ladder, so we keep one of them: the
first reached when the move sequences are walked in ascending square order. The listing is
therefore deterministic and ordered by move sequence.

Counts from the standard start (positions with the same side to move): 1 after one ply
(d3, c4, f5 and e6 are one position), 3 after two (the diagonal, perpendicular and
parallel openings), 14 after three, 60 after four, 322 after five, 1773 after six.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from arena.games import OthelloBoard
from arena.games.othello import square_name

MAX_PLIES = 6
_FULL = (1 << 64) - 1
_REVERSED_BYTE = bytes(int(f"{b:08b}"[::-1], 2) for b in range(256))

Bitboard = int


def flip_rows(bits: Bitboard) -> Bitboard:
    """Mirror top to bottom (row r -> 7 - r): the byte order reversed."""
    return int.from_bytes(bits.to_bytes(8, "little"), "big")


def flip_columns(bits: Bitboard) -> Bitboard:
    """Mirror left to right (column c -> 7 - c): the bits of every byte reversed."""
    return int.from_bytes(bits.to_bytes(8, "little").translate(_REVERSED_BYTE), "little")


def transpose(bits: Bitboard) -> Bitboard:
    """Reflect in the a1-h8 diagonal (row r, column c -> row c, column r), by delta swaps."""
    for mask, shift in (
        (0x0F0F0F0F00000000, 28),
        (0x3333000033330000, 14),
        (0x5500550055005500, 7),
    ):
        t = mask & (bits ^ (bits << shift))
        bits ^= t ^ (t >> shift)
    return bits & _FULL


def _compose(*maps: Callable[[Bitboard], Bitboard]) -> Callable[[Bitboard], Bitboard]:
    def composed(bits: Bitboard) -> Bitboard:
        for apply in maps:
            bits = apply(bits)
        return bits

    return composed


# The 8 symmetries of the square, the identity first.
SYMMETRIES: tuple[Callable[[Bitboard], Bitboard], ...] = (
    _compose(),
    flip_rows,
    flip_columns,
    _compose(flip_rows, flip_columns),  # half turn
    transpose,
    _compose(transpose, flip_rows),  # quarter turn
    _compose(transpose, flip_columns),  # the other quarter turn
    _compose(transpose, flip_rows, flip_columns),  # the a8-h1 diagonal
)


def canonical_key(board: OthelloBoard) -> tuple[int, int, int]:
    """The same key for a position and all its images under the 8 symmetries."""
    return min(
        (apply(board.black_bits), apply(board.white_bits), int(board.turn)) for apply in SYMMETRIES
    )


@dataclass(frozen=True)
class OthelloOpening:
    moves: tuple[int, ...]
    position: str  # text form after the moves

    @property
    def name(self) -> str:
        return " ".join(square_name(m) for m in self.moves)


def distinct_openings(plies: int) -> list[OthelloOpening]:
    """Every position ``plies`` moves from the standard start, one per symmetry class."""
    if not 0 <= plies <= MAX_PLIES:
        raise ValueError(f"Othello openings are built for 0..{MAX_PLIES} plies, got {plies!r}")
    seen: set[tuple[int, int, int]] = set()
    found: list[OthelloOpening] = []
    board = OthelloBoard()

    def walk(depth: int) -> None:
        if depth == plies:
            key = canonical_key(board)
            if key not in seen:
                seen.add(key)
                found.append(OthelloOpening(tuple(board.move_stack), board.to_text()))
            return
        for move in board.legal_moves():
            board.push(move)
            walk(depth + 1)
            board.pop()

    walk(0)
    return found
