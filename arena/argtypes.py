"""Argument types every command line of Arena shares (the `arena` command, the engine
tools, the protocol engines).

argparse's ``type=int`` is Python's ``int``, which takes any script's digits (``٣``,
``３００``), underscores (``1_000``) and spaces, where every file Arena reads takes the
digits 0-9 alone; ``integer`` takes what the files take and says the same of the rest.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from arena.documents import NumberTooLong, read_integer
from arena.text import digits_hint, shown


def integer(text: str) -> int:
    """An argparse type: an integer in the digits 0-9, a sign before it or not."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not (digits.isascii() and digits.isdigit()):
        raise argparse.ArgumentTypeError(f"not an integer: {shown(text)}{digits_hint(text)}")
    try:
        return read_integer(text)
    except NumberTooLong as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def integer_in(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: an ``integer`` in ``low..high``, refused naming the option (the
    bounds of what the value goes to: a proto field, an engine's limits) rather than
    failing later in the words of a field the person never typed."""

    def parse(text: str) -> int:
        value = integer(text)
        if value < low:
            raise argparse.ArgumentTypeError(
                f"must be 0 or more, got {value}" if low == 0
                else f"must be at least {low}, got {value}")
        if value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high}, got {value}")
        return value

    return parse
