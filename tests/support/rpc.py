"""Every RPC of Arena's API, found by reflection over the service descriptors of ``arena/v1``
(never a hand-written list), and a way to call any of them with raw request bytes.

The auth matrix and the fuzzer (``tests/security``, ``bench/api_fuzz.py``) build on this,
so a service or method added to the protos shows up in both at once.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Sequence
from dataclasses import dataclass

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor
from google.protobuf.message import Message

import arena.v1

# The services the stack serves, by the client role (StackAddresses) that reaches them.
SERVED_BY = {
    "arena.v1.BotRegistry": "registry",
    "arena.v1.Referee": "referee",
    "arena.v1.Ladder": "ladder",
    "arena.v1.Engine": "engine",
    "arena.v1.Status": "referee",
}
# Services in the protos that no Arena process serves, and why.
NOT_SERVED = {
    "arena.v1.BotService": "the API external bots implement; workers call it",
}


def service_descriptors() -> list[ServiceDescriptor]:
    """Every service declared in arena/v1, by full name."""
    found: dict[str, ServiceDescriptor] = {}
    for module_info in pkgutil.iter_modules(arena.v1.__path__):
        if module_info.name.endswith("_pb2"):
            module = importlib.import_module(f"arena.v1.{module_info.name}")
            for service in module.DESCRIPTOR.services_by_name.values():
                found[service.full_name] = service
    return [found[name] for name in sorted(found)]


def unclassified_services() -> list[str]:
    """Services neither served nor listed as not served (a test fails on any)."""
    return [s.full_name for s in service_descriptors()
            if s.full_name not in SERVED_BY and s.full_name not in NOT_SERVED]


def served_methods(service: str | None = None) -> list[MethodDescriptor]:
    """Every method of every served service (or of ``service`` only)."""
    return [method for s in service_descriptors() if s.full_name in SERVED_BY
            and service in (None, s.full_name) for method in s.methods]


def path(method: MethodDescriptor) -> str:
    return f"/{method.containing_service.full_name}/{method.name}"


def request_class(method: MethodDescriptor) -> type[Message]:
    return message_factory.GetMessageClass(method.input_type)


def role_of(method: MethodDescriptor) -> str:
    return SERVED_BY[method.containing_service.full_name]


def bearer(token: str | None) -> tuple[tuple[str, str], ...]:
    return () if token is None else (("authorization", f"Bearer {token}"),)


@dataclass(frozen=True)
class Outcome:
    """How a call ended: its status code, details, and the replies received first."""

    code: grpc.StatusCode
    details: str
    replies: int


def call(channel: grpc.Channel, method: MethodDescriptor, payload: bytes,
         metadata: Sequence[tuple[str, str]] = (), timeout_s: float = 10.0,
         max_replies: int = 0) -> Outcome:
    """Call ``method`` with ``payload`` as the request's bytes. A streaming call is read
    to its end, or until ``max_replies`` replies (then cancelled: OK)."""
    try:
        if not method.server_streaming:
            channel.unary_unary(path(method))(payload, timeout=timeout_s,
                                              metadata=tuple(metadata))
            return Outcome(grpc.StatusCode.OK, "", 1)
        stream = channel.unary_stream(path(method))(payload, timeout=timeout_s,
                                                    metadata=tuple(metadata))
        replies = 0
        for _reply in stream:
            replies += 1
            if max_replies and replies >= max_replies:
                stream.cancel()
                break
        return Outcome(grpc.StatusCode.OK, "", replies)
    except grpc.RpcError as exc:
        return Outcome(exc.code(), exc.details() or "", 0)
