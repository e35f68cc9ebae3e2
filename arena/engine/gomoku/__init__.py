"""The Gomoku engine: SharpMoku's bots and arena-gomoku behind one entry point.

``choose_move`` takes the game as plain data (board size, rule name, the move list
from the empty board, Black first) so callers need no board class. Squares are
``y * size + x``.

A search enters the numba kernels once (``root.search_root`` for arena-gomoku,
``sharpmoku.choose`` for SharpMoku) and they release the interpreter lock while they
run, so searches in several threads of one process run side by side and other Python
threads keep running. Only the set-up and the packaging of the result hold the lock.
Time limits are kept on the clock ``Limits.clock`` names (``budget.py``).

| module | what it holds |
|---|---|
| ``board.py`` | cells, neighbour counts, win detection, Zobrist keys (both bots) |
| ``position.py`` | a validated move list as kernel arrays |
| ``sharpmoku.py`` | SharpMoku's evaluator, root checks and alpha-beta |
| ``patterns.py`` | arena-gomoku's position: line classes, stats and candidates per stone |
| ``evaluation.py`` | arena-gomoku's evaluation: weights per line class, the shipped set |
| ``train.py``, ``cli.py`` | training those weights on self-play (``arena engine train gomoku``) |
| ``weights/`` | the shipped weights with their command and metrics (``arena-gomoku.json``) |
| ``threats.py`` | VCF and VCT |
| ``search.py`` | arena-gomoku's alpha-beta (PVS, table, threat ordering, extensions) |
| ``root.py`` | arena-gomoku's whole search in one kernel |
| ``work.py`` | the scratch array the arena-gomoku kernels share |
| ``control.py``, ``clock.py``, ``budget.py`` | node counts, stop flag, clocks, deadlines |
| ``tree.py`` | search-tree capture |
| ``bots.py`` | the Python side of both bots |
| ``config.py`` | parameters, presets, validation, evaluator hashes |
"""
from __future__ import annotations

from arena.engine.api import Limits, SearchResult, StopFlag
from arena.engine.gomoku.bots import run_arena, run_sharpmoku, thread_tables
from arena.engine.gomoku.budget import Budget
from arena.engine.gomoku.config import (
    ARENA_GOMOKU,
    PRESETS,
    SHARPMOKU,
    evaluator_hash,
    resolved,
    validate_config,
)
from arena.engine.gomoku.position import GomokuPositionError, position_from_moves
from arena.errors import InvalidArgumentError

__all__ = [
    "PRESETS",
    "GomokuPositionError",
    "choose_move",
    "evaluator_hash",
    "validate_config",
    "warm_thread",
    "warm_up",
]


def choose_move(
    size: int,
    rule: str,
    moves: list[int],
    config: dict[str, object],
    limits: Limits,
    stop: StopFlag | None = None,
    tree_budget: int = 0,
    seed: int = 0,
) -> SearchResult:
    """The move the configured bot plays after ``moves``, with how it was found.

    Raises ``InvalidArgumentError`` for a bad config or budget and
    ``GomokuPositionError`` (a ``ValueError``) for a move list that is not a game in
    progress. ``tree_budget`` > 0 captures up to that many search-tree nodes.
    ``seed`` only picks SharpMoku's random first move. ``limits.time_ms`` counts from
    this call on ``limits.clock``; the search stops with a margin so that the call
    returns within it (see ``budget.py``). ``cpu_ms`` is this thread's CPU time in it.
    """
    budget = Budget.start(limits)
    violations = validate_config(config)
    if violations:
        raise InvalidArgumentError.for_fields(violations)
    if isinstance(tree_budget, bool) or not isinstance(tree_budget, int) or tree_budget < 0:
        raise InvalidArgumentError(f"tree_budget must be a non-negative integer: {tree_budget!r}")
    pos = position_from_moves(size, rule, moves)
    params = resolved(config)
    flag = stop if stop is not None else StopFlag()
    if config["evaluator"] == SHARPMOKU:
        return run_sharpmoku(pos, params, budget, flag, tree_budget, seed)
    assert config["evaluator"] == ARENA_GOMOKU
    return run_arena(pos, params, budget, flag, tree_budget)


def warm_up() -> None:
    """Compile (or load from the numba cache) every kernel on both rules and sizes."""
    opening = [112, 113, 127, 98, 142]
    for rule in ("freestyle", "exact-five"):
        for name in ("sharpmoku-normal", "arena-gomoku"):
            choose_move(15, rule, opening, PRESETS[name], Limits(depth=2), tree_budget=8)


def warm_thread() -> None:
    """Allocate and touch this thread's arena-gomoku tables (16 MiB at the presets' table
    size) before its first search, which would otherwise fault them in inside its time; a
    thread that has tables keeps them (whatever their size)."""
    thread_tables(None)
