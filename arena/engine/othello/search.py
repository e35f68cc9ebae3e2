"""Midgame search kernel: principal-variation alpha-beta (negamax) with a transposition table.

One recursive kernel serves every evaluator. Flags in the ``st`` state vector switch off the
parts a seed program did not have (the Reversi lab searches plain minimax in row-major order):

* ``ST_PRUNE`` 0 -> every child gets the full window, nothing is cut (plain minimax);
* ``ST_ORDER`` 0 -> moves are tried in row-major order (a1, b1, ..., h8);
* ``ST_USE_TT`` 0 -> no transposition table.

ProbCut (Buro's selective search, ``probcut.py``) is on when ``st[ST_PROBCUT]`` is 1: at a
node below the root with ``depth`` >= ``PC_MIN_DEPTH`` plies left, a shallow null-window
search at ``probcut_depth(depth)`` tests whether the deep value, predicted by the fitted
line ``a * shallow + b`` with error ``sigma``, is beyond the window by ``t * sigma``; if
so the node returns the bound without searching deeper. The fitted figures (``a`` in
thousandths, ``b``, ``t * sigma``) are in ``st`` per disc bucket and depth.

A pass does not consume depth (as in both seed programs); a finished game is scored by the
evaluator. Every ``POLL_NODES`` nodes the kernel checks the caller's stop flag and reads the
clock against the deadline, and it stops at the node limit; an aborted search returns 0 all
the way up.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from arena.engine.othello._jit import (
    CLOCK_MONOTONIC,
    U0,
    U1,
    clock_ns,
    kernel,
    lowest_square,
    popcount,
    search_kernel,
)
from arena.engine.othello.bitboard import PASS, flips, get_moves, mix64, pair_key
from arena.engine.othello.evaluate import evaluate

INF = 100_000_000
POLL_NODES = 1024  # nodes between two checks of the stop flag and the deadline
MAX_PLY = 128
MAX_MOVES = 40

ST_NODES = 0
ST_NODE_LIMIT = 1
ST_ABORTED = 2
ST_TREE_N = 3
ST_PRUNE = 4
ST_ORDER = 5
ST_USE_TT = 6
ST_ROOT_COLOR = 7
ST_ROOT_FIRST = 8  # move to try first at the root (-1: none)
ST_ROOT_FULL = 9  # 1: every root move gets the full window (exact value of each)
ST_ROOT_BEST = 10  # best root move so far in this iteration
ST_ROOT_DONE = 11  # root moves finished in this iteration
ST_SALT = 12  # xor-ed into every table key: entries of earlier searches never match
ST_NEXT_POLL = 13  # node count at which the stop flag and the clock are checked next
ST_POLLS = 14  # how many times they were checked (tests bound the nodes between checks)
ST_DEADLINE = 15  # ns on the ST_CLOCK clock at which to stop (0: none); kept here, not in an
# array argument of its own: each array passed to a recursive kernel costs atomic reference counts
ST_CLOCK = 16  # the clock the deadlines are on: CLOCK_MONOTONIC or CLOCK_THREAD_CPUTIME_ID
ST_ROOT_SCORES = 17  # st[17 + sq]: value of root move sq (bound unless ST_ROOT_FULL)
ST_PROBCUT = ST_ROOT_SCORES + 65  # 1: ProbCut on (the table below filled)
# ProbCut's table: st[ST_PC_TABLE + 3 * (bucket * PC_DEPTHS + depth) + k] with k = 0: a in
# thousandths (0: no cut at that bucket and depth), 1: b, 2: t * sigma (evaluation units).
ST_PC_TABLE = ST_PROBCUT + 1
PC_BUCKETS = 7  # disc buckets: discs // 10 (60..64 discs with 50..59)
PC_DEPTHS = 32  # remaining depths the table covers (deeper nodes read the last row)
PC_MIN_DEPTH = 3
PC_SCORE_LIMIT = 300_000  # no cut around won or lost scores (every evaluator's WIN is 1e6)
# Rows of the tree buffer kept for the root's children: a captured tree always holds every
# root move searched (the move played among them), however deep the first ones went.
ST_TREE_RESERVE = ST_PC_TABLE + 3 * PC_BUCKETS * PC_DEPTHS
ST_SIZE = ST_TREE_RESERVE + 1

TREE_PARENT = 0
TREE_MOVE = 1
TREE_DEPTH = 2
TREE_ALPHA = 3
TREE_BETA = 4
TREE_SCORE = 5
TREE_KIND = 6  # 0 max, 1 min, 2 leaf (from the root player's view)
TREE_CUTOFF = 7
TREE_FLIP = 8  # 1 when the side to move is the root player's opponent (negamax sign)
TREE_COLS = 9

BOUND_EXACT = 0
BOUND_LOWER = 1
BOUND_UPPER = 2

_SCORE_OFFSET = 1 << 31
_MASK32 = np.uint64(0xFFFFFFFF)
_MASK8 = np.uint64(0xFF)
_MASK2 = np.uint64(0x3)
_MASK7 = np.uint64(0x7F)
_SH32 = np.uint64(32)
_SH40 = np.uint64(40)
_SH42 = np.uint64(42)

# Static order of squares: corners first, X- and C-squares last.
_ORDER_VALUE = np.array(
    [
        [20, -5, 6, 4, 4, 6, -5, 20],
        [-5, -10, 0, 0, 0, 0, -10, -5],
        [6, 0, 2, 1, 1, 2, 0, 6],
        [4, 0, 1, 0, 0, 1, 0, 4],
        [4, 0, 1, 0, 0, 1, 0, 4],
        [6, 0, 2, 1, 1, 2, 0, 6],
        [-5, -10, 0, 0, 0, 0, -10, -5],
        [20, -5, 6, 4, 4, 6, -5, 20],
    ],
    dtype=np.int64,
).reshape(64)


@kernel
def tt_probe(tt: npt.NDArray[np.uint64], key: np.uint64) -> tuple[bool, int, int, int, int]:
    """(hit, depth, bound, score, move) of the entry for ``key``."""
    slot = np.int64(key & np.uint64(tt.shape[0] // 2 - 1)) * 2
    if tt[slot] != key:
        return False, 0, 0, 0, -1
    data = tt[slot + 1]
    score = int(data & _MASK32) - _SCORE_OFFSET
    depth = int((data >> _SH32) & _MASK8)
    bound = int((data >> _SH40) & _MASK2)
    move = int((data >> _SH42) & _MASK7) - 1
    return True, depth, bound, score, move


@kernel
def tt_store(
    tt: npt.NDArray[np.uint64], key: np.uint64, depth: int, bound: int, score: int, move: int
) -> None:
    slot = np.int64(key & np.uint64(tt.shape[0] // 2 - 1)) * 2
    data = np.uint64(score + _SCORE_OFFSET) | (np.uint64(min(depth, 255)) << _SH32)
    data |= np.uint64(bound) << _SH40
    data |= np.uint64(move + 1) << _SH42
    tt[slot] = key
    tt[slot + 1] = data


@kernel
def order_moves(
    p: np.uint64,
    o: np.uint64,
    moves: np.uint64,
    depth: int,
    first: int,
    hist: npt.NDArray[np.int64],
    work: npt.NDArray[np.int64],
    ply: int,
    ordered: bool,
) -> int:
    """Write the moves into ``work[ply, 0]`` (best first; keys in ``work[ply, 1]``) and
    return how many there are."""
    n = 0
    while moves != U0:
        sq = lowest_square(moves)
        moves &= moves - U1
        if not ordered:
            work[ply, 0, n] = sq
            n += 1
            continue
        if sq == first:
            key = 1 << 40
        else:
            key = _ORDER_VALUE[sq] * 1000 + hist[sq]
            if depth >= 3:
                f = flips(p, o, sq)
                m = U1 << sq
                # Fastest first: fewer replies for the opponent is usually better.
                key -= 20000 * popcount(get_moves(o ^ f, p ^ f ^ m))
        # Insertion sort, descending by key.
        j = n
        while j > 0 and work[ply, 1, j - 1] < key:
            work[ply, 0, j] = work[ply, 0, j - 1]
            work[ply, 1, j] = work[ply, 1, j - 1]
            j -= 1
        work[ply, 0, j] = sq
        work[ply, 1, j] = key
        n += 1
    return n


@kernel
def _open_node(
    tree: npt.NDArray[np.int64],
    st: npt.NDArray[np.int64],
    parent: int,
    move: int,
    depth: int,
    alpha: int,
    beta: int,
    color: int,
) -> int:
    """Record a node on entry if the tree budget allows (for a node below the root's
    children, the rows kept for those aside); return its id or -2."""
    if parent == -2 or st[ST_TREE_N] >= tree.shape[0]:
        return -2
    if parent != 0 and st[ST_TREE_N] >= tree.shape[0] - st[ST_TREE_RESERVE]:
        return -2
    node = st[ST_TREE_N]
    st[ST_TREE_N] = node + 1
    tree[node, TREE_PARENT] = parent
    tree[node, TREE_MOVE] = move
    tree[node, TREE_DEPTH] = depth
    tree[node, TREE_ALPHA] = alpha
    tree[node, TREE_BETA] = beta
    tree[node, TREE_SCORE] = 0
    tree[node, TREE_FLIP] = 0 if color == st[ST_ROOT_COLOR] else 1
    tree[node, TREE_KIND] = tree[node, TREE_FLIP]
    tree[node, TREE_CUTOFF] = 0
    return int(node)


@kernel
def _close_node(
    tree: npt.NDArray[np.int64], node: int, score: int, leaf: bool, cutoff: bool
) -> None:
    if node < 0:
        return
    tree[node, TREE_SCORE] = score
    if leaf:
        tree[node, TREE_KIND] = 2
    tree[node, TREE_CUTOFF] = 1 if cutoff else 0


@kernel
def _should_stop(st: npt.NDArray[np.int64], stop_ext: npt.NDArray[np.int64]) -> bool:
    """Count a node; every ``POLL_NODES`` nodes check the caller's flag and the deadline.

    ``st[ST_DEADLINE]`` is the deadline in ns (0: none) on the clock ``st[ST_CLOCK]`` (the
    monotonic clock, or the CPU time of the searching thread). The kernel reads the clock
    itself, so a late-scheduled helper thread cannot delay the stop. Nodes
    counted elsewhere (the endgame's small solvers) also move ``st[ST_NODES]``, hence a
    next-poll mark rather than a test on the counter's low bits.
    """
    st[ST_NODES] += 1
    if st[ST_ABORTED] != 0:
        return True
    if st[ST_NODES] >= st[ST_NEXT_POLL]:
        st[ST_NEXT_POLL] = st[ST_NODES] + POLL_NODES
        st[ST_POLLS] += 1
        deadline = st[ST_DEADLINE]
        if stop_ext[0] != 0 or (deadline > 0 and clock_ns(st[ST_CLOCK]) >= deadline):
            st[ST_ABORTED] = 1
    if st[ST_NODE_LIMIT] > 0 and st[ST_NODES] > st[ST_NODE_LIMIT]:
        st[ST_ABORTED] = 1
    return bool(st[ST_ABORTED] != 0)


@kernel
def probcut_depth(depth: int) -> int:
    """Depth of ProbCut's shallow search for a node with ``depth`` plies left: about a
    quarter, with the parity of ``depth`` (Othello's values swing with the side that moves
    last)."""
    return 2 * (depth // 4) + (depth & 1)


@kernel
def pc_bucket(p: np.uint64, o: np.uint64) -> int:
    """ProbCut's disc bucket of a position."""
    return min(popcount(p | o) // 10, PC_BUCKETS - 1)


@kernel
def negamax(
    p: np.uint64,
    o: np.uint64,
    color: int,
    depth: int,
    ply: int,
    alpha: int,
    beta: int,
    parent: int,
    move_in: int,
    params: npt.NDArray[np.int64],
    tt: npt.NDArray[np.uint64],
    hist: npt.NDArray[np.int64],
    work: npt.NDArray[np.int64],
    pv: npt.NDArray[np.int64],
    pv_len: npt.NDArray[np.int64],
    tree: npt.NDArray[np.int64],
    st: npt.NDArray[np.int64],
    stop_ext: npt.NDArray[np.int64],
) -> int:
    """Score of (p, o) for the side to move, searched ``depth`` plies; fail-soft."""
    if _should_stop(st, stop_ext):
        return 0
    node = _open_node(tree, st, parent, move_in, depth, alpha, beta, color)
    pv_len[ply] = 0
    moves = get_moves(p, o)
    if depth <= 0 or ply >= MAX_PLY - 1 or (moves == U0 and get_moves(o, p) == U0):
        value = evaluate(p, o, color, params)
        _close_node(tree, node, value, True, False)
        return value
    # Constants passed to the recursive call must not be numba literals: a literal argument
    # creates a second specialisation, which doubles compile time and breaks the disk cache.
    inf = INF + 0 * depth
    if moves == U0:
        pass_move = PASS + 0 * depth
        value = -negamax(
            o,
            p,
            1 - color,
            depth,
            ply + 1,
            -beta,
            -alpha,
            node,
            pass_move,
            params,
            tt,
            hist,
            work,
            pv,
            pv_len,
            tree,
            st,
            stop_ext,
        )
        pv[ply, 0] = PASS
        for i in range(pv_len[ply + 1]):
            pv[ply, i + 1] = pv[ply + 1, i]
        pv_len[ply] = pv_len[ply + 1] + 1
        _close_node(tree, node, value, False, False)
        return value
    prune = st[ST_PRUNE] != 0
    ordered = st[ST_ORDER] != 0
    first = -1
    key = pair_key(p, o) ^ np.uint64(st[ST_SALT])
    if st[ST_USE_TT] != 0:
        hit, t_depth, t_bound, t_score, t_move = tt_probe(tt, key)
        if hit:
            first = t_move
            # Cut only at null-window nodes, so the principal variation stays whole.
            if (
                ply > 0
                and t_depth >= depth
                and beta - alpha == 1
                and (
                    t_bound == BOUND_EXACT
                    or (t_bound == BOUND_LOWER and t_score >= beta)
                    or (t_bound == BOUND_UPPER and t_score <= alpha)
                )
            ):
                _close_node(tree, node, t_score, False, True)
                return t_score
    if (
        st[ST_PROBCUT] != 0
        and ply > 0
        and prune
        and depth >= PC_MIN_DEPTH
        and alpha > -PC_SCORE_LIMIT
        and beta < PC_SCORE_LIMIT
        and depth < 64 - popcount(p | o)  # the deep search would not reach the game's end
    ):
        row = ST_PC_TABLE + 3 * (
            pc_bucket(p, o) * PC_DEPTHS + min(depth, PC_DEPTHS - 1)
        )
        slope = st[row]
        if slope > 0:
            shallow = probcut_depth(depth)
            # Fail high if the shallow value reaches (beta + t sigma - b) / a, rounded up.
            bound = -((-(beta + st[row + 2] - st[row + 1]) * 1000) // slope)
            if bound < PC_SCORE_LIMIT:
                value = negamax(
                    p, o, color, shallow, ply, bound - 1, bound, -2 + 0 * depth, move_in,
                    params, tt, hist, work, pv, pv_len, tree, st, stop_ext,
                )
                if st[ST_ABORTED] != 0:
                    return 0
                if value >= bound:
                    _close_node(tree, node, beta, False, True)
                    return beta
            # Fail low if it stays at or below (alpha - t sigma - b) / a, rounded down.
            bound = ((alpha - st[row + 2] - st[row + 1]) * 1000) // slope
            if bound > -PC_SCORE_LIMIT:
                value = negamax(
                    p, o, color, shallow, ply, bound, bound + 1, -2 + 0 * depth, move_in,
                    params, tt, hist, work, pv, pv_len, tree, st, stop_ext,
                )
                if st[ST_ABORTED] != 0:
                    return 0
                if value <= bound:
                    _close_node(tree, node, alpha, False, True)
                    return alpha
            pv_len[ply] = 0
            if st[ST_USE_TT] != 0:  # the shallow searches stored a best move: try it first
                hit, t_depth, t_bound, t_score, t_move = tt_probe(tt, key)
                if hit:
                    first = t_move
    if ply == 0 and st[ST_ROOT_FIRST] >= 0:
        first = st[ST_ROOT_FIRST]
    n = order_moves(p, o, moves, depth, first, hist, work, ply, ordered)
    full_root = ply == 0 and st[ST_ROOT_FULL] != 0
    best = -inf - 1
    best_move = work[ply, 0, 0]
    a = alpha
    cut = False
    for i in range(n):
        sq = work[ply, 0, i]
        m = U1 << sq
        f = flips(p, o, sq)
        cp = o ^ f
        co = p ^ f ^ m
        if not prune or full_root:
            value = -negamax(
                cp,
                co,
                1 - color,
                depth - 1,
                ply + 1,
                -inf,
                inf,
                node,
                sq,
                params,
                tt,
                hist,
                work,
                pv,
                pv_len,
                tree,
                st,
                stop_ext,
            )
        elif i == 0:
            value = -negamax(
                cp,
                co,
                1 - color,
                depth - 1,
                ply + 1,
                -beta,
                -a,
                node,
                sq,
                params,
                tt,
                hist,
                work,
                pv,
                pv_len,
                tree,
                st,
                stop_ext,
            )
        else:
            value = -negamax(
                cp,
                co,
                1 - color,
                depth - 1,
                ply + 1,
                -a - 1,
                -a,
                node,
                sq,
                params,
                tt,
                hist,
                work,
                pv,
                pv_len,
                tree,
                st,
                stop_ext,
            )
            if a < value < beta and st[ST_ABORTED] == 0:
                value = -negamax(
                    cp,
                    co,
                    1 - color,
                    depth - 1,
                    ply + 1,
                    -beta,
                    -value,
                    node,
                    sq,
                    params,
                    tt,
                    hist,
                    work,
                    pv,
                    pv_len,
                    tree,
                    st,
                    stop_ext,
                )
        if st[ST_ABORTED] != 0:
            return 0
        if ply == 0:
            st[ST_ROOT_SCORES + sq] = value
        if value > best:
            best = value
            best_move = sq
            if ply == 0:
                st[ST_ROOT_BEST] = sq
            if value > a or full_root:
                a = max(a, value)
                pv[ply, 0] = sq
                for k in range(pv_len[ply + 1]):
                    pv[ply, k + 1] = pv[ply + 1, k]
                pv_len[ply] = pv_len[ply + 1] + 1
            if prune and a >= beta:
                hist[sq] += depth * depth
                cut = True
                break
        if ply == 0:
            st[ST_ROOT_DONE] = i + 1
    if st[ST_USE_TT] != 0:
        bound = BOUND_UPPER if best <= alpha else BOUND_LOWER if best >= beta else BOUND_EXACT
        tt_store(tt, key, depth, bound, best, best_move)
    _close_node(tree, node, best, False, cut)
    return best


_SALTS = itertools.count(1)


def new_state() -> npt.NDArray[np.int64]:
    """A state vector with a fresh table salt, so reused tables need no clearing."""
    st = np.zeros(ST_SIZE, dtype=np.int64)
    st[ST_SALT] = int(mix64(np.uint64(next(_SALTS)))) >> 2
    st[ST_PRUNE] = st[ST_ORDER] = st[ST_USE_TT] = 1
    st[ST_CLOCK] = CLOCK_MONOTONIC
    st[ST_ROOT_FIRST] = -1
    st[ST_ROOT_BEST] = -1
    return st


def salt_base() -> int:
    """Fresh salts for one iterative deepening: iteration ``d`` salts with ``base + d``."""
    return next(_SALTS) << 8


# What ``deepen`` reports, in ``out``:
DP_DEPTH = 0  # the deepest iteration finished in this call (0: none)
DP_SCORE = 1  # its score,
DP_MOVE = 2  # best root move,
DP_TREE_N = 3  # tree rows
DP_PV_LEN = 4  # and principal variation (``out[DP_PV : DP_PV + out[DP_PV_LEN]]``)
DP_NODES = 5  # nodes of every iteration of this call, the unfinished one included
DP_ABORT_MOVE = 6  # after an abort: a better root move proven by then (-1: none)
DP_ABORT_PV_LEN = 7  # and its line (``out[DP_ABORT_PV : ...]``), searched in full
DP_PV = 8
DP_ROOT_SCORES = DP_PV + MAX_PLY  # out[DP_ROOT_SCORES + sq]: root move sq's value
DP_ABORT_PV = DP_ROOT_SCORES + 64
DP_SIZE = DP_ABORT_PV + MAX_PLY

# Why ``deepen`` returned:
DEEPEN_MAX_DEPTH = 0  # the last iteration asked for finished
DEEPEN_GAME_END = 1  # an iteration searched to the end of the game
DEEPEN_ABORTED = 2  # the stop flag, the deadline or the node limit ended an iteration
DEEPEN_OUT_OF_NODES = 3  # the node limit was reached between two iterations
DEEPEN_OUT_OF_TIME = 4  # past the soft deadline: the next iteration would most likely not end
DEEPEN_STEP = 5  # one iteration finished, as asked; the caller goes on from the next


@search_kernel
def deepen(
    p: np.uint64,
    o: np.uint64,
    color: int,
    first_depth: int,
    max_depth: int,
    empties: int,
    first_move: int,
    node_limit: int,
    soft_deadline: int,
    step: bool,
    salts: int,
    params: npt.NDArray[np.int64],
    tt: npt.NDArray[np.uint64],
    hist: npt.NDArray[np.int64],
    work: npt.NDArray[np.int64],
    pv: npt.NDArray[np.int64],
    pv_len: npt.NDArray[np.int64],
    tree: npt.NDArray[np.int64],
    template: npt.NDArray[np.int64],
    st: npt.NDArray[np.int64],
    stop_ext: npt.NDArray[np.int64],
    out: npt.NDArray[np.int64],
) -> int:
    """Iterative deepening from ``first_depth`` to ``max_depth`` plies in one call, so a
    search leaves and re-enters Python (and takes the GIL) once, not once per iteration.

    Each iteration starts from ``template`` (flags, colour, deadline) with a fresh salt and
    the previous iteration's best move tried first at the root (``first_move`` for the
    first). ``node_limit`` counts this call's nodes (0: none); past ``soft_deadline`` (ns on
    the template's clock, 0: none) no new iteration starts. With ``step`` it returns after
    each finished iteration (the caller draws among tied root moves or keeps the tree).
    """
    zero = 0 * first_depth  # not a literal: see negamax
    out[DP_DEPTH] = zero
    out[DP_ABORT_MOVE] = -1
    out[DP_ABORT_PV_LEN] = zero
    nodes = zero
    status = DEEPEN_MAX_DEPTH
    first = first_move
    for depth in range(first_depth, max_depth + 1):
        st[:] = template
        st[ST_SALT] = np.int64(mix64(np.uint64(salts + depth)) >> np.uint64(2))
        st[ST_ROOT_FIRST] = first if st[ST_ORDER] != 0 else -1
        st[ST_ROOT_BEST] = -1
        st[ST_NODE_LIMIT] = max(1, node_limit - nodes) if node_limit > 0 else 0
        for sq in range(64):
            hist[sq] //= 2
        score = negamax(
            p, o, color, depth, zero, zero - INF, zero + INF, zero - 1, zero - 1,
            params, tt, hist, work, pv, pv_len, tree, st, stop_ext,
        )
        nodes += st[ST_NODES]
        if st[ST_ABORTED] != 0:
            if st[ST_ROOT_DONE] >= 1 and st[ST_ORDER] != 0:
                out[DP_ABORT_MOVE] = st[ST_ROOT_BEST]  # proven at least as good
                # The root's line is written when a move becomes its best (and only at the
                # root's own level), so it is that move's whole line at this depth.
                if pv_len[0] > 0 and pv[0, 0] == st[ST_ROOT_BEST]:
                    out[DP_ABORT_PV_LEN] = pv_len[0]
                    for k in range(pv_len[0]):
                        out[DP_ABORT_PV + k] = pv[0, k]
            status = DEEPEN_ABORTED
            break
        first = st[ST_ROOT_BEST]
        out[DP_DEPTH] = depth
        out[DP_SCORE] = score
        out[DP_MOVE] = first
        out[DP_TREE_N] = st[ST_TREE_N]
        out[DP_PV_LEN] = pv_len[0]
        for k in range(pv_len[0]):
            out[DP_PV + k] = pv[0, k]
        for sq in range(64):
            out[DP_ROOT_SCORES + sq] = st[ST_ROOT_SCORES + sq]
        if depth >= empties:
            status = DEEPEN_GAME_END
            break
        if depth < max_depth:
            if node_limit > 0 and nodes >= node_limit:
                status = DEEPEN_OUT_OF_NODES
                break
            if soft_deadline > 0 and clock_ns(template[ST_CLOCK]) > soft_deadline:
                status = DEEPEN_OUT_OF_TIME
                break
            if step:
                status = DEEPEN_STEP
                break
    out[DP_NODES] = nodes
    return status


def _u64(x: int) -> np.uint64:
    return np.uint64(x)


class SearchBuffers:
    """Scratch arrays of a search: allocated once per thread, reused by every search."""

    def __init__(self, tt_bits: int = 20, tree_budget: int = 0) -> None:
        self.tt = np.zeros(2 << tt_bits, dtype=np.uint64)
        self.hist = np.zeros(64, dtype=np.int64)
        self.work = np.zeros((MAX_PLY, 2, MAX_MOVES), dtype=np.int64)  # moves, keys per ply
        self.pv = np.zeros((MAX_PLY, MAX_PLY), dtype=np.int64)
        self.pv_len = np.zeros(MAX_PLY, dtype=np.int64)
        self.tree = np.zeros((tree_budget, TREE_COLS), dtype=np.int64)
        self.st = np.zeros(ST_SIZE, dtype=np.int64)
        self.out = np.zeros(DP_SIZE, dtype=np.int64)

    def deepen(
        self,
        p: int,
        o: int,
        color: int,
        depths: tuple[int, int],
        empties: int,
        first_move: int,
        node_limit: int,
        soft_deadline: int,
        step: bool,
        params: npt.NDArray[np.int64],
        template: npt.NDArray[np.int64],
        stop_ext: npt.NDArray[np.int64],
    ) -> int:
        """Iterations ``depths[0]`` to ``depths[1]`` (see the ``deepen`` kernel): returns why
        it stopped; the report is in ``self.out``, the last iteration's state in ``self.st``."""
        return int(
            deepen(
                _u64(p), _u64(o), color, depths[0], depths[1], empties, first_move,
                node_limit, soft_deadline, step, salt_base(), params, self.tt, self.hist,
                self.work, self.pv, self.pv_len, self.tree, template, self.st, stop_ext,
                self.out,
            )
        )


_LOCAL = threading.local()


class _Tabled(Protocol):
    tt: npt.NDArray[np.uint64]


Tabled = TypeVar("Tabled", bound=_Tabled)


def per_thread(name: str, make: Callable[[], Tabled]) -> Tabled:
    """This thread's ``name`` (something with a table), made on the first call with its
    table touched, and as it is after that: fresh multi-megabyte arrays cost page faults
    inside the timed search."""
    found: Tabled | None = getattr(_LOCAL, name, None)
    if found is None:
        found = make()
        found.tt.fill(0)
        setattr(_LOCAL, name, found)
    return found


def ready_thread_buffers() -> SearchBuffers:
    """This thread's buffers, allocated and touched on the first call, as they are."""
    return per_thread("buffers", SearchBuffers)


def thread_buffers(tree_budget: int) -> SearchBuffers:
    """This thread's buffers (a 16 MiB table) with a tree array of ``tree_budget`` rows.

    Fresh multi-megabyte arrays cost page faults inside the timed search, so the table is
    allocated and touched once per thread and then reused; salts keep searches apart.
    """
    buffers = ready_thread_buffers()
    buffers.hist.fill(0)
    if buffers.tree.shape[0] != tree_budget:
        buffers.tree = np.zeros((tree_budget, TREE_COLS), dtype=np.int64)
    return buffers
