"""Pagination shared by every List RPC (the AIP-158 conventions).

A page size of 0 means the default, a larger one than the maximum is lowered to it, a
negative one is an error. A page also stops once it holds ``MAX_PAGE_BYTES`` of messages
(a page of 200 full matches would not fit in a client's 4 MB message), with a token to
the rest. Page tokens are opaque: a service-chosen cursor (a name, an id, an offset)
wrapped so that a token this server did not issue is refused, never guessed at.
"""

from __future__ import annotations

import base64
import binascii
from typing import Generic, TypeVar

from google.protobuf.message import Message

from arena.errors import FieldViolation, InvalidArgumentError

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 200
MAX_PAGE_BYTES = 2 << 20
MAX_TOKEN_CHARS = 512
_TAG = b"arena-page:"


M = TypeVar("M", bound=Message)


class Page(Generic[M]):
    """A page being filled: full at ``size`` items or ``MAX_PAGE_BYTES`` of them (always
    at least one item, so that every page makes progress)."""

    def __init__(self, size: int, max_bytes: int = MAX_PAGE_BYTES) -> None:
        self.size, self.max_bytes = size, max_bytes
        self.items: list[M] = []
        self._bytes = 0

    def add(self, item: M) -> bool:
        """Add ``item``; True once the page is full."""
        self.items.append(item)
        self._bytes += item.ByteSize()
        return len(self.items) >= self.size or self._bytes >= self.max_bytes


def page_size(requested: int) -> int:
    if requested < 0:
        raise InvalidArgumentError.for_fields(
            [FieldViolation("page.page_size", f"must not be negative, got {requested}")])
    return min(requested or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)


def encode_page_token(cursor: str) -> str:
    return base64.urlsafe_b64encode(_TAG + cursor.encode()).decode()


def decode_page_token(token: str, field: str = "page.page_token") -> str:
    """The cursor a token continues after ("" for the first page); ``field`` names the
    request's field in the error."""
    if not token:
        return ""
    if len(token) > MAX_TOKEN_CHARS:
        raise InvalidArgumentError.for_fields(
            [FieldViolation(field, "is not a token this server issued")])
    try:
        raw = base64.urlsafe_b64decode(token.encode())
        if raw.startswith(_TAG):
            return raw[len(_TAG):].decode()
    except (binascii.Error, UnicodeError, ValueError):
        pass
    raise InvalidArgumentError.for_fields(
        [FieldViolation(field, f"is not a token this server issued: {token!r}")])
