"""Which engine plays which game, and the configuration API each engine module offers.

The registry never looks inside an evaluator's parameters itself: the engine modules
(``arena.engine.othello``, ``arena.engine.gomoku``) own their schema and expose
``PRESETS``, ``validate_config`` and ``evaluator_hash``. This module is the one place that
maps games and evaluator names to those modules.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Protocol, TypeAlias, cast

from arena.errors import FieldViolation
from arena.v1 import common_pb2

GameKind: TypeAlias = common_pb2.GameKind.ValueType

OTHELLO = common_pb2.GAME_KIND_OTHELLO
GOMOKU = common_pb2.GAME_KIND_GOMOKU

# The text names used in bot files and on the command line.
GAME_NAMES: dict[str, GameKind] = {"othello": OTHELLO, "gomoku": GOMOKU}

# Evaluator name -> the game it plays (the engine contract's evaluator sets).
EVALUATOR_GAMES: dict[str, GameKind] = {
    "kreversi": OTHELLO,
    "lab": OTHELLO,
    "arena": OTHELLO,
    "sharpmoku": GOMOKU,
    "arena-gomoku": GOMOKU,
}

_ENGINE_MODULES: dict[GameKind, str] = {
    OTHELLO: "arena.engine.othello",
    GOMOKU: "arena.engine.gomoku",
}


class EngineConfigApi(Protocol):
    """What an engine module offers for configurations (duck-typed on the module)."""

    PRESETS: Mapping[str, Mapping[str, object]]

    def validate_config(self, config: object) -> list[FieldViolation]: ...

    def evaluator_hash(self, config: Mapping[str, object]) -> str: ...


def game_name(game: GameKind) -> str:
    """``GAME_KIND_OTHELLO`` -> ``"othello"``; raises ValueError for an unknown kind."""
    for name, kind in GAME_NAMES.items():
        if kind == game:
            return name
    raise ValueError(f"no game for game kind {game}")


def game_from_name(text: str) -> GameKind:
    """``"othello"`` (any case) -> ``GAME_KIND_OTHELLO``; raises ValueError otherwise."""
    kind = GAME_NAMES.get(text.strip().lower())
    if kind is None:
        raise ValueError(f"unknown game {text!r} (known: {', '.join(GAME_NAMES)})")
    return kind


def engine_for(game: GameKind) -> EngineConfigApi:
    """The engine module that plays ``game`` (imported on first use: it loads numba)."""
    module_name = _ENGINE_MODULES.get(game)
    if module_name is None:
        raise ValueError(f"no engine for game kind {game}")
    return cast(EngineConfigApi, importlib.import_module(module_name))
