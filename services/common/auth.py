"""Token authentication: one server interceptor, principals with roles.

Callers send ``authorization: Bearer <token>``. Tokens map to principals from a tokens
file (JSON: ``{"<token>": {"name": "alice", "role": "user"}}``), the same JSON inline, and
one admin token (settings ``tokens_file``, ``tokens``, ``admin_token``,
``admin_token_file``). Health checking and reflection stay open so probes and ``grpcurl
list`` work without a token. With authentication off (``--no-auth``), every caller is the
anonymous admin: handlers always have a principal.
"""

from __future__ import annotations

import contextvars
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import grpc
from arena.services.common.config import Config
from arena.services.common.errors import Behavior, Wrap

from arena.documents import read_text_document
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

    def principals(self) -> list[Principal]:
        return list(self._tokens.values())

    def lookup(self, token: str) -> Principal | None:
        found = None
        for known, principal in self._tokens.items():
            if hmac.compare_digest(known.encode(), token.encode()):
                found = principal
        return found

    @classmethod
    def parse(cls, text: str, origin: str) -> dict[str, Principal]:
        """``{"TOKEN": {"name": NAME, "role": "user" or "admin"}, ...}``. Anything else is
        refused, naming the entry by its place (never the token): a misspelt ``role`` made
        the admin meant a user, an empty token or one no header can carry was kept."""
        try:
            raw = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"bad tokens in {origin}: {exc}") from None
        if not isinstance(raw, dict):
            raise ValueError(f'bad tokens in {origin}: the tokens are a JSON object, '
                             f'{{"TOKEN": {{"name": "alice", "role": "user"}}}}')
        tokens: dict[str, Principal] = {}
        for place, (token, entry) in enumerate(raw.items(), 1):
            where = f"bad tokens in {origin}: entry {place}"
            if not token or not all("!" <= char <= "~" for char in token):
                raise ValueError(f"{where}: a token is printable ASCII with no spaces (what "
                                 "an authorization header carries)")
            name = entry.get("name") if isinstance(entry, dict) else None
            if not isinstance(name, str) or not name.strip() or not name.isprintable():
                raise ValueError(f'{where}: an entry is {{"name": NAME, "role": "user" or '
                                 f'"admin"}}, NAME printable')
            unknown = sorted(set(entry) - {"name", "role"})
            if unknown:
                raise ValueError(f"{where}: unknown key {unknown[0]!r}; known: 'name', 'role'")
            tokens[token] = Principal(name, _role(entry.get("role", "user")))
        return tokens

    @classmethod
    def from_config(cls, config: Config) -> TokenStore:
        tokens: dict[str, Principal] = {}
        if config.tokens_file:
            text = read_text_document(config.tokens_file, "the tokens file (ARENA_TOKENS_FILE)")
            tokens.update(cls.parse(text, config.tokens_file))
        if config.tokens:
            tokens.update(cls.parse(config.tokens, "ARENA_TOKENS"))
        admin = config.admin_token
        if not admin and config.admin_token_file:
            admin = read_text_document(config.admin_token_file, "the admin token file").strip()
        if admin:
            tokens[admin] = Principal("admin", "admin")
        roles: dict[str, set[str]] = {}
        for principal in tokens.values():
            roles.setdefault(principal.name, set()).add(principal.role)
        both = sorted(name for name, held in roles.items() if len(held) > 1)
        if both:  # quotas and ownership go by name: the user would be the admin
            raise ValueError(f"bad tokens: {both[0]!r} is both a user and an admin (the admin "
                             "token's name is 'admin')")
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


ANONYMOUS = Principal("anonymous", "admin")


class Authenticator:
    """The authentication layer of every server (``server.ServiceInterceptor``): handlers
    read the caller with current_principal(). ``store=None`` turns authentication off:
    every caller is :data:`ANONYMOUS`."""

    def __init__(self, store: TokenStore | None) -> None:
        self._store = store

    def __call__(self, details: grpc.HandlerCallDetails) -> Wrap | None:
        if details.method.startswith(OPEN_SERVICES):
            return None
        token = bearer_token(details.invocation_metadata)
        if self._store is None:
            principal: Principal | None = ANONYMOUS
        else:
            principal = self._store.lookup(token) if token else None

        def wrap(behavior: Behavior) -> Behavior:
            def authenticated(request: Any, context: grpc.ServicerContext) -> Any:
                if principal is None:
                    missing = "missing" if token is None else "unknown"
                    raise UnauthenticatedError(f"{missing} token: send 'authorization: Bearer …'")
                _current.set(principal)
                return behavior(request, context)

            return authenticated

        return wrap
