"""An Arena Othello bot as a GTP engine: reads commands on stdin, answers on stdout
(``arena-gtp --preset arena-fast``, or ``arena engine gtp``).

The engine keeps the game from the standard start: ``clear_board`` resets it, ``play``
adds a move, ``undo`` takes the last one back, ``genmove`` searches with the bot's engine,
plays the move on its board and answers it. A ``play`` or ``genmove`` for the color that is
not to move is taken as a pass of the side to move when that side has no move (as Edax
does), and refused otherwise. The search is capped by the bot's own ``depth``/``time_ms``
(command line) and by the clock the manager gave: ``time_left`` with byo-yomi stones gives
each move its share of the period, without stones 8 % of the main time left (0 seconds:
the quickest search); ``time_settings`` clears it.

Only an 8x8 board is accepted (``boardsize``); ``komi`` is ignored.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TextIO

from arena.engine.api import Limits, clock_share_ms
from arena.games import PASS, Color, GameError, OthelloBoard
from arena.protocols import gtp
from arena.protocols.bot import LineWriter, ServedBot, complain
from arena.protocols.errors import ProtocolError
from arena.protocols.gomocup_brain import turn_budget_ms

VERSION = "1"


class GtpEngine:
    """The protocol state of one engine process; ``handle`` returns False on ``quit``."""

    def __init__(self, bot: ServedBot, say: LineWriter) -> None:
        self.bot = bot
        self.say = say
        self.board = OthelloBoard()
        self.clock_ms: dict[Color, int] = {}  # per color: what the last time_left allows

    def handle(self, line: str) -> bool:
        command_id, words = gtp.split_id(line)
        if not words:
            return True
        try:
            _, command = gtp.parse_command(line)
            text = self._answer(command)
        except gtp.UnknownCommand:
            self._respond(gtp.Response(False, "unknown command", command_id))
            return True
        except (ProtocolError, GameError, ValueError) as exc:
            complain(f"refused {line.strip()[:200]!r}: {exc}")
            self._respond(gtp.Response(False, str(exc).split("\n")[0], command_id))
            return True
        self._respond(gtp.Response(True, text, command_id))
        return not isinstance(command, gtp.Quit)

    def _respond(self, response: gtp.Response) -> None:
        self.say(gtp.format_response(response)[:-1])  # the writer ends the last line

    def _answer(self, command: gtp.Command) -> str:
        match command:
            case gtp.ProtocolVersion():
                return "2"
            case gtp.Name():
                return f"Arena {self.bot.name}"
            case gtp.Version():
                return VERSION
            case gtp.KnownCommand(name):
                return "true" if name in gtp.COMMAND_NAMES else "false"
            case gtp.ListCommands():
                return "\n".join(gtp.COMMAND_NAMES)
            case gtp.BoardSize(size) if size != gtp.BOARD_SIZE:
                raise ProtocolError("unacceptable size")
            case gtp.ClearBoard():
                self.board = OthelloBoard()
            case gtp.Play(color, move):
                self._turn_of(color)
                self.board.push(move)
            case gtp.GenMove(color):
                return gtp.vertex_text(self._genmove(color))
            case gtp.Undo():
                self._undo()
            case gtp.TimeSettings():
                self.clock_ms = {}
            case gtp.TimeLeft(color, seconds, stones):  # stones 0: the main time
                self.clock_ms[color] = (seconds * 1000 // stones if stones
                                        else clock_share_ms(seconds * 1000))
        return ""  # boardsize 8, komi and quit need nothing more

    def _turn_of(self, color: Color) -> None:
        """Make ``color`` the side to move: the other side passes if it has no move."""
        if color is self.board.turn:
            return
        if self.board.legal_moves() != [PASS]:
            raise ProtocolError(f"wrong color: {self.board.turn.name.lower()} is to move")
        self.board.push(PASS)

    def _genmove(self, color: Color) -> int:
        self._turn_of(color)
        if self.board.is_game_over():
            raise ProtocolError("the game is over")
        if self.board.legal_moves() == [PASS]:
            move = PASS
        else:
            move = self.bot.choose_move(self.board.to_text(), [], self._limits(color)).move
        self.board.push(move)
        return move

    def _limits(self, color: Color) -> Limits:
        budgets = [b for b in (self.bot.time_ms, self.clock_ms.get(color)) if b is not None]
        time_ms = min(budgets) if budgets else None
        return Limits(depth=self.bot.depth,
                      time_ms=None if time_ms is None else turn_budget_ms(time_ms))

    def _undo(self) -> None:
        if not self.board.move_stack:
            raise ProtocolError("cannot undo")
        self.board.pop()


def serve(bot: ServedBot, lines: Iterable[str] = sys.stdin, out: TextIO = sys.stdout) -> int:
    """Answer commands until ``quit`` or the end of input."""
    engine = GtpEngine(bot, LineWriter(out))
    for line in lines:
        if not engine.handle(line):
            break
    return 0
