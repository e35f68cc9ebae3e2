"""Stable discs for the endgame solver's cutoff: discs that no sequence of moves can flip.

The set is a safe under-estimate. A disc is stable when, on each of its four lines, the line
is completely filled, or the disc touches the board's edge along it, or its neighbour along
it is an already stable disc of the same colour (a flip along that line would have to flip
that neighbour too). Starting from nothing, the rule is applied until the set stops growing.
"""

from __future__ import annotations

import numpy as np

from arena.engine.othello._jit import inline_kernel, kernel

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


_S18 = np.uint64(18)
_S14 = np.uint64(14)
_S28 = np.uint64(28)
_S36 = np.uint64(36)


@inline_kernel
def full_diagonals(occupied: np.uint64) -> tuple[np.uint64, np.uint64]:
    """(squares whose a1-h8-way diagonal is full, those whose h1-a8-way one is full).

    Each empty square is smeared along its diagonal both ways (shifts by 1, 2 and 4
    steps, masked so that no step wraps around the board's side); what the smear misses
    lies on a full diagonal."""
    empty = ~occupied
    # Step 9 (towards h8 and back): a step towards higher squares never lands on file a.
    m1 = _NOT_A
    m2 = m1 & (m1 << _S9)
    m4 = m2 & (m2 << _S18)
    up = empty | ((empty << _S9) & m1)
    up |= (up << _S18) & m2
    up |= (up << _S36) & m4
    n1 = _NOT_H
    n2 = n1 & (n1 >> _S9)
    n4 = n2 & (n2 >> _S18)
    down = empty | ((empty >> _S9) & n1)
    down |= (down >> _S18) & n2
    down |= (down >> _S36) & n4
    full_9 = ~(up | down)
    # Step 7 (towards a8 and back): a step towards higher squares never lands on file h.
    m1 = _NOT_H
    m2 = m1 & (m1 << _S7)
    m4 = m2 & (m2 << _S14)
    up = empty | ((empty << _S7) & m1)
    up |= (up << _S14) & m2
    up |= (up << _S28) & m4
    n1 = _NOT_A
    n2 = n1 & (n1 >> _S7)
    n4 = n2 & (n2 >> _S14)
    down = empty | ((empty >> _S7) & n1)
    down |= (down >> _S14) & n2
    down |= (down >> _S28) & n4
    return full_9, ~(up | down)


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
    full_d9, full_d7 = full_diagonals(occupied)
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
