"""Token authentication: one server interceptor, principals with roles.

Callers send ``authorization: Bearer <token>``. Tokens map to principals from a tokens
file (JSON: ``{"<token>": {"name": "alice", "role": "user"}}``) and/or the environment
(``ARENA_TOKENS`` holding the same JSON, ``ARENA_ADMIN_TOKEN`` for one admin). Health
checking and reflection stay open so probes and ``grpcurl list`` work without a token.
"""

from __future__ import annotations

import contextvars
import hmac
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import grpc
from arena.services.common.errors import Behavior, rewrap

from arena.errors import PermissionDeniedError, UnauthenticatedError

Role = Literal["admin", "user"]
OPEN_SERVICES = ("/grpc.health.v1.Health/", "/grpc.reflection.")


@dataclass(frozen=True)
class Principal:
    name: str
    role: Role

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    def require_owner_or_admin(self, owner: str, what: str) -> None:
        if not self.is_admin and self.name != owner:
            raise PermissionDeniedError(f"{self.name} may not change {what} owned by {owner}")


_current: contextvars.ContextVar[Principal | None] = contextvars.ContextVar(
    "arena_principal", default=None
)


def current_principal() -> Principal:
    """The authenticated caller of the RPC being handled."""
    principal = _current.get()
    if principal is None:
        raise UnauthenticatedError("no authenticated caller")
    return principal


class TokenStore:
    """Token -> principal, compared in constant time."""

    def __init__(self, tokens: Mapping[str, Principal]) -> None:
        self._tokens = dict(tokens)

    def lookup(self, token: str) -> Principal | None:
        found = None
        for known, principal in self._tokens.items():
            if hmac.compare_digest(known.encode(), token.encode()):
                found = principal
        return found

    @classmethod
    def parse(cls, text: str, origin: str) -> dict[str, Principal]:
        try:
            raw = json.loads(text)
            return {
                str(token): Principal(str(entry["name"]), _role(entry.get("role", "user")))
                for token, entry in raw.items()
            }
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise ValueError(f"bad tokens in {origin}: {exc}") from exc

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> TokenStore:
        env = os.environ if env is None else env
        tokens: dict[str, Principal] = {}
        if path := env.get("ARENA_TOKENS_FILE"):
            tokens.update(cls.parse(Path(path).read_text(), path))
        if text := env.get("ARENA_TOKENS"):
            tokens.update(cls.parse(text, "ARENA_TOKENS"))
        if admin := env.get("ARENA_ADMIN_TOKEN"):
            tokens[admin] = Principal("admin", "admin")
        return cls(tokens)


def _role(value: object) -> Role:
    if value == "admin":
        return "admin"
    if value == "user":
        return "user"
    raise ValueError(f"unknown role {value!r}")


def bearer_token(metadata: tuple[tuple[str, str | bytes], ...] | None) -> str | None:
    for key, value in metadata or ():
        if key == "authorization" and isinstance(value, str) and value.startswith("Bearer "):
            return value[len("Bearer "):].strip()
    return None


class AuthInterceptor(grpc.ServerInterceptor):  # type: ignore[type-arg]
    """Authenticates every Arena RPC; handlers read the caller with current_principal()."""

    def __init__(self, store: TokenStore) -> None:
        self._store = store

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], grpc.RpcMethodHandler[Any, Any] | None],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = continuation(handler_call_details)
        if handler is None or handler_call_details.method.startswith(OPEN_SERVICES):
            return handler
        token = bearer_token(handler_call_details.invocation_metadata)
        principal = self._store.lookup(token) if token else None

        def wrap(behavior: Behavior, streaming: bool) -> Behavior:
            def authenticated(request: Any, context: grpc.ServicerContext) -> Any:
                if principal is None:
                    missing = "missing" if token is None else "unknown"
                    raise UnauthenticatedError(f"{missing} token: send 'authorization: Bearer …'")
                _current.set(principal)
                return behavior(request, context)

            if not streaming:
                return authenticated

            def stream(request: Any, context: grpc.ServicerContext) -> Any:
                yield from authenticated(request, context)

            return stream

        return rewrap(handler, wrap)
