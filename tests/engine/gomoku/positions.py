"""Hand-built Gomoku positions for the engine tests, as move lists (Black first)."""

from __future__ import annotations

from pathlib import Path

SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "gomoku"


def xy(x: int, y: int, size: int = 15) -> int:
    return y * size + x


def interleave(black: list[int], white: list[int]) -> list[int]:
    """A move list placing these stones (Black first); the lists differ by at most one."""
    assert len(black) - len(white) in (0, 1), (len(black), len(white))
    moves: list[int] = []
    for i, stone in enumerate(black):
        moves.append(stone)
        if i < len(white):
            moves.append(white[i])
    return moves


def staircase_vcf(steps: int) -> list[int]:
    """Black to move wins by a chain of ``steps`` fours ending in a double four.

    The chain zigzags: right, down, left, down, ... Each segment runs from a corner
    to the corner four cells on, with Black stones 1 and 3 cells from its start. Black
    plays the corners in order (each is empty until then); once both corners of a
    segment are Black it is a broken four whose only five point is its middle. The last
    corner also completes a four down its column or along its row: a double
    four. ``steps`` 1..6.
    """
    black: list[int] = []
    caps: list[int] = []
    x, y = 1, 1
    heading = [(1, 0), (0, 1), (-1, 0), (0, 1)]
    corners = [xy(x, y)]
    for i in range(steps):
        dx, dy = heading[i % 4]
        caps.append(xy(x - dx, y - dy))  # so filling the middle early is no open four
        black += [xy(x + dx, y + dy), xy(x + 3 * dx, y + 3 * dy)]
        x, y = x + 4 * dx, y + 4 * dy
        corners.append(xy(x, y))
    dx, dy = (0, 1) if steps % 2 == 1 else (1, 0)
    black += [xy(x + k * dx, y + k * dy) for k in (1, 2, 3)]
    black.append(corners[0])  # the first corner starts Black
    filler = [xy(fx, fy) for fx in (10, 13) for fy in range(0, 15, 3)]
    filler += [xy(fx, 14) for fx in range(0, 9, 3)] + [xy(7, fy) for fy in range(0, 15, 3)]
    white = caps + [f for f in filler if f not in black][: len(black) - len(caps)]
    assert len(white) == len(black) and not set(white) & set(black)
    return interleave(black, white)
