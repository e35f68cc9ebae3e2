"""Opening suites by name, and the seeded choice of which openings a ladder plays.

Names:

- ``none`` (or empty): one empty opening; games start from the variant's own start.
- ``international``: Othello from the empty board of international Reversi (the bots
  place the four centre discs); the games use the ``international`` variant.
- ``othello-balanced``: every distinct position 4 plies from the standard start, one per
  class of the 8 board symmetries (60 openings); ``othello-balanced-<k>`` for k plies
  (1..6: 1, 3, 14, 60, 322 or 1773 openings).
- ``gomoku-balanced15``: the 12 balanced 15x15 openings (freestyle, or exact-five).
- ``gomoku-wide15``: 200 balanced 15x15 openings Arena made (``arena engine openings
  gomoku``; the file records how), so that up to 400 games meet no opening twice.
- ``custom``: a ladder's own openings (``custom_suite``), given with the ladder.

A ladder plays ``games_per_pairing / 2`` openings per pairing, each twice with colours
swapped; ``select_openings`` picks them from the suite with a seeded shuffle, cycling
through the suite again when more are asked for than it holds.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from functools import cache

from arena.games import GameError, OthelloBoard, Position, new_position
from arena.openings.gomoku import SIZE as GOMOKU_BALANCED_SIZE
from arena.openings.gomoku import balanced_openings, wide_openings
from arena.openings.othello import MAX_PLIES, distinct_openings
from arena.text import shown

SUITE_NAMES = ("none", "international", "othello-balanced", "gomoku-balanced15", "gomoku-wide15")
CUSTOM = "custom"
MAX_CUSTOM_OPENINGS = 256
MAX_CUSTOM_MOVES = 40
DEFAULT_OTHELLO_PLIES = 4
_GOMOKU_SUITES = {"gomoku-balanced15": balanced_openings, "gomoku-wide15": wide_openings}
_BALANCED_RE = re.compile(r"othello-balanced(?:-([0-9]+))?")


class UnknownSuiteError(ValueError):
    """A suite name nobody defined, or a suite that does not fit the game asked for."""


@dataclass(frozen=True)
class Opening:
    """Moves played from the start before the bots take over, and where they lead."""

    name: str
    moves: tuple[int, ...]
    position: str  # text form after the moves (informative: the moves are authoritative)


@dataclass(frozen=True)
class OpeningSuite:
    name: str
    game: str | None  # None: any game
    variant: str | None  # the variant (Othello) or rule (Gomoku) it needs; None: any
    size: int | None  # the board size it needs; None: any
    openings: tuple[Opening, ...]

    def resolve(self, game: str, variant: str, size: int) -> tuple[str, int]:
        """The variant and size to play with this suite; empty/0 mean "the default".

        Raises ``UnknownSuiteError`` when the suite does not fit the game; the message says
        what would.
        """
        if self.game is not None and game != self.game:
            raise UnknownSuiteError(
                f"opening suite {self.name!r} is for {self.game}, not {game}: leave the suite "
                f"out for {game}'s own or choose one of {game}'s")
        if self.variant is not None:
            if variant and variant != self.variant and not self._rule_free(game):
                raise UnknownSuiteError(
                    f"opening suite {self.name!r} plays the {self.variant!r} variant, not "
                    f"{variant!r}: leave the variant out (the suite implies it) or choose "
                    f"another suite")
            variant = variant or self.variant
        if self.size is not None:
            if size and size != self.size:
                raise UnknownSuiteError(
                    f"opening suite {self.name!r} plays on {self.size}x{self.size}, not "
                    f"{size}x{size}: leave the size out (the suite implies it) or choose "
                    f"another suite")
            size = self.size
        return variant, size

    def _rule_free(self, game: str) -> bool:
        # The Gomoku openings stay legal under either rule: only the winning line differs.
        return game == "gomoku"


def load_suite(name: str) -> OpeningSuite:
    """The suite called ``name`` (see the module docstring)."""
    name = name.strip() or "none"
    if name == "none":
        return OpeningSuite("none", None, None, None, (Opening("start", (), ""),))
    if name == "international":
        start = OthelloBoard("international").to_text()
        return OpeningSuite(
            "international", "othello", "international", 8, (Opening("empty board", (), start),)
        )
    if name in _GOMOKU_SUITES:
        return _gomoku(name)
    if name == CUSTOM:
        raise UnknownSuiteError(
            f"{CUSTOM!r} is the suite of a ladder's own openings: give them with the ladder "
            "(`arena ladder create --openings-file FILE`)")
    match = _BALANCED_RE.fullmatch(name)
    if match:
        digits = match.group(1) or str(DEFAULT_OTHELLO_PLIES)
        # The length first: int() refuses strings of more than 4,300 digits.
        if len(digits) > 4 or not 1 <= int(digits) <= MAX_PLIES:
            raise UnknownSuiteError(
                f"othello-balanced-<plies> takes 1..{MAX_PLIES} plies: {shown(name)}"
            )
        return _othello_balanced(int(digits))
    raise UnknownSuiteError(
        f"unknown opening suite {shown(name)}; known: {', '.join(SUITE_NAMES)} "
        f"(and othello-balanced-<1..{MAX_PLIES}>)"
    )


@cache
def _othello_balanced(plies: int) -> OpeningSuite:
    openings = tuple(Opening(o.name, o.moves, o.position) for o in distinct_openings(plies))
    name = "othello-balanced" if plies == DEFAULT_OTHELLO_PLIES else f"othello-balanced-{plies}"
    return OpeningSuite(name, "othello", "standard", 8, openings)


@cache
def _gomoku(name: str) -> OpeningSuite:
    openings = tuple(Opening(o.name, o.moves, o.position) for o in _GOMOKU_SUITES[name]())
    return OpeningSuite(name, "gomoku", "freestyle", GOMOKU_BALANCED_SIZE, openings)


_MOVE_NAME = re.compile(r"[A-Za-z]+[0-9]*")  # 'f5', 'h12', 'pass'


def move_words(text: str) -> list[str]:
    """The move names in one opening's text: separated by spaces or commas, or written
    together (``f5d6c3``, ``h8i9``; a word that is no run of names is kept whole, for the
    rules to name what is wrong with it). What follows a ``#`` (a comment) or a ``|`` (a
    note: ``arena engine openings`` writes the judge's score there) is no move."""
    words: list[str] = []
    for word in text.split("#", 1)[0].split("|", 1)[0].replace(",", " ").split():
        names = _MOVE_NAME.findall(word)
        words += names if "".join(names) == word else [word]
    return words


class OpeningMoveError(GameError):
    """A move of an opening that cannot be played; ``number`` counts the moves from 1."""

    def __init__(self, number: int, message: str) -> None:
        super().__init__(message)
        self.number = number


def play_opening(position: Position, text: str) -> list[int]:
    """Play the moves ``text`` names (``move_words``) on ``position``; their squares. One
    that cannot be played raises ``OpeningMoveError`` with the rules' own words."""
    moves: list[int] = []
    for word in move_words(text):
        try:
            moves.append(position.parse_move(word))
            position.push(moves[-1])
        except GameError as exc:
            raise OpeningMoveError(len(moves) + 1, str(exc)) from None
    return moves


def custom_suite(game: str, variant: str, size: int,
                 openings: list[list[int]]) -> tuple[OpeningSuite, list[tuple[str, str]]]:
    """A ladder's own ``openings`` (moves from the start of ``game``'s ``variant`` on a
    ``size`` board) as a suite, and what is wrong with them: (where, problem) pairs, where
    being ``""`` (the list) or ``[i]`` (an opening). Each is played out move by move."""
    if not 1 <= len(openings) <= MAX_CUSTOM_OPENINGS:
        return (OpeningSuite(CUSTOM, game, variant, size, ()),
                [("", f"give 1..{MAX_CUSTOM_OPENINGS} openings, got {len(openings)}")])
    problems: list[tuple[str, str]] = []
    made: list[Opening] = []
    for index, moves in enumerate(openings):
        problem = _custom_problem(game, variant, size, moves)
        if isinstance(problem, str):
            problems.append((f"[{index}]", problem))
        else:
            made.append(Opening(f"#{index + 1}", tuple(moves), problem.to_text()))
    return OpeningSuite(CUSTOM, game, variant, size, tuple(made)), problems


def _custom_problem(game: str, variant: str, size: int, moves: list[int]) -> str | Position:
    """What is wrong with an opening of a ladder's own, or the position it leads to."""
    if len(moves) > MAX_CUSTOM_MOVES:
        return f"{len(moves)} moves; at most {MAX_CUSTOM_MOVES}"
    board = new_position(game, variant, size)
    for at, move in enumerate(moves):
        try:
            board.push(move)
        except GameError as exc:
            return f"move {at + 1}: {exc}"
    return "leaves no game to play" if board.is_game_over() else board


def select_openings(suite: OpeningSuite, count: int, seed: int) -> list[Opening]:
    """``count`` openings of ``suite`` in a seeded order, the whole suite before a repeat."""
    if count < 0:
        raise ValueError(f"opening count must be >= 0, got {count!r}")
    order = list(suite.openings)
    random.Random(seed).shuffle(order)
    return [order[i % len(order)] for i in range(count)]


def start_position_after(game: str, variant: str, size: int, opening: Opening) -> str:
    """The text form after playing ``opening`` from the start (checks every move)."""
    board = new_position(game, variant, size if game == "gomoku" else None)
    for move in opening.moves:
        board.push(move)
    return board.to_text()
