"""A protocol engine's answer or failure as the worker's ``MoveResult``, which the referee
judges: a failure becomes a ``MoveError`` (the referee's forfeit reason), an illegal move
that names a square is passed on as the move itself (the referee forfeits it as illegal,
with the rules' own message)."""

from __future__ import annotations

from arena.services.worker.engines.client import EngineAnswer
from arena.services.worker.engines.failures import EngineFailure, FailureReason

from arena.text import printable
from arena.v1 import common_pb2, engine_pb2

DETAIL_CHARS = 500  # what the worker keeps of an error's detail
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


def answer_result(answer: EngineAnswer) -> engine_pb2.MoveResult:
    report = answer.search
    nodes = report.nodes or 0
    info = common_pb2.SearchInfo(
        score=None if report.score is None else round(report.score), depth=report.depth,
        nodes=nodes,
        nps=int(nodes * 1000 / answer.elapsed_ms) if answer.elapsed_ms > 0 else 0,
        pv=list(report.pv), time_ms=answer.elapsed_ms, exact=report.exact,
        notes=answer.notes)
    return engine_pb2.MoveResult(move=common_pb2.Move(square=answer.move), search=info)


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
