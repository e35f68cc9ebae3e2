"""Ctrl-C for commands that run the engines' compiled kernels in the foreground.

Python acts on a signal between its own instructions; a kernel does not return to them
until it finishes, so Python's handler would wait for the end of a perft at depth 30 or a
search given ten minutes. These commands let Ctrl-C stop the process at once, as it stops
a C program: they hold nothing that a sudden end could lose.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import TypeVar

A = TypeVar("A")


def stops_at_once(command: Callable[[A], int]) -> Callable[[A], int]:
    """``command`` with SIGINT's default action (the process ends) while it runs."""

    def run(args: A) -> int:
        previous = signal.signal(signal.SIGINT, signal.SIG_DFL)
        try:
            return command(args)
        finally:
            signal.signal(signal.SIGINT, previous)

    return run
