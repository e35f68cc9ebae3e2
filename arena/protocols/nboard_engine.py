"""An Arena Othello bot as an NBoard engine: reads commands on stdin, answers on stdout
(``arena-nboard --preset arena-fast``, or ``arena engine nboard``).

``set game`` and ``move`` set the position; ``go`` searches it with
the bot's engine and answers ``=== move/eval/time`` after a ``search`` and a
``nodestats`` line; ``hint`` sends the ``search`` line and an empty ``status``. ``set
depth N`` caps the search at N plies (as the bot's own ``depth`` does); NBoard has no
clock, so time comes from the bot's config and its ``time_ms``. Evals are the engine's
scores: disc differences for solved positions, evaluator units otherwise.

Lines the engine cannot use are ignored, as the protocol asks, with a note on stderr.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TextIO

from arena.engine.api import MAX_DEPTH, Limits, SearchResult
from arena.games import PASS, GameError, OthelloBoard
from arena.protocols import nboard
from arena.protocols.bot import LineWriter, ServedBot, complain
from arena.protocols.errors import ProtocolError


class NboardEngine:
    """The protocol state of one engine process; ``handle`` returns False on ``quit``."""

    def __init__(self, bot: ServedBot, say: LineWriter) -> None:
        self.bot = bot
        self.say = say
        self.board = OthelloBoard()
        self.depth: int | None = None

    def handle(self, command: nboard.Command) -> bool:
        match command:
            case nboard.Quit():
                return False
            case nboard.SetDepth(depth):
                self.depth = max(1, min(MAX_DEPTH, depth))
                self.say(nboard.format_reply(nboard.MyName(self.bot.name)))
            case nboard.SetGame(ggf):
                self.board = nboard.board_of_game(ggf)
            case nboard.PlayedMove(move):
                self.board.push(move)
            case nboard.Ping(number):
                self.say(nboard.format_reply(nboard.Pong(number)))
            case nboard.Learn():
                self.say(nboard.format_reply(nboard.Learned()))
            case nboard.Go():
                self._go()
            case nboard.Hint():
                self.say(*self._search_lines(self._search()), "status")
        return True  # nboard N and set contempt need nothing

    def _search(self) -> SearchResult:
        if self.board.is_game_over():
            raise ProtocolError("the game is over: no move to search")
        depths = [d for d in (self.depth, self.bot.depth) if d is not None]
        limits = Limits(depth=min(depths) if depths else None, time_ms=self.bot.time_ms)
        return self.bot.choose_move(self.board.to_text(), [], limits)

    @staticmethod
    def _search_lines(result: SearchResult) -> list[str]:
        if result.move == PASS:
            return []
        pv = tuple(result.pv) or (result.move,)
        return [nboard.format_reply(nboard.SearchLine(pv, float(result.score), result.depth)),
                nboard.format_reply(nboard.NodeStats(result.nodes, result.elapsed_ms / 1000))]

    def _go(self) -> None:
        result = self._search()
        best = nboard.BestMove(result.move, float(result.score), result.elapsed_ms / 1000)
        self.say(*self._search_lines(result), nboard.format_reply(best))


def serve(bot: ServedBot, lines: Iterable[str] = sys.stdin, out: TextIO = sys.stdout) -> int:
    """Answer commands until ``quit`` or the end of input."""
    engine = NboardEngine(bot, LineWriter(out))
    for line in lines:
        if not line.strip():
            continue
        try:
            if not engine.handle(nboard.parse_command(line)):
                break
        except (ProtocolError, GameError, ValueError) as exc:
            complain(f"ignored {line.strip()[:200]!r}: {exc}")
    return 0
