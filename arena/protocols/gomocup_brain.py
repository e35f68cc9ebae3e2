"""An Arena Gomoku bot as a Gomocup brain: reads manager commands on stdin, answers on
stdout (``pbrain-arena --preset arena-gomoku``, or ``arena engine gomocup``).

The brain keeps the game as a move list (Black first). ``BOARD`` replaces it, ``TURN``
adds the opponent's move, and every move the brain answers is assumed played. Each move
is searched by the bot's engine within the limits the manager gave:

- ``INFO timeout_turn`` (ms; 0 asks for a quick move) and ``INFO time_left`` cap the
  search, less a safety margin for the answer to get back;
- the bot's own ``depth``/``time_ms`` (command line) cap it further;
- with none of these, a move takes ``DEFAULT_TIME_MS`` (``Limits.bounded``).

Boards of 9, 15 and 19 points and the rules freestyle (``INFO rule 0``) and exact five
(``INFO rule 1``) are supported; anything else gets ``ERROR``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TextIO

from arena.engine.api import MAX_TIME_MS, Limits, SearchResult, clock_share_ms
from arena.games import GOMOKU, GameError, GomokuBoard
from arena.protocols import gomocup
from arena.protocols.bot import LineWriter, ServedBot
from arena.protocols.errors import ProtocolError
from arena.protocols.report import SearchReport

# Kept back from each move's time so that the answer reaches the manager in time.
SAFETY_MARGIN_MS = 30
SAFETY_FRACTION = 0.05
QUICK_MOVE_MS = 50  # timeout_turn 0: "play as fast as possible"


class GomocupBrain:
    """The protocol state of one brain process; ``handle`` returns False on ``END``."""

    def __init__(self, bot: ServedBot, say: LineWriter) -> None:
        self.bot = bot
        self.say = say
        self.size: int | None = None
        self.rule = "freestyle"
        self.moves: list[int] = []
        self.info: dict[str, str] = {}

    def handle(self, command: gomocup.Command) -> bool:
        match command:
            case gomocup.End():
                return False
            case gomocup.Start(size):
                self._start(size)
            case gomocup.RectStart(width, height):
                self._start(width if width == height else -1)
            case gomocup.Info(key, value):
                self._info(key, value)
            case gomocup.About():
                self.say(gomocup.format_reply(gomocup.AboutReply(
                    (("name", self.bot.name), ("version", "1"), ("author", "Arena")))))
            case gomocup.Restart():
                self.moves = []
                self.say("OK")
            case _:
                self._game_command(command)
        return True

    def _start(self, size: int) -> None:
        if size not in GOMOKU.sizes:
            self.say(f"ERROR unsupported board: Arena plays sizes {list(GOMOKU.sizes)}")
            return
        self.size, self.moves = size, []
        self.say("OK")

    def _info(self, key: str, value: str) -> None:
        self.info[key] = value
        if key == "rule":
            try:
                self.rule = gomocup.rule_name(int(value))
            except (ValueError, ProtocolError) as exc:
                self.say(f"ERROR {exc}")

    def _game_command(self, command: gomocup.Command) -> None:
        if self.size is None:
            self.say("ERROR no START yet")
            return
        try:
            if isinstance(command, gomocup.Takeback):
                self._take_back(gomocup.point(command.x, command.y, self.size))
                self.say("OK")
                return
            moves = self.moves
            if isinstance(command, gomocup.Board):
                moves = gomocup.moves_from_board(command, self.size)
            elif isinstance(command, gomocup.Turn):
                moves = [*self.moves, gomocup.point(command.x, command.y, self.size)]
            elif isinstance(command, gomocup.Begin) and self.moves:
                raise ProtocolError("BEGIN on a board that has stones")
            self._play(moves)
        except (ProtocolError, GameError, ValueError) as exc:
            self.say(f"ERROR {exc}")

    def _take_back(self, move: int) -> None:
        if move not in self.moves:
            raise ProtocolError(f"TAKEBACK of an empty point {move}")
        self.moves.remove(move)

    def _play(self, moves: list[int]) -> None:
        """Answer a move after ``moves``; the game changes only if they are a game."""
        assert self.size is not None
        board = GomokuBoard(self.size, self.rule)
        for move in moves:
            board.push(move)  # refuses occupied points and moves after a win
        if board.is_game_over():
            raise ProtocolError("the game is over")
        result = self.bot.choose_move(board.to_text(), moves, self._limits())
        self.moves = [*moves, result.move]
        y, x = divmod(result.move, self.size)
        self.say("MESSAGE " + gomocup.format_search_message(_report(result), self.size),
                 f"{x},{y}")

    def _limits(self) -> Limits:
        budgets = [self.bot.time_ms] if self.bot.time_ms else []
        turn = _int(self.info.get("timeout_turn"))
        if turn is not None:
            budgets.append(QUICK_MOVE_MS if turn == 0 else turn_budget_ms(turn))
        left = _int(self.info.get("time_left"))
        if left is not None and left > 0 and _int(self.info.get("timeout_match")) != 0:
            budgets.append(turn_budget_ms(clock_share_ms(left)))
        return Limits(depth=self.bot.depth, time_ms=min(budgets) if budgets else None).bounded()


def turn_budget_ms(ms: int) -> int:
    """The search time a brain takes from ``ms`` it may use: the rest carries the answer.
    A manager's clock of more than ``MAX_TIME_MS`` gives that much."""
    return max(1, min(MAX_TIME_MS, ms - max(SAFETY_MARGIN_MS, int(ms * SAFETY_FRACTION))))


def _int(text: str | None) -> int | None:
    try:
        return None if text is None else int(text)
    except ValueError:
        return None


def _report(result: SearchResult) -> SearchReport:
    return SearchReport(depth=result.depth, score=float(result.score), nodes=result.nodes,
                        time_ms=result.elapsed_ms, pv=tuple(result.pv), exact=result.exact)


def serve(bot: ServedBot, lines: Iterable[str] = sys.stdin, out: TextIO = sys.stdout) -> int:
    """Answer commands until ``END`` or the end of input."""
    brain = GomocupBrain(bot, LineWriter(out))
    parser = gomocup.CommandParser()
    for line in lines:
        if not line.strip():
            continue
        try:
            command = parser.feed(line)
        except gomocup.BadArguments as exc:
            brain.say(f"ERROR {exc}")
            continue
        except ProtocolError as exc:
            brain.say(f"UNKNOWN {exc}")
            continue
        if command is not None and not brain.handle(command):
            break
    return 0
