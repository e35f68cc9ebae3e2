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
| ``engine.py`` | ``choose_move``, ``warm_up``, ``warm_thread`` |

Each name the package exports is imported from its module on first use: the presets and
the config checks load no numba, the searches load their kernels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from arena.engine import lazy_exports

if TYPE_CHECKING:
    from arena.engine.gomoku.config import PRESETS, evaluator_hash, validate_config
    from arena.engine.gomoku.engine import choose_move, warm_thread, warm_up
    from arena.engine.gomoku.position import GomokuPositionError

_HOMES = {
    "PRESETS": "config", "evaluator_hash": "config", "validate_config": "config",
    "GomokuPositionError": "position",
    "choose_move": "engine", "warm_thread": "engine", "warm_up": "engine",
}

__all__ = [
    "PRESETS",
    "GomokuPositionError",
    "choose_move",
    "evaluator_hash",
    "validate_config",
    "warm_thread",
    "warm_up",
]


__getattr__ = lazy_exports(__name__, _HOMES)
