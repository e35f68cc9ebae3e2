"""Othello bitboard core: legal moves, flips, position keys, perft.

Square ``i`` is bit ``i``, with ``i = row * 8 + col``, a1 = 0, h1 = 7, a2 = 8, h8 = 63. The
kernels work on the pair (P, O): the discs of the side to move and of its opponent. A left
shift by 1 moves one file east (towards h), by 8 one row down (towards row 8).

International Reversi starts from an empty board: its first four moves are placements on the
empty centre squares that capture nothing (``Position.in_opening``). The kernels never see
those positions; the Python side (``legal_moves``, ``Position.play``, ``perft``) plays them,
and from the fifth move on the game is plain Othello.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from arena.engine.othello._jit import (
    INNER,
    NOT_A,
    NOT_H,
    S1,
    S7,
    S8,
    S9,
    U0,
    U1,
    inline_kernel,
    kernel,
    leading_zeros,
    lowest_square,
    popcount,
    search_kernel,
)

PASS = 64
BLACK = 0
WHITE = 1

_MIX1 = np.uint64(0xFF51AFD7ED558CCD)
_MIX2 = np.uint64(0xC4CEB9FE1A85EC53)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_SIDE = np.uint64(0x5BD1E9955BD1E995)
_S33 = np.uint64(33)
S2 = np.uint64(2)
S14 = np.uint64(14)
S16 = np.uint64(16)
S18 = np.uint64(18)
S63 = np.uint64(63)
HIGH_BIT = np.uint64(1 << 63)
CENTRE = (27, 28, 35, 36)  # d4, e4, d5, e5: where the international opening places discs
_CENTRE_BITS = sum(1 << sq for sq in CENTRE)
INTERNATIONAL = "international"


class PositionTextError(ValueError):
    """A position string that is not 64 board characters, a space and a side to move."""


@inline_kernel
def get_moves(p: np.uint64, o: np.uint64) -> np.uint64:
    """Bitboard of the legal moves of the side owning ``p``.

    For each line direction, runs of opponent discs adjacent to own discs are grown both
    ways at once; after two single steps, ``pre`` (opponent discs whose neighbour is also an
    opponent disc) lets each further step jump two squares, so six squares take four steps.
    """
    oh = o & INNER
    # East / west.
    fl = oh & (p << S1)
    fr = oh & (p >> S1)
    fl |= oh & (fl << S1)
    fr |= oh & (fr >> S1)
    pre_l = oh & (oh << S1)
    pre_r = pre_l >> S1
    fl |= pre_l & (fl << S2)
    fr |= pre_r & (fr >> S2)
    fl |= pre_l & (fl << S2)
    fr |= pre_r & (fr >> S2)
    moves = (fl << S1) | (fr >> S1)
    # North / south: no file wraps, so the full opponent set is used.
    fl = o & (p << S8)
    fr = o & (p >> S8)
    fl |= o & (fl << S8)
    fr |= o & (fr >> S8)
    pre_l = o & (o << S8)
    pre_r = pre_l >> S8
    fl |= pre_l & (fl << S16)
    fr |= pre_r & (fr >> S16)
    fl |= pre_l & (fl << S16)
    fr |= pre_r & (fr >> S16)
    moves |= (fl << S8) | (fr >> S8)
    # Anti-diagonal (step 7).
    fl = oh & (p << S7)
    fr = oh & (p >> S7)
    fl |= oh & (fl << S7)
    fr |= oh & (fr >> S7)
    pre_l = oh & (oh << S7)
    pre_r = pre_l >> S7
    fl |= pre_l & (fl << S14)
    fr |= pre_r & (fr >> S14)
    fl |= pre_l & (fl << S14)
    fr |= pre_r & (fr >> S14)
    moves |= (fl << S7) | (fr >> S7)
    # Diagonal (step 9).
    fl = oh & (p << S9)
    fr = oh & (p >> S9)
    fl |= oh & (fl << S9)
    fr |= oh & (fr >> S9)
    pre_l = oh & (oh << S9)
    pre_r = pre_l >> S9
    fl |= pre_l & (fl << S18)
    fr |= pre_r & (fr >> S18)
    fl |= pre_l & (fl << S18)
    fr |= pre_r & (fr >> S18)
    moves |= (fl << S9) | (fr >> S9)
    return moves & ~(p | o)


def _ray_masks() -> npt.NDArray[np.uint64]:
    """RAYS[sq, d]: the squares beyond ``sq`` in direction ``d``, up to the board's edge.

    Directions 0-3 go towards higher squares (+1, +8, +7, +9), 4-7 towards lower ones.
    """
    steps = [(0, 1), (1, 0), (1, -1), (1, 1), (0, -1), (-1, 0), (-1, 1), (-1, -1)]
    rays = np.zeros((64, 8), dtype=np.uint64)
    for sq in range(64):
        row, col = divmod(sq, 8)
        for d, (dr, dc) in enumerate(steps):
            mask = 0
            r, c = row + dr, col + dc
            while 0 <= r < 8 and 0 <= c < 8:
                mask |= 1 << (r * 8 + c)
                r, c = r + dr, c + dc
            rays[sq, d] = mask
    return rays


RAYS = _ray_masks()


@inline_kernel
def _flips_up(p: np.uint64, o: np.uint64, m: np.uint64, mask: np.uint64) -> np.uint64:
    # Adding the move bit to "opponent or off the ray" carries through the run of opponent
    # discs and stops on the first other ray square: the outflank if it is ours.
    out = ((o | ~mask) + m) & p & mask
    nonzero = (out | (U0 - out)) >> S63
    return (out - nonzero) & mask


@inline_kernel
def _flips_down(p: np.uint64, o: np.uint64, mask: np.uint64) -> np.uint64:
    # The highest ray square that is not an opponent disc is the outflank if it is ours
    # (``| U1`` keeps ctlz defined; bit 0 is then dropped by ``& mask`` unless on the ray).
    out = (HIGH_BIT >> np.uint64(leading_zeros((~o & mask) | U1))) & p & mask
    return (U0 - out - out) & mask


@inline_kernel
def flips(p: np.uint64, o: np.uint64, sq: int) -> np.uint64:
    """Discs flipped when the side owning ``p`` plays on the empty square ``sq``."""
    m = U1 << sq
    f = _flips_up(p, o, m, RAYS[sq, 0])
    f |= _flips_up(p, o, m, RAYS[sq, 1])
    f |= _flips_up(p, o, m, RAYS[sq, 2])
    f |= _flips_up(p, o, m, RAYS[sq, 3])
    f |= _flips_down(p, o, RAYS[sq, 4])
    f |= _flips_down(p, o, RAYS[sq, 5])
    f |= _flips_down(p, o, RAYS[sq, 6])
    f |= _flips_down(p, o, RAYS[sq, 7])
    return f


@inline_kernel
def mix64(k: np.uint64) -> np.uint64:
    """MurmurHash3's 64-bit finaliser: a bijection that spreads every input bit."""
    k ^= k >> _S33
    k *= _MIX1
    k ^= k >> _S33
    k *= _MIX2
    k ^= k >> _S33
    return k


@inline_kernel
def pair_key(p: np.uint64, o: np.uint64) -> np.uint64:
    """Transposition key of (side to move, opponent); colour-swapped twins share it."""
    return mix64(p * _GOLDEN ^ mix64(o ^ _MIX2))


@kernel
def position_key_kernel(black: np.uint64, white: np.uint64, turn: int) -> np.uint64:
    if turn == 0:
        return pair_key(black, white)
    return pair_key(white, black) ^ _SIDE


@search_kernel
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
    if depth == 2:
        # Bulk count: a child without moves has one leaf below it (a pass or a finished game).
        while moves != U0:
            sq = lowest_square(moves)
            m = U1 << sq
            moves ^= m
            f = flips(p, o, sq)
            replies = popcount(get_moves(o ^ f, p ^ f ^ m))
            total += replies if replies > 0 else 1
        return total
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


@inline_kernel
def final_value(p: np.uint64, o: np.uint64, win: int) -> int:
    """An evaluator's score of a finished game for ``p``: ``win`` plus 1000 per disc of
    ``final_score`` when won, minus ``win`` plus that when lost, 0 for a draw."""
    final = final_score(p, o)
    if final == 0:
        return 0
    return win + 1000 * final if final > 0 else -win + 1000 * final


@dataclass(frozen=True)
class Position:
    """A parsed position: black and white bitboards, the colour to move (0 black), and
    whether the game is International Reversi (which only matters in its opening)."""

    black: int
    white: int
    turn: int
    international: bool = False

    @property
    def player(self) -> int:
        return self.black if self.turn == BLACK else self.white

    @property
    def opponent(self) -> int:
        return self.white if self.turn == BLACK else self.black

    def empties(self) -> int:
        return 64 - bin(self.black | self.white).count("1")

    def in_opening(self) -> bool:
        """True during International Reversi's four placements on the centre squares."""
        return self.international and self.empties() > 60

    def to_text(self) -> str:
        cells = []
        for sq in range(64):
            bit = 1 << sq
            cells.append("X" if self.black & bit else "O" if self.white & bit else "-")
        text = "".join(cells) + " " + ("X" if self.turn == BLACK else "O")
        return f"{text} {INTERNATIONAL}" if self.international else text

    def play(self, move: int) -> Position:
        """The position after ``move`` (PASS allowed only when forced). Raises on illegal."""
        if self.in_opening():
            if move not in opening_placements(self):
                raise ValueError(f"illegal opening placement {move} in {self.to_text()}")
            return self._after(self.player | 1 << move, self.opponent)
        p, o = self.player, self.opponent
        legal = int(get_moves(np.uint64(p), np.uint64(o)))
        if move == PASS:
            if legal != 0 or int(get_moves(np.uint64(o), np.uint64(p))) == 0:
                raise ValueError(f"pass is not legal in {self.to_text()}")
            return self._after(p, o)
        if not 0 <= move < 64 or not legal >> move & 1:
            raise ValueError(f"illegal move {move} in {self.to_text()}")
        f = int(flips(np.uint64(p), np.uint64(o), move))
        return self._after(p | f | (1 << move), o & ~f)

    def _after(self, mover: int, other: int) -> Position:
        """The position with the mover's discs ``mover``, the other side's ``other``, and
        the other side to move."""
        if self.turn == BLACK:
            return Position(mover, other, WHITE, self.international)
        return Position(other, mover, BLACK, self.international)


def opening_placements(pos: Position) -> list[int]:
    """The empty centre squares: the legal moves of International Reversi's opening."""
    return [sq for sq in CENTRE if not (pos.black | pos.white) >> sq & 1]


def parse_position(text: str) -> Position:
    """Parse ``64 chars (X, O, -) + space + X|O``, optionally followed by ``international``;
    also accepts OBF lines (what follows the side to move is ignored)."""
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
    international = stripped[66:].split(";")[0].split() == [INTERNATIONAL]
    pos = Position(black, white, BLACK if stripped[65] == "X" else WHITE, international)
    if pos.in_opening():
        _check_opening(pos, text)
    return pos


def _check_opening(pos: Position, text: str) -> None:
    """An International Reversi position with fewer than four discs must be reachable:
    centre discs only, black placed first, colours alternating."""
    placed = 64 - pos.empties()
    if (pos.black | pos.white) & ~_CENTRE_BITS:
        raise PositionTextError(f"international opening with discs off the centre: {text!r}")
    if bin(pos.black).count("1") != (placed + 1) // 2 or pos.turn != placed % 2:
        raise PositionTextError(f"unreachable international opening position {text!r}")


START_TEXT = "-" * 27 + "OX" + "-" * 6 + "XO" + "-" * 27 + " X"


def legal_moves(pos: Position) -> list[int]:
    """Sorted legal moves, ``[PASS]`` for a forced pass, ``[]`` when the game is over."""
    if pos.in_opening():
        return opening_placements(pos)
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
    return _perft(parse_position(position_text), depth)


def _perft(pos: Position, depth: int) -> int:
    if depth > 0 and pos.in_opening():
        return sum(_perft(pos.play(sq), depth - 1) for sq in opening_placements(pos))
    return int(perft_kernel(np.uint64(pos.player), np.uint64(pos.opponent), depth))


@kernel
def potential_mobility(own: np.uint64, empty: np.uint64) -> int:
    """Empty squares next to ``own`` discs: where the opponent may later find moves."""
    around = (own << S8) | (own >> S8)
    around |= ((own << S1) | (own << S9) | (own >> S7)) & NOT_A
    around |= ((own >> S1) | (own >> S9) | (own << S7)) & NOT_H
    return popcount(around & empty)
