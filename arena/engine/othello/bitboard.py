"""Othello bitboard core: legal moves, flips, position keys, perft.

Square ``i`` is bit ``i``, with ``i = row * 8 + col``, a1 = 0, h1 = 7, a2 = 8, h8 = 63. The
kernels work on the pair (P, O): the discs of the side to move and of its opponent. A left
shift by 1 moves one file east (towards h), by 8 one row down (towards row 8).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arena.engine.othello._jit import (
    INNER,
    S1,
    S7,
    S8,
    S9,
    U0,
    U1,
    kernel,
    lowest_square,
    popcount,
)

PASS = 64
BLACK = 0
WHITE = 1

_MIX1 = np.uint64(0xFF51AFD7ED558CCD)
_MIX2 = np.uint64(0xC4CEB9FE1A85EC53)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_SIDE = np.uint64(0x5BD1E9955BD1E995)
_S33 = np.uint64(33)


class PositionTextError(ValueError):
    """A position string that is not 64 board characters, a space and a side to move."""


@kernel
def get_moves(p: np.uint64, o: np.uint64) -> np.uint64:
    """Bitboard of the legal moves of the side owning ``p``."""
    empty = ~(p | o)
    oh = o & INNER
    moves = U0
    # For each direction grow runs of opponent discs from own discs, then step onto an empty.
    x = oh & (p << S1)
    x |= oh & (x << S1)
    x |= oh & (x << S1)
    x |= oh & (x << S1)
    x |= oh & (x << S1)
    x |= oh & (x << S1)
    moves |= x << S1
    x = oh & (p >> S1)
    x |= oh & (x >> S1)
    x |= oh & (x >> S1)
    x |= oh & (x >> S1)
    x |= oh & (x >> S1)
    x |= oh & (x >> S1)
    moves |= x >> S1
    x = o & (p << S8)
    x |= o & (x << S8)
    x |= o & (x << S8)
    x |= o & (x << S8)
    x |= o & (x << S8)
    x |= o & (x << S8)
    moves |= x << S8
    x = o & (p >> S8)
    x |= o & (x >> S8)
    x |= o & (x >> S8)
    x |= o & (x >> S8)
    x |= o & (x >> S8)
    x |= o & (x >> S8)
    moves |= x >> S8
    x = oh & (p << S7)
    x |= oh & (x << S7)
    x |= oh & (x << S7)
    x |= oh & (x << S7)
    x |= oh & (x << S7)
    x |= oh & (x << S7)
    moves |= x << S7
    x = oh & (p >> S7)
    x |= oh & (x >> S7)
    x |= oh & (x >> S7)
    x |= oh & (x >> S7)
    x |= oh & (x >> S7)
    x |= oh & (x >> S7)
    moves |= x >> S7
    x = oh & (p << S9)
    x |= oh & (x << S9)
    x |= oh & (x << S9)
    x |= oh & (x << S9)
    x |= oh & (x << S9)
    x |= oh & (x << S9)
    moves |= x << S9
    x = oh & (p >> S9)
    x |= oh & (x >> S9)
    x |= oh & (x >> S9)
    x |= oh & (x >> S9)
    x |= oh & (x >> S9)
    x |= oh & (x >> S9)
    moves |= x >> S9
    return moves & empty


@kernel
def _ray_up(p: np.uint64, om: np.uint64, m: np.uint64, s: np.uint64) -> np.uint64:
    x = (m << s) & om
    acc = x
    while x != U0:
        nxt = x << s
        if nxt & p:
            return acc
        x = nxt & om
        acc |= x
    return U0


@kernel
def _ray_down(p: np.uint64, om: np.uint64, m: np.uint64, s: np.uint64) -> np.uint64:
    x = (m >> s) & om
    acc = x
    while x != U0:
        nxt = x >> s
        if nxt & p:
            return acc
        x = nxt & om
        acc |= x
    return U0


@kernel
def flips(p: np.uint64, o: np.uint64, sq: int) -> np.uint64:
    """Discs flipped when the side owning ``p`` plays on the empty square ``sq``."""
    m = U1 << sq
    oh = o & INNER
    f = _ray_up(p, oh, m, S1) | _ray_down(p, oh, m, S1)
    f |= _ray_up(p, o, m, S8) | _ray_down(p, o, m, S8)
    f |= _ray_up(p, oh, m, S7) | _ray_down(p, oh, m, S7)
    f |= _ray_up(p, oh, m, S9) | _ray_down(p, oh, m, S9)
    return f


@kernel
def mix64(k: np.uint64) -> np.uint64:
    """MurmurHash3's 64-bit finaliser: a bijection that spreads every input bit."""
    k ^= k >> _S33
    k *= _MIX1
    k ^= k >> _S33
    k *= _MIX2
    k ^= k >> _S33
    return k


@kernel
def pair_key(p: np.uint64, o: np.uint64) -> np.uint64:
    """Transposition key of (side to move, opponent); colour-swapped twins share it."""
    return mix64(p * _GOLDEN ^ mix64(o ^ _MIX2))


@kernel
def position_key_kernel(black: np.uint64, white: np.uint64, turn: int) -> np.uint64:
    if turn == 0:
        return pair_key(black, white)
    return pair_key(white, black) ^ _SIDE


@kernel
def perft_kernel(p: np.uint64, o: np.uint64, depth: int) -> int:
    """Leaves at ``depth`` plies; a pass is a move, a finished game is a leaf."""
    if depth == 0:
        return 1
    moves = get_moves(p, o)
    if moves == U0:
        if get_moves(o, p) == U0:
            return 1
        return perft_kernel(o, p, depth - 1)
    if depth == 1:
        return popcount(moves)
    total = 0
    while moves != U0:
        sq = lowest_square(moves)
        m = U1 << sq
        moves ^= m
        f = flips(p, o, sq)
        total += perft_kernel(o ^ f, p ^ f ^ m, depth - 1)
    return total


@kernel
def final_score(p: np.uint64, o: np.uint64) -> int:
    """Disc difference of a finished game for ``p``, empties going to the winner (OBF)."""
    np_ = popcount(p)
    no = popcount(o)
    empties = 64 - np_ - no
    if np_ > no:
        return np_ - no + empties
    if np_ < no:
        return np_ - no - empties
    return 0


@dataclass(frozen=True)
class Position:
    """A parsed position: black and white bitboards and the colour to move (0 black)."""

    black: int
    white: int
    turn: int

    @property
    def player(self) -> int:
        return self.black if self.turn == BLACK else self.white

    @property
    def opponent(self) -> int:
        return self.white if self.turn == BLACK else self.black

    def empties(self) -> int:
        return 64 - bin(self.black | self.white).count("1")

    def to_text(self) -> str:
        cells = []
        for sq in range(64):
            bit = 1 << sq
            cells.append("X" if self.black & bit else "O" if self.white & bit else "-")
        return "".join(cells) + " " + ("X" if self.turn == BLACK else "O")

    def play(self, move: int) -> Position:
        """The position after ``move`` (PASS allowed only when forced). Raises on illegal."""
        p, o = self.player, self.opponent
        legal = int(get_moves(np.uint64(p), np.uint64(o)))
        if move == PASS:
            if legal != 0 or int(get_moves(np.uint64(o), np.uint64(p))) == 0:
                raise ValueError(f"pass is not legal in {self.to_text()}")
            return Position(self.black, self.white, 1 - self.turn)
        if not 0 <= move < 64 or not legal >> move & 1:
            raise ValueError(f"illegal move {move} in {self.to_text()}")
        f = int(flips(np.uint64(p), np.uint64(o), move))
        p2, o2 = p | f | (1 << move), o & ~f
        if self.turn == BLACK:
            return Position(p2, o2, WHITE)
        return Position(o2, p2, BLACK)


def parse_position(text: str) -> Position:
    """Parse ``64 chars (X, O, -) + space + X|O``; also accepts OBF lines (rest ignored)."""
    if not isinstance(text, str):
        raise PositionTextError(f"position text must be a string, got {text!r}")
    stripped = text.strip()
    if len(stripped) < 66 or stripped[64] != " " or stripped[65] not in "XO":
        raise PositionTextError(f"bad position text {text!r}: want 64 squares, space, X or O")
    black = white = 0
    for sq, ch in enumerate(stripped[:64]):
        if ch == "X":
            black |= 1 << sq
        elif ch == "O":
            white |= 1 << sq
        elif ch != "-":
            raise PositionTextError(f"bad square {ch!r} at {sq} in position text {text!r}")
    if len(stripped) > 66 and stripped[66] not in " ;":
        raise PositionTextError(f"bad position text {text!r}: junk after the side to move")
    return Position(black, white, BLACK if stripped[65] == "X" else WHITE)


START_TEXT = "-" * 27 + "OX" + "-" * 6 + "XO" + "-" * 27 + " X"


def legal_moves(pos: Position) -> list[int]:
    """Sorted legal moves, ``[PASS]`` for a forced pass, ``[]`` when the game is over."""
    p, o = np.uint64(pos.player), np.uint64(pos.opponent)
    bits = int(get_moves(p, o))
    if bits:
        return [sq for sq in range(64) if bits >> sq & 1]
    return [PASS] if int(get_moves(o, p)) else []


def position_key(black: int, white: int, turn: int) -> int:
    """A 64-bit key of (discs, side to move): Zobrist-equivalent, unique in practice."""
    return int(position_key_kernel(np.uint64(black), np.uint64(white), turn))


def square_name(sq: int) -> str:
    if sq == PASS:
        return "PA"
    return "abcdefgh"[sq % 8] + str(sq // 8 + 1)


def parse_square(name: str) -> int:
    text = name.strip().lower()
    if text in ("pa", "pass", "ps"):
        return PASS
    if len(text) != 2 or text[0] not in "abcdefgh" or text[1] not in "12345678":
        raise ValueError(f"bad square name {name!r}")
    return (int(text[1]) - 1) * 8 + "abcdefgh".index(text[0])


def perft(position_text: str, depth: int) -> int:
    """Leaf count ``depth`` plies below the position (passes are moves)."""
    if depth < 0:
        raise ValueError(f"perft depth must be >= 0, got {depth}")
    pos = parse_position(position_text)
    return int(perft_kernel(np.uint64(pos.player), np.uint64(pos.opponent), depth))
