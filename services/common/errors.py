"""Every servicer's errors become gRPC statuses here, by the table in ``arena.rpc``.

Every servicer is wrapped by :class:`ErrorMappingInterceptor`; a handler raises the
errors of ``arena.errors`` (or a rules-library ``ValueError``) and the client sees the
matching standard code, with field violations as a ``google.rpc.BadRequest`` detail.
Anything unexpected becomes INTERNAL with the exception logged: never UNKNOWN.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import grpc
import redis

from arena.errors import UnavailableError
from arena.rpc import status_code_for, to_status

log = logging.getLogger(__name__)

Behavior = Callable[[Any, grpc.ServicerContext], Any]


def rewrap(
    handler: grpc.RpcMethodHandler[Any, Any], wrap: Callable[[Behavior, bool], Behavior]
) -> grpc.RpcMethodHandler[Any, Any]:
    """Rebuild a unary-unary or unary-stream handler with its behaviour wrapped.

    ``wrap(behavior, streaming)`` returns the new behaviour. Interceptors use this so the
    wrapping code runs in the handler's own thread (where context variables stick).
    """
    if handler.unary_unary is not None:
        return grpc.unary_unary_rpc_method_handler(
            wrap(handler.unary_unary, False),
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(
            wrap(handler.unary_stream, True),
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
    return handler


def _map_errors(behavior: Behavior, streaming: bool) -> Behavior:
    if streaming:

        def stream(request: Any, context: grpc.ServicerContext) -> Any:
            try:
                yield from behavior(request, context)
            except Exception as exc:
                _abort(exc, context)

        return stream

    def unary(request: Any, context: grpc.ServicerContext) -> Any:
        try:
            return behavior(request, context)
        except Exception as exc:
            _abort(exc, context)

    return unary


# Redis errors that mean "not reachable right now": the client should retry later.
_REDIS_DOWN = (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError)


def _abort(exc: Exception, context: grpc.ServicerContext) -> None:
    if context.code() is not None:  # type: ignore[attr-defined]  # the handler aborted on purpose: keep its status
        raise exc
    if isinstance(exc, _REDIS_DOWN):
        exc = UnavailableError(f"storage unavailable ({type(exc).__name__}); retry in a few "
                               "seconds")
    if status_code_for(exc) is grpc.StatusCode.INTERNAL:
        log.exception("unexpected error in handler")
    context.abort_with_status(to_status(exc))


class ErrorMappingInterceptor(grpc.ServerInterceptor):  # type: ignore[type-arg]
    """Wraps every handler so domain errors map to status codes (outermost interceptor)."""

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], grpc.RpcMethodHandler[Any, Any] | None],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = continuation(handler_call_details)
        return None if handler is None else rewrap(handler, _map_errors)
