"""What an engine said about its search, gathered from the lines it printed while thinking.

Neither protocol has one standard form for it: NBoard engines send ``search`` lines, Gomocup
engines free-text ``MESSAGE`` lines. Each codec turns what it can read into a
``SearchReport``; fields an engine never gave stay ``None`` (or empty).
"""

from __future__ import annotations

from dataclasses import dataclass, field


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
