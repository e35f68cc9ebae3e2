"""A GTP Othello engine as a worker plays it.

Handshake: ``name``, ``version``, ``boardsize 8`` (``?`` here: the engine does not play
8x8, a refusal) and ``clear_board``, each answered in turn; lines before the first answer
are skipped (a banner). GTP cannot set up a position, so the engine's board is a replay of
the game from the standard start: when the game goes on from what the engine last saw
(its own move included), a move sends only the ``play`` commands of the moves since;
otherwise ``clear_board`` and every move of the game, passes included. Then ``genmove``.
All of it goes in one write; every command's response is read, in turn, within the
move's deadline, before any is judged. Commands carry no ids (Edax 4.6 answers some
failures with a wrong one, and once it has seen an id it repeats it in every later
response); responses come in the order of the commands.

A position not reached from the standard start by the game's moves (a custom start,
International Reversi, a partial history) cannot be asked: ``ValueError`` before the engine
is disturbed, which the worker answers as an invalid job. A forced pass is answered without
asking the engine.

GTP has no depth or level command: an engine's strength is its command line, and the
worker's deadline is the outer guard. With the option ``clock = true`` the engine is also
told each move's limit as a byo-yomi of one move (``time_settings 0 <s> 1`` when it
changes, ``time_left <color> <s> 1`` before each ``genmove``), in whole seconds rounded
down, so it is never told more than it has (a limit under a second is told as 0). Edax
told its time leaves its level for a timed search.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from arena.services.worker.engines.catalog import EngineSpec
from arena.services.worker.engines.client import EngineAnswer, PlayLimits, ProtocolClient
from arena.services.worker.engines.failures import FailureReason
from arena.services.worker.engines.process import EngineProcess

from arena.games import PASS, Color, OthelloBoard
from arena.protocols import gtp
from arena.protocols.errors import ProtocolError
from arena.protocols.report import SearchReport


@dataclass(frozen=True)
class GtpRequest:
    board: OthelloBoard
    moves: list[int]  # the game from the standard start
    catch_up: list[gtp.Command]  # what puts the game on the engine's board


class GtpClient(ProtocolClient[GtpRequest]):
    goodbye = "quit"

    def __init__(self, spec: EngineSpec, process: EngineProcess) -> None:
        super().__init__(spec, process)
        self.name = spec.name  # what the engine calls itself, once it says
        self.version = ""
        # The moves on the engine's board since clear_board, and the position they lead
        # to; None when unknown (after a failure): the next move starts from clear_board.
        self._engine_game: tuple[list[int], OthelloBoard] | None = None
        self._byo_yomi_s: int | None = None  # the byo-yomi last set with time_settings

    def _handshake(self, deadline: float) -> None:
        commands: list[gtp.Command] = [gtp.Name(), gtp.Version(), gtp.BoardSize(gtp.BOARD_SIZE),
                                       gtp.ClearBoard()]
        self.send([gtp.format_command(c) for c in commands], deadline)
        answers = [self._response(deadline, c, banner_allowed=index == 0)
                   for index, c in enumerate(commands)]
        if answers[0].ok:
            self.name = answers[0].text
        if answers[1].ok:
            self.version = answers[1].text
        for command, answer in zip(commands[2:], answers[2:], strict=True):
            if not answer.ok:
                raise self.failure(FailureReason.REFUSED, f"answered "
                                   f"{gtp.format_command(command)!r} with ? {answer.text}")
        self._engine_game = ([], OthelloBoard())

    def _prepare(self, position_text: str, history: Sequence[int]) -> GtpRequest:
        """The game replayed onto what the engine holds, checked to reach the position
        (a replay from the start costs ~3 ms for 60 moves: a game that goes on replays
        only its new moves)."""
        board = gtp.standard_position(position_text)
        if board.is_game_over():
            raise ValueError(f"no move to play: the game is over in {position_text!r}")
        moves = list(history)
        known = self._engine_game
        if known is not None and moves[:len(known[0])] == known[0]:
            reached = known[1].copy()
            catch_up = gtp.continue_game(reached, moves[len(known[0]):])
        else:
            reached = OthelloBoard()
            catch_up = [gtp.ClearBoard(), *gtp.continue_game(reached, moves)]
        gtp.check_reached(reached, board, len(moves))
        return GtpRequest(board, moves, catch_up)

    def _answer_without_engine(self, request: GtpRequest) -> EngineAnswer | None:
        if request.board.legal_moves() == [PASS]:  # nothing to think about
            return EngineAnswer(PASS, SearchReport(), 0.0)
        return None

    def _play(self, request: GtpRequest, limits: PlayLimits) -> EngineAnswer:
        turn = request.board.turn
        commands = [*request.catch_up, *self._clock(turn, limits), gtp.GenMove(turn)]
        self._engine_game = None  # unknown until the engine has answered it all
        deadline, sent = self.deadline(limits), time.monotonic()  # elapsed from the request
        self.send([gtp.format_command(c) for c in commands], deadline)
        # Every response is read before any is judged: the next move must find none late.
        answers = [self._response(deadline, command) for command in commands]
        for command, answer in zip(commands[:-1], answers, strict=False):
            if not answer.ok:  # it refuses a move the rules allow, or a setting
                raise self.failure(FailureReason.REFUSED, f"answered "
                                   f"{gtp.format_command(command)!r} with ? {answer.text}")
        move = self._move(request.board, answers[-1])
        after = request.board.copy()
        after.push(move)
        self._engine_game = ([*request.moves, move], after)
        return EngineAnswer(move, SearchReport(), (time.monotonic() - sent) * 1000)

    def _clock(self, turn: Color, limits: PlayLimits) -> list[gtp.Command]:
        """The time commands for this move, when the engine is to be told its time."""
        if self.spec.option("clock") is not True:
            return []
        seconds = limits.move_time_ms // 1000
        settings: list[gtp.Command] = []
        if seconds != self._byo_yomi_s:
            settings.append(gtp.TimeSettings(0, seconds, 1))
            self._byo_yomi_s = seconds
        return [*settings, gtp.TimeLeft(turn, seconds, 1)]

    def _move(self, board: OthelloBoard, answer: gtp.Response) -> int:
        """The move ``genmove`` answered, checked."""
        if not answer.ok:
            raise self.failure(FailureReason.REFUSED, f"answered genmove with ? {answer.text}")
        try:
            move = gtp.parse_move_response(answer)
        except ProtocolError as exc:
            raise self.failure(FailureReason.GARBAGE, f"answered genmove with "
                               f"{answer.text[:200]!r}: {exc}") from None
        if move == gtp.RESIGN:
            raise self.failure(FailureReason.ILLEGAL_MOVE,
                               "resigned: an Othello game in Arena is played to its end")
        if not board.is_legal(move):
            failure = self.failure(FailureReason.ILLEGAL_MOVE,
                                   f"played {gtp.vertex_text(move)}, illegal in "
                                   f"{board.to_text()!r}")
            failure.move = move
            raise failure
        return move

    def _response(self, deadline: float, command: gtp.Command,
                  banner_allowed: bool = False) -> gtp.Response:
        """The response to ``command``: read up to its closing empty line."""
        reader = gtp.ResponseReader()
        waiting_for = f"answer to {gtp.format_command(command)}"
        while True:
            line = self.read(deadline, waiting_for)
            try:
                response = reader.feed(line)
            except ProtocolError as exc:
                if banner_allowed:
                    continue
                raise self.failure(FailureReason.GARBAGE,
                                   f"printed {line.strip()[:200]!r}: {exc}") from None
            if response is not None:
                return response
