"""The one place where domain errors become gRPC status codes.

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
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from arena import errors

log = logging.getLogger(__name__)

_CODES: list[tuple[type[BaseException], grpc.StatusCode]] = [
    (errors.InvalidArgumentError, grpc.StatusCode.INVALID_ARGUMENT),
    (errors.NotFoundError, grpc.StatusCode.NOT_FOUND),
    (errors.AlreadyExistsError, grpc.StatusCode.ALREADY_EXISTS),
    (errors.FailedPreconditionError, grpc.StatusCode.FAILED_PRECONDITION),
    (errors.UnauthenticatedError, grpc.StatusCode.UNAUTHENTICATED),
    (errors.PermissionDeniedError, grpc.StatusCode.PERMISSION_DENIED),
    (errors.UnavailableError, grpc.StatusCode.UNAVAILABLE),
    (errors.DeadlineExceededError, grpc.StatusCode.DEADLINE_EXCEEDED),
    # The rules library and parsers raise ValueError subclasses on bad input.
    (ValueError, grpc.StatusCode.INVALID_ARGUMENT),
]


def error_class_for(code: grpc.StatusCode) -> type[errors.ArenaError] | None:
    """The domain error a client should raise for a status code (the mapping reversed)."""
    if code is grpc.StatusCode.OUT_OF_RANGE:
        return errors.InvalidArgumentError
    for kind, mapped in _CODES:
        if mapped is code and issubclass(kind, errors.ArenaError):
            return kind
    return None


def status_code_for(exc: BaseException) -> grpc.StatusCode:
    for kind, code in _CODES:
        if isinstance(exc, kind):
            return code
    return grpc.StatusCode.INTERNAL


def to_status(exc: BaseException) -> grpc.Status:
    code = status_code_for(exc)
    message = str(exc) if code is not grpc.StatusCode.INTERNAL else "internal error"
    status = status_pb2.Status(code=getattr(code_pb2, code.name), message=message)
    if isinstance(exc, errors.InvalidArgumentError) and exc.violations:
        detail = error_details_pb2.BadRequest(
            field_violations=[
                error_details_pb2.BadRequest.FieldViolation(
                    field=v.field, description=v.description
                )
                for v in exc.violations
            ]
        )
        packed = any_pb2.Any()
        packed.Pack(detail)
        status.details.append(packed)
    return rpc_status.to_status(status)


def field_violations(error: grpc.RpcError) -> list[errors.FieldViolation]:
    """Field violations carried by a client-side error (empty if none)."""
    try:
        status = rpc_status.from_call(error)  # type: ignore[arg-type]
    except (ValueError, AttributeError):  # not a call, or a status that does not parse
        return []
    found: list[errors.FieldViolation] = []
    for detail in status.details if status else []:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            found += [errors.FieldViolation(v.field, v.description) for v in bad.field_violations]
    return found


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


def _abort(exc: Exception, context: grpc.ServicerContext) -> None:
    if context.code() is not None:  # type: ignore[attr-defined]  # the handler aborted on purpose: keep its status
        raise exc
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
