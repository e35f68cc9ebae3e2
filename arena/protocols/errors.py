"""The one error the protocol codecs raise."""

from __future__ import annotations

from arena.formats.errors import FormatError


class ProtocolError(FormatError):
    """A line that is not what the protocol allows; the message quotes the line."""
