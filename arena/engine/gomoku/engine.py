"""The Gomoku engine's entry points: ``choose_move``, ``warm_up``, ``warm_thread`` (the
package exports them; see its docstring)."""

from __future__ import annotations

from arena.engine.api import Limits, SearchResult, StopFlag
from arena.engine.gomoku.bots import run_arena, run_sharpmoku, thread_tables
from arena.engine.gomoku.budget import Budget
from arena.engine.gomoku.config import (
    ARENA_GOMOKU,
    PRESETS,
    SHARPMOKU,
    resolved,
    validate_config,
)
from arena.engine.gomoku.position import position_from_moves
from arena.errors import InvalidArgumentError


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
    """Compile (or load from the numba cache) every kernel on both rules and sizes, and
    read each shipped weight set (the board network's integer tables take some 15 ms),
    so that no first move pays for it."""
    opening = [112, 113, 127, 98, 142]
    for rule in ("freestyle", "exact-five"):
        for name in ("sharpmoku-normal", "arena-gomoku", "arena-gomoku-board"):
            choose_move(15, rule, opening, PRESETS[name], Limits(depth=2), tree_budget=8)


def warm_thread() -> None:
    """Allocate and touch this thread's arena-gomoku tables (16 MiB at the presets' table
    size) before its first search, which would otherwise fault them in inside its time; a
    thread that has tables keeps them (whatever their size)."""
    thread_tables(None)
