"""Pattern evaluation: weights per game stage, looked up by the ternary index of square sets.

A *family* is a set of squares (an edge with its two X-squares, a corner's 3x3 or 2x5 block,
rows 2-4, the diagonals of length 4-8); its *instances* are the family's images under the
8 board symmetries, listed with their squares in the mapped order, so every instance of a
family reads the same weight table. Within one instance a square is worth 0 (empty), 1 (the
side to move) or 2 (the opponent) and the index is the base-3 number of the squares in list
order (first square most significant). A family whose square set is mapped onto itself by a
symmetry (an edge under its mirror) keeps equal weights for the mirrored indices: the
training fits one weight per orbit (``canonical_indices``). Then the 8 symmetric boards
score the same.

Beside the tables, a few dense terms: a bias (the side to move's edge), mobility difference,
potential mobility difference (empty squares next to the opponent's discs minus those next
to ours) and parity (+1 with an odd number of empties).

Kernel parameter vector (``params``, int64, scores in ``EVAL_SCALE`` units per disc):
``params[0]`` = ``PATTERN``, ``params[1]`` the number of stages, ``params[2]`` the block size,
``params[3 + discs]`` the stage of a position with that many discs, then the weights as int16
packed into the remaining int64 words (a stage's block is then a few hundred kB, which stays
in the caches; int64 tables made the evaluation 3x slower): one block per stage, the
``N_DENSE`` dense weights, then every family's table (``FAMILY_OFFSET``).

The kernel reads each family through the board's symmetric images (``board_for``: mirrors
and a transpose by delta swaps) and gathers the rows and diagonals of the first instance
with shifts, masks and one multiplication (``family_index``), then a base-3 table; the
per-square reading (``instance_index``) serves the training and the tests.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import BinaryIO

import numpy as np
import numpy.typing as npt

from arena.engine.datafiles import read_once
from arena.engine.othello._jit import S1, S7, S8, U0, U1, kernel, popcount
from arena.engine.othello.bitboard import final_value, get_moves, potential_mobility

PATTERN = 3
EVAL_SCALE = 100  # evaluation units per disc
PATTERN_WIN = 1_000_000
HEADER = 3 + 65
DENSE_TERMS = ("bias", "mobility", "potential_mobility", "parity")
N_DENSE = len(DENSE_TERMS)



def _sq(r: int, c: int) -> int:
    return r * 8 + c


def _diagonal(length: int) -> list[int]:
    return [_sq(i, 8 - length + i) for i in range(length)]


# Families: name -> squares of one instance (a1 = 0, h1 = 7; row 0 is rank 1).
FAMILIES: dict[str, list[int]] = {
    "edge_2x": [9, 0, 1, 2, 3, 4, 5, 6, 7, 14],
    "corner_3x3": [0, 1, 2, 8, 9, 10, 16, 17, 18],
    "corner_2x5": [0, 1, 2, 3, 4, 8, 9, 10, 11, 12],
    "row_2": list(range(8, 16)),
    "row_3": list(range(16, 24)),
    "row_4": list(range(24, 32)),
    "diagonal_8": _diagonal(8),
    "diagonal_7": _diagonal(7),
    "diagonal_6": _diagonal(6),
    "diagonal_5": _diagonal(5),
    "diagonal_4": _diagonal(4),
}


def symmetry(t: int, sq: int) -> int:
    """Square ``sq`` under board symmetry ``t`` (0-7: optional transpose, then mirrors)."""
    r, c = divmod(sq, 8)
    if t & 4:
        r, c = c, r
    if t & 1:
        c = 7 - c
    if t & 2:
        r = 7 - r
    return _sq(r, c)


def transform_board(t: int, bits: int) -> int:
    out = 0
    for sq in range(64):
        if (bits >> sq) & 1:
            out |= 1 << symmetry(t, sq)
    return out


def _instances() -> tuple[list[list[int]], list[int], list[int]]:
    squares: list[list[int]] = []
    family_of: list[int] = []
    symmetry_of: list[int] = []
    for f, base in enumerate(FAMILIES.values()):
        seen: set[frozenset[int]] = set()
        for t in range(8):
            image = [symmetry(t, sq) for sq in base]
            if frozenset(image) not in seen:
                seen.add(frozenset(image))
                squares.append(image)
                family_of.append(f)
                symmetry_of.append(t)
    return squares, family_of, symmetry_of


_INSTANCE_SQUARES, _FAMILY_OF, _SYMMETRY_OF = _instances()
N_FAMILIES = len(FAMILIES)
FAMILY_SIZE = np.array([3 ** len(s) for s in FAMILIES.values()], dtype=np.int64)
FAMILY_OFFSET = N_DENSE + np.concatenate(([0], np.cumsum(FAMILY_SIZE)[:-1])).astype(np.int64)
BLOCK = int(N_DENSE + FAMILY_SIZE.sum())
N_INSTANCES = len(_INSTANCE_SQUARES)
INSTANCE_FAMILY = np.array(_FAMILY_OF, dtype=np.int64)
INSTANCE_LEN = np.array([len(s) for s in _INSTANCE_SQUARES], dtype=np.int64)
INSTANCE_BASE = FAMILY_OFFSET[INSTANCE_FAMILY]  # where each instance's table starts
INSTANCE_SQUARES = np.full((N_INSTANCES, 10), 0, dtype=np.int64)
for _i, _squares in enumerate(_INSTANCE_SQUARES):
    INSTANCE_SQUARES[_i, : len(_squares)] = _squares
# FAMILY_USES[t, f]: family f has an instance under symmetry t (others are duplicates).
FAMILY_USES = np.zeros((8, N_FAMILIES), dtype=np.int64)
for _f, _t in zip(_FAMILY_OF, _SYMMETRY_OF, strict=True):
    FAMILY_USES[_t, _f] = 1
# TERNARY[n, bits]: base-3 value of the n low bits, bit 0 the most significant digit.
TERNARY = np.array(
    [[sum(((b >> i) & 1) * 3 ** (n - 1 - i) for i in range(n)) for b in range(256)]
     for n in range(9)],
    dtype=np.int64,
)
_BYTE = np.uint64(0xFF)
_SUM_ROWS = np.uint64(0x0101010101010101)
# DIAGONAL_MASK[n]: the squares (i, 8 - n + i), i < n, of the diagonal families.
DIAGONAL_MASK = np.array(
    [sum(1 << _sq(i, 8 - n + i) for i in range(n)) if n else 0 for n in range(9)],
    dtype=np.uint64,
)


def stage_table(stages: int) -> npt.NDArray[np.int64]:
    """Stage of a position by its disc count (0..64): equal slices of 4..64 discs."""
    discs = np.arange(65)
    return np.clip((discs - 4) * stages // 61, 0, stages - 1).astype(np.int64)


@kernel
def _mirror_columns(x: np.uint64) -> np.uint64:
    x = ((x >> S1) & np.uint64(0x5555555555555555)) | ((x & np.uint64(0x5555555555555555)) << S1)
    x = ((x >> np.uint64(2)) & np.uint64(0x3333333333333333)) | (
        (x & np.uint64(0x3333333333333333)) << np.uint64(2)
    )
    return ((x >> np.uint64(4)) & np.uint64(0x0F0F0F0F0F0F0F0F)) | (
        (x & np.uint64(0x0F0F0F0F0F0F0F0F)) << np.uint64(4)
    )


@kernel
def _mirror_rows(x: np.uint64) -> np.uint64:
    x = ((x >> S8) & np.uint64(0x00FF00FF00FF00FF)) | ((x & np.uint64(0x00FF00FF00FF00FF)) << S8)
    x = ((x >> np.uint64(16)) & np.uint64(0x0000FFFF0000FFFF)) | (
        (x & np.uint64(0x0000FFFF0000FFFF)) << np.uint64(16)
    )
    return (x >> np.uint64(32)) | (x << np.uint64(32))


@kernel
def _transpose(x: np.uint64) -> np.uint64:
    """Square (r, c) to (c, r): three masked delta swaps."""
    t = np.uint64(0x0F0F0F0F00000000) & (x ^ (x << np.uint64(28)))
    x ^= t ^ (t >> np.uint64(28))
    t = np.uint64(0x3333000033330000) & (x ^ (x << np.uint64(14)))
    x ^= t ^ (t >> np.uint64(14))
    t = np.uint64(0x5500550055005500) & (x ^ (x << S7))
    x ^= t ^ (t >> S7)
    return x


@kernel
def board_for(x: np.uint64, t: int) -> np.uint64:
    """The board whose square ``sq`` holds what ``x`` has on ``symmetry(t, sq)``: family
    instance ``t`` of ``x`` reads like the family's first instance of this board."""
    if t & 1:
        x = _mirror_columns(x)
    if t & 2:
        x = _mirror_rows(x)
    if t & 4:
        x = _transpose(x)
    return x


@kernel
def _digits(p: np.uint64, o: np.uint64, n: int) -> int:
    """Ternary value of the n low bits of p and o (already shifted and masked)."""
    return int(TERNARY[n, np.int64(p)] + 2 * TERNARY[n, np.int64(o)])


@kernel
def _square(p: np.uint64, o: np.uint64, sq: int) -> int:
    s = np.uint64(sq)
    return int((p >> s) & U1) + 2 * int((o >> s) & U1)


@kernel
def family_index(p: np.uint64, o: np.uint64, f: int) -> int:
    """Index of family ``f``'s first instance (squares in ``FAMILIES`` order)."""
    if f == 0:  # edge_2x: b2, a1..h1, g2
        return _square(p, o, 9) * 19683 + _digits(p & _BYTE, o & _BYTE, 8) * 3 + _square(p, o, 14)
    if f == 1:  # corner_3x3: three rows of three
        r0 = _digits(p & S7, o & S7, 3)
        r1 = _digits((p >> S8) & S7, (o >> S8) & S7, 3)
        r2 = _digits((p >> np.uint64(16)) & S7, (o >> np.uint64(16)) & S7, 3)
        return r0 * 729 + r1 * 27 + r2
    five = np.uint64(31)
    if f == 2:  # corner_2x5: two rows of five
        r0 = _digits(p & five, o & five, 5)
        return r0 * 243 + _digits((p >> S8) & five, (o >> S8) & five, 5)
    if f <= 5:  # rows 2-4
        shift = np.uint64(8 * (f - 2))
        return _digits((p >> shift) & _BYTE, (o >> shift) & _BYTE, 8)
    n = 14 - f  # diagonals of 8 .. 4 squares, gathered into the top byte by file
    mask = DIAGONAL_MASK[n]
    down = np.uint64(56 + 8 - n)
    return _digits(((p & mask) * _SUM_ROWS) >> down, ((o & mask) * _SUM_ROWS) >> down, n)


@kernel
def instance_index(p: np.uint64, o: np.uint64, i: int) -> int:
    """Ternary index of instance ``i`` (0 empty, 1 side to move, 2 opponent per square)."""
    idx = 0
    for k in range(INSTANCE_LEN[i]):
        sq = np.uint64(INSTANCE_SQUARES[i, k])
        idx = idx * 3 + int((p >> sq) & U1) + 2 * int((o >> sq) & U1)
    return idx


@kernel
def dense_terms(p: np.uint64, o: np.uint64, mp: np.uint64, mo: np.uint64, k: int) -> int:
    """Dense term ``k`` (see ``DENSE_TERMS``) from the side to move's view."""
    if k == 0:
        return 1
    if k == 1:
        return popcount(mp) - popcount(mo)
    empty = ~(p | o)
    if k == 2:
        return potential_mobility(o, empty) - potential_mobility(p, empty)
    return 1 if popcount(empty) % 2 == 1 else -1


@kernel
def pattern_eval(p: np.uint64, o: np.uint64, params: npt.NDArray[np.int64]) -> int:
    mp = get_moves(p, o)
    mo = get_moves(o, p)
    if mp == U0 and mo == U0:
        return final_value(p, o, PATTERN_WIN)
    discs = popcount(p | o)
    weights = params.view(np.int16)  # int16 tables: a stage's block stays in the caches
    base = 4 * HEADER + params[3 + discs] * params[2]
    empty = ~(p | o)
    score = int(weights[base])
    score += int(weights[base + 1]) * (popcount(mp) - popcount(mo))
    score += int(weights[base + 2]) * (potential_mobility(o, empty) - potential_mobility(p, empty))
    parity = int(weights[base + 3])
    score += parity if popcount(empty) % 2 == 1 else -parity
    for t in range(8):
        pt = board_for(p, t)
        ot = board_for(o, t)
        for f in range(N_FAMILIES):
            if FAMILY_USES[t, f]:
                score += int(weights[base + FAMILY_OFFSET[f] + family_index(pt, ot, f)])
    return score


@kernel
def position_features(
    ps: npt.NDArray[np.uint64],
    os: npt.NDArray[np.uint64],
    index: npt.NDArray[np.int64],
    dense: npt.NDArray[np.float64],
) -> None:
    """For each position: the block offset each instance reads (``index[n, i]``) and the
    dense terms (``dense[n, k]``); the training's view of ``pattern_eval``."""
    for n in range(ps.shape[0]):
        p = ps[n]
        o = os[n]
        mp = get_moves(p, o)
        mo = get_moves(o, p)
        for k in range(N_DENSE):
            dense[n, k] = dense_terms(p, o, mp, mo, k)
        for i in range(N_INSTANCES):
            index[n, i] = INSTANCE_BASE[i] + instance_index(p, o, i)


def canonical_indices() -> npt.NDArray[np.int64]:
    """For each block offset, the smallest offset its symmetric twins share it with (dense
    terms map to themselves). Families whose square set a symmetry maps onto itself get one
    weight per orbit of their indices."""
    canon = np.arange(BLOCK, dtype=np.int64)
    for f, base in enumerate(FAMILIES.values()):
        n = len(base)
        idx = np.arange(3**n, dtype=np.int64)
        digits = (idx[:, None] // 3 ** np.arange(n - 1, -1, -1)) % 3  # first square first
        best = idx.copy()
        for t in range(1, 8):
            image = [symmetry(t, sq) for sq in base]
            if set(image) != set(base) or image == base:
                continue
            # The disc on base[k] moves to image[k] = base[perm[k]].
            perm = [base.index(sq) for sq in image]
            moved = np.zeros_like(digits)
            moved[:, perm] = digits
            other = (moved * 3 ** np.arange(n - 1, -1, -1)).sum(axis=1)
            best = np.minimum(best, other)
        start = int(FAMILY_OFFSET[f])
        canon[start : start + 3**n] = start + best
    return canon


def build_params(weights: npt.NDArray[np.integer]) -> npt.NDArray[np.int64]:
    """Kernel parameters from per-stage weight blocks (``(stages, BLOCK)``, eval units)."""
    stages = weights.shape[0]
    if weights.shape != (stages, BLOCK) or stages < 1:
        raise ValueError(f"pattern weights must have shape (stages, {BLOCK}), got {weights.shape}")
    if np.abs(weights).max(initial=0) > np.iinfo(np.int16).max:
        raise ValueError("pattern weights must fit in 16 bits")
    params = np.zeros(HEADER + (stages * BLOCK + 3) // 4, dtype=np.int64)
    params[0] = PATTERN
    params[1] = stages
    params[2] = BLOCK
    params[3 : 3 + 65] = stage_table(stages)
    params[HEADER:].view(np.int16)[: stages * BLOCK] = weights.reshape(-1)
    return params


WEIGHTS_DIR = Path(__file__).with_name("weights")


def weight_sets() -> list[str]:
    """Names of the shipped weight files (``weights/NAME.npz``)."""
    return sorted(path.stem for path in WEIGHTS_DIR.glob("*.npz"))


def read_weights(source: Path | BinaryIO) -> npt.NDArray[np.int64]:
    with np.load(source) as data:
        return np.asarray(data["weights"], dtype=np.int64)


def _params_of(raw: bytes) -> npt.NDArray[np.int64]:
    return build_params(read_weights(io.BytesIO(raw)))


def load_weight_set(name: str) -> tuple[npt.NDArray[np.int64], str]:
    """(kernel parameters, SHA-256 of the file) of a shipped weight set, built once."""
    return read_once(WEIGHTS_DIR / f"{name}.npz", _params_of)
