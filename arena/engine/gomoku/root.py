"""arena-gomoku's whole search in one kernel: root threats, VCF, VCT, safe moves, deepening.

``search_root`` runs every step of a search without coming back to Python, and releases
the interpreter lock while it does (see ``control.search_kernel``):

1. a five for the side to move wins; one five point of the opponent is the only move
   (answered at once, score 0); two or more mean the game is lost;
2. a VCF (victory by continuous fours) of at most ``vcf_plies`` plies, found within
   ``VCF_NODES`` nodes, wins; then a VCT (fours and open threes) of at most
   ``vct_plies`` plies, searched within ``vct_nodes`` nodes;
3. when the opponent has a VCF, the root moves are those after which it has none, and
   of those, if more than one, the ones after which it has no VCT either (the rounds
   below, from a share of ``vct_nodes``); when it has a VCT, the best candidates after
   which it has none. The candidates are checked in rounds (``_narrow``): the first
   with a share of ``vct_nodes`` a check, or twice the nodes finding that VCT took if
   more, each next one on the survivors with four times the nodes, up to
   ``vct_nodes``, until one is left; the checks stop at
   ``DEFENCE_NODES`` nodes in all. If no candidate survives a round, the last round's
   survivors stay, or, when there are none, every move stays allowed;
4. iterative deepening with ``negamax`` from depth 1 to ``max_depth``: no iteration
   starts after ``soft_deadline`` (on the deadline's clock). When a limit cuts an
   iteration short, the best of the root moves it finished is played (at the root a
   move's score counts only once its whole subtree is searched; the previous best, the
   table's move, normally goes first, so a move preferred to it was compared with it at
   the new depth); if it finished none, the previous iteration's result stands;
5. when that finds every root move lost, the proof may be wrong (the tree tries only
   ``width`` answers a node), so, unless ``vct_plies`` turns VCTs off, the root moves
   are checked against the opponent's VCT in the same rounds (``_hold_on``) and, if
   some hold, searched again among those; a loss that search finds again is reported
   as the worst evaluation, not as a proven loss.

Threat searches are bounded by node counts, never by time, so a search without a time
limit is deterministic. The report goes into ``out`` (slots ``OUT_*``); the captured
tree of the last finished iteration into ``kept_tree``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

import arena.engine.numba_cache  # noqa: F401  (where numba caches the kernels below)
from arena.engine.gomoku.board import EMPTY, MAX_CELLS, Cells
from arena.engine.gomoku.clock import clock_ns
from arena.engine.gomoku.control import (
    CTX_ABORTED,
    CTX_CLOCK,
    CTX_NODES,
    CTX_REDUCE,
    CTX_ROOT_WIDTH,
    CTX_THREAT_CAP,
    CTX_TREE_COUNT,
    Context,
    StopArray,
    search_kernel,
)
from arena.engine.gomoku.patterns import ST_BOARD, Patterns, State, Table, play, unplay
from arena.engine.gomoku.search import EVAL_BOUND, WIN, WIN_BOUND, Tt, generate, negamax
from arena.engine.gomoku.threats import Memo, five_points, threat_search
from arena.engine.gomoku.tree import KIND_MAX, TreeBuffer, tree_close
from arena.engine.gomoku.work import (
    MAX_PLY,
    W_HISTORY,
    W_KEYS,
    W_LINE,
    W_MOVES,
    W_PV,
    W_ROOT,
    Work,
)

# How the move was found.
HOW_SEARCH, HOW_FIVE, HOW_BLOCK, HOW_LOST, HOW_VCF, HOW_VCT = range(6)
# Slots of the report array.
OUT_MOVE, OUT_SCORE, OUT_DEPTH, OUT_HOW, OUT_CUT_SHORT, OUT_TREE_COUNT, OUT_PV_LEN = range(7)
OUT_PV = 8
OUT_LENGTH = OUT_PV + MAX_PLY + 2
# Parameters, in this order, in the ``params`` array.
PARAM_MAX_DEPTH, PARAM_WIDTH, PARAM_VCF_PLIES, PARAM_VCT_PLIES, PARAM_VCT_NODES = range(5)
PARAM_ROOT_WIDTH = 5
PARAM_REDUCE = 6
PARAMS = 7
# The longest opponent VCF looked for when choosing safe root moves.
DEFENCE_VCF_PLIES = 31
# Node caps of the root's VCF searches: one search (ours, the opponent's, or one check of
# a candidate against it); and of all the checks of the candidates together, against a
# VCF or a VCT (``vct_nodes`` may be set high). A VCF takes
# milliseconds in most positions, but on a crowded board its tree can grow for minutes
# (50 million nodes at depth 1, 71 stones); past a cap the search reports no win.
VCF_NODES = 200_000
DEFENCE_NODES = 1_000_000
# The checks of the candidates against an opponent's VCT (``_narrow``) go in rounds, each
# on the survivors of the last with this many times its nodes per check.
DEFENCE_GROWTH = 4
# Against an opponent's VCT found at the root: how many candidates are checked, and the
# first round's nodes per check: this share of ``vct_nodes``, or this many times the
# nodes the root took to find the VCT if that is more (a check with fewer would miss the
# same VCT after a move that leaves it). The rounds grow to ``vct_nodes`` a check.
DEFENCE_VCT_MOVES = 12
DEFENCE_VCT_SHARE = 8
DEFENCE_FOUND_TIMES = 2
# Where the candidates checked against an opponent's VCT are kept while ``_widen`` checks
# the others: ply 1's move list, free before the search.
_CHECKED = W_MOVES + MAX_CELLS
# When the search finds every move lost (``_hold_on``): the longest opponent VCT
# checked, the first round's nodes per check, and the cap of all the rounds together.
HOLD_PLIES = 21
HOLD_FIRST_NODES = 5_000
HOLD_NODES = 1_000_000

Params = npt.NDArray[np.int64]
Report = npt.NDArray[np.int64]


@search_kernel
def search_root(
    cells: Cells, pat: Patterns, st: State, table: Table, me: int, params: Params,
    soft_deadline: int, tt: Tt, memo: Memo, work: Work, ctx: Context, stop: StopArray,
    tree: TreeBuffer, kept_tree: TreeBuffer, out: Report,
) -> int:
    """One arena-gomoku search; returns how the move was found (``HOW_*``)."""
    out[:] = 0
    work[W_HISTORY : W_HISTORY + 2 * MAX_CELLS] = 0
    how = _threat_answer(cells, pat, st, table, me, params, memo, work, ctx, stop, out)
    if how != HOW_SEARCH:
        out[OUT_HOW] = how
        out[OUT_CUT_SHORT] = ctx[CTX_ABORTED]
        return how
    threats_cut = ctx[CTX_ABORTED]  # the threat searches found nothing before a limit
    _choose_root_moves(cells, pat, st, table, me, params, memo, work, ctx, stop)
    threats_cut |= ctx[CTX_ABORTED]
    ctx[CTX_ABORTED] = 0
    _deepen(cells, pat, st, table, me, params, soft_deadline, tt, work, ctx, stop, tree,
            kept_tree, out)
    if out[OUT_SCORE] <= -WIN_BOUND and ctx[CTX_ABORTED] == 0 and params[PARAM_VCT_PLIES] >= 5:
        _hold_on(cells, pat, st, table, me, params, soft_deadline, tt, memo, work, ctx, stop,
                 tree, kept_tree, out)
    out[OUT_CUT_SHORT] |= threats_cut
    return HOW_SEARCH


@search_kernel
def search_threats(
    cells: Cells, pat: Patterns, st: State, table: Table, attacker: int, plies: int,
    nodes: int, fours_only: bool, memo: Memo, work: Work, ctx: Context, stop: StopArray,
) -> int:
    """Only the threat search: a VCF (``fours_only``) or VCT of ``attacker``, to move, of
    at most ``plies`` plies within ``nodes`` nodes; its length (0: none), the line in
    ``work[W_LINE:]``."""
    return _threat_search_from_root(cells, pat, st, table, memo, work, ctx, stop, attacker,
                                    plies, nodes, fours_only)


@njit(cache=True)
def _report(out: Report, move: int, score: int, depth: int, work: Work, line: int,
            length: int) -> None:
    """Write the result; the line is ``work[line:line + length]``."""
    out[OUT_MOVE] = move
    out[OUT_SCORE] = score
    out[OUT_DEPTH] = depth
    out[OUT_PV_LEN] = length
    for i in range(length):
        out[OUT_PV + i] = work[line + i]


@njit(cache=True)
def _threat_search_from_root(
    cells: Cells, pat: Patterns, st: State, table: Table, memo: Memo, work: Work,
    ctx: Context, stop: StopArray, attacker: int, plies: int, nodes: int, fours_only: bool,
) -> int:
    """A VCF or VCT of ``attacker`` (to move) within ``nodes`` nodes (0: no cap).

    A VCT deepens two plies at a time from 5: short wins are found before the cap is
    spent on long three sequences, and the failures it remembers prune the next pass.
    A threat search never evaluates, so the board network is paused while it runs: its
    stones are not noted for the next leaf (``patterns.flush_board``), and it takes back
    every one, so the network's copy of the stones is right again after it."""
    zero = attacker * 0  # not a literal: a literal argument compiles a second version
    networked = st[ST_BOARD]
    st[ST_BOARD] = 0
    ctx[CTX_THREAT_CAP] = ctx[CTX_NODES] + nodes if nodes > 0 else 0
    length = zero
    first = plies if fours_only else min(plies, 5)
    for limit in range(first, plies + 1, 2):
        length = threat_search(cells, pat, st, table, memo, work, ctx, stop, attacker,
                               zero + limit, zero, zero == 0, fours_only)
        if length > 0 or ctx[CTX_ABORTED] != 0 or (
                ctx[CTX_THREAT_CAP] > 0 and ctx[CTX_NODES] >= ctx[CTX_THREAT_CAP]):
            break
    ctx[CTX_THREAT_CAP] = 0
    st[ST_BOARD] = networked
    return length


@njit(cache=True)
def _threat_answer(
    cells: Cells, pat: Patterns, st: State, table: Table, me: int, params: Params,
    memo: Memo, work: Work, ctx: Context, stop: StopArray, out: Report,
) -> int:
    """A five to play, a five to block, a lost position or an own VCF or VCT (else
    HOW_SEARCH)."""
    op = 3 - me
    if five_points(st, me, work, W_LINE, W_KEYS) > 0:
        _report(out, work[W_LINE], WIN - 1, 1, work, W_LINE, 1)
        return HOW_FIVE
    threats = five_points(st, op, work, W_LINE, W_KEYS)
    if threats == 1:  # the only move; no search needed to find it
        _report(out, work[W_LINE], 0, 1, work, W_LINE, 1)
        return HOW_BLOCK
    if threats > 1:
        _report(out, work[W_LINE], -(WIN - 2), 1, work, W_LINE, 1)
        return HOW_LOST
    plies = params[PARAM_VCF_PLIES]
    if plies >= 3:
        length = _threat_search_from_root(cells, pat, st, table, memo, work, ctx, stop, me,
                                          plies, VCF_NODES, True)
        if length > 0:
            _report(out, work[W_LINE], WIN - length, length, work, W_LINE, length)
            return HOW_VCF
    plies = params[PARAM_VCT_PLIES]
    if plies >= 5 and ctx[CTX_ABORTED] == 0:
        length = _threat_search_from_root(cells, pat, st, table, memo, work, ctx, stop, me,
                                          plies, params[PARAM_VCT_NODES], False)
        if length > 0:
            _report(out, work[W_LINE], WIN - length, length, work, W_LINE, length)
            return HOW_VCT
    return HOW_SEARCH


@njit(cache=True)
def _choose_root_moves(
    cells: Cells, pat: Patterns, st: State, table: Table, me: int, params: Params,
    memo: Memo, work: Work, ctx: Context, stop: StopArray,
) -> None:
    """The root moves into ``work[W_ROOT]`` (count, then moves; a count of 0 allows all):
    those that refute the opponent's VCF, or else its VCT, if it has one. The moves that
    stop a VCF are checked against the VCT too (an open three's blocks may leave a longer
    VCT), in the same rounds; if every one falls, they all stay. Against a VCT
    the best candidates are checked in rounds (``_narrow``), and if every one falls, the
    others (``_widen``). If none holds, or the checks stop, the survivors of the last
    round that kept some stay the root moves (every move, if no round did)."""
    work[W_ROOT] = 0
    op = 3 - me
    plies = params[PARAM_VCT_PLIES]
    if _threat_search_from_root(cells, pat, st, table, memo, work, ctx, stop, op,
                                DEFENCE_VCF_PLIES, VCF_NODES, True) > 0:
        count = generate(cells, pat, st, work, me, cells.shape[0], 0)
        budget = ctx[CTX_NODES] + DEFENCE_NODES
        blocks = _narrow(cells, pat, st, table, me, memo, work, ctx, stop, count,
                         DEFENCE_VCF_PLIES, VCF_NODES, VCF_NODES, True, budget)
        if blocks > 1 and plies >= 5:  # which blocks leave the opponent no VCT either
            first, last = _vct_rounds(params[PARAM_VCT_NODES], 0)
            work[W_MOVES : W_MOVES + blocks] = work[W_ROOT + 1 : W_ROOT + 1 + blocks]
            _narrow(cells, pat, st, table, me, memo, work, ctx, stop, blocks, plies, first,
                    last, False, budget)
        return
    if plies < 5 or ctx[CTX_ABORTED] != 0:
        return
    nodes = params[PARAM_VCT_NODES]
    before = ctx[CTX_NODES]
    if _threat_search_from_root(cells, pat, st, table, memo, work, ctx, stop, op, plies,
                                nodes, False) > 0:
        first, last = _vct_rounds(nodes, ctx[CTX_NODES] - before)
        count = generate(cells, pat, st, work, me, DEFENCE_VCT_MOVES, 0)
        work[_CHECKED : _CHECKED + count] = work[W_MOVES : W_MOVES + count]
        budget = ctx[CTX_NODES] + DEFENCE_NODES
        kept = _narrow(cells, pat, st, table, me, memo, work, ctx, stop, count, plies,
                       first, last, False, budget)
        if kept == 1:  # the rounds stop at one move left: is it safe with ``last`` nodes?
            work[W_MOVES] = work[W_ROOT + 1]
            if _refuting(cells, pat, st, table, me, memo, work, ctx, stop, 1, plies, last,
                         False, budget) == 0:
                kept = -1
        if kept <= 0:
            _widen(cells, pat, st, table, me, params, memo, work, ctx, stop, count, plies,
                   last, budget)


@njit(cache=True)
def _vct_rounds(nodes: int, found: int) -> tuple[int, int]:
    """The nodes a check against the opponent's VCT gets in the first round of
    ``_narrow`` and in the last: a share of ``nodes`` (``vct_nodes``) or twice the nodes
    finding that VCT took (``found``, 0 if none was searched for), growing to ``nodes``
    (``DEFENCE_NODES`` when uncapped)."""
    first = max(1, nodes // DEFENCE_VCT_SHARE, DEFENCE_FOUND_TIMES * found)
    return first, max(first, nodes if nodes > 0 else DEFENCE_NODES)


@njit(cache=True)
def _widen(
    cells: Cells, pat: Patterns, st: State, table: Table, me: int, params: Params,
    memo: Memo, work: Work, ctx: Context, stop: StopArray, checked: int, plies: int,
    nodes: int, budget: int,
) -> None:
    """Every candidate ``_narrow`` checked falls to the opponent's VCT (or the checks were
    stopped): check the root's other candidates (up to ``root_width``, best first; the
    ``checked`` ones are in ply 1's move list), each with ``nodes``, until ``budget``.
    Those that hold become the root moves; if none does, the root moves stay as they
    were. A move the root never checks cannot be kept, however well it defends."""
    if ctx[CTX_ABORTED] != 0 or ctx[CTX_NODES] >= budget:
        return
    wide = generate(cells, pat, st, work, me, params[PARAM_ROOT_WIDTH], 0)
    rest = 0
    for i in range(wide):
        move = work[W_MOVES + i]
        seen = False
        for j in range(checked):
            if work[_CHECKED + j] == move:
                seen = True
                break
        if not seen:
            work[W_MOVES + rest] = move
            rest += 1
    safe = _refuting(cells, pat, st, table, me, memo, work, ctx, stop, rest, plies, nodes,
                     False, budget)
    if safe > 0:
        work[W_ROOT] = safe
        work[W_ROOT + 1 : W_ROOT + 1 + safe] = work[W_KEYS : W_KEYS + safe]


@njit(cache=True)
def _narrow(
    cells: Cells, pat: Patterns, st: State, table: Table, me: int, memo: Memo, work: Work,
    ctx: Context, stop: StopArray, count: int, plies: int, first: int, last: int,
    fours_only: bool, budget: int,
) -> int:
    """Check the ``count`` moves in ``work[W_MOVES:]`` against the opponent's VCF (or VCT)
    of ``plies`` plies in rounds: the first with ``first`` nodes a check, each next one
    on the survivors of the last with ``DEFENCE_GROWTH`` times the nodes (at most
    ``last``), until one move is left, a round has checked with ``last`` nodes, or a
    limit, or the context's node count reaching ``budget``, stops a round. A VCT that
    takes more nodes to find after one move than after another is not missed for having
    cost little the first time. The survivors of the last finished round, if any, become
    the root moves (``work[W_ROOT]``); their number (0: none, the root moves unchanged),
    negative when the round after them kept none."""
    nodes = first
    kept = 0
    while True:  # a round: the moves in work[W_MOVES:], the survivors into work[W_KEYS:]
        safe = _refuting(cells, pat, st, table, me, memo, work, ctx, stop, count, plies,
                         nodes, fours_only, budget)
        if safe == 0:  # a finished round kept none: every move checked falls
            return -kept
        if safe < 0:
            return kept
        kept = safe
        work[W_ROOT] = safe
        work[W_ROOT + 1 : W_ROOT + 1 + safe] = work[W_KEYS : W_KEYS + safe]
        if safe == 1 or nodes >= last:
            return kept
        work[W_MOVES : W_MOVES + safe] = work[W_KEYS : W_KEYS + safe]
        count = safe
        nodes = min(nodes * DEFENCE_GROWTH, last)


@njit(cache=True)
def _refuting(
    cells: Cells, pat: Patterns, st: State, table: Table, me: int, memo: Memo, work: Work,
    ctx: Context, stop: StopArray, count: int, plies: int, nodes: int, fours_only: bool,
    budget: int,
) -> int:
    """Check the ``count`` moves in ``work[W_MOVES:]``, one by one, against the opponent's
    VCF (or VCT) of ``plies`` plies within ``nodes`` nodes each; those after which it has
    none go to ``work[W_KEYS:]`` in order. Their number, or -1 when a limit, or the
    context's node count reaching ``budget``, stopped the checks."""
    op = 3 - me
    safe = 0
    for i in range(count):
        if ctx[CTX_NODES] >= budget:
            return -1
        move = work[W_MOVES + i]
        play(cells, pat, st, table, move, me)
        refuted = _threat_search_from_root(cells, pat, st, table, memo, work, ctx, stop, op,
                                           plies, nodes, fours_only) == 0
        unplay(cells, pat, st, table, move)
        if ctx[CTX_ABORTED] != 0:
            return -1
        if refuted:
            work[W_KEYS + safe] = move
            safe += 1
    return safe


@njit(cache=True)
def _deepen(
    cells: Cells, pat: Patterns, st: State, table: Table, me: int, params: Params,
    soft_deadline: int, tt: Tt, work: Work, ctx: Context, stop: StopArray,
    tree: TreeBuffer, kept_tree: TreeBuffer, out: Report,
) -> None:
    """Iterative deepening; the result of the last iteration that finished a root move
    goes into ``out``."""
    zero = me * 0
    found = False
    cut_short = 0
    max_depth = params[PARAM_MAX_DEPTH]
    ctx[CTX_ROOT_WIDTH] = params[PARAM_ROOT_WIDTH]
    ctx[CTX_REDUCE] = params[PARAM_REDUCE]
    for depth in range(1, max_depth + 1):
        ctx[CTX_TREE_COUNT] = 0
        score = negamax(cells, pat, st, table, tt, work, ctx, stop, tree, me, depth, zero,
                        zero - WIN - 1, zero + WIN + 1, zero - 1, zero - 1, params[PARAM_WIDTH])
        if ctx[CTX_ABORTED] != 0 and found:
            cut_short = 1
            if work[W_PV] > 0:  # root moves it finished: the best of them is deeper news
                _report(out, work[W_PV + 1], score, depth, work, W_PV + 1, work[W_PV])
                # and its tree: the root scored by them (what it was stopped inside is
                # left open, and not read)
                trees = ctx[CTX_TREE_COUNT]
                tree_close(tree, 0 if trees > 0 else -1, score, KIND_MAX, False)
                kept_tree[:trees] = tree[:trees]
                out[OUT_TREE_COUNT] = trees
            break
        length = work[W_PV]
        if length > 0:
            found = True
            _report(out, work[W_PV + 1], score, depth, work, W_PV + 1, length)
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
        move = work[W_ROOT + 1] if work[W_ROOT] > 0 else _first_candidate(cells, pat, st, work,
                                                                          me)
        work[W_LINE] = move
        _report(out, move, 0, 0, work, W_LINE, 1)
        cut_short = 1
    out[OUT_CUT_SHORT] = cut_short


@njit(cache=True)
def _hold_on(
    cells: Cells, pat: Patterns, st: State, table: Table, me: int, params: Params,
    soft_deadline: int, tt: Tt, memo: Memo, work: Work, ctx: Context, stop: StopArray,
    tree: TreeBuffer, kept_tree: TreeBuffer, out: Report,
) -> None:
    """The search found every root move lost. The tree's defences are only the best
    ``width`` moves, so that may be wrong: narrow the root moves down by their checks
    against the opponent's VCT (``_narrow``, from ``HOLD_FIRST_NODES`` a check, until
    ``HOLD_NODES`` are spent); if some survive, search again among them. If that search
    too finds them lost, the checks and the tree disagree, and neither proves the loss:
    the score is the worst an evaluation can be (``EVAL_BOUND``), not a proven loss."""
    if work[W_ROOT] > 0:
        count = work[W_ROOT]
        work[W_MOVES : W_MOVES + count] = work[W_ROOT + 1 : W_ROOT + 1 + count]
    else:
        count = generate(cells, pat, st, work, me, params[PARAM_ROOT_WIDTH], 0)
    held = _narrow(cells, pat, st, table, me, memo, work, ctx, stop, count, HOLD_PLIES,
                   HOLD_FIRST_NODES, HOLD_NODES, False, ctx[CTX_NODES] + HOLD_NODES)
    ctx[CTX_ABORTED] = 0
    if held != 0:
        _deepen(cells, pat, st, table, me, params, soft_deadline, tt, work, ctx, stop, tree,
                kept_tree, out)
        if out[OUT_SCORE] <= -WIN_BOUND:
            out[OUT_SCORE] = -EVAL_BOUND


@njit(cache=True)
def _first_candidate(cells: Cells, pat: Patterns, st: State, work: Work, me: int) -> int:
    if generate(cells, pat, st, work, me, 1, 0) > 0:
        return int(work[W_MOVES])
    for cell in range(cells.shape[0]):
        if cells[cell] == EMPTY:
            return cell
    return -1

