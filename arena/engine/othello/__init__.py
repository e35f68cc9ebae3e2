"""Arena's Othello engine: bitboards, PVS alpha-beta, exact endgame solver, seed bots.

Public entry points (square index = row * 8 + col, a1 = 0, h8 = 63, PASS = 64; positions are
64 characters a1..h8 of ``X``/``O``/``-``, a space and ``X`` or ``O`` for the side to move):

* ``choose_move(position_text, config, limits, stop=None, tree_budget=0, seed=0)`` runs the
  bot described by ``config`` and returns a ``SearchResult``. ``limits`` and the bot's own
  depth/time combine as "the stricter wins". ``Limits.depth`` counts plies searched.
* ``PRESETS``: the seed bots and Arena's own (``kreversi-default``, ``lucy``, ``madoka``,
  ``ryo``, ``terra``, ``lab-beginner``, ``lab-intermediate``, ``lab-advanced``,
  ``arena-fast``, ``arena-strong``, ``arena-pattern``).
* ``validate_config(config)`` -> list of ``FieldViolation``; ``evaluator_hash(config)``.
* ``perft(position_text, depth)``, ``solve(position_text, wld=False, limits=None, stop=None)``.
* ``warm_up()`` compiles or loads every kernel; ``warm_thread()`` readies the calling
  thread's tables before its first search.

Each name is imported from its module on first use: the presets and the config checks
load no numba (the command line builds its options from the presets), the searches load
their kernels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from arena.engine import lazy_exports

if TYPE_CHECKING:
    from arena.engine.othello.bitboard import PASS, START_TEXT, perft, position_key
    from arena.engine.othello.config import evaluator_hash, normalize_config, validate_config
    from arena.engine.othello.engine import (
        GameOverError,
        choose_move,
        evaluate_position,
        solve,
        warm_thread,
        warm_up,
    )
    from arena.engine.othello.presets import PRESETS

_HOMES = {
    "PASS": "bitboard", "START_TEXT": "bitboard", "perft": "bitboard", "position_key": "bitboard",
    "evaluator_hash": "config", "normalize_config": "config", "validate_config": "config",
    "GameOverError": "engine", "choose_move": "engine", "evaluate_position": "engine",
    "solve": "engine", "warm_thread": "engine", "warm_up": "engine",
    "PRESETS": "presets",
}

__all__ = [
    "PASS",
    "PRESETS",
    "START_TEXT",
    "GameOverError",
    "choose_move",
    "evaluate_position",
    "evaluator_hash",
    "normalize_config",
    "perft",
    "position_key",
    "solve",
    "validate_config",
    "warm_thread",
    "warm_up",
]

__getattr__ = lazy_exports(__name__, _HOMES)
