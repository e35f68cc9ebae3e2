"""Protocol engine outcomes as the worker's MoveResult, as the referee will judge them."""

from __future__ import annotations

import pytest
from arena.services.worker.engines.client import EngineAnswer, PlayLimits
from arena.services.worker.engines.failures import EngineFailure, FailureReason
from arena.services.worker.engines.pool import EnginePool
from arena.services.worker.engines.results import (
    DETAIL_CHARS,
    MOVE_ERRORS,
    answer_result,
    failure_result,
)
from arena.services.worker.engines.sandbox import Sandbox

from arena.protocols.report import SearchReport
from arena.v1 import engine_pb2
from tests.protocol_engines.conftest import OTHELLO_START, FakeSpec


def test_every_failure_reason_has_a_move_error() -> None:
    assert set(MOVE_ERRORS) == set(FailureReason)


def test_an_answer_with_its_search() -> None:
    report = SearchReport(depth=12, score=1.5, nodes=20_000, time_ms=9.0, pv=(37, 43))
    result = answer_result(EngineAnswer(37, report, 10.0))
    assert result.move.square == 37 and result.error == engine_pb2.MOVE_ERROR_UNSPECIFIED
    assert (result.search.depth, result.search.score, result.search.nodes) == (12, 2, 20_000)
    assert list(result.search.pv) == [37, 43] and result.search.nps == 2_000_000
    empty = answer_result(EngineAnswer(64, SearchReport(), 0.0))
    assert empty.search.nps == 0 and empty.move.square == 64


def test_a_crash_keeps_the_last_stderr_lines_that_fit() -> None:
    tail = [f"line {n} " + "x" * 40 for n in range(30)]
    result = failure_result(EngineFailure(FailureReason.CRASH, "exited with code 3", tail))
    assert result.error == engine_pb2.MOVE_ERROR_BOT_CRASHED
    assert result.error_detail.startswith("crash: exited with code 3 [stderr: ")
    assert len(result.error_detail) <= DETAIL_CHARS
    assert result.error_detail.endswith(tail[-1] + "]") and tail[0] not in result.error_detail


@pytest.mark.usefixtures("no_orphans")
def test_an_illegal_square_goes_to_the_referee_as_the_move(sandbox: Sandbox,
                                                          fake_spec: FakeSpec) -> None:
    pool = EnginePool(sandbox)
    try:
        with pytest.raises(EngineFailure) as caught:
            pool.play(fake_spec("nboard", "illegal"), OTHELLO_START, [], PlayLimits(2000))
    finally:
        pool.close()
    result = failure_result(caught.value)
    assert result.HasField("move") and result.move.square == 0  # a1: never legal at start
    off_board = EngineFailure(FailureReason.ILLEGAL_MOVE, "played 15,0, off the board")
    assert failure_result(off_board).error == engine_pb2.MOVE_ERROR_MALFORMED_ANSWER
