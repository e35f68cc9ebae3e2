"""Text that crosses a trust boundary: bounded in length, and free of the control
characters a terminal obeys.

What one user stores (a bot's description, a ladder's name, an imported record's player
names) is shown to every other user, in their terminal and in their browser, and an
engine's own words (its stderr, an external bot's error) reach match results. A terminal
acts on escape sequences: ``ESC [2J`` clears the screen, ``ESC ] 0;...`` sets the window
title, ``ESC ] 52;...`` writes the clipboard in some terminals. So text typed by a user is
refused when it holds a control character (``unprintable``, a field violation), and text
from elsewhere has them replaced (``printable``).
"""

from __future__ import annotations

from collections.abc import Iterable

# Error messages are bounded: a detail never echoes megabytes of someone's input back.
MAX_MESSAGE_CHARS = 1000
SHOWN_CHARS = 500  # of a value quoted in an error message
REPLACEMENT = "\ufffd"


def bounded(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` cut to ``limit`` characters, an ellipsis marking the cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shown(value: object) -> str:
    """``repr(value)`` for an error message, cut to ``SHOWN_CHARS`` characters: what a
    caller sent may be megabytes, or hold an integer too long to write out."""
    try:
        return bounded(repr(value), SHOWN_CHARS)
    except ValueError:  # an integer of more digits than Python writes (4,300)
        return "(a number too long to show)"


def _allowed(char: str, keep: str) -> bool:
    return char.isprintable() or char in keep


def unprintable(text: str, keep: str = "") -> str | None:
    """The first character of ``text`` that is not printable (control, format, separator
    other than the space; ``str.isprintable``) and not in ``keep``, or None."""
    return next((char for char in text if not _allowed(char, keep)), None)


def unprintable_problem(text: str, keep: str = "") -> str | None:
    """A field violation's text for ``text`` holding such a character, or None."""
    found = unprintable(text, keep)
    if found is None:
        return None
    return f"must contain printable characters only, found U+{ord(found):04X}"


def printable(text: str, keep: str = "") -> str:
    """``text`` with every such character replaced by U+FFFD."""
    if unprintable(text, keep) is None:
        return text
    return "".join(char if _allowed(char, keep) else REPLACEMENT for char in text)


# An engine's remarks about one move (``SearchInfo.notes``): stored with every move of a
# match, so bounded per move.
NOTES_KEPT = 4
NOTE_CHARS = 200


def engine_notes(lines: Iterable[str]) -> list[str]:
    """The last ``NOTES_KEPT`` non-blank of ``lines``, stripped, each cut to ``NOTE_CHARS``
    and made ``printable``: what an engine printed reaches other users' terminals and
    browsers."""
    kept = [line for line in map(str.strip, lines) if line][-NOTES_KEPT:]
    return [printable(bounded(line, NOTE_CHARS)) for line in kept]


def digits_hint(text: str) -> str:
    """What to fix when ``text`` holds digits other than ASCII's 0-9, else nothing (the
    files Arena reads and its command lines take those alone)."""
    other = next((char for char in text if char.isdigit() and not char.isascii()), None)
    if other is None:
        return ""
    return f" (it has {other!r}, U+{ord(other):04X}: write numbers with the digits 0-9)"
