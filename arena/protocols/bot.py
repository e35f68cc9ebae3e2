"""The Arena bot a protocol server plays: a built-in engine config plus fixed limits."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TextIO

from arena.engine.adapters import PreparedBot
from arena.engine.api import Limits, SearchResult
from arena.errors import InvalidArgumentError
from arena.games import game as game_named


@dataclass(frozen=True)
class ServedBot:
    """``depth`` caps every search (what ``set depth`` also does for NBoard);
    ``time_ms`` caps each move on top of what the manager allows."""

    name: str
    game: str
    prepared: PreparedBot
    depth: int | None = None
    time_ms: int | None = None
    seed: int = 0

    @property
    def config(self) -> dict[str, object]:
        return dict(self.prepared.config)

    def choose_move(self, position_text: str, history: list[int],
                    limits: Limits) -> SearchResult:
        engine = game_named(self.game).engine()
        return engine.choose_move(self.prepared, position_text, history, limits,
                                  seed=self.seed)

    @classmethod
    def from_preset(cls, game: str, preset: str, **limits: int | None) -> ServedBot:
        presets = game_named(game).engine().presets
        if preset not in presets:
            raise InvalidArgumentError(
                f"unknown {game} preset {preset!r}; one of {', '.join(sorted(presets))}")
        return cls.from_config(game, preset, dict(presets[preset]), **limits)

    @classmethod
    def from_config(cls, game: str, name: str, config: dict[str, object],
                    depth: int | None = None, time_ms: int | None = None,
                    seed: int | None = 0) -> ServedBot:
        prepared = game_named(game).engine().prepare(config)  # InvalidArgumentError if bad
        try:
            Limits(depth=depth, time_ms=time_ms)  # the same ranges as every search's
        except ValueError as exc:
            raise InvalidArgumentError(str(exc)) from None
        return cls(name, game, prepared, depth, time_ms, seed or 0)


class LineWriter:
    """Writes whole lines and flushes them at once: a manager waits for complete lines,
    and an answer's lines sent together wake it once."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def __call__(self, *lines: str) -> None:
        self._stream.write("".join(line + "\n" for line in lines))
        self._stream.flush()


def complain(message: str) -> None:
    """A note for whoever reads the engine's stderr (managers keep its last lines)."""
    print(message, file=sys.stderr, flush=True)
