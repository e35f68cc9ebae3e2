"""The engine boundary shared by every game's search.

Workers, the CLI and the benchmarks talk to the Othello and Gomoku engines only
through these types. Numba kernels stay behind this boundary: they take and return
plain integers and arrays; the dataclasses here live on the Python side.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

NodeKind = Literal["max", "min", "leaf"]
# What a time limit measures: wall time, or the CPU time of the thread that searches (so
# that other processes on a busy machine cannot make a search shallower or late).
Clock = Literal["wall", "cpu"]


# The largest limits a search takes: beyond them the kernels' integers (an 8-bit depth in
# a table entry, a deadline in nanoseconds) would overflow.
MAX_DEPTH = 127
MAX_NODES = 2**62
MAX_TIME_MS = 30 * 86_400_000  # thirty days
# A search's time when its caller sets no limit at all (a Gomocup manager that sends no
# time, `arena engine analyze` without limits): a bot's own depth may be out of reach
# (Arena's Gomoku bot would search for hours).
DEFAULT_TIME_MS = 5_000
# With a game clock, the share of what is left of it that one move may take: about twelve
# moves' worth, so the clock shrinks geometrically and is never spent (with an increment it
# settles where a move takes about the increment). Arena's bots keep to it wherever they
# are told a game clock: in matches (the worker) and as Gomocup and GTP engines.
GAME_TIME_SHARE = 0.08


def clock_share_ms(time_left_ms: int) -> int:
    """A move's time from a game clock with ``time_left_ms`` left (at least 1 ms)."""
    return max(1, int(time_left_ms * GAME_TIME_SHARE))


@dataclass(frozen=True)
class Limits:
    """When a search must stop. ``None`` means unlimited; at least one should be set.
    A given limit is a whole number from 1 up to ``MAX_DEPTH``, ``MAX_NODES`` or
    ``MAX_TIME_MS`` (``ValueError`` otherwise).

    ``depth`` counts plies searched from the root (depth 1 looks at each move and
    evaluates the position after it).
    """

    depth: int | None = None
    nodes: int | None = None
    time_ms: int | None = None
    clock: Clock = "wall"

    def __post_init__(self) -> None:
        for name, most in (("depth", MAX_DEPTH), ("nodes", MAX_NODES), ("time_ms", MAX_TIME_MS)):
            value = getattr(self, name)
            if value is not None and not 1 <= value <= most:
                raise ValueError(f"{name} must be in 1..{most}, got {value}")

    def bounded(self) -> Limits:
        """These limits, or ``DEFAULT_TIME_MS`` of time when none is set."""
        if self.depth is None and self.nodes is None and self.time_ms is None:
            return replace(self, time_ms=DEFAULT_TIME_MS)
        return self


class StopFlag:
    """A stop request that another thread or a deadline can raise.

    The flag is a one-element int64 array so numba kernels can poll it cheaply;
    ``deadline_ns`` (``time.monotonic_ns`` based) is checked by the kernels too.
    """

    def __init__(self) -> None:
        import numpy as np  # here: the `arena` command reads this module and needs no numpy

        self.array: npt.NDArray[np.int64] = np.zeros(1, dtype=np.int64)
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], object]] = []

    def set(self) -> None:
        self.array[0] = 1
        self._event.set()
        with self._lock:
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def add_callback(self, callback: Callable[[], object]) -> None:
        """Call ``callback`` once the flag is set (at once if it is already): what waits
        on something other than a kernel's poll (a call to an external bot) stops too."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return
        callback()

    def is_set(self) -> bool:
        return bool(self.array[0])

    def wait(self, timeout: float | None = None) -> bool:
        return self._event.wait(timeout)


@dataclass(frozen=True)
class TreeNode:
    """One node of a captured search tree (KReversi's minimax viewer, served by the API).

    ``kind`` is from the root player's point of view: ``max`` where the root player
    moves, ``min`` where the opponent moves, ``leaf`` where the search evaluated
    statically. ``parent`` is -1 for the root; ``move`` is the move leading here
    (-1 for the root). ``depth`` is the plies the search had left to look below the
    node (the search's depth at the root), as in KReversi's viewer: one fewer than its
    parent's, as many for a move searched without using up depth (a forced block),
    fewer for a reduced one.
    """

    id: int
    parent: int
    move: int
    depth: int
    alpha: int
    beta: int
    score: int
    kind: NodeKind
    cutoff: bool
    pv: bool


@dataclass
class SearchResult:
    """What a search returns: the move to play and how it was found."""

    move: int
    score: int
    depth: int
    nodes: int
    elapsed_ms: float
    pv: list[int] = field(default_factory=list)
    tree: list[TreeNode] | None = None
    exact: bool = False  # True when the score is a proven game-theoretic value
    # The root moves tied for the best score when the bot draws its move among them with
    # the seed (KReversi's random tie rule); ``move`` is one of them. Empty otherwise.
    ties: list[int] = field(default_factory=list)
    # True when a limit (time, nodes, a stop request) ended the search before it reached
    # its depth or finished its solve: then the result depends on the machine, not only
    # on the request.
    cut_short: bool = False
    # CPU time the searching thread spent on this search (0 where not measured).
    cpu_ms: float = 0.0
    # Of it, what turning the captured tree into ``TreeNode``s took after the search
    # (``captured``): the arena's record for viewers, not the bot's thinking, so not
    # charged to its clock (50,000 nodes took about 400 ms, and forfeited 500 ms moves).
    capture_ms: float = 0.0
    # True when ``tree`` filled its node budget: the search went on past what it holds, so
    # a node's score may rest on children it lacks (``tree_budget_spent``).
    tree_truncated: bool = False

    @property
    def nps(self) -> int:
        seconds = self.elapsed_ms / 1000.0
        return int(self.nodes / seconds) if seconds > 0 else 0


def captured(read: Callable[[], list[TreeNode]]) -> tuple[list[TreeNode], float]:
    """The tree ``read`` builds from a search's kernel rows, and the CPU ms it took
    (``SearchResult.capture_ms``)."""
    started = time.thread_time_ns()
    tree = read()
    return tree, (time.thread_time_ns() - started) / 1e6


def tree_budget_spent(rows: int, budget: int, reserve: int) -> bool:
    """Whether a capture of ``rows`` kernel rows filled its ``budget``. The kernels keep
    the last ``reserve`` rows for the root's children alone, so once the others are taken
    every deeper node goes unrecorded: a full tree can hold fewer rows than its budget
    (49,992 of 50,000 looked complete)."""
    return budget > 0 and rows >= budget - reserve


def now_ns(clock: Clock = "wall") -> int:
    """The current reading of ``clock``: ``time.monotonic_ns`` or this thread's CPU time."""
    return time.monotonic_ns() if clock == "wall" else time.thread_time_ns()


def deadline_ns(limits: Limits, started_ns: int | None = None) -> int:
    """The instant, on ``limits.clock``, at which a time-limited search must stop (0: none)."""
    if limits.time_ms is None:
        return 0
    start = now_ns(limits.clock) if started_ns is None else started_ns
    return start + limits.time_ms * 1_000_000
