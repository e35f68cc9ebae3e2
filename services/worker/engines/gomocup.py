"""A Gomocup brain (``pbrain-*``) as a worker plays it.

Each move sends the whole position as ``BOARD`` in played order (``BEGIN`` on the empty
board), so one warm process can serve moves of many games in any order. When the board
size or rule changes (and before the first move, and before a new game's empty board
once it has played) the brain is set up: ``START``, then
``INFO`` for its memory (3/4 of the sandbox's cap), ``game_type 1`` (a brain opponent),
the rule and the engine's own options, then ``ABOUT`` to know it has digested them. Each
move then sends the ``INFO`` clock lines that changed: ``timeout_turn`` (the move's
limit), ``timeout_match``/``time_left`` (the side's clock, or 0 and 2147483647 without one).

The brain's ``MESSAGE`` lines are read for search information; ``ERROR``/``UNKNOWN``
where a move was due is a refusal; anything else that is not a move is garbage (but an
``ABOUT`` answer, which is never anything else's).

A brain may not take commands at once after its move: Rapfi 0.43 prints its move, then
clears its "thinking" flag, and until then drops the first word of every command it
reads (``INFO timeout_turn 1000`` becomes the unknown commands ``timeout_turn`` and
``1000``). The worker stops the brain's processes right after its move (so it cannot
think on the opponent's time), possibly between the two. So after a move, before anything
else is sent, the brain is asked ``ABOUT`` until it answers (``SYNC_RETRY_S`` apart, for at
most ``SYNC_S``): a dropped ``ABOUT`` loses nothing. An answer that comes twice is skipped.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from arena.services.worker.engines.catalog import EngineSpec
from arena.services.worker.engines.client import EngineAnswer, PlayLimits, ProtocolClient
from arena.services.worker.engines.failures import FailureReason
from arena.services.worker.engines.process import EngineProcess

from arena.games import GomokuBoard
from arena.games.gomoku import moves_from_empty
from arena.protocols import gomocup
from arena.protocols.errors import ProtocolError
from arena.protocols.report import SearchReport

NO_CLOCK_MS = 2_147_483_647  # time_left when the game has no clock
# Brains size their hash to max_memory and run a little over it (Rapfi 0.43: ~12 MiB), so
# they are told 3/4 of the sandbox's cap: the cap is the kill line, not the target.
TOLD_MEMORY_FRACTION = 0.75
# After a move, ABOUT is asked again this often until the brain answers, for at most
# SYNC_S (outside any move's time); then the brain has failed.
SYNC_RETRY_S = 0.25
SYNC_S = 3.0


@dataclass(frozen=True)
class GomocupRequest:
    board: GomokuBoard
    moves: list[int]


class GomocupClient(ProtocolClient[GomocupRequest]):
    goodbye = "END"

    def __init__(self, spec: EngineSpec, process: EngineProcess) -> None:
        super().__init__(spec, process)
        self._game: tuple[int, str] | None = None  # the (size, rule) it was set up for
        self._clock_sent: dict[str, str] = {}
        self._moved = False  # it has played a move since it last answered ABOUT
        self._dirty = False  # it has played a move since its START
        # What it said in its last set-up (an INFO it refused, say), for its next move's
        # notes: nobody else would see it.
        self._said: list[str] = []

    def _handshake(self, deadline: float) -> None:
        """A brain says nothing until ``START``, which comes with its first move (under
        the startup deadline). Here: only that the process is running."""
        if not self.process.alive:
            raise self.failure(FailureReason.CRASH, "exited at once")

    def _prepare(self, position_text: str, history: Sequence[int]) -> GomocupRequest:
        board = GomokuBoard.from_text(position_text)
        if board.is_game_over():
            raise ValueError(f"no move to play: the game is over in {position_text!r}")
        return GomocupRequest(board, moves_from_empty(GomokuBoard.from_text(position_text),
                                                      history))

    def _settle(self) -> None:
        """After a move: ``ABOUT`` until the brain answers (module docstring)."""
        if not self._moved:
            return
        about = gomocup.format_command(gomocup.About())
        deadline = time.monotonic() + SYNC_S
        asked_at = -SYNC_RETRY_S  # monotonic time of the last ABOUT

        def ask() -> None:  # called between polls of the brain's output
            nonlocal asked_at
            if time.monotonic() - asked_at >= SYNC_RETRY_S:
                self.send([about], deadline)
                asked_at = time.monotonic()

        while True:
            line = self.process.read_line(
                deadline, f"answer to ABOUT after its move (asked every {SYNC_RETRY_S:g} s)",
                self._stop, tick=ask)
            if not isinstance(self._reply(line), gomocup.Message | gomocup.Debug):
                break  # ABOUT's answer, or a brain's UNKNOWN to it
        self._moved = False

    def _needs_set_up(self, request: GomocupRequest) -> bool:
        """A new size or rule; or an empty board for a brain that has played since its
        ``START``: ``BEGIN`` is only for a new game (Rapfi 0.43 and Arena's own brain
        refuse it on a board with stones), and a new ``START`` makes one."""
        return (self._game != (request.board.size, request.board.rule)
                or (not request.moves and self._dirty))

    def _play(self, request: GomocupRequest, limits: PlayLimits) -> EngineAnswer:
        board = request.board
        lines = self._clock_lines(limits)
        command = gomocup.Begin() if not request.moves else gomocup.board_for(request.moves,
                                                                             board.size)
        lines.append(gomocup.format_command(command))
        deadline, sent = self.deadline(limits), time.monotonic()  # elapsed from the request
        self.send(lines, deadline)
        return self._read_move(board, deadline, sent)

    def _set_up(self, request: GomocupRequest, deadline: float) -> None:
        """``START``, then the settings that may make a brain allocate (its memory cap,
        its options, the rule), then ``ABOUT``: its answer says that all of them are
        done, so their cost (Rapfi: ~0.6 s of CPU time to size its hash) never counts
        against a move. An ``ERROR`` or ``UNKNOWN`` is taken for a brain's refusal of
        ``ABOUT``, though it may answer an ``INFO`` (Rapfi's to a key it does not know):
        what the brain still computes after it is waited for too (``_set_up_to_start``).
        Within the startup deadline: this is the brain's handshake for the board, so a
        failure here (no answer in time, a crash) is a failure to start
        (``_set_up_to_start``), and only an ``ERROR`` to ``START`` a refusal."""
        size, rule = request.board.size, request.board.rule
        self._said = []
        self.send([gomocup.format_command(gomocup.Start(size))], deadline)
        reply = self._next_answer(deadline, f"answer to START {size}")
        if isinstance(reply, gomocup.Error | gomocup.Unknown):
            raise self.failure(FailureReason.REFUSED, f"START {size}: {reply.text}")
        if not isinstance(reply, gomocup.Ok):
            raise self.failure(FailureReason.GARBAGE,
                               f"answered START with {gomocup.format_reply(reply)!r}")
        settings = {key: str(value) for key, value in self.spec.options}
        settings.update({
            "max_memory": str(int((self.spec.limits.memory_mb << 20) * TOLD_MEMORY_FRACTION)),
            "game_type": "1",
            "rule": str(gomocup.rule_code(rule)),
        })
        lines = [gomocup.format_command(gomocup.Info(k, v)) for k, v in settings.items()]
        self.send([*lines, gomocup.format_command(gomocup.About())], deadline)
        reply = self._next_answer(deadline, "answer to ABOUT", about=True)
        if isinstance(reply, gomocup.Unknown | gomocup.Error):  # no ABOUT: still synced
            self._said.append(gomocup.format_reply(reply))  # or an INFO's refusal
        elif not isinstance(reply, gomocup.AboutReply):
            raise self.failure(FailureReason.GARBAGE,
                               f"answered ABOUT with {gomocup.format_reply(reply)!r}")
        self._game, self._clock_sent, self._dirty = (size, rule), {}, False

    def _next_answer(self, deadline: float, waiting_for: str, about: bool = False
                     ) -> gomocup.Reply:
        """The next reply that is not a MESSAGE or DEBUG line (nor an ABOUT answer, unless
        ``about``: one asked twice may come twice)."""
        skipped: tuple[type, ...] = (gomocup.Message, gomocup.Debug)
        if not about:
            skipped += (gomocup.AboutReply,)
        while True:
            line = self.read(deadline, waiting_for)
            reply = self._reply(line)
            if not isinstance(reply, skipped):
                return reply
            if not isinstance(reply, gomocup.AboutReply):
                self._said.append(line)

    def _heard_after_set_up(self, lines: list[str]) -> None:
        """Remarks printed after the set-up seemed done (Rapfi 0.43 refuses each INFO key
        it does not know with a MESSAGE and an ERROR, the first of which ended it) join
        what it said before; a late ABOUT answer does not."""
        for line in lines:
            try:
                reply = gomocup.parse_reply(line)
            except ProtocolError:
                reply = None
            if line.strip() and not isinstance(reply, gomocup.AboutReply):
                self._said.append(line)

    def _clock_lines(self, limits: PlayLimits) -> list[str]:
        """INFO lines for the move's time limits that changed since they were last sent."""
        wanted = {
            "timeout_turn": str(limits.move_time_ms),
            "timeout_match": str(limits.game_time_ms or 0),
            "time_left": str(limits.time_left_ms if limits.time_left_ms is not None
                             else NO_CLOCK_MS),
        }
        lines = []
        for key, value in wanted.items():
            if self._clock_sent.get(key) != value:
                lines.append(gomocup.format_command(gomocup.Info(key, value)))
                self._clock_sent[key] = value
        return lines

    def _read_move(self, board: GomokuBoard, deadline: float, sent: float) -> EngineAnswer:
        report = SearchReport()
        notes = [f"set-up: {line.strip()}" for line in self._said]
        self._said = []
        while True:
            line = self.read(deadline, "move")
            reply = self._reply(line)
            match reply:
                case gomocup.MoveReply(x, y):
                    self._moved = self._dirty = True
                    move = self._legal(board, x, y)
                    elapsed = (time.monotonic() - sent) * 1000
                    return EngineAnswer(move, report, elapsed, self.notes(notes))
                case gomocup.AboutReply():
                    pass  # an ABOUT asked again before its first answer came
                case gomocup.Message(text):
                    found = gomocup.parse_search_message(text, board.size)
                    report = report if found is None else report.updated(found)
                    notes.append(line)
                case gomocup.Debug() | gomocup.Suggest():
                    notes.append(line)
                case gomocup.Error() | gomocup.Unknown():
                    raise self.failure(FailureReason.REFUSED, f"answered {line.strip()!r}")
                case _:
                    raise self.failure(FailureReason.GARBAGE,
                                       f"answered {line.strip()[:200]!r} where a move was due")

    def _reply(self, line: str) -> gomocup.Reply:
        try:
            return gomocup.parse_reply(line)
        except ProtocolError:
            raise self.failure(FailureReason.GARBAGE,
                               f"printed {line.strip()[:200]!r}, not a Gomocup reply") from None

    def _legal(self, board: GomokuBoard, x: int, y: int) -> int:
        if not (0 <= x < board.size and 0 <= y < board.size):
            raise self.failure(FailureReason.ILLEGAL_MOVE,
                               f"played {x},{y}, off the {board.size}x{board.size} board")
        move = y * board.size + x
        if not board.is_legal(move):
            failure = self.failure(FailureReason.ILLEGAL_MOVE, f"played {x},{y}, an occupied point")
            failure.move = move
            raise failure
        return move
