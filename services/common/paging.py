"""Pagination shared by every List RPC (the AIP-158 conventions).

A page size of 0 means the default, a larger one than the maximum is lowered to it, a
negative one is an error. Page tokens are opaque: a service-chosen cursor (a name, an id,
an offset) wrapped so that a token this server did not issue is refused, never guessed at.
"""

from __future__ import annotations

import base64
import binascii

from arena.errors import FieldViolation, InvalidArgumentError

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 200
_TAG = b"arena-page:"


def page_size(requested: int) -> int:
    if requested < 0:
        raise InvalidArgumentError.for_fields(
            [FieldViolation("page.page_size", f"must not be negative, got {requested}")])
    return min(requested or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)


def encode_page_token(cursor: str) -> str:
    return base64.urlsafe_b64encode(_TAG + cursor.encode()).decode()


def decode_page_token(token: str) -> str:
    """The cursor a token continues after ("" for the first page)."""
    if not token:
        return ""
    try:
        raw = base64.urlsafe_b64decode(token.encode())
        if raw.startswith(_TAG):
            return raw[len(_TAG):].decode()
    except (binascii.Error, UnicodeError, ValueError):
        pass
    raise InvalidArgumentError.for_fields(
        [FieldViolation("page.page_token", f"is not a token this server issued: {token!r}")])
