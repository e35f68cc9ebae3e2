"""Argument types every command line of Arena shares (the `arena` command, the engine
tools, the protocol engines).

argparse's ``type=int`` is Python's ``int``, which takes any script's digits (``٣``,
``３００``), underscores (``1_000``) and spaces, where every file Arena reads takes the
digits 0-9 alone; ``integer`` takes what the files take and says the same of the rest.
"""

from __future__ import annotations

import argparse

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
