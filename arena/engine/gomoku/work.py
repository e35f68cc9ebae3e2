"""The scratch array of one arena-gomoku search, shared by all its kernels.

One int64 array holds, at the ``W_*`` offsets: the principal variation of each ply
(row ``ply``: its length, then the moves), the move list and sort keys of each ply of
the alpha-beta search, the allowed root moves, the history scores of the move ordering,
and the move lists and winning line of the threat searches (VCF, VCT). Move lists are
blocks of ``MAX_CELLS``. Kernels index it directly rather than take slices: a slice is
a new array whose reference count each call would update.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from arena.engine.gomoku.board import MAX_CELLS

MAX_PLY = 96  # the alpha-beta search's deepest ply
MAX_THREAT_PLY = 64  # the threat searches' longest line
PV_STRIDE = MAX_PLY + 2

W_PV = 0
W_MOVES = W_PV + (MAX_PLY + 1) * PV_STRIDE
W_KEYS = W_MOVES + MAX_PLY * MAX_CELLS
W_ROOT = W_KEYS + MAX_PLY * MAX_CELLS  # count, then the moves
W_HISTORY = W_ROOT + 1 + MAX_CELLS  # [(colour - 1) * MAX_CELLS + cell]
W_THREAT_MOVES = W_HISTORY + 2 * MAX_CELLS  # per threat-search ply
W_THREAT_KEYS = W_THREAT_MOVES + MAX_THREAT_PLY * MAX_CELLS
W_LINE = W_THREAT_KEYS + MAX_THREAT_PLY * MAX_CELLS  # a threat search's winning line
W_LENGTH = W_LINE + MAX_THREAT_PLY + 4

Work = npt.NDArray[np.int64]


def new_work() -> Work:
    return np.zeros(W_LENGTH, dtype=np.int64)
