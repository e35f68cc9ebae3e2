"""OpenTelemetry traces of moves: from the referee's publication of a move job, through a
worker's search, to the referee's judgement. Off unless ``ARENA_OTLP_ENDPOINT`` is set.

One trace per move:

* ``arena.move`` (referee): opened when the referee builds the job and closed once the
  answer is judged and recorded (or the game forfeited). Its W3C ``traceparent`` travels
  in the job (``MoveJob.traceparent``), so any worker, in any process, joins the trace;
* ``arena.worker.job`` (worker, child of ``arena.move``): from taking the job to posting
  the answer, with ``arena.engine.search`` (the bot's search) and
  ``arena.worker.post_result`` inside;
* ``arena.referee.judge`` (referee, child of ``arena.move``): judging and recording.

Off, every function here returns at its first test of ``_tracer`` and the SDK is not even
imported: no cost on the move path (``bench/arena_observability.py`` measures it). On, the
referee samples moves (``ARENA_TRACE_SAMPLE_RATIO``) and workers follow its decision.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any

from arena.services.common.config import masked

log = logging.getLogger(__name__)

_tracer: Any = None  # an opentelemetry Tracer while tracing is on
_provider: Any = None
_lock = threading.Lock()
# Open ``arena.move`` spans by job id (a referee may abandon a match half-way: bounded).
_moves: OrderedDict[str, Any] = OrderedDict()
_MOVES_MAX = 10_000


def setup_tracing(service: str, instance: str, endpoint: str = "", ratio: float = 1.0,
                  exporter: Any = None) -> bool:
    """Turn tracing on if an OTLP ``endpoint`` (or, in tests, a span ``exporter``) is
    given; returns whether it is on."""
    global _tracer, _provider
    if not endpoint and exporter is None:
        return False
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

    resource = Resource.create({"service.name": f"arena-{service}",
                                "service.instance.id": instance})
    provider = TracerProvider(resource=resource, sampler=ParentBased(TraceIdRatioBased(ratio)))
    if exporter is not None:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    else:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        insecure = not endpoint.startswith("https://")
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint,
                                                                        insecure=insecure)))
    _provider, _tracer = provider, provider.get_tracer("arena")
    log.info("tracing on: %s", masked(endpoint) or type(exporter).__name__)
    return True


def shutdown_tracing() -> None:
    """Flush and turn tracing off."""
    global _tracer, _provider
    provider, _provider, _tracer = _provider, None, None
    with _lock:
        _moves.clear()
    if provider is not None:
        provider.shutdown()


def enabled() -> bool:
    return _tracer is not None


# -- the referee's side ---------------------------------------------------------------------


def start_move(job: Any) -> None:
    """Open the move's trace and write its ``traceparent`` into ``job`` (a MoveJob)."""
    if _tracer is None:
        return
    from opentelemetry import trace

    span = _tracer.start_span("arena.move", kind=trace.SpanKind.PRODUCER,
                              attributes=_attributes(job))
    context = span.get_span_context()
    if context.trace_flags.sampled:
        job.traceparent = _traceparent(context)
    with _lock:
        _moves[job.job_id] = span
        while len(_moves) > _MOVES_MAX:
            _moves.popitem(last=False)[1].end()


def end_move(job_id: str, outcome: str) -> None:
    """Close the move's trace: ``recorded``, a forfeit's termination, or why it ended."""
    if _tracer is None:
        return
    with _lock:
        span = _moves.pop(job_id, None)
    if span is not None:
        span.set_attribute("arena.outcome", outcome)
        span.end()


@contextlib.contextmanager
def move_span(name: str, job_id: str, **attributes: Any) -> Iterator[None]:
    """A span inside the referee's ``arena.move`` span of ``job_id``."""
    if _tracer is None:
        yield
        return
    from opentelemetry import trace

    with _lock:
        parent = _moves.get(job_id)
    context = trace.set_span_in_context(parent) if parent is not None else None
    with _tracer.start_as_current_span(name, context=context, attributes=attributes):
        yield


# -- the worker's side ----------------------------------------------------------------------


def start_job(job: Any) -> Any:
    """The worker's span of a job, a child of the referee's span named in the job's
    ``traceparent`` (None when tracing is off or the move is not traced)."""
    if _tracer is None or not job.traceparent:
        return None
    from opentelemetry import trace
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    parent = TraceContextTextMapPropagator().extract({"traceparent": job.traceparent})
    return _tracer.start_span("arena.worker.job", context=parent,
                              kind=trace.SpanKind.CONSUMER, attributes=_attributes(job))


@contextlib.contextmanager
def child_span(parent: Any, name: str, **attributes: Any) -> Iterator[None]:
    """A span inside ``parent`` (from :func:`start_job`; nothing if it is None)."""
    if parent is None or _tracer is None:
        yield
        return
    from opentelemetry import trace

    with _tracer.start_as_current_span(name, context=trace.set_span_in_context(parent),
                                       attributes=attributes):
        yield


def end_span(span: Any, **attributes: Any) -> None:
    if span is None:
        return
    for key, value in attributes.items():
        span.set_attribute(f"arena.{key}", value)
    span.end()


def _attributes(job: Any) -> Mapping[str, Any]:
    return {"arena.match_id": job.match_id, "arena.ply": job.ply, "arena.job_id": job.job_id,
            "arena.bot": f"{job.bot.spec.name}@{job.bot.version}"}


def _traceparent(context: Any) -> str:
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{int(context.trace_flags):02x}"
