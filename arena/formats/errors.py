"""The one error every record parser raises on malformed input."""

from __future__ import annotations

from arena.errors import InvalidArgumentError


class FormatError(InvalidArgumentError):
    """A malformed record. ``line`` and ``column`` are 1-based when known; the message
    starts with them (``line 3, column 17: ...``) so a log line points at the spot."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        self.line = line
        self.column = column
        where = []
        if line is not None:
            where.append(f"line {line}")
        if column is not None:
            where.append(f"column {column}")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)
        self.reason = message

    @classmethod
    def at(cls, text: str, offset: int, message: str) -> FormatError:
        """An error at character ``offset`` of ``text``."""
        line, column = line_and_column(text, offset)
        return cls(message, line, column)


def line_and_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of character ``offset`` in ``text``."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column
