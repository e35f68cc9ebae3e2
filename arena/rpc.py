"""Errors across the API boundary: the one table between ``arena.errors`` and gRPC codes.

Servers turn a domain error into a status (``to_status``, with field violations as a
``google.rpc.BadRequest`` detail); clients turn a failed call back into the same domain
error (``to_arena_error``). This is the only module of the core that knows gRPC.
"""

from __future__ import annotations

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from arena import errors

# The widest values of the API's integer fields (proto int32 and int64): what a request
# can carry at all, before any field's own range.
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1

_CODES: list[tuple[type[BaseException], grpc.StatusCode]] = [
    (errors.InvalidArgumentError, grpc.StatusCode.INVALID_ARGUMENT),
    (errors.NotFoundError, grpc.StatusCode.NOT_FOUND),
    (errors.AlreadyExistsError, grpc.StatusCode.ALREADY_EXISTS),
    (errors.FailedPreconditionError, grpc.StatusCode.FAILED_PRECONDITION),
    (errors.UnauthenticatedError, grpc.StatusCode.UNAUTHENTICATED),
    (errors.PermissionDeniedError, grpc.StatusCode.PERMISSION_DENIED),
    (errors.ResourceExhaustedError, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (errors.UnavailableError, grpc.StatusCode.UNAVAILABLE),
    (errors.DeadlineExceededError, grpc.StatusCode.DEADLINE_EXCEEDED),
    # The rules library and parsers raise ValueError subclasses on bad input.
    (ValueError, grpc.StatusCode.INVALID_ARGUMENT),
]


class ServerError(errors.ArenaError):
    """The server failed in a way no domain error describes (INTERNAL, UNKNOWN, ...)."""


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
    message, violations = errors.reported(exc)
    if code is grpc.StatusCode.INTERNAL:
        message = "internal error"
    status = status_pb2.Status(code=getattr(code_pb2, code.name), message=message)
    if violations:
        detail = error_details_pb2.BadRequest(
            field_violations=[
                error_details_pb2.BadRequest.FieldViolation(
                    field=v.field, description=v.description)
                for v in violations
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


def set_by_a_service(error: grpc.RpcError) -> bool:
    """Whether a service's error layer set this status (``to_status`` always sends the
    rich status), rather than gRPC failing to reach the service at all."""
    try:
        return rpc_status.from_call(error) is not None  # type: ignore[arg-type]
    except (ValueError, AttributeError):  # not a call, or a status that does not parse
        return False


def to_arena_error(error: grpc.RpcError, role: str, target: str) -> errors.ArenaError:
    """One readable exception for a failed call to the ``role`` service at ``target``."""
    code = error.code() if isinstance(error, grpc.Call) else grpc.StatusCode.UNKNOWN
    details = (error.details() if isinstance(error, grpc.Call) else "") or ""
    if code is grpc.StatusCode.UNAVAILABLE:
        reason = details.splitlines()[0] if details else "no answer"
        if set_by_a_service(error):  # it answered: what it needs (its Redis) is down
            return errors.UnavailableError(f"{role} at {target} cannot answer now: {reason}")
        return errors.UnavailableError(
            f"{role} unreachable at {target} ({reason}); is the stack running (`arena up`)?"
        )
    if code is grpc.StatusCode.DEADLINE_EXCEEDED:
        return errors.DeadlineExceededError(f"{role} at {target} did not answer in time")
    if code is grpc.StatusCode.INVALID_ARGUMENT:
        violations = field_violations(error)
        if violations:
            message = details.split(":", 1)[0] if details else "invalid request"
            return errors.InvalidArgumentError(message, violations)
    kind = error_class_for(code) or ServerError
    text = details or code.name.lower().replace("_", " ")
    if kind is ServerError:
        text = f"{role} failed ({code.name}): {text}"
    return kind(text)
