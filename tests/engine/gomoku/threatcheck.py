"""An independent, slow check of threat lines: plain Python over a dict of stones.

Nothing here uses the engine's tables: a five is a run through the stone of exactly five
(exact-five) or five or more (freestyle), read cell by cell. A line claimed by a threat
search is checked move by move: each attacking move must threaten (leave a five point,
or, in a VCT, an open-four point: a cell giving two five points), each answer must be
legal and must block a five point when there is one (an attacking move too, when the
defender has one), and the line must end with the attacker's five.
"""

from __future__ import annotations

DIRECTIONS = ((1, 0), (0, 1), (1, 1), (1, -1))


class Stones:
    """Stones by cell on a ``size`` x ``size`` board; 1 Black, 2 White."""

    def __init__(self, size: int, rule: str, moves: list[int]) -> None:
        self.size, self.rule = size, rule
        self.at: dict[int, int] = {m: 1 + i % 2 for i, m in enumerate(moves)}

    def run(self, cell: int, colour: int, dx: int, dy: int) -> int:
        """The run of ``colour`` through ``cell`` along (dx, dy), the cell counted."""
        size, length = self.size, 1
        for sign in (1, -1):
            x, y = cell % size + sign * dx, cell // size + sign * dy
            while 0 <= x < size and 0 <= y < size and self.at.get(y * size + x) == colour:
                length += 1
                x, y = x + sign * dx, y + sign * dy
        return length

    def makes_five(self, cell: int, colour: int) -> bool:
        if cell in self.at:
            return False
        runs = [self.run(cell, colour, dx, dy) for dx, dy in DIRECTIONS]
        return any(r == 5 or (r > 5 and self.rule == "freestyle") for r in runs)

    def near(self, cell: int, reach: int) -> bool:
        x, y = cell % self.size, cell // self.size
        return any(max(abs(x - s % self.size), abs(y - s // self.size)) <= reach
                   for s in self.at)

    def five_points(self, colour: int) -> set[int]:
        return {c for c in range(self.size**2) if self.near(c, 1) and self.makes_five(c, colour)}

    def open_four_points(self, colour: int) -> set[int]:
        """Cells where ``colour`` would have two five points afterwards (a new five point
        lies on a line through the stone placed, within four cells)."""
        before = self.five_points(colour)
        found = set()
        for cell in range(self.size**2):
            if cell in self.at or not self.near(cell, 2):
                continue
            self.at[cell] = colour
            fives = before - {cell}
            for dx, dy in DIRECTIONS:
                for k in (-4, -3, -2, -1, 1, 2, 3, 4):
                    x, y = cell % self.size + k * dx, cell // self.size + k * dy
                    if 0 <= x < self.size and 0 <= y < self.size and self.makes_five(
                            y * self.size + x, colour):
                        fives.add(y * self.size + x)
            del self.at[cell]
            if len(fives) >= 2:
                found.add(cell)
        return found


def check_threat_line(
    size: int, rule: str, moves: list[int], line: list[int], threes: bool
) -> None:
    """Raise AssertionError unless ``line`` is a forced-looking win by threats."""
    stones = Stones(size, rule, moves)
    attacker = 1 + len(moves) % 2
    defender = 3 - attacker
    assert len(line) % 2 == 1, line
    for i, move in enumerate(line):
        assert move not in stones.at and 0 <= move < size * size, (i, line)
        mover = attacker if i % 2 == 0 else defender
        if i == len(line) - 1:
            assert stones.makes_five(move, attacker), (i, line)
            return
        if mover == defender:
            fives = stones.five_points(attacker)
            assert not stones.five_points(defender), (i, line)  # no five to make instead
            if fives:
                assert move in fives, (i, line)
        else:
            # Before the attacker's threat, the defender has no five point left open.
            blocks = stones.five_points(defender)
            assert not blocks or move in blocks, (i, line)
        stones.at[move] = mover
        if mover == attacker:
            threatened = bool(stones.five_points(attacker))
            if threes and not threatened:
                threatened = bool(stones.open_four_points(attacker))
            assert threatened, (i, line)
