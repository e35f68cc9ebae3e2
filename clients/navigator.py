"""Stepping through a finished game: first / previous / next / last / a given ply.

The same navigator serves replay files (``arena match replay game.json``), matches
fetched from the referee (``arena match replay MATCH_ID``) and the end of ``arena play``.
It is interactive on stdin (keys ``f p n l q`` or a ply number; Enter = next) and has a
non-interactive form for scripts (``--ply N``, ``--all``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TextIO

from arena.clients.common import TOO_LONG_LINE, typed_line

from arena.formats import Replay
from arena.games import Color, Position
from arena.text import printable, shown
from arena.textboard import board_summary, legal_marks, move_names, render_board

HELP = "keys: n next, p previous, f first, l last, <number> go to ply, q quit"


@dataclass
class Navigator:
    replay: Replay
    positions: list[Position]
    ply: int = 0

    @classmethod
    def of(cls, replay: Replay) -> Navigator:
        """Every position of the game, from the start (ply 0) to the end."""
        position = replay.start_position()
        positions = [position.copy()]
        for record in replay.moves:
            position.push(record.move)
            positions.append(position.copy())
        return cls(replay, positions)

    @property
    def last_ply(self) -> int:
        return len(self.positions) - 1

    def go(self, ply: int) -> None:
        """To ``ply`` as asked for by number (``ValueError`` past the game's ends)."""
        if not 0 <= ply <= self.last_ply:
            raise ValueError(f"ply {ply} is outside this game (0..{self.last_ply})")
        self.ply = ply

    def command(self, key: str) -> bool:
        """Apply one key; False means quit. ``ValueError`` (saying what to type) for a
        key it does not know."""
        key = key.strip().lower()
        moves = {"": self.ply + 1, "n": self.ply + 1, "p": self.ply - 1, "f": 0,
                 "l": self.last_ply}
        if key in ("q", "quit", "exit"):
            return False
        if key in moves:  # a step past either end stays there
            self.ply = max(0, min(moves[key], self.last_ply))
        elif key.isascii() and key.isdigit():  # '²' is a digit to isdigit, not to int
            if len(key) >= 10:  # no game is that long: not read as a number
                raise ValueError(f"ply {shown(key)} is outside this game (0..{self.last_ply})")
            self.go(int(key))  # past the end is refused, as `--ply` refuses it (was the end)
        else:
            raise ValueError(f"{shown(key)} is not a key here: {HELP} (plies 0 to "
                             f"{self.last_ply})")
        return True

    def header(self) -> str:
        replay = self.replay
        return (f"{replay.game} ({replay.variant}, {replay.size}x{replay.size}): "
                f"black {printable(replay.black)} vs white {printable(replay.white)}, "
                f"{len(replay.moves)} moves")

    def frame(self) -> str:
        """The board at the current ply with the move that led there and its search."""
        position = self.positions[self.ply]
        lines = [f"ply {self.ply}/{self.last_ply}: " + self._move_line()]
        last = self.replay.moves[self.ply - 1].move if self.ply else None
        lines.append(render_board(position, last_move=last, marks=legal_marks(position)))
        lines.append(board_summary(position))
        if self.ply == self.last_ply and self.replay.forfeit:
            lines.append(f"forfeit: {printable(self.replay.forfeit)}")
        return "\n".join(lines)

    def _move_line(self) -> str:
        if self.ply == 0:
            return "start position"
        before = self.positions[self.ply - 1]
        record = self.replay.moves[self.ply - 1]
        mover = "black" if before.turn is Color.BLACK else "white"
        name = before.move_to_str(record.move)
        text = f"{mover} {'passes' if name == 'pass' else name}"
        details = [f"{record.time_ms} ms"]
        if record.score is not None:
            details.append(f"score {record.score:+d}")
        if record.depth is not None:
            details.append(f"depth {record.depth}")
        if record.pv:
            details.append("pv " + " ".join(move_names(before, record.pv)))
        notes = "".join(f"\n  | {printable(note)}" for note in record.notes)
        return f"{text} ({', '.join(details)}){notes}"

    def frames(self) -> Iterator[str]:
        for ply in range(self.last_ply + 1):
            self.go(ply)
            yield self.frame()

    def interact(self, keys: TextIO | None = None, out: TextIO | None = None) -> None:
        keys, out = keys or sys.stdin, out or sys.stdout  # as they are now, not at import
        print(self.header(), file=out)
        print(HELP, file=out)
        print(self.frame(), file=out, flush=True)
        while True:
            line = typed_line(keys, out, "> ")
            if line is None:
                print(TOO_LONG_LINE, file=out)
                return
            try:
                if not line or not self.command(line):  # EOF or q
                    print(file=out)
                    return
            except ValueError as exc:
                print(exc, file=out, flush=True)
                continue
            print(self.frame(), file=out, flush=True)

