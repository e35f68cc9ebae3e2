"""An NBoard Othello engine as a worker plays it.

Handshake: ``nboard <version>`` (option ``version``, default 2; Edax wants 1), ``set
depth``/``set contempt`` from the options, then ``ping 0`` until ``pong 0`` (an engine
may greet with a banner before). Each move sends ``set game`` (a GGF game starting at the
position) and ``go`` in one write, then reads ``search``, ``book``, ``nodestats`` and
``status`` lines for the search information until ``=== move``. No ``ping`` is needed per
move: the previous answer was read up to its ``===`` (or the process was killed), so
anything late is a status or search line, never a move. NBoard has no clock: an engine's
speed is set by its depth (the option, or the move's depth limit); the worker's deadline
is the outer guard.

A position where the only move is a pass is answered without asking the engine.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from arena.services.worker.engines.catalog import EngineSpec
from arena.services.worker.engines.client import EngineAnswer, PlayLimits, ProtocolClient
from arena.services.worker.engines.failures import FailureReason
from arena.services.worker.engines.process import EngineProcess

from arena.games import PASS, OthelloBoard
from arena.protocols import nboard
from arena.protocols.errors import ProtocolError
from arena.protocols.report import SearchReport


@dataclass(frozen=True)
class NboardRequest:
    board: OthelloBoard
    ggf: str


class NboardClient(ProtocolClient[NboardRequest]):
    goodbye = "quit"

    def __init__(self, spec: EngineSpec, process: EngineProcess) -> None:
        super().__init__(spec, process)
        self.name = spec.name  # what the engine calls itself (set myname), once it says
        self._depth: int | None = None  # the depth last set

    def _handshake(self, deadline: float) -> None:
        version = self.spec.option("version") or nboard.VERSION
        lines = [nboard.format_command(nboard.Hello(int(version)))]
        contempt = self.spec.option("contempt")
        if contempt is not None:
            lines.append(nboard.format_command(nboard.SetContempt(float(contempt))))
        lines += self._depth_lines(None)
        lines.append(nboard.format_command(nboard.Ping(0)))
        self.send(lines, deadline)
        self._sync(0, deadline)

    def _depth_lines(self, depth_limit: int | None) -> list[str]:
        option = self.spec.option("depth")
        depth = depth_limit if depth_limit is not None else option
        if depth is None or depth == self._depth:
            return []
        self._depth = int(depth)
        return [nboard.format_command(nboard.SetDepth(self._depth))]

    def _prepare(self, position_text: str, history: Sequence[int]) -> NboardRequest:
        board = OthelloBoard.from_text(position_text)
        if board.is_game_over():
            raise ValueError(f"no move to play: the game is over in {position_text!r}")
        return NboardRequest(board, nboard.game_for(position_text))

    def _answer_without_engine(self, request: NboardRequest) -> EngineAnswer | None:
        if request.board.legal_moves() == [PASS]:  # nothing to think about
            return EngineAnswer(PASS, SearchReport(), 0.0)
        return None

    def _play(self, request: NboardRequest, limits: PlayLimits) -> EngineAnswer:
        lines = [
            *self._depth_lines(limits.depth),
            nboard.format_command(nboard.SetGame(request.ggf)),
            nboard.format_command(nboard.Go()),
        ]
        deadline, sent = self.deadline(limits), time.monotonic()  # elapsed from the request
        self.send(lines, deadline)
        return self._read_move(request.board, deadline, sent)

    def _sync(self, number: int, deadline: float) -> None:
        """Read up to ``pong number``, skipping a greeting banner."""
        while True:
            line = self.read(deadline, f"pong {number}")
            try:
                reply = nboard.parse_reply(line)
            except ProtocolError:
                continue
            if isinstance(reply, nboard.MyName):
                self.name = reply.name
            if reply == nboard.Pong(number):
                return

    def _read_move(self, board: OthelloBoard, deadline: float, sent: float) -> EngineAnswer:
        replies: list[nboard.Reply] = []
        notes: list[str] = []
        while True:
            line = self.read(deadline, "move")
            try:
                reply = nboard.parse_reply(line)
            except ProtocolError as exc:
                if line.split()[:1] == ["==="]:  # a malformed answer
                    raise self.failure(FailureReason.GARBAGE,
                                       f"printed {line.strip()[:200]!r}: {exc}") from None
                # NBoard has no free-text reply, so engines print their diagnostics as
                # they are (Edax: "*** SEARCH STILL RUNNING ? ***"): kept as notes. The
                # output flood limit bounds them.
                notes.append(line)
                continue
            replies.append(reply)
            if isinstance(reply, nboard.BestMove):
                if not board.is_legal(reply.move):
                    failure = self.failure(FailureReason.ILLEGAL_MOVE,
                                           f"played {nboard.move_text(reply.move)}, illegal in "
                                           f"{board.to_text()!r}")
                    failure.move = reply.move
                    raise failure
                elapsed = (time.monotonic() - sent) * 1000
                report = nboard.search_report(replies)
                return EngineAnswer(reply.move, report, elapsed, self.notes(notes))
            if isinstance(reply, nboard.Status | nboard.MyName):
                notes.append(line)
