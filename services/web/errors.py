"""Domain errors as HTTP statuses: the one mapping the API and the live streams share."""

from __future__ import annotations

import logging
from typing import TypeVar

from arena import errors

log = logging.getLogger(__name__)
Raised = TypeVar("Raised", bound=BaseException)


class BodyTooLargeError(errors.InvalidArgumentError):
    """A request body over the gateway's limit (413)."""


HTTP_STATUS: list[tuple[type[errors.ArenaError], int, str]] = [
    (BodyTooLargeError, 413, "too-large"),
    (errors.InvalidArgumentError, 400, "invalid-argument"),
    (errors.UnauthenticatedError, 401, "unauthenticated"),
    (errors.PermissionDeniedError, 403, "permission-denied"),
    (errors.NotFoundError, 404, "not-found"),
    (errors.AlreadyExistsError, 409, "already-exists"),
    (errors.FailedPreconditionError, 409, "failed-precondition"),
    (errors.ResourceExhaustedError, 429, "resource-exhausted"),
    (errors.UnavailableError, 503, "unavailable"),
    (errors.DeadlineExceededError, 504, "deadline-exceeded"),
]


def public(exc: Raised) -> Raised | errors.UnavailableError:
    """What a viewer is told of ``exc``: a service the gateway cannot reach is named, not
    where it is or what its operator should check (its address and gRPC's words, "likely
    serves TLS"); the gateway's log keeps those."""
    if isinstance(exc, errors.ServiceUnreachableError):
        log.warning("%s", exc)
        return errors.UnavailableError(
            f"the {exc.role} is unavailable right now (restarting, or stopped): try again "
            "shortly")
    return exc


def http_status(exc: BaseException) -> tuple[int, str]:
    """(status, code) for an error; a service failing in a way no domain error names
    (the SDK's ServerError) is a bad gateway, anything else ours (500)."""
    for kind, status, code in HTTP_STATUS:
        if isinstance(exc, kind):
            return status, code
    if isinstance(exc, errors.ArenaError):
        return 502, "upstream-error"
    return 500, "internal"


# The services' request fields a form of the web API fills in, and the form's own names
# for them (the longest that fits is taken, the rest of the field kept): a refusal of the
# ladder service or the engine names what the person sent, ``bots[1]`` or ``bot``, not
# ``config.bots[1]`` or ``bot_ref``.
FORM_FIELDS = {
    "config.game.kind": "game", "config.game.variant": "variant",
    "config.game.board_size": "size", "config.time_control.": "",
    "config.start_position": "start", "config.": "",
    "bot_ref": "bot", "limits.time_ms": "time_ms", "bot_name": "bot",
    "game.kind": "game", "game.variant": "variant", "game.board_size": "size",
    "page.page_token": "page_token", "bot.name": "name", "bot.version": "version",
}


def form_field(field: str) -> str:
    """``field`` of a service's request as the web form's field that filled it in."""
    fits = [key for key in FORM_FIELDS if field == key or (field.startswith(key)
            and (key.endswith(".") or field[len(key)] in ".["))]
    if not fits:
        return field
    key = max(fits, key=len)
    return FORM_FIELDS[key] + field[len(key):]

