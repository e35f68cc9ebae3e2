"""Self-play games for the engines' training, in seeded chunks, in one process or a pool.

A game is ``play_game(seed, game, settings)``: a pure function of its arguments (it draws
from ``random.Random(f"{seed}:{game}")``), returning one row per position kept. So the
same seed gives the same rows in the same order whatever the number of processes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

S = TypeVar("S")
PlayGame = Callable[[int, int, S], Sequence[tuple[Any, ...]]]
CHUNK = 10  # games per task


def play_games(
    play_game: PlayGame[S], games: int, seed: int, settings: S, jobs: int = 1,
    progress: Callable[[int], None] | None = None,
) -> list[tuple[Any, ...]]:
    """The rows of games ``0 .. games - 1``, each with its game index appended, in game
    order; ``progress`` gets the number of games done after each chunk. ``play_game``
    must be a module-level function when ``jobs`` > 1 (it goes to the other processes)."""
    tasks = [(seed, g, min(CHUNK, games - g), settings) for g in range(0, games, CHUNK)]
    play = functools.partial(_play_chunk, play_game)
    if jobs <= 1:
        return _collect(tasks, map(play, tasks), progress)
    with ProcessPoolExecutor(jobs) as pool:
        return _collect(tasks, pool.map(play, tasks), progress)


def held_out_games(games: int, holdout: float) -> int:
    """How many of ``games`` (at least 2) the ``holdout`` share holds out: at least one
    game and never all of them."""
    return max(1, min(games - 1, round(games * holdout)))


def game_progress(games: int, say: Callable[[str], None]) -> Callable[[int], None]:
    """A ``progress`` for ``play_games`` that says ``games done/total`` about ten times."""
    step = max(CHUNK, games // 10)

    def report(done: int) -> None:
        if done % step < CHUNK or done == games:
            say(f"games {done}/{games}")

    return report


def _play_chunk(
    play_game: PlayGame[S], task: tuple[int, int, int, S]
) -> list[tuple[Any, ...]]:
    seed, first, count, settings = task
    return [(*row, g) for g in range(first, first + count)
            for row in play_game(seed, g, settings)]


def _collect(
    tasks: list[tuple[int, int, int, S]], parts: Iterable[list[tuple[Any, ...]]],
    progress: Callable[[int], None] | None,
) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    for (_seed, first, count, _settings), part in zip(tasks, parts, strict=True):
        rows += part
        if progress:
            progress(first + count)
    return rows
