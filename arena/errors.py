"""Domain errors. Each maps to one gRPC status code in one place, ``arena.rpc``, which
servers and the SDK share; the rest of the core raises them and never imports gRPC.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass

from arena.text import bounded

# What a caller is told of a bad request: at most this many field violations, each
# bounded like the message (``reported``), whatever the request made of them.
MAX_VIOLATIONS_REPORTED = 50


@dataclass(frozen=True)
class FieldViolation:
    """One bad field of a request: ``field`` is a dotted path (``engine.depth_begin``)."""

    field: str
    description: str

    def __str__(self) -> str:
        return f"{self.field}: {self.description}"


def unknown_key(key: object, known: Iterable[str], whose: str) -> str:
    """``unknown key for <whose> (known: a, b, c)``, with the closest known name first when
    one is near (``max_depth`` given to an evaluator that has ``depth``)."""
    names = sorted(known)
    close = difflib.get_close_matches(str(key), names, n=1, cutoff=0.6)
    guess = f"did you mean {close[0]!r}? " if close else ""
    return f"unknown key for {whose} ({guess}known: {', '.join(names)})"


class ArenaError(Exception):
    """Base of the errors a service may turn into a status code."""


class InvalidArgumentError(ArenaError, ValueError):
    """Bad input; carries the violations field by field."""

    def __init__(self, message: str, violations: list[FieldViolation] | None = None) -> None:
        self.violations = list(violations or [])
        detail = "; ".join(str(v) for v in self.violations)
        super().__init__(f"{message}: {detail}" if detail else message)

    @classmethod
    def for_fields(cls, violations: list[FieldViolation]) -> InvalidArgumentError:
        return cls("invalid request", violations)


def reported(exc: BaseException) -> tuple[str, list[FieldViolation]]:
    """What a caller is told of ``exc``, on the gRPC API and the web API alike: its message
    and its field violations, each bounded (``arena.text.bounded``), so that no reply
    echoes megabytes of a request back."""
    violations = exc.violations if isinstance(exc, InvalidArgumentError) else []
    return bounded(str(exc)), [FieldViolation(bounded(v.field, 200), bounded(v.description))
                               for v in violations[:MAX_VIOLATIONS_REPORTED]]


class NotFoundError(ArenaError, LookupError):
    """An id that names nothing."""


class AlreadyExistsError(ArenaError):
    """A create that collides with something that exists."""


class FailedPreconditionError(ArenaError):
    """The request is fine but the thing is in the wrong state for it."""


class UnauthenticatedError(ArenaError):
    """No credentials, or credentials nobody issued."""


class PermissionDeniedError(ArenaError):
    """Known caller, not allowed to do this."""


class ResourceExhaustedError(ArenaError):
    """A quota or rate limit is used up; the message names the limit, and ``limit`` is
    its name for the services' metrics (``arena_limit_refusals_total``)."""

    def __init__(self, message: str, limit: str = "") -> None:
        super().__init__(message)
        self.limit = limit


class UnavailableError(ArenaError):
    """A dependency (Redis, an external bot) cannot be reached right now."""


class DeadlineExceededError(ArenaError):
    """The operation ran out of time."""
