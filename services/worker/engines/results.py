"""A protocol engine's answer or failure as the worker's ``MoveResult``, which the referee
judges: a failure becomes a ``MoveError`` (the referee's forfeit reason), an illegal move
that names a square is passed on as the move itself (the referee forfeits it as illegal,
with the rules' own message). What a bot that is not built in reports (a protocol engine,
an external bot) is kept bounded (``kept_report``): the referee stores it with the move and
sends it to every viewer."""

from __future__ import annotations

from arena.services.worker.engines.client import EngineAnswer
from arena.services.worker.engines.failures import EngineFailure, FailureReason

from arena.games.base import Position
from arena.text import engine_notes, printable
from arena.v1 import common_pb2, engine_pb2

DETAIL_CHARS = 500  # what the worker keeps of an error's detail
MAX_PV = 128  # plies of a reported principal variation kept (a longest game is shorter)
MAX_TIED = 361  # root moves of equal score kept: every square of the largest board
MOVE_ERRORS = {
    FailureReason.GARBAGE: engine_pb2.MOVE_ERROR_MALFORMED_ANSWER,
    FailureReason.OUTPUT_LIMIT: engine_pb2.MOVE_ERROR_MALFORMED_ANSWER,
    FailureReason.ILLEGAL_MOVE: engine_pb2.MOVE_ERROR_MALFORMED_ANSWER,  # no square named
    FailureReason.TIMEOUT: engine_pb2.MOVE_ERROR_TIMEOUT,
    FailureReason.CRASH: engine_pb2.MOVE_ERROR_BOT_CRASHED,
    FailureReason.MEMORY_LIMIT: engine_pb2.MOVE_ERROR_BOT_CRASHED,
    FailureReason.CPU_LIMIT: engine_pb2.MOVE_ERROR_BOT_CRASHED,
    FailureReason.START_FAILED: engine_pb2.MOVE_ERROR_BOT_CRASHED,
    FailureReason.REFUSED: engine_pb2.MOVE_ERROR_INVALID_JOB,
    # Never posted: the worker drops or releases a job whose move it stopped.
    FailureReason.STOPPED: engine_pb2.MOVE_ERROR_TIMEOUT,
}


def answer_result(answer: EngineAnswer, position: Position) -> engine_pb2.MoveResult:
    report = answer.search
    nodes = report.nodes or 0
    info = common_pb2.SearchInfo(
        score=None if report.score is None else round(report.score), depth=report.depth,
        nodes=nodes,
        nps=int(nodes * 1000 / answer.elapsed_ms) if answer.elapsed_ms > 0 else 0,
        pv=list(report.pv), time_ms=answer.elapsed_ms, exact=report.exact,
        notes=answer.notes)
    return engine_pb2.MoveResult(move=common_pb2.Move(square=answer.move),
                                 search=kept_report(info, position))


def kept_report(search: common_pb2.SearchInfo, position: Position) -> common_pb2.SearchInfo:
    """What the arena keeps of a bot's report on ``position``: its known fields only (no
    unknown ones carried along); of its PV, the moves legal in turn from the position,
    up to the first that is not and at most ``MAX_PV``; of its tied moves, the distinct
    legal ones, at most ``MAX_TIED``; a depth only if it is not negative; the notes as the
    referee keeps them (``engine_notes``). The report reaches records, viewers and the
    arena's own readers: a square off the board (-1, 999) in it made every export of the
    match one the arena refused to read back, and a viewer's analysis fail."""
    line, pv = position.copy(), []
    for move in search.pv[:MAX_PV]:
        if line.is_game_over() or not line.is_legal(move):
            break
        line.push(move)
        pv.append(move)
    legal = set(position.legal_moves())
    tied = [move for move in dict.fromkeys(search.tied_moves) if move in legal]
    kept = common_pb2.SearchInfo(nodes=search.nodes, nps=search.nps, time_ms=search.time_ms,
                                 exact=search.exact, pv=pv, tied_moves=tied[:MAX_TIED],
                                 notes=engine_notes(search.notes))
    if search.HasField("score"):
        kept.score = search.score
    if search.HasField("depth") and search.depth >= 0:
        kept.depth = search.depth
    return kept


def error_result(code: engine_pb2.MoveError.ValueType, detail: str) -> engine_pb2.MoveResult:
    """A move that could not be played: ``code`` and what went wrong, cut to
    ``DETAIL_CHARS``."""
    return engine_pb2.MoveResult(error=code, error_detail=detail[:DETAIL_CHARS])


def failure_result(failure: EngineFailure) -> engine_pb2.MoveResult:
    if failure.reason is FailureReason.ILLEGAL_MOVE and failure.move is not None:
        return engine_pb2.MoveResult(move=common_pb2.Move(square=failure.move))
    return engine_pb2.MoveResult(error=MOVE_ERRORS[failure.reason],
                                 error_detail=failure_detail(failure))


def failure_detail(failure: EngineFailure) -> str:
    """The reason, then as many of the engine's last stderr lines as fit (the last ones),
    made ``printable`` (as its notes are: the engine's words reach other people's
    terminals, through match records and analyses)."""
    head = str(failure)[:DETAIL_CHARS]
    tail = ""
    for line in reversed(failure.stderr_tail):
        candidate = f"{line} | {tail}" if tail else line
        if len(head) + len(" [stderr: ]") + len(candidate) > DETAIL_CHARS:
            break
        tail = candidate
    return printable(f"{head} [stderr: {tail}]" if tail else head)
