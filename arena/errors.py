"""Domain errors. Each maps to one gRPC status code in one place, ``arena.rpc``, which
servers and the SDK share; the rest of the core raises them and never imports gRPC.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from arena.text import bounded

# What a caller is told of a bad request (``reported``): a refusal travels in a gRPC
# status, in the response's metadata, and a client refuses metadata past 8 KB (gRPC's
# default soft limit; the caller would see "Stream removed", not the refusal). The
# message goes percent-encoded (3 bytes for each byte of a non-ASCII character), the
# field violations serialized and base64-encoded (4 bytes for 3). So the message takes at
# most MESSAGE_WIRE_BYTES there, and the violations, at most MAX_VIOLATIONS_REPORTED of
# them, what is left of STATUS_WIRE_BYTES; the first is always shown, cut to fit.
MAX_VIOLATIONS_REPORTED = 50
STATUS_WIRE_BYTES = 7_000
MESSAGE_WIRE_BYTES = 3_000
_DETAILS_OVERHEAD = 100  # the detail's type URL, and a few bytes of tags a violation


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


def integer_violation(field: str, value: object, low: int, high: int, hint: str = ""
                      ) -> FieldViolation | None:
    """Why ``value`` is not one integer in ``low..high`` (a bot config's parameter), None
    if it is; ``hint`` follows the message when a table came where one integer belongs."""
    if isinstance(value, dict):
        return FieldViolation(field, f"must be one integer, not a table (got {value!r})" + hint)
    if isinstance(value, bool) or not isinstance(value, int):
        return FieldViolation(field, f"must be an integer in {low}..{high}, got {value!r}")
    if not low <= value <= high:
        return FieldViolation(field, f"must be in {low}..{high}, got {value}")
    return None


class ArenaError(Exception):
    """Base of the errors a service may turn into a status code."""


class InvalidArgumentError(ArenaError, ValueError):
    """Bad input; carries the violations field by field."""

    def __init__(self, message: str, violations: list[FieldViolation] | None = None) -> None:
        self.message = message  # what is said before the violations
        self.violations = list(violations or [])
        detail = "; ".join(str(v) for v in self.violations)
        super().__init__(f"{message}: {detail}" if detail else message)

    @classmethod
    def for_fields(cls, violations: list[FieldViolation]) -> InvalidArgumentError:
        return cls("invalid request", violations)


def reported(exc: BaseException) -> tuple[str, list[FieldViolation]]:
    """What a caller is told of ``exc``, on the gRPC API and the web API alike: its message
    and its field violations, each bounded (``arena.text.bounded``) and all of them within
    what a gRPC status carries (``STATUS_WIRE_BYTES``), so that no reply echoes megabytes
    of a request back and every refusal arrives."""
    message = _within(bounded(str(exc)), MESSAGE_WIRE_BYTES, _percent_encoded)
    room = (STATUS_WIRE_BYTES - _percent_encoded(message)) * 3 // 4 - _DETAILS_OVERHEAD
    shown: list[FieldViolation] = []
    violations = exc.violations if isinstance(exc, InvalidArgumentError) else []
    for v in violations[:MAX_VIOLATIONS_REPORTED]:
        field, description = bounded(v.field, 200), bounded(v.description)
        left = room - _utf8(field) - 4
        if shown and _utf8(description) > left:
            break
        shown.append(FieldViolation(field, _within(description, left, _utf8)))
        room = left - _utf8(shown[-1].description)
    return message, shown


def _utf8(text: str) -> int:
    return len(text.encode())


def _percent_encoded(text: str) -> int:
    """Bytes of ``text`` as a gRPC status message: printable ASCII but '%' as it is, every
    other byte as %XX."""
    return sum(1 if " " <= char <= "~" and char != "%" else 3 * _utf8(char) for char in text)


def _within(text: str, limit: int, size: Callable[[str], int]) -> str:
    """``text`` cut, an ellipsis marking the cut, so that ``size`` of it is at most
    ``limit``."""
    if size(text) <= limit:
        return text
    used = size("…")
    for end, char in enumerate(text):
        used += size(char)
        if used > limit:
            return text[:end] + "…"
    return text


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


class ServiceUnreachableError(UnavailableError):
    """A client could not reach the ``role`` service at all (stopped, restarting, or a
    TLS mistake); the message says where and what to check, for whoever runs the stack."""

    def __init__(self, message: str, role: str) -> None:
        super().__init__(message)
        self.role = role


class DeadlineExceededError(ArenaError):
    """The operation ran out of time."""
