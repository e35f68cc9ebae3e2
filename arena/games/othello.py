"""Othello (8x8) and the international Reversi opening, as the referee's reference rules.

Squares are numbered ``row * 8 + col`` with a1 = 0, h1 = 7, a2 = 8 and h8 = 63 (row 1
at the top, the order of an OBF line). ``PASS`` (64) is a move of its own: it is legal
exactly when the side to move has no other move and the opponent has one.

The board is two Python-int bitboards (bit ``i`` is square ``i``). Shifting whole
bitboards keeps the rules short and still fast enough to run perft to depth 9 in the
test suite; the numba engine is checked against ``from_bits``/``black_bits`` here.

Variants:

- ``standard``: the usual start, d5/e4 black and d4/e5 white, black to move.
- ``international``: the board starts empty; the first four moves (black, white,
  black, white) go on the empty centre squares d4, e4, d5, e5 in any arrangement and
  capture nothing; from the fifth move on every move must capture. The opening phase
  is exactly "fewer than four discs on the board", so the board alone carries it.

Text form: 64 characters a1..h8 (``X`` black, ``O`` white, ``-`` empty), a space,
the side to move (``X``/``O``), and for the international variant a third token
``international``. For example the standard start is
``---------------------------OX------XO--------------------------- X``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Self

from arena.games.base import (
    Color,
    EmptyMoveStackError,
    IllegalMoveError,
    InvalidMoveError,
    InvalidPositionError,
    Outcome,
    Termination,
    UnknownGameError,
)
from arena.text import shown

SIZE = 8
NUM_SQUARES = 64
PASS = 64
VARIANTS = ("standard", "international")

CENTRE_SQUARES = (27, 28, 35, 36)  # d4, e4, d5, e5
_CENTRE_BITS = sum(1 << sq for sq in CENTRE_SQUARES)
_START_BLACK = (1 << 28) | (1 << 35)  # e4, d5
_START_WHITE = (1 << 27) | (1 << 36)  # d4, e5

_FULL = (1 << 64) - 1
_NOT_COL_A = 0xFEFEFEFEFEFEFEFE  # drops discs that wrapped onto column a
_NOT_COL_H = 0x7F7F7F7F7F7F7F7F  # drops discs that wrapped onto column h

# (shift, wrap mask) for the eight directions; a positive shift goes toward h8.
_DIRECTIONS = (
    (1, _NOT_COL_A),  # east
    (-1, _NOT_COL_H),  # west
    (8, _FULL),  # south (toward row 8)
    (-8, _FULL),  # north
    (9, _NOT_COL_A),  # south-east
    (7, _NOT_COL_H),  # south-west
    (-7, _NOT_COL_A),  # north-east
    (-9, _NOT_COL_H),  # north-west
)

_PASS_WORDS = frozenset({"pass", "pa", "ps"})
_SQUARE_RE = re.compile(r"[a-h][1-8]")


def _shift(bits: int, shift: int, mask: int) -> int:
    return ((bits << shift) if shift > 0 else (bits >> -shift)) & mask


def legal_move_bits(player: int, opponent: int) -> int:
    """Squares where ``player`` may move (standard rules), as a bitboard."""
    empty = ~(player | opponent) & _FULL
    moves = 0
    for shift, mask in _DIRECTIONS:
        # Grow runs of opponent discs that start next to one of ours; a run may
        # be up to six discs long, so five extra steps reach every case.
        run = _shift(player, shift, mask) & opponent
        for _ in range(5):
            run |= _shift(run, shift, mask) & opponent
        moves |= _shift(run, shift, mask) & empty
    return moves


def flip_bits(player: int, opponent: int, square: int) -> int:
    """Opponent discs that ``player`` flips by moving on ``square`` (0 if none)."""
    flipped = 0
    start = 1 << square
    for shift, mask in _DIRECTIONS:
        run = 0
        cursor = _shift(start, shift, mask)
        while cursor & opponent:
            run |= cursor
            cursor = _shift(cursor, shift, mask)
        if cursor & player:
            flipped |= run
    return flipped


def squares_of(bits: int) -> list[int]:
    """The set squares of a bitboard, ascending."""
    squares = []
    while bits:
        low = bits & -bits
        squares.append(low.bit_length() - 1)
        bits ^= low
    return squares


def square_name(square: int) -> str:
    """``19`` -> ``d3``; ``PASS`` -> ``pass``."""
    if square == PASS:
        return "pass"
    return "abcdefgh"[square % SIZE] + str(square // SIZE + 1)


def parse_square(text: str) -> int:
    """``d3`` (any case) -> 19; ``pass``/``PA``/``PS`` -> ``PASS``. Syntax only."""
    if not isinstance(text, str):
        raise InvalidMoveError(f"invalid Othello move {shown(text)}: not a string")
    word = text.strip().lower()
    if word in _PASS_WORDS:
        return PASS
    if not _SQUARE_RE.fullmatch(word):
        raise InvalidMoveError(f"invalid Othello move {shown(text)}: expected a1..h8 or pass")
    return (int(word[1]) - 1) * SIZE + "abcdefgh".index(word[0])


def perft(board: OthelloBoard, depth: int) -> int:
    """Count the leaves ``depth`` moves ahead; a pass is a move, a finished game a leaf."""
    if depth <= 0 or board.is_game_over():
        return 1
    if board.in_opening():
        total = 0
        for move in board.legal_moves():
            board.push(move)
            total += perft(board, depth - 1)
            board.pop()
        return total
    return _perft_bits(board.player_bits, board.opponent_bits, depth)


def _perft_bits(player: int, opponent: int, depth: int) -> int:
    moves = legal_move_bits(player, opponent)
    if not moves:
        if not legal_move_bits(opponent, player):
            return 1
        return 1 if depth == 1 else _perft_bits(opponent, player, depth - 1)
    if depth == 1:
        return moves.bit_count()
    total = 0
    while moves:
        low = moves & -moves
        flipped = flip_bits(player, opponent, low.bit_length() - 1)
        total += _perft_bits(opponent ^ flipped, player | flipped | low, depth - 1)
        moves ^= low
    return total


class OthelloBoard:
    """An Othello position with its move history; see the module docstring."""

    def __init__(self, variant: str = "standard") -> None:
        _check_variant(variant)
        self._variant = variant
        if variant == "standard":
            self._black, self._white = _START_BLACK, _START_WHITE
        else:
            self._black, self._white = 0, 0
        self._turn = Color.BLACK
        self._history: list[tuple[int, int, int]] = []  # (move, black, white) before it

    # --- construction -------------------------------------------------------------

    @classmethod
    def start(cls, variant: str = "standard") -> Self:
        """The starting position of ``variant``."""
        return cls(variant)

    @classmethod
    def international(cls) -> Self:
        """The international Reversi start: an empty board, black to move."""
        return cls("international")

    @classmethod
    def from_bits(
        cls, black: int, white: int, turn: Color | int, variant: str = "standard"
    ) -> Self:
        """A position from two bitboards (bit i = square i) and the side to move."""
        _check_variant(variant)
        for name, bits in (("black", black), ("white", white)):
            if not isinstance(bits, int) or isinstance(bits, bool) or not 0 <= bits <= _FULL:
                raise InvalidPositionError(f"{name} bitboard {shown(bits)} is not a 64-bit integer")
        if black & white:
            shared = [square_name(s) for s in squares_of(black & white)]
            raise InvalidPositionError(f"black and white both occupy {shared}")
        if turn not in (0, 1) or isinstance(turn, bool):
            raise InvalidPositionError(f"side to move {shown(turn)} is not 0 (black) or 1 (white)")
        board = cls.__new__(cls)
        board._variant = variant
        board._black, board._white = black, white
        board._turn = Color(turn)
        board._history = []
        board._check_opening_consistent()
        return board

    @classmethod
    def from_text(cls, text: str) -> Self:
        """Parse the text form (see the module docstring). Structure only: a position
        whose side to move must pass is accepted, as it occurs in real games."""
        if not isinstance(text, str):
            raise InvalidPositionError(f"Othello text form must be a string, got {shown(text)}")
        tokens = text.split()
        if len(tokens) not in (2, 3):
            raise InvalidPositionError(
                f"Othello text form must be '<64 squares> <X|O> [international]', got {shown(text)}"
            )
        squares, side = tokens[0], tokens[1]
        variant = tokens[2] if len(tokens) == 3 else "standard"  # the default may be named
        if variant not in VARIANTS:
            raise InvalidPositionError(f"unknown Othello variant {shown(variant)} in "
                                       f"{shown(text)}; known: {', '.join(VARIANTS)}")
        if len(squares) != NUM_SQUARES:
            raise InvalidPositionError(
                f"Othello board needs {NUM_SQUARES} squares, got {len(squares)} in {shown(text)}"
            )
        bad = sorted(set(squares) - set("XO-"))
        if bad:
            raise InvalidPositionError(
                f"impossible square characters {shown(bad)} in {shown(text)}")
        if side not in ("X", "O"):
            raise InvalidPositionError(
                f"side to move must be X or O, got {shown(side)} in {shown(text)}")
        black = sum(1 << i for i, ch in enumerate(squares) if ch == "X")
        white = sum(1 << i for i, ch in enumerate(squares) if ch == "O")
        return cls.from_bits(black, white, Color.from_symbol(side), variant)

    @classmethod
    def from_start_text(cls, text: str, *, allow_pass_first: bool = False) -> Self:
        """Parse a custom start position (the KReversi board editor) and validate it."""
        board = cls.from_text(text)
        board.validate_start(allow_pass_first=allow_pass_first)
        return board

    def validate_start(self, *, allow_pass_first: bool = False) -> None:
        """Raise ``InvalidPositionError`` unless a game can sensibly start here: the
        game is not over, and the side to move has a move unless passing first is
        explicitly allowed."""
        if self.is_game_over():
            raise InvalidPositionError(
                f"neither side can move in {self.to_text()!r}: the game is already over"
            )
        if not allow_pass_first and self.legal_moves() == [PASS]:
            raise InvalidPositionError(
                f"{self._turn.name.lower()} to move has no move in {self.to_text()!r} "
                "(pass allow_pass_first=True to start with a pass)"
            )

    def _check_opening_consistent(self) -> None:
        """An international position with fewer than four discs must be a real
        opening: discs on the centre only, black placed first, alternating turns."""
        if self._variant != "international":
            return
        placed = (self._black | self._white).bit_count()
        if placed >= 4:
            return
        if (self._black | self._white) & ~_CENTRE_BITS:
            raise InvalidPositionError(
                f"international opening has discs off the centre in {self.to_text()!r}"
            )
        expected_turn = Color.BLACK if placed % 2 == 0 else Color.WHITE
        if self._black.bit_count() != (placed + 1) // 2 or self._turn is not expected_turn:
            raise InvalidPositionError(
                f"international opening must alternate black, white from an empty board: "
                f"{self.to_text()!r} is unreachable"
            )

    # --- state ----------------------------------------------------------------------

    @property
    def game(self) -> str:
        return "othello"

    @property
    def variant(self) -> str:
        return self._variant

    @property
    def size(self) -> int:
        return SIZE

    @property
    def turn(self) -> Color:
        return self._turn

    @property
    def black_bits(self) -> int:
        return self._black

    @property
    def white_bits(self) -> int:
        return self._white

    @property
    def player_bits(self) -> int:
        """Discs of the side to move."""
        return self._black if self._turn is Color.BLACK else self._white

    @property
    def opponent_bits(self) -> int:
        return self._white if self._turn is Color.BLACK else self._black

    @property
    def move_stack(self) -> list[int]:
        return [move for move, _, _ in self._history]

    @property
    def ply(self) -> int:
        """Number of moves pushed since this board was created."""
        return len(self._history)

    def count(self, color: Color) -> int:
        """Discs of ``color`` on the board."""
        return (self._black if color is Color.BLACK else self._white).bit_count()

    @property
    def empties(self) -> int:
        return NUM_SQUARES - (self._black | self._white).bit_count()

    def piece_at(self, square: int) -> Color | None:
        self._check_square(square)
        if self._black >> square & 1:
            return Color.BLACK
        if self._white >> square & 1:
            return Color.WHITE
        return None

    def check_history(self, history: Sequence[int]) -> None:
        """Every move a square or ``PASS``; no square played twice, and each holding a
        disc; no two passes in a row (they end the game); the last move's disc the colour of
        the side that played it (later moves flip earlier discs, so only the last says)."""
        played: set[int] = set()
        for index, move in enumerate(history):
            if type(move) is not int or not 0 <= move <= PASS:
                raise InvalidPositionError(f"history move {shown(move)} is neither a square "
                                           f"(0..{PASS - 1}) nor a pass ({PASS})")
            if move == PASS:
                if index and history[index - 1] == PASS:
                    raise InvalidPositionError("history passes twice in a row, which ends "
                                               "the game")
                continue
            if move in played:
                raise InvalidPositionError(f"history plays {square_name(move)} twice")
            if self.piece_at(move) is None:
                raise InvalidPositionError(f"history move {square_name(move)} is an empty "
                                           f"square in {shown(self.to_text())}")
            played.add(move)
        last = self._turn.other
        if history and history[-1] != PASS and self.piece_at(history[-1]) is not last:
            raise InvalidPositionError(
                f"history's last move {square_name(history[-1])} holds no disc of "
                f"{last.name.lower()}, who played it, in {shown(self.to_text())}")

    def in_opening(self) -> bool:
        """True during the international variant's four non-capturing centre moves."""
        return self._variant == "international" and (self._black | self._white).bit_count() < 4

    # --- rules ------------------------------------------------------------------------

    def legal_move_bits(self) -> int:
        """Legal squares for the side to move as a bitboard (``PASS`` not included)."""
        if self.in_opening():
            return _CENTRE_BITS & ~(self._black | self._white)
        return legal_move_bits(self.player_bits, self.opponent_bits)

    def legal_moves(self) -> list[int]:
        moves = self.legal_move_bits()
        if moves:
            return squares_of(moves)
        if legal_move_bits(self.opponent_bits, self.player_bits):
            return [PASS]
        return []

    def is_legal(self, move: int) -> bool:
        if not _is_move_int(move):
            return False
        if move == PASS:
            return self.legal_moves() == [PASS]
        return bool(self.legal_move_bits() >> move & 1)

    def flips(self, move: int) -> int:
        """The discs ``move`` would flip, as a bitboard (0 for a pass or an opening move)."""
        self._check_move_syntax(move)
        if move == PASS or self.in_opening():
            return 0
        return flip_bits(self.player_bits, self.opponent_bits, move)

    def is_game_over(self) -> bool:
        if self.in_opening():
            return False
        player, opponent = self.player_bits, self.opponent_bits
        return not legal_move_bits(player, opponent) and not legal_move_bits(opponent, player)

    def outcome(self) -> Outcome | None:
        """The result once neither side can move; the winner has more discs."""
        if not self.is_game_over():
            return None
        black, white = self.count(Color.BLACK), self.count(Color.WHITE)
        winner = Color.BLACK if black > white else Color.WHITE if white > black else None
        return Outcome(winner, Termination.NORMAL, black, white, self.empties)

    def push(self, move: int) -> None:
        self._check_move_syntax(move)
        if not self.is_legal(move):
            raise IllegalMoveError(
                f"illegal move {square_name(move)!r} ({move}) for "
                f"{self._turn.name.lower()} in {self.to_text()!r}"
            )
        self._history.append((move, self._black, self._white))
        if move != PASS:
            placed = 1 << move
            flipped = self.flips(move)
            if self._turn is Color.BLACK:
                self._black |= placed | flipped
                self._white ^= flipped
            else:
                self._white |= placed | flipped
                self._black ^= flipped
        self._turn = self._turn.other

    def pop(self) -> int:
        if not self._history:
            raise EmptyMoveStackError(f"pop from an empty move stack in {self.to_text()!r}")
        move, self._black, self._white = self._history.pop()
        self._turn = self._turn.other
        return move

    def push_str(self, text: str) -> int:
        """Parse ``text`` as a move, play it and return it."""
        move = self.parse_move(text)
        self.push(move)
        return move

    # --- notation ----------------------------------------------------------------------

    def parse_move(self, text: str) -> int:
        try:
            move = parse_square(text)
        except InvalidMoveError:
            raise InvalidMoveError(
                f"invalid Othello move {shown(text)} in {self.to_text()!r}: expected a1..h8 or pass"
            ) from None
        if not self.is_legal(move):
            raise IllegalMoveError(
                f"illegal move {shown(text)} for {self._turn.name.lower()} in {self.to_text()!r}"
            )
        return move

    def move_to_str(self, move: int) -> str:
        self._check_move_syntax(move)
        return square_name(move)

    def to_text(self) -> str:
        chars = []
        for square in range(NUM_SQUARES):
            if self._black >> square & 1:
                chars.append("X")
            elif self._white >> square & 1:
                chars.append("O")
            else:
                chars.append("-")
        text = "".join(chars) + " " + self._turn.symbol
        return text + " international" if self._variant == "international" else text

    def copy(self) -> Self:
        board = self.__class__.__new__(self.__class__)
        board._variant = self._variant
        board._black, board._white, board._turn = self._black, self._white, self._turn
        board._history = list(self._history)
        return board

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OthelloBoard):
            return NotImplemented
        return (self._variant, self._black, self._white, self._turn) == (
            other._variant,
            other._black,
            other._white,
            other._turn,
        )

    def __hash__(self) -> int:
        return hash((self._variant, self._black, self._white, self._turn))

    def __repr__(self) -> str:
        return f"{type(self).__name__}.from_text({self.to_text()!r})"

    def __str__(self) -> str:
        text = self.to_text()
        rows = ["  a b c d e f g h"]
        for row in range(SIZE):
            rows.append(f"{row + 1} " + " ".join(text[row * SIZE : (row + 1) * SIZE]))
        rows.append(f"{self._turn.name.lower()} to move")
        return "\n".join(rows)

    def _check_square(self, square: int) -> None:
        if not _is_move_int(square) or square == PASS:
            raise InvalidMoveError(f"invalid square {square!r} in {self.to_text()!r}: need 0..63")

    def _check_move_syntax(self, move: int) -> None:
        if not _is_move_int(move):
            raise InvalidMoveError(
                f"invalid Othello move {move!r} in {self.to_text()!r}: need 0..63 or PASS (64)"
            )


def _is_move_int(move: object) -> bool:
    return isinstance(move, int) and not isinstance(move, bool) and 0 <= move <= PASS


def _check_variant(variant: str) -> None:
    if variant not in VARIANTS:
        raise UnknownGameError(f"unknown Othello variant {variant!r}; known: {', '.join(VARIANTS)}",
                               "variant")
