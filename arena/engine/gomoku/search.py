"""arena-gomoku's alpha-beta: negamax with PVS, a transposition table, threat ordering.

At every node, before any move list: a five point for the side to move wins; two five
points for the opponent lose; one must be blocked (the only move, searched without using
up depth). Below the root, when the opponent cannot even make a four, an open four or a
double four wins in three plies, a four-three or a double three in five
(``_combination``). When the opponent has an open three (it can make an open four), only
the key points of its lines and our own fours are searched. (Searching such nodes past
the nominal depth instead of evaluating them lost 35-40% of games against the previous
version where the same engine without it scored 62-69%: ``bench/gomoku_match.py``.)
Otherwise the candidates near the stones are ordered by their threats for both sides
(fives, fours, open threes first), then by a history of the moves that cut off, and the
best ``width`` are searched (``root_width`` at the root, where the move played is
chosen). Below the root, a late move that makes no four nor open three for either side
is searched a ply or two shallower first, and again at full depth only if it beats the
best so far (``_reduction``; the switch ``reductions``). Leaves weigh the incrementally
kept class counts and, per candidate cell and side, the weight of its kept cell code
(``evaluation.py``); or, with a board network, pool its kept 5x5 sums (``_board_value``),
unless the linear weights put the leaf far beyond the window (``screened``; ``screen``).

Scores are from the side to move; wins are ``WIN - plies``. Ties between moves of equal
order are broken by cell index, so a search depends on the position only, never on the
order in which its stones were played (the shared search cache relies on this).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

import arena.engine.numba_cache  # noqa: F401  (where numba caches the kernels below)
from arena.engine.gomoku.board import EMPTY, MAX_CELLS, Cells
from arena.engine.gomoku.control import (
    CTX_ABORTED,
    CTX_REDUCE,
    CTX_ROOT_WIDTH,
    CTX_SALT,
    CTX_TREE_BUDGET,
    CTX_TREE_RESERVE,
    Context,
    StopArray,
    poll_stop,
)
from arena.engine.gomoku.evaluation import (
    BOARD_CHANNELS,
    BOARD_HEAD,
    EVAL_SCALE,
    FIRST_CLASS,
    FIRST_QUAD,
    NET_SCALE,
    PER_SIDE,
    QUADS,
    SUM_SCALE,
)
from arena.engine.gomoku.patterns import (
    B_BIAS,
    B_SUMS,
    CLASSES,
    CODES,
    FIVE,
    FOUR,
    H_BIAS,
    H_OUT,
    H_OUT_BIAS,
    H_POOLED,
    H_SIDE,
    H_UNITS,
    HALF,
    OPEN_FOUR,
    OPEN_THREE,
    SEEING,
    ST_BOARD,
    ST_CANDIDATES,
    ST_CELL_EVAL,
    ST_EVAL,
    ST_KEY,
    ST_LIST,
    ST_NET_HIDDEN,
    ST_NET_IN,
    ST_NET_OUT,
    ST_SCREEN,
    ST_SIZE,
    ST_STATS,
    THREAT_FIVES,
    THREAT_FOURS,
    THREAT_OPEN_FOURS,
    THREAT_OPEN_THREES,
    THREAT_THREES,
    WEIGHT_MASK,
    Patterns,
    State,
    Table,
    board_of,
    board_view,
    cell_code,
    cell_quad,
    flush_board,
    head_view,
    play,
    stat,
    threat_count,
    threat_summary,
    unplay,
)
from arena.engine.gomoku.threats import best_by_keys, five_points
from arena.engine.gomoku.tree import (
    KIND_LEAF,
    KIND_MAX,
    KIND_MIN,
    TreeBuffer,
    tree_close,
    tree_open,
)
from arena.engine.gomoku.work import (
    MAX_PLY,
    PV_STRIDE,
    W_HISTORY,
    W_KEYS,
    W_MOVES,
    W_PV,
    W_ROOT,
    Work,
)

WIN = 1_000_000
WIN_BOUND = WIN - 1_000
EVAL_BOUND = WIN // 2
EXACT, LOWER, UPPER = 1, 2, 3
HISTORY_CAP = (1 << 13) - 1

Tt = npt.NDArray[np.int64]


def new_tt(bits: int) -> Tt:
    """``2**bits`` entries of (key, packed score/depth/flag/move)."""
    return np.zeros(2 << bits, dtype=np.int64)


@njit(cache=True)
def evaluate(st: State, me: int) -> int:
    """The weighted class counts of both sides, and per candidate cell and side the weight
    of the four line classes a stone there makes (``evaluation.py``), from ``me``'s view,
    plus the network's value if the weights have one; or, with a board network, its value
    alone (``_board_value``). Kept well inside the win scores whatever the weights."""
    if st[ST_BOARD] > 0:
        return int(max(-EVAL_BOUND, min(EVAL_BOUND, _board_value(st, me))))
    return _linear_value(st, me)


@njit(cache=True)
def screened(st: State, me: int, alpha: int, beta: int) -> int:
    """``evaluate`` at a leaf searched with the window (``alpha``, ``beta``). With a board
    network and a screen (``patterns.ST_SCREEN``), the linear weights judge the leaf first,
    and when their value lies more than the margin beyond the window, that value moved
    by the margin toward the window stands (a bound the network would most likely not
    cross): the network's cost is paid only where it may change the search. The
    network's kept values then wait for the next leaf it evaluates (``flush_board``)."""
    margin = int(st[ST_SCREEN])
    if st[ST_BOARD] > 0 and margin > 0:
        guess = _linear_value(st, me)
        if guess - margin >= beta:
            return max(-EVAL_BOUND, guess - margin)
        if guess + margin <= alpha:
            return min(EVAL_BOUND, guess + margin)
    return evaluate(st, me)


@njit(cache=True)
def _linear_value(st: State, me: int) -> int:
    """``evaluate`` by the linear weights and their network."""
    mine = ST_STATS + me * CLASSES
    theirs = ST_STATS + (3 - me) * CLASSES
    value = st[ST_EVAL]
    for i in range(PER_SIDE):
        value += st[ST_EVAL + 1 + i] * st[mine + FIRST_CLASS + i]
        value += st[ST_EVAL + 1 + PER_SIDE + i] * st[theirs + FIRST_CLASS + i]
    for i in range(st[ST_CANDIDATES]):
        cell = st[ST_LIST + i]
        value += st[ST_CELL_EVAL + cell_code(st, me, cell)]
        value += st[ST_CELL_EVAL + CODES + cell_code(st, 3 - me, cell)]
    if st[ST_NET_HIDDEN] > 0:
        value += _network_value(st, me)
    return int(max(-EVAL_BOUND, min(EVAL_BOUND, value)))


@njit(cache=True)
def _network_value(st: State, me: int) -> int:
    """The network's part of ``evaluate``: each hidden unit sums its input rows of the
    features (``evaluation.values``), a row per candidate cell and side. Views of ``st``
    and one small array per leaf: a slice or array made per row cost more than the row."""
    hidden = st[ST_NET_HIDDEN]
    sums = st[ST_NET_IN : ST_NET_IN + hidden].copy()  # the constant feature's row
    for side, colour in ((0, me), (1, 3 - me)):
        for i in range(PER_SIDE):
            count = st[ST_STATS + colour * CLASSES + FIRST_CLASS + i]
            row = ST_NET_IN + (1 + side * PER_SIDE + i) * hidden
            inputs = st[row : row + hidden]  # a view: no array is made
            for j in range(hidden):
                sums[j] += count * inputs[j]
    own = ST_NET_IN + FIRST_QUAD * hidden
    other = own + QUADS * hidden
    for i in range(st[ST_CANDIDATES]):
        cell = st[ST_LIST + i]
        mine = st[own + cell_quad(cell_code(st, me, cell)) * hidden :]
        theirs = st[other + cell_quad(cell_code(st, 3 - me, cell)) * hidden :]
        for j in range(hidden):
            sums[j] += mine[j] + theirs[j]
    total = 0
    for j in range(hidden):
        if sums[j] > 0:
            total += sums[j] * st[ST_NET_OUT + j]
    return total // NET_SCALE


@njit(cache=True)
def _board_value(st: State, me: int) -> int:
    """The board network's value (``evaluation.BoardNet``) from ``me``'s view: the mean and
    the maximum over the board's cells of each channel's rectified 5x5 sum (brought up to
    date here, ``patterns.flush_board``), through the head of the side to move."""
    flush_board(st)
    b = board_view(st)
    h = head_view(st)
    n = st[ST_SIZE] * st[ST_SIZE]
    pooled = h[H_POOLED : H_POOLED + 2 * BOARD_CHANNELS]
    _pool(b[B_SUMS : B_SUMS + n * BOARD_CHANNELS], b[B_BIAS : B_BIAS + BOARD_CHANNELS],
          pooled, n)
    side = (me - 1) * H_SIDE
    units = h[H_UNITS : H_UNITS + BOARD_HEAD]
    _mix(pooled, h[side : side + 2 * BOARD_CHANNELS * BOARD_HEAD],
         h[side + H_BIAS : side + H_BIAS + BOARD_HEAD], units)
    logit = h[side + H_OUT_BIAS]
    for j in range(BOARD_HEAD):
        if units[j] > 0:
            logit += units[j] * h[side + H_OUT + j]
    return int(np.rint(logit * EVAL_SCALE))


@njit(cache=True)
def _pool(sums: npt.NDArray[np.int32], bias: npt.NDArray[np.int32],
          pooled: npt.NDArray[np.float64], n: int) -> None:
    """Into ``pooled``: per channel the mean, then the maximum, of the ``n`` cells'
    rectified sums, in units; integers first (exact)."""
    channels = bias.shape[0]
    total = np.zeros(channels, dtype=np.int64)
    top = np.zeros(channels, dtype=np.int64)
    for cell in range(n):
        at = cell * channels
        for c in range(channels):
            value = max(sums[at + c] + bias[c], 0)
            total[c] += value
            top[c] = max(top[c], value)
    for c in range(channels):
        pooled[c] = total[c] / (n * SUM_SCALE)
        pooled[channels + c] = top[c] / SUM_SCALE


@njit(cache=True)
def _mix(pooled: npt.NDArray[np.float64], weights: npt.NDArray[np.float64],
         bias: npt.NDArray[np.float64], units: npt.NDArray[np.float64]) -> None:
    """``units`` = ``bias`` plus ``pooled`` times ``weights`` (row i, unit j at ``i *
    BOARD_HEAD + j``); the unit loop innermost, in a function of its own to vectorise."""
    for j in range(BOARD_HEAD):
        units[j] = bias[j]
    for i in range(pooled.shape[0]):
        row = i * BOARD_HEAD
        for j in range(BOARD_HEAD):
            units[j] += pooled[i] * weights[row + j]


@njit(cache=True)
def cell_features(st: State, me: int) -> npt.NDArray[np.int64]:
    """The evaluation's counts of candidate cells per kind (``patterns.cell_quad``),
    ``me``'s then the opponent's (``evaluation.QUADS`` each)."""
    counts = np.zeros(2 * QUADS, dtype=np.int64)
    for i in range(st[ST_CANDIDATES]):
        cell = st[ST_LIST + i]
        counts[cell_quad(cell_code(st, me, cell))] += 1
        counts[QUADS + cell_quad(cell_code(st, 3 - me, cell))] += 1
    return counts


# What a stone on a cell makes on two lines at once (``_combination_kind``).
DOUBLE_FOUR, FOUR_THREE, DOUBLE_THREE, OTHER_PAIR, NO_PAIR = range(5)


@njit(cache=True)
def _combination_kind(summary: int) -> int:
    """The combination of a cell's threat summary: two fours, a four and an open three,
    two open threes, two other threats (at least one a plain three), or none."""
    fours = threat_count(summary, THREAT_FOURS)
    open_threes = threat_count(summary, THREAT_OPEN_THREES)
    if fours >= 2:
        return DOUBLE_FOUR
    if fours == 1 and open_threes >= 1:
        return FOUR_THREE
    if open_threes >= 2:
        return DOUBLE_THREE
    if fours + open_threes + threat_count(summary, THREAT_THREES) >= 2:
        return OTHER_PAIR
    return NO_PAIR


@njit(cache=True)
def _bonus(summary: int, scale: int) -> int:
    fours = threat_count(summary, THREAT_FOURS)
    threes = threat_count(summary, THREAT_OPEN_THREES)
    if threat_count(summary, THREAT_FIVES) > 0:
        return 1_000_000 * scale
    if threat_count(summary, THREAT_OPEN_FOURS) > 0 or fours >= 2:
        return 50_000 * scale
    if fours == 1 and threes >= 1:
        return 10_000 * scale
    if threes >= 2:
        return 2_000 * scale
    return 0


@njit(cache=True)
def move_priority(st: State, me: int, cell: int) -> int:
    """Threat-first ordering key of ``cell`` for ``me`` to move: both sides' pattern
    weights, and the combinations (five, open or double four, four-three, two threes),
    ours counted double."""
    mine = threat_summary(st, me, cell)
    theirs = threat_summary(st, 3 - me, cell)
    return int((mine & WEIGHT_MASK) + (theirs & WEIGHT_MASK) + _bonus(mine, 2)
               + _bonus(theirs, 1))


@njit(cache=True)
def _order_key(st: State, work: Work, me: int, cell: int) -> int:
    history = min(int(work[W_HISTORY + (me - 1) * MAX_CELLS + cell]), HISTORY_CAP)
    return (move_priority(st, me, cell) << 24) | (history << 10) | (1023 - cell)


@njit(cache=True)
def generate(
    cells: Cells, pat: Patterns, st: State, work: Work, me: int, width: int, ply: int
) -> int:
    """The moves of ``ply`` into its block of ``work``, best first; at most ``width``
    unless the opponent has an open three (then all its key points and our fours)."""
    moves = W_MOVES + ply * MAX_CELLS
    keys = W_KEYS + ply * MAX_CELLS
    op = 3 - me
    defending = stat(st, op, OPEN_FOUR) > 0
    count = 0
    for i in range(st[ST_CANDIDATES]):
        cell = st[ST_LIST + i]
        if defending and threat_count(threat_summary(st, me, cell), THREAT_FOURS) == 0 and (
                not _key_point(cells, pat, st, op, cell)):
            continue
        work[moves + count] = cell
        work[keys + count] = _order_key(st, work, me, cell)
        count += 1
    limit = count if defending else min(count, width)
    best_by_keys(work, moves, keys, count, limit)
    return limit


@njit(cache=True)
def _key_point(cells: Cells, pat: Patterns, st: State, attacker: int, cell: int) -> bool:
    """Whether ``cell`` is where ``attacker`` makes a four on a line through one of its
    open-four points (so that a stone there may stop the open four)."""
    board = board_of(st)
    for d in range(4):
        if pat[attacker, d, cell] < FOUR:
            continue
        if pat[attacker, d, cell] == OPEN_FOUR:
            return True
        for i in range(2 * HALF):
            other = SEEING[board, cell, d, i]
            if other >= 0 and pat[attacker, d, other] == OPEN_FOUR and cells[other] == EMPTY:
                return True
    return False


@njit(cache=True)
def _tt_pack(score: int, depth: int, flag: int, move: int) -> int:
    return ((score + (1 << 30)) << 32) | (depth << 16) | (flag << 12) | (move + 1)


@njit(cache=True)
def _tt_store(
    tt: Tt, key: int, salt: int, score: int, depth: int, flag: int, move: int, ply: int
) -> None:
    """Always replace: with the slot chosen by the unsalted key, what a probe finds never
    depends on earlier searches (their entries carry other salts and never match)."""
    if score > WIN_BOUND:
        score += ply
    elif score < -WIN_BOUND:
        score -= ply
    slot = 2 * (key & (tt.shape[0] // 2 - 1))
    tt[slot] = key ^ salt
    tt[slot + 1] = _tt_pack(score, depth, flag, move)


@njit(cache=True)
def _tt_probe(tt: Tt, key: int, salt: int, ply: int) -> tuple[bool, int, int, int, int]:
    """(hit, score, depth, flag, move) for ``key``."""
    slot = 2 * (key & (tt.shape[0] // 2 - 1))
    if tt[slot] != key ^ salt:
        return False, 0, -1, 0, -1
    data = tt[slot + 1]
    score = (data >> 32) - (1 << 30)
    if score > WIN_BOUND:
        score -= ply
    elif score < -WIN_BOUND:
        score += ply
    return True, score, (data >> 16) & 0xFF, (data >> 12) & 0xF, (data & 0xFFF) - 1


@njit(cache=True)
def _root_view(ply: int, value: int) -> int:
    return value if ply % 2 == 0 else -value


@njit(cache=True)
def _leaf_score(st: State, work: Work, me: int, depth: int, ply: int, alpha: int, beta: int
                ) -> tuple[int, int]:
    """(score, forced move) before any move list: a decided position or a leaf gives its
    score and -1; the opponent's single five point gives (0, that point); else (0, -2)."""
    op = 3 - me
    if stat(st, me, FIVE) > 0:
        return WIN - ply, -1
    if stat(st, op, FIVE) > 0:
        moves = W_MOVES + ply * MAX_CELLS
        if five_points(st, op, work, moves, W_KEYS + ply * MAX_CELLS) > 1:
            return -(WIN - ply - 1), -1
        return 0, work[moves]
    if ply > 0 and stat(st, op, FOUR) == 0 and stat(st, op, OPEN_FOUR) == 0:
        # The opponent cannot make a four anywhere (nor a five): a threat combination
        # wins by force (``_combination``). Not at the root, which needs a move.
        if stat(st, me, OPEN_FOUR) > 0:
            return WIN - ply - 2, -1
        plies = _combination(st, me)
        if plies > 0:
            return WIN - ply - plies, -1
    if depth <= 0 or ply >= MAX_PLY - 2:
        return screened(st, me, alpha, beta), -1
    return 0, -2


@njit(cache=True)
def _combination(st: State, me: int) -> int:
    """Plies to the five after the best threat combination of ``me`` to move, against
    an opponent that can make no four anywhere: 2 after a double four (two five points,
    one block); 4 after a four-three or a double three (two open threes). Two lines
    through one cell meet nowhere else, so one stone stops one of them; the other
    becomes an open four, and the opponent has no four to answer it with: the stone it
    blocked with was no four either, and an open four is one move from five. 0 without
    a combination."""
    if stat(st, me, FOUR) == 0 and stat(st, me, OPEN_THREE) < 2:
        return 0
    best = 0
    for i in range(st[ST_CANDIDATES]):
        kind = _combination_kind(threat_summary(st, me, st[ST_LIST + i]))
        if kind == DOUBLE_FOUR:
            return 2
        if kind <= DOUBLE_THREE:
            best = 4
    return best


@njit(cache=True)
def negamax(
    cells: Cells, pat: Patterns, st: State, table: Table, tt: Tt, work: Work, ctx: Context,
    stop: StopArray, tree: TreeBuffer, me: int, depth: int, ply: int, alpha: int, beta: int,
    last: int, parent: int, width: int,
) -> int:
    """Score of the position for ``me`` to move; the allowed root moves are in ``work``."""
    if ply % 2 == 0:
        node = tree_open(tree, ctx, parent, last, ply, depth, alpha, beta)
    else:
        node = tree_open(tree, ctx, parent, last, ply, depth, -beta, -alpha)
    pv = W_PV + ply * PV_STRIDE
    work[pv] = 0
    if poll_stop(ctx, stop):
        return 0
    leaf, forced = _leaf_score(st, work, me, depth, ply, alpha, beta)
    if forced == -1:
        tree_close(tree, node, _root_view(ply, leaf), KIND_LEAF, False)
        return leaf
    key = st[ST_KEY]
    hit, tt_score, tt_depth, tt_flag, tt_move = _tt_probe(tt, key, ctx[CTX_SALT], ply)
    if hit and ply > 0 and tt_depth >= depth and forced < 0 and (
        tt_flag == EXACT
        or (tt_flag == LOWER and tt_score >= beta)
        or (tt_flag == UPPER and tt_score <= alpha)
    ):
        tree_close(tree, node, _root_view(ply, tt_score), KIND_LEAF, tt_flag != EXACT)
        return tt_score
    moves = W_MOVES + ply * MAX_CELLS
    node_width = ctx[CTX_ROOT_WIDTH] if ply == 0 and ctx[CTX_ROOT_WIDTH] > 0 else width
    count = _move_list(cells, pat, st, work, me, node_width, ply, forced, tt_move)
    if ply == 0:  # rows for the root's children, each searched at most twice
        ctx[CTX_TREE_RESERVE] = max(0, min(2 * count, ctx[CTX_TREE_BUDGET] - 1))
    child_depth = depth if forced >= 0 else depth - 1
    alpha0 = alpha
    best = -WIN - 1
    best_move = work[moves]
    cut = False
    may_reduce = (ctx[CTX_REDUCE] != 0 and ply > 0 and forced < 0 and child_depth >= 2
                  and stat(st, 3 - me, OPEN_FOUR) == 0)
    for i in range(count):
        move = work[moves + i]
        reduction = _reduction(st, me, move, i, depth) if may_reduce else 0
        play(cells, pat, st, table, move, me)
        if i == 0:
            score = -negamax(cells, pat, st, table, tt, work, ctx, stop, tree, 3 - me,
                             child_depth, ply + 1, -beta, -alpha, move, node, width)
        else:
            score = alpha + 1  # unless a reduced search says the move is no better
            if reduction > 0:
                score = -negamax(cells, pat, st, table, tt, work, ctx, stop, tree, 3 - me,
                                 child_depth - reduction, ply + 1, -alpha - 1, -alpha, move,
                                 node, width)
            if score > alpha and ctx[CTX_ABORTED] == 0:
                score = -negamax(cells, pat, st, table, tt, work, ctx, stop, tree, 3 - me,
                                 child_depth, ply + 1, -alpha - 1, -alpha, move, node, width)
            if alpha < score < beta and ctx[CTX_ABORTED] == 0:
                score = -negamax(cells, pat, st, table, tt, work, ctx, stop, tree, 3 - me,
                                 child_depth, ply + 1, -beta, -alpha, move, node, width)
        unplay(cells, pat, st, table, move)
        if ctx[CTX_ABORTED] != 0:
            break
        if score > best:
            best = score
            best_move = move
            if score > alpha:
                alpha = score
                _update_pv(work, ply, move)
                if alpha >= beta:
                    cut = True
                    _reward(work, me, move, depth)
                    break
    if ctx[CTX_ABORTED] != 0:
        return best if best > -WIN - 1 else 0
    flag = LOWER if cut else (EXACT if best > alpha0 else UPPER)
    _tt_store(tt, key, ctx[CTX_SALT], best, depth, flag, best_move, ply)
    tree_close(tree, node, _root_view(ply, best), KIND_MAX if ply % 2 == 0 else KIND_MIN, cut)
    return best


@njit(cache=True)
def _reduction(st: State, me: int, move: int, index: int, depth: int) -> int:
    """Plies a late move is searched shallower first: after the node's first three, one
    that makes no four nor open three for either side (it neither threatens nor blocks a
    threat) loses one ply, two from the ninth at depth 5 and more."""
    if index < 3:
        return 0
    mine = threat_summary(st, me, move)
    theirs = threat_summary(st, 3 - me, move)
    if (threat_count(mine, THREAT_FOURS) + threat_count(mine, THREAT_OPEN_THREES)
            + threat_count(theirs, THREAT_FOURS) + threat_count(theirs, THREAT_OPEN_THREES)):
        return 0
    return 2 if index >= 8 and depth >= 5 else 1


@njit(cache=True)
def _move_list(
    cells: Cells, pat: Patterns, st: State, work: Work, me: int, width: int, ply: int,
    forced: int, tt_move: int,
) -> int:
    """Fill the ply's move list: the forced block, the allowed root moves, or the
    generated moves; the table's move first."""
    moves = W_MOVES + ply * MAX_CELLS
    if forced >= 0:
        work[moves] = forced
        return 1
    if ply == 0 and work[W_ROOT] > 0:
        count = work[W_ROOT]
        work[moves : moves + count] = work[W_ROOT + 1 : W_ROOT + 1 + count]
    else:
        count = generate(cells, pat, st, work, me, width, ply)
    _move_to_front(work, moves, count, tt_move)
    return int(count)


@njit(cache=True)
def _reward(work: Work, me: int, move: int, depth: int) -> None:
    if depth <= 0:
        return
    slot = W_HISTORY + (me - 1) * MAX_CELLS + move
    work[slot] = min(work[slot] + depth * depth, HISTORY_CAP)


@njit(cache=True)
def _move_to_front(work: Work, moves: int, count: int, move: int) -> None:
    for i in range(count):
        if work[moves + i] == move:
            for j in range(i, 0, -1):
                work[moves + j] = work[moves + j - 1]
            work[moves] = move
            return


@njit(cache=True)
def _update_pv(work: Work, ply: int, move: int) -> None:
    """Row ``ply`` holds its length, then the moves."""
    row = W_PV + ply * PV_STRIDE
    child = row + PV_STRIDE
    length = work[child]
    work[row + 1] = move
    for i in range(length):
        work[row + 2 + i] = work[child + 1 + i]
    work[row] = length + 1
