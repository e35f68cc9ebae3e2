"""What an engine said about its search, gathered from the lines it printed while thinking.

Neither protocol has one standard form for it: NBoard engines send ``search`` lines, Gomocup
engines free-text ``MESSAGE`` lines. Each codec turns what it can read into a
``SearchReport``; fields an engine never gave stay ``None`` (or empty), and so do figures
no search has (``1e999``, a node count past int64): an engine's boast must not cost it the
move it played, nor reach the API's integer fields.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

MAX_DEPTH = 10_000
MAX_SCORE = 1e15  # beyond any engine's units, well inside int64 once rounded
MAX_NODES = 2**62
MAX_TIME_MS = 1e12


def whole(value: float, high: float) -> int | None:
    """``value`` as an integer if it is a finite number in ``0..high``, else None."""
    return int(value) if math.isfinite(value) and 0 <= value <= high else None


def _finite(value: float | None, bound: float) -> float | None:
    return value if value is not None and math.isfinite(value) and abs(value) <= bound \
        else None


@dataclass(frozen=True)
class SearchReport:
    """``score`` is from the mover's side in the engine's units (NBoard: discs); ``pv``
    holds Arena square indices starting with the move searched."""

    depth: int | None = None
    score: float | None = None
    nodes: int | None = None
    time_ms: float | None = None
    pv: tuple[int, ...] = field(default=())
    exact: bool = False  # the engine said the score is a proven result (a solve, a mate)

    def __post_init__(self) -> None:
        """Drop the figures no search has (see the module docstring)."""
        if self.depth is not None and not 0 <= self.depth <= MAX_DEPTH:
            object.__setattr__(self, "depth", None)
        object.__setattr__(self, "score", _finite(self.score, MAX_SCORE))
        if self.nodes is not None and not 0 <= self.nodes <= MAX_NODES:
            object.__setattr__(self, "nodes", None)
        time_ms = _finite(self.time_ms, MAX_TIME_MS)
        object.__setattr__(self, "time_ms", time_ms if time_ms is None or time_ms >= 0
                           else None)
        if self.score is None:
            object.__setattr__(self, "exact", False)

    def updated(self, newer: SearchReport) -> SearchReport:
        """This report with every field the ``newer`` one gives replaced by it."""
        return SearchReport(
            depth=self.depth if newer.depth is None else newer.depth,
            score=self.score if newer.score is None else newer.score,
            nodes=self.nodes if newer.nodes is None else newer.nodes,
            time_ms=self.time_ms if newer.time_ms is None else newer.time_ms,
            pv=newer.pv or self.pv,
            exact=newer.exact if newer.score is not None else self.exact,
        )

    def is_empty(self) -> bool:
        return self == SearchReport()
