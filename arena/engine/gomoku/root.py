"""arena-gomoku's whole search in one kernel: root threats, VCF, safe moves, deepening.

``search_root`` runs every step of a search without coming back to Python, and releases
the interpreter lock while it does (see ``control.search_kernel``):

1. a five for the side to move wins; one five point of the opponent is the only move
   (answered at once, score 0); two or more mean the game is lost;
2. a VCF (victory by continuous fours) of at most ``vcf_plies`` plies wins;
3. when the opponent has a VCF, the root moves are those after which it has none;
4. iterative deepening with ``negamax`` from depth 1 to ``max_depth``: no iteration
   starts after ``soft_deadline`` (on the deadline's clock); an iteration cut short by a
   limit is dropped.

The report goes into ``out`` (slots ``OUT_*``); the captured tree of the last finished
iteration into ``kept_tree``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from arena.engine.gomoku.board import EMPTY, Cells, Counts, Keys
from arena.engine.gomoku.clock import clock_ns
from arena.engine.gomoku.control import (
    CTX_ABORTED,
    CTX_CLOCK,
    CTX_TREE_COUNT,
    Context,
    StopArray,
    search_kernel,
)
from arena.engine.gomoku.patterns import Patterns, Stats, Table, play, unplay
from arena.engine.gomoku.search import (
    WIN,
    WIN_BOUND,
    Moves,
    PvTable,
    TtData,
    TtKeys,
    generate,
    negamax,
)
from arena.engine.gomoku.threats import VcfTable, five_cells, vcf
from arena.engine.gomoku.tree import TreeBuffer

# How the move was found.
HOW_SEARCH, HOW_FIVE, HOW_BLOCK, HOW_LOST, HOW_VCF = range(5)
# Slots of the report array.
OUT_MOVE, OUT_SCORE, OUT_DEPTH, OUT_HOW, OUT_CUT_SHORT, OUT_TREE_COUNT, OUT_PV_LEN = range(7)
OUT_PV = 8
# Parameters, in this order, in the ``params`` array.
PARAM_MAX_DEPTH, PARAM_WIDTH, PARAM_VCF_PLIES = range(3)
# The longest opponent VCF looked for when choosing safe root moves.
DEFENCE_VCF_PLIES = 31

Params = npt.NDArray[np.int64]
Report = npt.NDArray[np.int64]


@search_kernel
def search_root(
    cells: Cells, near1: Counts, near2: Counts, pat: Patterns, stats: Stats, key: Keys,
    table: Table, size: int, me: int, params: Params, soft_deadline: int, tt_keys: TtKeys,
    tt_data: TtData, vtable: VcfTable, pv: PvTable, move_buf: Moves, key_buf: Moves,
    ctx: Context, stop: StopArray, tree: TreeBuffer, kept_tree: TreeBuffer, out: Report,
) -> int:
    """One arena-gomoku search; returns how the move was found (``HOW_*``)."""
    out[:] = 0
    how = _threat_answer(cells, near1, near2, pat, stats, key, table, size, me, params,
                         vtable, ctx, stop, out)
    if how != HOW_SEARCH:
        out[OUT_HOW] = how
        out[OUT_CUT_SHORT] = ctx[CTX_ABORTED]
        return how
    vcf_cut = ctx[CTX_ABORTED]  # the VCF search found nothing before a limit
    n = size * size
    root = np.zeros(n, dtype=np.int64)
    count = _safe_root_moves(cells, near1, near2, pat, stats, key, table, size, me, vtable,
                             ctx, stop, root)
    vcf_cut = vcf_cut | ctx[CTX_ABORTED]
    ctx[CTX_ABORTED] = 0
    _deepen(cells, near1, near2, pat, stats, key, table, size, me, params, soft_deadline,
            tt_keys, tt_data, pv, move_buf, key_buf, ctx, stop, tree, kept_tree, root[:count],
            out)
    out[OUT_CUT_SHORT] |= vcf_cut
    return HOW_SEARCH


@njit(cache=True)
def _report(out: Report, move: int, score: int, depth: int, line: Moves, length: int) -> None:
    out[OUT_MOVE] = move
    out[OUT_SCORE] = score
    out[OUT_DEPTH] = depth
    out[OUT_PV_LEN] = length
    for i in range(length):
        out[OUT_PV + i] = line[i]


@njit(cache=True)
def _threat_answer(
    cells: Cells, near1: Counts, near2: Counts, pat: Patterns, stats: Stats, key: Keys,
    table: Table, size: int, me: int, params: Params, vtable: VcfTable, ctx: Context,
    stop: StopArray, out: Report,
) -> int:
    """A five to play, a five to block, a lost position or an own VCF (else HOW_SEARCH)."""
    zero = me * 0  # not a literal: a literal argument would make a second specialisation
    op = 3 - me
    points = np.zeros(size * size, dtype=np.int64)
    if five_cells(pat, me, points) > 0:
        _report(out, points[0], WIN - 1, 1, points, 1)
        return HOW_FIVE
    threats = five_cells(pat, op, points)
    if threats == 1:  # the only move; no search needed to find it
        _report(out, points[0], 0, 1, points, 1)
        return HOW_BLOCK
    if threats > 1:
        _report(out, points[0], -(WIN - 2), 1, points, 1)
        return HOW_LOST
    plies = params[PARAM_VCF_PLIES]
    if plies >= 3:
        line = np.zeros(plies + 4, dtype=np.int64)
        length = vcf(cells, near1, near2, pat, stats, key, table, size, me, plies, zero, line,
                     vtable, ctx, stop)
        if length > 0:
            _report(out, line[0], WIN - length, length, line, length)
            return HOW_VCF
    return HOW_SEARCH


@njit(cache=True)
def _opponent_vcf(
    cells: Cells, near1: Counts, near2: Counts, pat: Patterns, stats: Stats, key: Keys,
    table: Table, size: int, me: int, vtable: VcfTable, ctx: Context, stop: StopArray,
) -> bool:
    zero = me * 0
    line = np.zeros(DEFENCE_VCF_PLIES + 4, dtype=np.int64)
    return vcf(cells, near1, near2, pat, stats, key, table, size, 3 - me,
               zero + DEFENCE_VCF_PLIES, zero, line, vtable, ctx, stop) > 0


@njit(cache=True)
def _safe_root_moves(
    cells: Cells, near1: Counts, near2: Counts, pat: Patterns, stats: Stats, key: Keys,
    table: Table, size: int, me: int, vtable: VcfTable, ctx: Context, stop: StopArray,
    root: Moves,
) -> int:
    """When the opponent has a VCF, write the moves that refute it into ``root``.

    Returns their count; 0 means every move is allowed (no VCF, none refutes it, or a
    limit stopped the check).
    """
    if not _opponent_vcf(cells, near1, near2, pat, stats, key, table, size, me, vtable, ctx,
                         stop) or ctx[CTX_ABORTED] != 0:
        return 0
    n = size * size
    moves = np.zeros(n, dtype=np.int64)
    keys = np.zeros(n, dtype=np.int64)
    count = generate(cells, near2, pat, stats, me, n, moves, keys)
    safe = 0
    for i in range(count):
        move = moves[i]
        play(cells, near1, near2, pat, stats, key, table, size, move, me)
        refuted = _opponent_vcf(cells, near1, near2, pat, stats, key, table, size, me, vtable,
                                ctx, stop)
        unplay(cells, near1, near2, pat, stats, key, table, size, move)
        if ctx[CTX_ABORTED] != 0:
            return 0
        if not refuted:
            root[safe] = move
            safe += 1
    return safe


@njit(cache=True)
def _deepen(
    cells: Cells, near1: Counts, near2: Counts, pat: Patterns, stats: Stats, key: Keys,
    table: Table, size: int, me: int, params: Params, soft_deadline: int, tt_keys: TtKeys,
    tt_data: TtData, pv: PvTable, move_buf: Moves, key_buf: Moves, ctx: Context,
    stop: StopArray, tree: TreeBuffer, kept_tree: TreeBuffer, root: Moves, out: Report,
) -> None:
    """Iterative deepening; the last finished iteration's result goes into ``out``."""
    zero = me * 0
    found = False
    cut_short = 0
    max_depth = params[PARAM_MAX_DEPTH]
    for depth in range(1, max_depth + 1):
        ctx[CTX_TREE_COUNT] = 0
        score = negamax(
            cells, near1, near2, pat, stats, key, table, size, me, depth, zero, zero - WIN - 1,
            zero + WIN + 1, zero - 1, zero - 1, params[PARAM_WIDTH], tt_keys, tt_data, pv,
            move_buf, key_buf, ctx, stop, tree, root,
        )
        if ctx[CTX_ABORTED] != 0 and found:
            cut_short = 1
            break
        length = pv[0, 0]
        if length > 0:
            found = True
            _report(out, pv[0, 1], score, depth, pv[0, 1:], length)
            trees = ctx[CTX_TREE_COUNT]
            kept_tree[:trees] = tree[:trees]
            out[OUT_TREE_COUNT] = trees
        if ctx[CTX_ABORTED] != 0 or abs(score) >= WIN_BOUND:
            cut_short = ctx[CTX_ABORTED]
            break
        if depth < max_depth and soft_deadline > 0 and clock_ns(ctx[CTX_CLOCK]) > soft_deadline:
            cut_short = 1
            break
    if not found:  # stopped before depth 1 finished: the first candidate
        move = root[0] if root.shape[0] > 0 else _first_candidate(cells, near2, pat, stats, me)
        line = np.full(1, move, dtype=np.int64)
        _report(out, move, 0, 0, line, 1)
        cut_short = 1
    out[OUT_CUT_SHORT] = cut_short


@njit(cache=True)
def _first_candidate(cells: Cells, near2: Counts, pat: Patterns, stats: Stats, me: int) -> int:
    n = cells.shape[0]
    moves = np.zeros(n, dtype=np.int64)
    keys = np.zeros(n, dtype=np.int64)
    if generate(cells, near2, pat, stats, me, 1, moves, keys) > 0:
        return int(moves[0])
    for cell in range(n):
        if cells[cell] == EMPTY:
            return cell
    return -1
