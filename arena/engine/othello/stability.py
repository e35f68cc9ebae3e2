"""Stable discs for the endgame solver's cutoff: discs that no sequence of moves can flip.

The set is a safe under-estimate. A disc is stable when, on each of its four lines, the line
is completely filled, or the disc touches the board's edge along it, or its neighbour along
it is an already stable disc of the same colour (a flip along that line would have to flip
that neighbour too). Starting from nothing, the rule is applied until the set stops growing.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from arena.engine.othello._jit import U0, kernel

_FILE_A = np.uint64(0x0101010101010101)
_FILE_H = np.uint64(0x8080808080808080)
_ROW_1 = np.uint64(0x00000000000000FF)
_ROW_8 = np.uint64(0xFF00000000000000)
_NOT_A = ~_FILE_A
_NOT_H = ~_FILE_H
_SIDES = _FILE_A | _FILE_H
_TOP_BOTTOM = _ROW_1 | _ROW_8
_RIM = _SIDES | _TOP_BOTTOM
_ROW_SPREAD = np.uint64(0xFF)
_S1 = np.uint64(1)
_S2 = np.uint64(2)
_S4 = np.uint64(4)
_S7 = np.uint64(7)
_S8 = np.uint64(8)
_S9 = np.uint64(9)
_S16 = np.uint64(16)
_S32 = np.uint64(32)


def _diagonals(step_col: int) -> npt.NDArray[np.uint64]:
    """The 15 lines of one diagonal direction (``step_col`` +1: a1-h8 way, -1: h1-a8 way)."""
    lines: dict[int, int] = {}
    for sq in range(64):
        row, col = divmod(sq, 8)
        ident = col - row if step_col == 1 else col + row
        lines[ident] = lines.get(ident, 0) | 1 << sq
    return np.array(sorted(lines.values()), dtype=np.uint64)


_DIAG9 = _diagonals(1)
_DIAG7 = _diagonals(-1)


@kernel
def _full_diagonals(occupied: np.uint64, lines: npt.NDArray[np.uint64]) -> np.uint64:
    full = U0
    for i in range(lines.shape[0]):
        line = lines[i]
        if occupied & line == line:
            full |= line
    return full


@kernel
def stable_discs(own: np.uint64, other: np.uint64) -> np.uint64:
    """A subset of ``own`` that can never be flipped, whatever is played."""
    occupied = own | other
    # Full rows: and-fold each row onto its a-file bit, then spread back over the row.
    x = occupied & (occupied >> _S1)
    x &= x >> _S2
    x &= x >> _S4
    full_row = (x & _FILE_A) * _ROW_SPREAD
    # Full columns: and-fold onto row 1, then spread down the file.
    x = occupied & (occupied >> _S8)
    x &= x >> _S16
    x &= x >> _S32
    full_col = (x & _ROW_1) * _FILE_A
    full_d9 = _full_diagonals(occupied, _DIAG9)
    full_d7 = _full_diagonals(occupied, _DIAG7)
    # Lines already safe whatever the neighbours: full, or leaving the board at once.
    safe_h = full_row | _SIDES
    safe_v = full_col | _TOP_BOTTOM
    safe_9 = full_d9 | _RIM
    safe_7 = full_d7 | _RIM
    stable = own & safe_h & safe_v & safe_9 & safe_7
    while True:
        grown = (
            own
            & (safe_h | ((stable << _S1) & _NOT_A) | ((stable >> _S1) & _NOT_H))
            & (safe_v | (stable << _S8) | (stable >> _S8))
            & (safe_9 | ((stable << _S9) & _NOT_A) | ((stable >> _S9) & _NOT_H))
            & (safe_7 | ((stable << _S7) & _NOT_H) | ((stable >> _S7) & _NOT_A))
        )
        if grown == stable:
            return stable
        stable = grown
