"""The built-in engines in this process, by game name: what a test compares a service's
or a protocol engine's moves with."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from arena.engine.api import Limits, SearchResult
from arena.games import game


def presets(name: str) -> Mapping[str, Mapping[str, object]]:
    return game(name).engine().presets


def choose(name: str, position_text: str, history: Sequence[int], config: Mapping[str, object],
           limits: Limits, seed: int = 0) -> SearchResult:
    """The move the configured bot plays (its config prepared as a worker would)."""
    engine = game(name).engine()
    return engine.choose_move(engine.prepare(dict(config)), position_text, history, limits,
                              seed=seed)
