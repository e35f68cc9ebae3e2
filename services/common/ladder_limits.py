"""What one ladder may ask for, whoever asks: the ladder service refuses more, and the web
gateway and `arena demo` refuse it alike before calling it, in the same words."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

MAX_BOTS = 32  # bots in one ladder
MAX_GAMES = 20_000  # games in one ladder (an SPRT's maximum too)


def bot_count_problem(count: int) -> str:
    """Why a ladder cannot have ``count`` bots ('' if it can)."""
    return "" if 2 <= count <= MAX_BOTS else f"a ladder needs 2..{MAX_BOTS} bots, got {count}"


def repeated_bots(bots: Sequence[Hashable]) -> dict[int, int]:
    """The bots listed again: the index of each repeat -> the index where it was first
    listed (``bots``: whatever tells one bot from another, a name or name and version)."""
    first: dict[Hashable, int] = {}
    repeats: dict[int, int] = {}
    for index, bot in enumerate(bots):
        if bot in first:
            repeats[index] = first[bot]
        else:
            first[bot] = index
    return repeats
