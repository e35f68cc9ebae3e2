"""A teacher: another engine whose judgement of positions a training fits, instead of the
results of self-play games (``arena engine train gomoku --teacher NAME``).

The core only says what a teacher is. Protocol engines are the worker's
(``arena.services.worker.engines.teacher`` serves a catalog's engine as one), and the
core imports no service: the ``arena`` command hands ``add_tool_commands`` a
``TeacherFactory``. A teacher is asked for its move in each position, under a time
limit; what it prints about its search gives the judgement: its score from the side to
move's view, in its own units, and whether it says the score is proven (a forced win or
loss).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Judgement:
    score: float  # the teacher's units, from the side to move's view
    exact: bool  # a proven result: a forced win (score > 0) or loss


@dataclass(frozen=True)
class Position:
    text: str  # the game's position text (``arena.games``)
    history: tuple[int, ...]  # the moves that led to it from the empty board


class Teacher(Protocol):
    def describe(self) -> dict[str, object]:
        """What the weights file records of the teacher (name, command, options...)."""
        ...

    def judge(self, positions: Sequence[Position], jobs: int,
              progress: Callable[[int], None] | None = None) -> list[Judgement]:
        """A judgement of each position, in order, ``jobs`` engine processes at once;
        ``progress`` gets the number judged so far now and then. ``ValueError`` if the
        teacher cannot be started or gives no score."""
        ...


# (catalog name or file, engine name, time limit per position in ms) -> a teacher;
# ``ValueError`` if there is no such engine or it cannot play the game.
TeacherFactory = Callable[[str, str, str, int], Teacher]
