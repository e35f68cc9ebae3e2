"""Every servicer's errors become gRPC statuses here, by the table in ``arena.rpc``.

Every handler is wrapped by :func:`map_errors` (the outermost layer of the server's one
interceptor, ``server.ServiceInterceptor``); a handler raises the
errors of ``arena.errors`` (or a rules-library ``ValueError``) and the client sees the
matching standard code, with field violations as a ``google.rpc.BadRequest`` detail.
Anything unexpected becomes INTERNAL with the exception logged: never UNKNOWN.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import redis

from arena.errors import InvalidArgumentError, UnavailableError
from arena.rpc import status_code_for, to_status
from arena.text import bounded

log = logging.getLogger(__name__)

Behavior = Callable[[Any, grpc.ServicerContext], Any]
# A layer's wrapper of one handler's behaviour. It sees a streaming handler as a function
# that returns an iterator (``rewrap`` makes it a generator again), so one wrapper serves
# both kinds of handler; errors raised while a stream is consumed reach map_errors, which
# wraps the stream itself.
Wrap = Callable[[Behavior], Behavior]


def rewrap(handler: grpc.RpcMethodHandler[Any, Any], wrap: Wrap,
           deserializer: Callable[[bytes], Any] | None = None) -> grpc.RpcMethodHandler[Any, Any]:
    """Rebuild a unary-unary or unary-stream handler with its behaviour wrapped, so the
    wrapping code runs in the handler's own thread (where context variables stick), and
    optionally with another request deserializer."""
    decode = deserializer or handler.request_deserializer
    if handler.unary_unary is not None:
        return grpc.unary_unary_rpc_method_handler(
            wrap(handler.unary_unary),
            request_deserializer=decode,
            response_serializer=handler.response_serializer,
        )
    if handler.unary_stream is not None:
        wrapped = wrap(handler.unary_stream)

        def stream(request: Any, context: grpc.ServicerContext) -> Any:
            yield from wrapped(request, context)

        return grpc.unary_stream_rpc_method_handler(
            stream,
            request_deserializer=decode,
            response_serializer=handler.response_serializer,
        )
    return handler


@dataclass(frozen=True)
class Undecodable:
    """A request whose bytes are not the message the method takes (see ``decoded``)."""

    reason: str


def tolerant(handler: grpc.RpcMethodHandler[Any, Any]) -> grpc.RpcMethodHandler[Any, Any]:
    """The handler with a deserializer that never raises: gRPC itself would answer a
    request it cannot decode with INTERNAL, before any layer could authenticate the caller
    or say what is wrong. Bad bytes arrive as :class:`Undecodable` instead."""
    original = handler.request_deserializer
    if original is None:
        return handler

    def deserialize(raw: bytes) -> Any:
        try:
            return original(raw)
        except Exception as exc:  # protobuf raises DecodeError, but anything is possible
            return Undecodable(bounded(str(exc) or type(exc).__name__, 200))

    return rewrap(handler, lambda behavior: behavior, deserialize)


def decoded(details: grpc.HandlerCallDetails) -> Wrap:
    """The innermost layer: an undecodable request is INVALID_ARGUMENT (after the caller
    was authenticated, so a stranger learns nothing about the API from it)."""
    def wrap(behavior: Behavior) -> Behavior:
        def checked(request: Any, context: grpc.ServicerContext) -> Any:
            if isinstance(request, Undecodable):
                raise InvalidArgumentError(
                    f"the request is not a valid message for {details.method}: "
                    f"{request.reason}")
            return behavior(request, context)

        return checked

    return wrap


def catching(handle: Callable[[Exception, grpc.ServicerContext], None]) -> Wrap:
    """A wrap that hands every exception of a call, or of its stream, to ``handle``;
    what ``handle`` does not raise instead is raised again."""
    def wrap(behavior: Behavior) -> Behavior:
        def caught(request: Any, context: grpc.ServicerContext) -> Any:
            try:
                result = behavior(request, context)
            except Exception as exc:
                handle(exc, context)
                raise
            if not isinstance(result, Iterator):
                return result
            return _caught_stream(result, context, handle)

        return caught

    return wrap


def _caught_stream(items: Iterator[Any], context: grpc.ServicerContext,
                   handle: Callable[[Exception, grpc.ServicerContext], None]) -> Iterator[Any]:
    try:
        yield from items
    except Exception as exc:
        handle(exc, context)
        raise


def map_errors(details: grpc.HandlerCallDetails) -> Wrap:
    """The error layer: domain errors become their status codes, anything else INTERNAL."""
    return _map_errors


# Redis errors that mean "not reachable right now": the client should retry later. The
# order matters: BusyLoadingError is a ConnectionError.
_REDIS_DOWN = ((redis.BusyLoadingError, "Redis is loading its data"),
               (redis.TimeoutError, "Redis did not answer in time"),
               (redis.ConnectionError, "no connection to Redis"))
# Trailing metadata that tells a client's gRPC not to retry the call (gRFC A6: a negative
# pushback). A call that waited out Redis's read timeout would only wait it out again,
# and the client's deadline would then hide the cause.
_NO_RETRY = (("grpc-retry-pushback-ms", "-1"),)


class _Status(collections.namedtuple("_Status", ("code", "details", "trailing_metadata")),
              grpc.Status):
    """A status to abort with, as ``rpc_status.to_status`` builds it, with more metadata."""


def _abort(exc: Exception, context: grpc.ServicerContext) -> None:
    if context.code() is not None:  # type: ignore[attr-defined]  # the handler aborted on purpose: keep its status
        raise exc
    stalled = isinstance(exc, redis.TimeoutError)
    for kind, what in _REDIS_DOWN:
        if isinstance(exc, kind):
            exc = UnavailableError(f"{what} ({type(exc).__name__}); retry in a few seconds")
            break
    if status_code_for(exc) is grpc.StatusCode.INTERNAL:
        log.exception("unexpected error in handler")
    status = to_status(exc)
    if stalled:
        status = _Status(status.code, status.details, (*status.trailing_metadata, *_NO_RETRY))
    context.abort_with_status(status)


_map_errors = catching(_abort)



