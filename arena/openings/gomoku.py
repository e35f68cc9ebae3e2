"""Balanced 15x15 freestyle Gomoku openings: the 12 of the shared reference data
(embedded), and Arena's own wider suite (``WIDE_FILE``, made by ``arena engine openings
gomoku``: ``arena.openings.balance``).

The 12 are positions the Rapfi 0.43 engine judged within +-50 of even; 15x15 freestyle is
a first-player win, so each one is played twice per pairing with colours swapped. Moves are
written in the board's notation (column letter, row number from 1), Black first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

from arena.games import GomokuBoard

SIZE = 15
BALANCED_FREESTYLE15 = (
    "f13d15f15d11b11d14f14",
    "i13j11i11i10k11n12n10k13j12",
    "l9m11m5g6i9l7e4j9",
    "l4m2n1",
    "h7i8l9",
    "g3f5h1d3e2g8",
    "a9a5e6f5b6",
    "m10k10n9l9",
    "j9k12m13m10k9j10o12n8",
    "g15d11f14d13e14g13c11a13d14",
    "m4m5j4k7j5m3o5j6",
    "h4e4e6g5h1d5",
)
WIDE_FILE = "gomoku-wide15.txt"  # beside this module
_POINT = re.compile(r"[a-o][0-9]{1,2}")


@dataclass(frozen=True)
class GomokuOpening:
    compact: str
    moves: tuple[int, ...]
    position: str

    @property
    def name(self) -> str:
        return self.compact


def parse_compact(compact: str, rule: str = "freestyle") -> GomokuOpening:
    """Parse ``f13d15...`` into moves, checking each is legal on a 15x15 board."""
    board = GomokuBoard(SIZE, rule)
    points = _POINT.findall(compact)
    if "".join(points) != compact:
        raise ValueError(f"bad compact Gomoku opening {compact!r}: expected letter+row pairs")
    moves = tuple(board.push_str(point) for point in points)
    return GomokuOpening(compact, moves, board.to_text())


def compact(board: GomokuBoard) -> str:
    """``board``'s moves as ``h8i9...`` (what ``parse_compact`` reads)."""
    return "".join(board.move_to_str(m) for m in board.move_stack)


def read_suite(text: str) -> list[str]:
    """The compact openings of a suite file's text (``#`` lines aside; each line's moves
    before an optional ``|``), in order."""
    return [line.split("|")[0].strip() for line in text.splitlines()
            if line.strip() and not line.startswith("#")]


def balanced_openings(rule: str = "freestyle") -> list[GomokuOpening]:
    return [parse_compact(compact, rule) for compact in BALANCED_FREESTYLE15]


def wide_openings(rule: str = "freestyle") -> list[GomokuOpening]:
    """The openings of ``WIDE_FILE``, in its order."""
    text = resources.files("arena.openings").joinpath(WIDE_FILE).read_text()
    return [parse_compact(compact, rule) for compact in read_suite(text)]
