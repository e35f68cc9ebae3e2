"""Traces of moves: each move is one trace, from the referee's publication through a
worker's search to the referee's judgement, joined through the ``traceparent`` the job
carries over Redis (the referee and worker loops run in separate threads, which share no
context: only the job links them). Spans go to OpenTelemetry's in-memory exporter."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
import redis
from arena.services.common import tracing
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from arena.v1 import match_pb2
from tests.conftest import Loops, NewMatch
from tests.support.bots import builtin_bot, match_config, wait_finished

LAB = {"evaluator": "lab", "look_ahead": 0}


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    assert tracing.setup_tracing("test", "test-1", exporter=exporter)
    yield exporter
    tracing.shutdown_tracing()


def test_tracing_is_off_without_an_endpoint() -> None:
    assert not tracing.setup_tracing("referee", "r-1", endpoint="")
    assert not tracing.enabled()
    job = match_pb2.Match()  # anything: nothing is touched when off
    tracing.start_move(job)
    tracing.end_move("x", "recorded")
    with tracing.move_span("arena.referee.judge", "x"), tracing.child_span(None, "y"):
        pass


def test_the_collectors_password_is_not_logged(caplog: pytest.LogCaptureFixture) -> None:
    # The effective configuration the service logs masks it; the line saying that tracing
    # is on printed the endpoint as it was given.
    caplog.set_level(logging.INFO)
    try:
        assert tracing.setup_tracing("referee", "r-1",
                                     endpoint="http://arena:s3cret-pw@127.0.0.1:1")
    finally:
        tracing.shutdown_tracing()
    assert "tracing on: http://arena:***@127.0.0.1:1" in caplog.messages
    assert "s3cret-pw" not in caplog.text


def test_one_move_is_one_trace_across_referee_and_worker(
        loops: Loops, new_match: NewMatch, peers: object, redis_client: redis.Redis,
        spans: InMemorySpanExporter) -> None:
    builtin_bot(peers, "lab0", LAB)  # type: ignore[arg-type]
    loops(referees=1, workers=1)
    match = new_match(match_config("lab0", "lab0"))
    finished = wait_finished(redis_client, match.id)
    asked = [r for r in finished.moves if r.move.text != "pass"]
    assert asked

    by_trace: dict[int, list] = {}  # type: ignore[type-arg]
    for span in spans.get_finished_spans():
        by_trace.setdefault(span.context.trace_id, []).append(span)
    moves = [s for s in spans.get_finished_spans() if s.name == "arena.move"]
    recorded = [s for s in moves if s.attributes["arena.outcome"] == "recorded"]
    assert len(recorded) == len(asked)  # one trace per move the bots made

    first = next(s for s in recorded if s.attributes["arena.ply"] == asked[0].ply)
    trace = {s.name: s for s in by_trace[first.context.trace_id]}
    assert set(trace) == {"arena.move", "arena.worker.job", "arena.engine.search",
                          "arena.worker.post_result", "arena.referee.judge",
                          "arena.referee.record"}
    root = trace["arena.move"]
    assert root.parent is None
    for child in ("arena.worker.job", "arena.referee.judge", "arena.referee.record"):
        assert trace[child].parent.span_id == root.context.span_id, child
    for grandchild in ("arena.engine.search", "arena.worker.post_result"):
        assert trace[grandchild].parent.span_id == trace["arena.worker.job"].context.span_id
    assert trace["arena.worker.job"].parent.is_remote  # it came through the job, not a thread
    job = trace["arena.worker.job"]
    assert job.attributes["arena.job_id"] == root.attributes["arena.job_id"]
    assert job.attributes["arena.match_id"] == match.id
    # In time order: published, searched, answered, judged, recorded.
    assert root.start_time <= job.start_time <= trace["arena.engine.search"].start_time
    # (the worker's post span ends when Redis replies, which may be after the referee read it)
    assert trace["arena.worker.post_result"].start_time <= trace["arena.referee.judge"].start_time
    assert trace["arena.referee.judge"].end_time <= trace["arena.referee.record"].start_time
    assert root.end_time >= trace["arena.referee.record"].end_time


def test_unsampled_moves_carry_no_trace_context(
        loops: Loops, new_match: NewMatch, peers: object, redis_client: redis.Redis) -> None:
    exporter = InMemorySpanExporter()
    tracing.setup_tracing("test", "test-1", ratio=0.0, exporter=exporter)
    try:
        builtin_bot(peers, "lab0", LAB)  # type: ignore[arg-type]
        loops(referees=1, workers=1)
        wait_finished(redis_client, new_match(match_config("lab0", "lab0")).id)
        assert exporter.get_finished_spans() == ()
    finally:
        tracing.shutdown_tracing()
