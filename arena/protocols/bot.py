"""The Arena bot a protocol server plays: a built-in engine config plus fixed limits."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TextIO

from arena.engine import dispatch
from arena.errors import InvalidArgumentError


@dataclass(frozen=True)
class ServedBot:
    """``depth`` caps every search (what ``set depth`` also does for NBoard);
    ``time_ms`` caps each move on top of what the manager allows."""

    name: str
    game: str
    config: dict[str, object]
    depth: int | None = None
    time_ms: int | None = None
    seed: int = 0

    @classmethod
    def from_preset(cls, game: str, preset: str, **limits: int | None) -> ServedBot:
        presets = dispatch.presets(game)
        if preset not in presets:
            raise InvalidArgumentError(
                f"unknown {game} preset {preset!r}; one of {', '.join(sorted(presets))}")
        return cls.from_config(game, preset, dict(presets[preset]), **limits)

    @classmethod
    def from_config(cls, game: str, name: str, config: dict[str, object],
                    depth: int | None = None, time_ms: int | None = None,
                    seed: int | None = 0) -> ServedBot:
        violations = dispatch.validate_config(game, config)
        if violations:
            raise InvalidArgumentError.for_fields(violations)
        for what, value in (("depth", depth), ("time_ms", time_ms)):
            if value is not None and value < 1:
                raise InvalidArgumentError(f"{what} must be at least 1, got {value}")
        return cls(name, game, config, depth, time_ms, seed or 0)


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
