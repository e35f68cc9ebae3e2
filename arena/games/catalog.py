"""The one description of each game, asked by every layer instead of branching on names.

A :class:`Game` says what the game is called (its text name and its protobuf kind), which
variants and board sizes it has and which are the defaults, whether it has a pass move,
which record formats can hold its games, which opening suite a ladder plays by default,
which bot ``arena play`` offers, whether terminals show its legal moves, and where
its engine lives. Code that needs any of these
asks ``game("othello")`` or ``game(GAME_KIND_OTHELLO)``; nothing else maps names to kinds.

    >>> othello = game("othello")
    >>> othello.spec().board_size, othello.default_variant
    (8, 'standard')
    >>> game(othello.kind) is othello
    True
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias, cast

from arena.games.base import Color, Outcome, Position, Termination, UnknownGameError
from arena.games.gomoku import STANDARD_SIZES, GomokuBoard
from arena.games.othello import PASS, OthelloBoard
from arena.v1 import common_pb2

if TYPE_CHECKING:
    from arena.engine.adapters import GameEngine


GameKind: TypeAlias = common_pb2.GameKind.ValueType


@dataclass(frozen=True)
class Game:
    """Everything Arena knows about one game, in one place."""

    name: str  # the text name: bot files, the command line, position text forms
    kind: GameKind  # the protobuf enum value
    title: str
    variants: tuple[str, ...]  # Othello variants / Gomoku rules; the first is the default
    sizes: tuple[int, ...]
    default_size: int
    has_pass: bool
    counts_discs: bool  # decided by counting discs: results carry a disc score (WOF)
    record_formats: tuple[str, ...]  # export formats beside Arena's native replay
    default_bot: str  # the preset `arena play` offers
    # Whether terminals mark and list the legal moves: a handful of squares in Othello
    # help; every empty point of a Gomoku board would only hide the stones.
    shows_legal_moves: bool
    engine_ref: str  # "module:attribute" of its engine, imported on first use (numba)
    # The most empty squares at which a game may be adjudicated by its engine's exact
    # solver (``GameEngine.exact_score``; MatchConfig.adjudicate_empties); 0: no solver.
    exact_empties: int
    _new: Callable[[str, int], Position]
    _parse: Callable[[str], Position]
    _suite: Callable[[str, int], str]

    @property
    def default_variant(self) -> str:
        return self.variants[0]

    @property
    def sizes_text(self) -> str:
        """The boards it is played on, said: ``9x9, 15x15 or 19x19``."""
        boards = [f"{s}x{s}" for s in self.sizes]
        return " or ".join([", ".join(boards[:-1]), boards[-1]] if len(boards) > 1 else boards)

    def check(self, variant: str | None = None, size: int | None = None) -> tuple[str, int]:
        """The variant and size to play (defaults filled in); ``UnknownGameError`` if the
        game has no such variant or size."""
        variant = variant or self.default_variant
        size = size or self.default_size
        if variant not in self.variants:
            raise UnknownGameError(
                f"unknown {self.title} variant {variant!r}; known: {', '.join(self.variants)}",
                "variant")
        if size not in self.sizes:
            raise UnknownGameError(
                f"{self.title} is played on {self.sizes_text}, not size {size}", "board_size")
        return variant, size

    def new_position(self, variant: str | None = None, size: int | None = None) -> Position:
        return self._new(*self.check(variant, size))

    def position_from_text(self, text: str) -> Position:
        return self._parse(text)

    def spec(self, variant: str | None = None, size: int | None = None) -> common_pb2.GameSpec:
        """A complete ``GameSpec`` (defaults filled in, checked)."""
        variant, size = self.check(variant, size)
        return common_pb2.GameSpec(kind=self.kind, variant=variant, board_size=size)

    def num_moves(self, size: int) -> int:
        """Moves are numbered 0..num_moves-1: every square, then the pass if there is one."""
        return size * size + int(self.has_pass)

    def is_pass(self, move: int) -> bool:
        return self.has_pass and move == PASS

    def default_suite(self, variant: str | None = None, size: int | None = None) -> str:
        """The opening suite a ladder of this variant and size plays unless told."""
        return self._suite(*self.check(variant, size))

    def forfeit_outcome(self, position: Position, termination: Termination) -> Outcome:
        """The side to move in ``position`` loses by ``termination`` (a resignation, say):
        the discs as they stand in a game decided by discs, 1-0 game points otherwise."""
        winner = position.turn.other
        if not self.counts_discs:
            black, white = (1, 0) if winner is Color.BLACK else (0, 1)
            return Outcome(winner, termination, black, white)
        count: Callable[[Color], int] = getattr(position, "count")  # noqa: B009
        black, white = count(Color.BLACK), count(Color.WHITE)
        empties = position.size * position.size - black - white
        return Outcome(winner, termination, black, white, empties)

    def adjudication_problem(self, empties: int) -> str | None:
        """What is wrong with adjudicating this game's matches at ``empties`` empty
        squares (MatchConfig.adjudicate_empties; 0 is never adjudicating), or None."""
        if empties == 0:
            return None
        if self.exact_empties == 0:
            return f"{self.title} has no exact solver to adjudicate with: must be 0"
        if not 0 < empties <= self.exact_empties:
            return f"must be in 0..{self.exact_empties}, got {empties}"
        return None

    def engine(self) -> GameEngine:
        """The game's built-in engine (see ``arena.engine.adapters``)."""
        module, _, attribute = self.engine_ref.partition(":")
        return cast("GameEngine", getattr(importlib.import_module(module), attribute))


def _othello_suite(variant: str, size: int) -> str:
    return "international" if variant == "international" else "othello-balanced"


def _gomoku_suite(variant: str, size: int) -> str:
    return "gomoku-balanced15" if size == 15 else "none"


OTHELLO = Game(
    name="othello", kind=common_pb2.GAME_KIND_OTHELLO, title="Othello",
    variants=("standard", "international"), sizes=(8,), default_size=8, has_pass=True,
    counts_discs=True,
    record_formats=("ggf", "transcript"), default_bot="lab-advanced", shows_legal_moves=True,
    engine_ref="arena.engine.adapters:OTHELLO", exact_empties=18,
    _new=lambda variant, size: OthelloBoard(variant), _parse=OthelloBoard.from_text,
    _suite=_othello_suite,
)
GOMOKU = Game(
    name="gomoku", kind=common_pb2.GAME_KIND_GOMOKU, title="Gomoku",
    variants=("freestyle", "exact-five"), sizes=STANDARD_SIZES, default_size=15,
    has_pass=False, counts_discs=False, record_formats=("psq",), default_bot="sharpmoku-normal",
    shows_legal_moves=False,
    engine_ref="arena.engine.adapters:GOMOKU", exact_empties=0,
    _new=lambda variant, size: GomokuBoard(size, variant), _parse=GomokuBoard.from_text,
    _suite=_gomoku_suite,
)
GAMES: tuple[Game, ...] = (OTHELLO, GOMOKU)
GAME_NAMES: tuple[str, ...] = tuple(g.name for g in GAMES)


def game(key: str | int | Game) -> Game:
    """The game called ``key`` (any case) or of protobuf kind ``key`` (or ``key`` itself).

    Raises ``UnknownGameError`` (a ``ValueError``) naming the known games.
    """
    if isinstance(key, Game):
        return key
    for candidate in GAMES:
        if isinstance(key, int):
            if key == candidate.kind:
                return candidate
        elif str(key).strip().lower() == candidate.name:
            return candidate
    raise UnknownGameError(f"unknown game {key!r}; known: {', '.join(GAME_NAMES)}", "kind")


def game_of(position: Position) -> Game:
    return game(position.game)


def game_of_text(text: str) -> Game:
    """The game whose one-line text form ``text`` has the shape of, for a text that comes
    with no game named (a position pasted into the board editor): Gomoku's begins with its
    board size (``15 freestyle ...``), Othello's with its 64 squares. That game's rules then
    read the rest, and say what is wrong with it."""
    first = text.split(maxsplit=1)[:1]
    return GOMOKU if first and first[0].isdigit() else OTHELLO
