"""Where a bot's answer is judged: on time, well-formed, legal. Also how games end.

The referee trusts nothing a worker says except the move itself: legality comes from the
rules library, and the time used is measured from the Redis timestamps of the worker's
``started`` and ``result`` entries. The one exception is a move timed on CPU (see
``MoveClock``): Arena's own worker reports the CPU time of a built-in search (its thread's)
or of a protocol engine's move (the engine process's), which a busy machine does not
inflate; the wall clock stays the outer guard, on the worker's own timing of the search
where that is shorter than the interval (a stalled Redis holds an answer back).
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.services.common.protocol.delivery import cpu_wall_guard_ms

from arena.games import PASS, Color, Position, Termination, game_of, move_fault
from arena.text import engine_notes, printable
from arena.v1 import common_pb2, engine_pb2, match_pb2

_ERROR_TERMINATIONS = {
    engine_pb2.MOVE_ERROR_MALFORMED_ANSWER: match_pb2.TERMINATION_MALFORMED_ANSWER,
    engine_pb2.MOVE_ERROR_BOT_CRASHED: match_pb2.TERMINATION_BOT_CRASHED,
    engine_pb2.MOVE_ERROR_BOT_UNREACHABLE: match_pb2.TERMINATION_BOT_UNREACHABLE,
    engine_pb2.MOVE_ERROR_TIMEOUT: match_pb2.TERMINATION_TIME_FORFEIT,
    # The job could not be run with this bot (a spec the engine rejects): the bot's fault.
    engine_pb2.MOVE_ERROR_INVALID_JOB: match_pb2.TERMINATION_BOT_CRASHED,
}
# The score of a forfeited Othello game: the whole board to the winner (as GGF records it).
FORFEIT_MARGIN = 64


def proto_color(color: Color) -> common_pb2.Color.ValueType:
    return common_pb2.COLOR_BLACK if color is Color.BLACK else common_pb2.COLOR_WHITE


@dataclass(frozen=True)
class Forfeit:
    termination: match_pb2.Termination.ValueType
    detail: str


@dataclass(frozen=True)
class MoveClock:
    """How a move's time is counted against ``limit_ms`` + ``grace_ms``: on the wall clock
    (the interval between the worker's ``started`` and ``result`` entries), or, with
    ``cpu``, by the CPU time the worker measured (its searching thread's, or the protocol
    engine process's), while the wall clock may reach ``cpu_wall_guard_ms`` before the
    move is late anyway."""

    limit_ms: int
    grace_ms: int
    cpu: bool = False
    wall_factor: float = 4.0

    def charged_ms(self, wall_ms: int, result: engine_pb2.MoveResult) -> int:
        """The time the move costs the bot (its game budget is spent by it)."""
        return result.cpu_ms if self.cpu else _thinking(wall_ms, result)

    def late(self, wall_ms: int, result: engine_pb2.MoveResult) -> str | None:
        """Why the move is too late, or None."""
        wall_ms = _thinking(wall_ms, result)
        allowed = self.limit_ms + self.grace_ms
        if not self.cpu:
            return (f"took {wall_ms} ms; limit {self.limit_ms} ms + {self.grace_ms} ms grace"
                    if wall_ms > allowed else None)
        if result.cpu_ms > allowed:
            return (f"searched {result.cpu_ms} ms of CPU time; limit {self.limit_ms} ms + "
                    f"{self.grace_ms} ms grace")
        guard = cpu_wall_guard_ms(self.limit_ms, self.grace_ms, self.wall_factor)
        # The interval ends when the answer reaches Redis: one a stalled Redis held back
        # is no fault of the bot. The worker's own wall time of the search (at least 1 ms
        # when it timed it), which counts a stuck search as much, bounds it. Nor is the
        # time the search waited for a CPU that other processes held.
        took = (min(wall_ms, _thinking(result.worker_time_ms, result))
                if result.worker_time_ms > 0 else wall_ms)
        if took - result.queued_ms > guard:
            queued = f", {result.queued_ms} ms waiting for a CPU" if result.queued_ms else ""
            return (f"took {took} ms on the wall clock ({result.cpu_ms} ms of CPU time"
                    f"{queued}); a move timed on CPU may take {guard} ms")
        return None


def _thinking(wall_ms: int, result: engine_pb2.MoveResult) -> int:
    """The wall time of a move less the worker's reading of the tree it captured for
    viewers (``MoveResult.recording_ms``): the arena's record is not the bot's time."""
    return max(0, wall_ms - max(0, result.recording_ms))


def judge_answer(
    position: Position, result: engine_pb2.MoveResult, time_ms: int, clock: MoveClock,
) -> Forfeit | None:
    """None if the answer may be played; otherwise why the side to move forfeits."""
    if result.error != engine_pb2.MOVE_ERROR_UNSPECIFIED:
        termination = _ERROR_TERMINATIONS.get(result.error, match_pb2.TERMINATION_BOT_CRASHED)
        name = engine_pb2.MoveError.Name(result.error)
        # The detail carries an engine's or an external bot's own words: stored and shown.
        return Forfeit(termination, printable(f"{name}: {result.error_detail}".strip(": ")))
    late = clock.late(time_ms, result)
    if late is not None:
        return Forfeit(match_pb2.TERMINATION_TIME_FORFEIT, late)
    fault = move_fault(position, result.move.square if result.HasField("move") else None)
    if fault is None:
        return None
    return Forfeit(match_pb2.TERMINATION_ILLEGAL_MOVE if fault.illegal
                   else match_pb2.TERMINATION_MALFORMED_ANSWER, fault.reason)


def move_record(
    position: Position, ply: int, result: engine_pb2.MoveResult, time_ms: int,
    charged_ms: int,
) -> match_pb2.MoveRecord:
    """The record of a judged move; ``position`` is before the move and is left as it was."""
    square = result.move.square
    after = position.copy()
    after.push(square)
    search = common_pb2.SearchInfo()
    search.CopyFrom(result.search)
    search.notes[:] = engine_notes(result.search.notes)  # the worker's words are bounded too
    return match_pb2.MoveRecord(
        ply=ply, color=proto_color(position.turn),
        move=common_pb2.Move(square=square, text=position.move_to_str(square)),
        time_ms=time_ms, charged_ms=charged_ms, search=search,
        worker_id=result.worker_id,
        has_tree=result.tree_stored, position_after=after.to_text(),
    )


def pass_record(position: Position, ply: int) -> match_pb2.MoveRecord:
    """An Othello pass, played by the referee for a side that has no move."""
    after = position.copy()
    after.push(PASS)
    return match_pb2.MoveRecord(
        ply=ply, color=proto_color(position.turn),
        move=common_pb2.Move(square=PASS, text="pass"), position_after=after.to_text(),
    )


def _counts(position: Position, result: match_pb2.MatchResult) -> None:
    count = getattr(position, "count", None)
    if count is not None:
        result.black_count = int(count(Color.BLACK))
        result.white_count = int(count(Color.WHITE))


def natural_result(position: Position) -> match_pb2.MatchResult:
    """The result of a game the rules ended (raises if the game is not over)."""
    outcome = position.outcome()
    if outcome is None:
        raise ValueError(f"the game is not over in {position.to_text()!r}")
    termination = (match_pb2.TERMINATION_BOARD_FULL
                   if outcome.termination is Termination.FULL_BOARD
                   else match_pb2.TERMINATION_NORMAL)
    result = match_pb2.MatchResult(
        winner=common_pb2.COLOR_UNSPECIFIED if outcome.winner is None
        else proto_color(outcome.winner),
        termination=termination,
    )
    _counts(position, result)
    if game_of(position).counts_discs:
        result.score = outcome.wof_diff
    return result


def void_result(position: Position, failure: Forfeit) -> match_pb2.MatchResult:
    """A game the infrastructure ended (a move job dead-lettered, no worker at all): no
    winner, no result for the ratings, and why."""
    result = match_pb2.MatchResult(termination=failure.termination, detail=failure.detail,
                                   void=True)
    _counts(position, result)
    return result


def forfeit_result(position: Position, forfeit: Forfeit,
                   loser: Color | None = None) -> match_pb2.MatchResult:
    """``loser`` (by default the side to move) loses for ``forfeit``."""
    loser = position.turn if loser is None else loser
    result = match_pb2.MatchResult(
        winner=proto_color(loser.other), termination=forfeit.termination,
        detail=forfeit.detail, forfeited=proto_color(loser),
    )
    _counts(position, result)
    if game_of(position).counts_discs:
        result.score = FORFEIT_MARGIN if loser is Color.WHITE else -FORFEIT_MARGIN
    return result


def adjudicated_result(position: Position, score: int, empties: int) -> match_pb2.MatchResult:
    """The result of perfect play from ``position``, where ``score`` is the exact final disc
    difference for the side to move (the empty squares to the winner). The counts are
    perfect play's final ones as that score gives them (the board full, the empty squares
    the winner's), so that they agree with the winner."""
    black = score if position.turn is Color.BLACK else -score
    winner = (common_pb2.COLOR_UNSPECIFIED if black == 0
              else common_pb2.COLOR_BLACK if black > 0 else common_pb2.COLOR_WHITE)
    verdict = ("a draw" if black == 0 else
               f"{'Black' if black > 0 else 'White'} wins by {abs(black)}")
    result = match_pb2.MatchResult(
        winner=winner, termination=match_pb2.TERMINATION_ADJUDICATED,
        detail=f"exact solve at {empties} empty squares: {verdict} with perfect play",
        score=black)
    squares = position.size * position.size
    result.black_count, result.white_count = (squares + black) // 2, (squares - black) // 2
    return result
