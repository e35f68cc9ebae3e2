"""Errors across the API boundary: the one table between ``arena.errors`` and gRPC codes.

Servers turn a domain error into a status (``to_status``, with field violations as a
``google.rpc.BadRequest`` detail); clients turn a failed call back into the same domain
error (``to_arena_error``). This is the only module of the core that knows gRPC.
"""

from __future__ import annotations

import re

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


def to_arena_error(error: grpc.RpcError, role: str, target: str, *, ca_file: str = "",
                   cert_file: str = "") -> errors.ArenaError:
    """One readable exception for a failed call to the ``role`` service at ``target``;
    ``ca_file`` and ``cert_file``: the caller's TLS (none: plaintext), which tell a TLS
    mistake from a stopped stack."""
    code = error.code() if isinstance(error, grpc.Call) else grpc.StatusCode.UNKNOWN
    details = (error.details() if isinstance(error, grpc.Call) else "") or ""
    if code is grpc.StatusCode.UNAVAILABLE:
        reason = details.splitlines()[0] if details else "no answer"
        if set_by_a_service(error):  # it answered: what it needs (its Redis) is down
            return errors.UnavailableError(f"{role} at {target} cannot answer now: {reason}")
        return errors.ServiceUnreachableError(
            tls_mistake(reason, role, target, ca_file, cert_file)
            or f"{role} unreachable at {target} ({reason}); is the stack running (`arena up`)?",
            role)
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


# How a caller gives the TLS files (the CLI's options, their variables), and where `arena up`
# writes a local stack's: in the tls folder of its home, which the caller may not share.
_HOME_TLS = "tls/ in its home (--home, ARENA_HOME, else .arena)"
_GIVE_CA = f"--tls-ca or ARENA_TLS_CA_FILE; `arena up --tls` writes ca.pem to {_HOME_TLS}"
_GIVE_CERT = ("--tls-cert and --tls-key, or ARENA_TLS_CERT_FILE and ARENA_TLS_KEY_FILE; "
              f"`arena up --mutual-tls` writes client.pem and client.key to {_HOME_TLS}")


def tls_mistake(reason: str, role: str, target: str, ca_file: str, cert_file: str
                ) -> str | None:
    """What a connection that failed for ``reason`` (gRPC's words) says of the caller's TLS
    (``ca_file``, ``cert_file``: empty if none), and how to put it right; None if nothing.

    gRPC says "Tls handshake failed (...): ...:WRONG_VERSION_NUMBER" to a TLS caller of a
    plaintext server, "...:CERTIFICATE_VERIFY_FAILED" or "...:BAD_SIGNATURE" when the
    server's certificate is not of the caller's CA, "Hostname Verification Check failed"
    when it does not name the host called, and only "Socket closed" when the server hangs
    up in the handshake: to a plaintext caller of a TLS server, and to a caller without a
    certificate it takes if it requires one. A server stopping says that too, so those
    messages name both."""
    lowered = reason.lower()
    found = re.search(r"OPENSSL_internal:([A-Z0-9_]+)", reason)
    fault = found.group(1).lower().replace("_", " ") if found else "no reason given"
    if "hostname verification" in lowered:
        host = target.rsplit(":", 1)[0].strip("[]")
        return (f"TLS handshake with the {role} at {target} failed: its certificate does not "
                f"name {host}; call it by a name it holds (`arena up --tls`: localhost, "
                "127.0.0.1, ::1)")
    if "handshake failed" in lowered and "wrong version number" in fault:
        return (f"{role} at {target} does not speak TLS (the TLS handshake got a plaintext "
                f"answer): leave out the CA {ca_file} (--tls-ca, ARENA_TLS_CA_FILE or the "
                "stack file's tls section), or start the stack with `arena up --tls`")
    if "handshake failed" in lowered and any(word in fault for word in ("certificate",
                                                                        "signature")):
        return (f"TLS handshake with the {role} at {target} failed ({fault}): is {ca_file} "
                f"the CA of that stack ({_GIVE_CA})?")
    if "handshake failed" in lowered:
        return f"TLS handshake with the {role} at {target} failed ({fault})"
    if "socket closed" not in lowered:
        return None
    if not ca_file:
        return (f"{role} at {target} hung up without answering: it likely serves TLS; give "
                f"its CA ({_GIVE_CA}), or it is stopping")
    if not cert_file:
        return (f"{role} at {target} hung up in the TLS handshake: it likely requires a "
                f"client certificate (mutual TLS); give one ({_GIVE_CERT}), or it is stopping")
    return (f"{role} at {target} hung up in the TLS handshake: it likely refused the "
            f"client certificate {cert_file} (is it of that stack's CA? `arena up "
            f"--mutual-tls` writes client.pem to {_HOME_TLS}), or it is stopping")
