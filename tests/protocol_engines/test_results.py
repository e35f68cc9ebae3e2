"""Protocol engine outcomes as the worker's MoveResult, as the referee will judge them."""

from __future__ import annotations

import random

import pytest
from arena.services.worker.engines.client import EngineAnswer, PlayLimits
from arena.services.worker.engines.failures import EngineFailure, FailureReason
from arena.services.worker.engines.pool import EnginePool
from arena.services.worker.engines.results import (
    DETAIL_CHARS,
    MAX_PV,
    MOVE_ERRORS,
    answer_result,
    failure_result,
    kept_report,
)
from arena.services.worker.engines.sandbox import Sandbox

from arena.games import new_position, position_from_text
from arena.protocols.report import SearchReport
from arena.v1 import common_pb2, engine_pb2
from tests.protocol_engines.conftest import OTHELLO_START, FakeSpec

START = position_from_text("othello", OTHELLO_START)


def test_every_failure_reason_has_a_move_error() -> None:
    assert set(MOVE_ERRORS) == set(FailureReason)


def test_an_answer_with_its_search() -> None:
    report = SearchReport(depth=12, score=1.5, nodes=20_000, time_ms=9.0, pv=(37, 43))
    result = answer_result(EngineAnswer(37, report, 10.0), START)
    assert result.move.square == 37 and result.error == engine_pb2.MOVE_ERROR_UNSPECIFIED
    assert (result.search.depth, result.search.score, result.search.nodes) == (12, 2, 20_000)
    assert list(result.search.pv) == [37, 43] and result.search.nps == 2_000_000
    empty = answer_result(EngineAnswer(64, SearchReport(), 0.0), START)
    assert empty.search.nps == 0 and empty.move.square == 64


def test_a_report_keeps_only_moves_of_the_position() -> None:
    """An external bot's PV [18, -5, 2147483647, 999, 64, 65, -1], tied moves [-1, 1000,
    2147483647] and depth -7 were stored as they came: every native export of its matches
    was refused by the arena's own reader, an analysis of it failed in the CLI, and a
    viewer was told of 3 tied moves. The PV is kept up to its first move that is not legal
    in turn, the tied moves that are legal, once each; a negative depth is not kept."""
    hostile = common_pb2.SearchInfo(
        pv=[19, -5, 2147483647, 999, 64], tied_moves=[-1, 19, 1000, 26, 19, 2147483647],
        depth=-7, score=-(2**63), nodes=2**63 - 1)
    kept = kept_report(hostile, START)
    assert list(kept.pv) == [19] and list(kept.tied_moves) == [19, 26]
    assert not kept.HasField("depth") and kept.score == -(2**63)
    # A legal line is kept in turn (f5 d6 c3: black, white, black), cut at an illegal move
    # (c3 again) and at a move after the game's end.
    line = kept_report(common_pb2.SearchInfo(pv=[37, 43, 18, 18, 20], depth=0), START)
    assert list(line.pv) == [37, 43, 18] and line.HasField("depth") and line.depth == 0
    # A long legal Gomoku line is cut to MAX_PV plies.
    board, moves = new_position("gomoku"), []
    chooser = random.Random(7)
    while len(moves) < MAX_PV + 20:
        move = chooser.choice(board.legal_moves())
        board.push(move)
        if board.is_game_over():  # a five ends the line: another move instead
            board.pop()
            continue
        moves.append(move)
    long_line = kept_report(common_pb2.SearchInfo(pv=moves), new_position("gomoku"))
    assert list(long_line.pv) == moves[:MAX_PV]


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
