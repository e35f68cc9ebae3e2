"""Threat searches for arena-gomoku: VCF (continuous fours) and VCT (fours and threes).

``threat_search`` proves a forced win for the attacker made of threats the defender must
answer. With ``fours_only`` it is a VCF: every attacking move makes a four, so the
defender's only answer is the block, and a 15-ply VCF takes milliseconds. Without, it is
a VCT: the attacker may also make open threes (one move from an open four). Then the
defender may answer with any move on the threatened lines that stops a four there (the
"key points": cells where the attacker would make a four on a line that holds an open-four
point), or a counter: a move with which the defender makes a four, or a three that could
become one (so that a counter-VCF it prepares is tried too). Two five points against
none win: the defender can block only one. The answers are tried in this order: the
defender's own fours (where it has a VCF of its own, one of them refutes the threat
before a sub-search is run for every key point), then the key points, then its threes;
in each group the cells that weigh most for both sides together (their ordering weights)
come first. Over the positions of games against Rapfi that ordering halved the nodes of
the searches within 20,000 nodes and found more wins within them.

What the VCT does not try: a defence that prepares a counter-VCF needing two or more
further stones on one line (we have not met one). Apart from that gap, a search that
is unsure answers "no win": it misses wins built from other threats (a four-three made
in one move without an open three first, say) rather than claim false ones.

Failed searches are remembered in a small table keyed by the Zobrist key, the attacker,
the side to move and the kind of search, with the plies searched (always replacing, its
slot chosen by the Zobrist key alone and its tag salted per search, like the
transposition table). The search stops at
the node cap in the context (``CTX_THREAT_CAP``, a deterministic budget) and at the
search's limits; then it reports no win and remembers nothing. It is one self-recursive
kernel with its loop inside: numba's cache cannot load mutually recursive kernels (a
process that loads them from the cache crashes).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

import arena.engine.numba_cache  # noqa: F401  (where numba caches the kernels below)
from arena.engine.gomoku.board import EMPTY, MAX_CELLS, Cells
from arena.engine.gomoku.control import (
    CTX_ABORTED,
    CTX_NODES,
    CTX_SALT,
    CTX_THREAT_CAP,
    Context,
    StopArray,
    poll_stop,
)
from arena.engine.gomoku.patterns import (
    FIVE,
    FOUR,
    HALF,
    OPEN_FOUR,
    SEEING,
    ST_CANDIDATES,
    ST_KEY,
    ST_LIST,
    THREAT_FIVES,
    THREAT_FOURS,
    THREAT_OPEN_FOURS,
    THREAT_OPEN_THREES,
    THREE_OR_BETTER,
    WEIGHT_MASK,
    Patterns,
    State,
    Table,
    board_of,
    play,
    stat,
    threat_count,
    threat_summary,
    unplay,
)
from arena.engine.gomoku.work import (
    MAX_THREAT_PLY,
    W_LINE,
    W_THREAT_KEYS,
    W_THREAT_MOVES,
    Work,
)

Memo = npt.NDArray[np.int64]
MEMO_BITS = 16
# Salts of the memo's keys: who attacks, who moves, which search.
_SALT_WHITE = 0x1E3779B97F4A7C15
_SALT_DEFENDING = 0x2545F4914F6CDD1D
_SALT_VCT = 0x3C6EF372FE94F82B


def new_memo() -> Memo:
    return np.zeros((1 << MEMO_BITS, 2), dtype=np.int64)


@njit(cache=True)
def sort_by_keys(work: Work, moves: int, keys: int, count: int) -> None:
    """Sort ``work[moves:moves+count]`` by descending ``work[keys:...]`` (keys unique)."""
    best_by_keys(work, moves, keys, count, count)


@njit(cache=True)
def best_by_keys(work: Work, moves: int, keys: int, count: int, limit: int) -> None:
    """Put the ``limit`` moves of ``work[moves:moves+count]`` with the highest keys first,
    by descending key (keys unique); what is left after them is in no particular order.
    An insertion sort that drops a move once ``limit`` better ones are ahead of it: most
    moves of a long list stop at one comparison."""
    for i in range(1, count):
        move, key = work[moves + i], work[keys + i]
        j = i
        if i >= limit:
            if work[keys + limit - 1] >= key:
                continue
            j = limit - 1  # the last of the best is pushed out (to slot i)
            work[moves + i] = work[moves + j]
            work[keys + i] = work[keys + j]
        while j > 0 and work[keys + j - 1] < key:
            work[moves + j] = work[moves + j - 1]
            work[keys + j] = work[keys + j - 1]
            j -= 1
        work[moves + j] = move
        work[keys + j] = key


@njit(cache=True)
def five_points(st: State, colour: int, work: Work, moves: int, keys: int) -> int:
    """The cells where ``colour`` makes five, ascending, into ``work[moves:]``."""
    count = 0
    for i in range(st[ST_CANDIDATES]):
        cell = st[ST_LIST + i]
        if threat_count(threat_summary(st, colour, cell), THREAT_FIVES) > 0:
            work[moves + count] = cell
            work[keys + count] = -cell
            count += 1
    sort_by_keys(work, moves, keys, count)
    return count


@njit(cache=True)
def threat_rank(summary: int) -> int:
    """How hard a move with this threat summary hits: 5 wins (open or double four), 4 a
    four with an open three, 3 a four, 2 two open threes, 1 an open three, 0 nothing.
    Fours come before threes: the defender has one answer to a four."""
    fours = threat_count(summary, THREAT_FOURS)
    threes = threat_count(summary, THREAT_OPEN_THREES)
    if threat_count(summary, THREAT_OPEN_FOURS) > 0 or fours >= 2:
        return 5
    if fours == 1:
        return 4 if threes >= 1 else 3
    if threes >= 2:
        return 2
    return threes


@njit(cache=True)
def attacking_moves(
    st: State, attacker: int, fours_only: bool, work: Work, moves: int, keys: int
) -> int:
    """The attacker's fours (and open threes unless ``fours_only``), strongest first."""
    count = 0
    for i in range(st[ST_CANDIDATES]):
        cell = st[ST_LIST + i]
        summary = threat_summary(st, attacker, cell)
        rank = threat_rank(summary)
        if rank == 0 or (fours_only and rank < 3):
            continue
        work[moves + count] = cell
        work[keys + count] = (rank << 40) | ((summary & WEIGHT_MASK) << 10) | (1023 - cell)
        count += 1
    sort_by_keys(work, moves, keys, count)
    return count


@njit(cache=True)
def _add_once(work: Work, moves: int, keys: int, count: int, cell: int, key: int) -> int:
    for i in range(count):
        if work[moves + i] == cell:
            work[keys + i] = max(work[keys + i], key)
            return count
    work[moves + count] = cell
    work[keys + count] = key
    return count + 1


# The groups of the defender's answers, tried in this order (see the module doc).
_OWN_FOURS, _KEY_POINTS, _OWN_THREES = 3, 2, 1


@njit(cache=True)
def _answer_key(st: State, attacker: int, cell: int, group: int) -> int:
    """The sort key of a defender's answer: its group, then the cell's ordering weights for
    both sides together (where both have most at stake first), then the cell."""
    weight = (threat_summary(st, attacker, cell) & WEIGHT_MASK) + (
        threat_summary(st, 3 - attacker, cell) & WEIGHT_MASK)
    return (group << 40) | (weight << 10) | (1023 - cell)


@njit(cache=True)
def defences(
    cells: Cells, pat: Patterns, st: State, attacker: int, work: Work, moves: int, keys: int
) -> int:
    """The defender's answers to the attacker's open-four points (see the module doc):
    its own fours first, then the key points on the attacker's lines, then its threes."""
    board = board_of(st)
    defender = 3 - attacker
    count = 0
    for i in range(st[ST_CANDIDATES]):
        point = st[ST_LIST + i]
        if threat_count(threat_summary(st, attacker, point), THREAT_OPEN_FOURS) == 0:
            continue
        for d in range(4):
            if pat[attacker, d, point] != OPEN_FOUR:
                continue
            count = _add_once(work, moves, keys, count, point,
                              _answer_key(st, attacker, point, _KEY_POINTS))
            for j in range(2 * HALF):
                cell = SEEING[board, point, d, j]
                if cell >= 0 and cells[cell] == EMPTY and pat[attacker, d, cell] >= FOUR:
                    count = _add_once(work, moves, keys, count, cell,
                                      _answer_key(st, attacker, cell, _KEY_POINTS))
    for i in range(st[ST_CANDIDATES]):
        cell = st[ST_LIST + i]
        summary = threat_summary(st, defender, cell)
        if threat_count(summary, THREAT_FOURS) > 0:  # a four (or open four) of its own
            count = _add_once(work, moves, keys, count, cell,
                              _answer_key(st, attacker, cell, _OWN_FOURS))
        elif summary & THREE_OR_BETTER:
            count = _add_once(work, moves, keys, count, cell,
                              _answer_key(st, attacker, cell, _OWN_THREES))
    sort_by_keys(work, moves, keys, count)
    return count


@njit(cache=True)
def _memo_key(
    st: State, salt: int, attacker: int, attacking: bool, fours_only: bool
) -> int:
    key = int(st[ST_KEY]) ^ salt
    if attacker == 2:
        key ^= _SALT_WHITE
    if not attacking:
        key ^= _SALT_DEFENDING
    if not fours_only:
        key ^= _SALT_VCT
    return key


@njit(cache=True)
def _stopped(ctx: Context, stop: StopArray) -> bool:
    cap = ctx[CTX_THREAT_CAP]
    return poll_stop(ctx, stop) or (cap > 0 and ctx[CTX_NODES] >= cap)


@njit(cache=True)
def threat_search(
    cells: Cells, pat: Patterns, st: State, table: Table, memo: Memo, work: Work,
    ctx: Context, stop: StopArray, attacker: int, plies: int, ply: int, attacking: bool,
    fours_only: bool,
) -> int:
    """Length of a forced win of ``attacker`` within ``plies`` plies, else 0.

    ``attacking``: the attacker is to move (else the defender). The line (attacker's
    threat, defender's answer, ..., the attacker's five) goes to ``work[W_LINE + ply:]``.
    """
    if _stopped(ctx, stop) or ply >= MAX_THREAT_PLY - 2:
        return 0
    defender = 3 - attacker
    mover = attacker if attacking else defender
    moves = W_THREAT_MOVES + ply * MAX_CELLS
    keys = W_THREAT_KEYS + ply * MAX_CELLS
    if stat(st, mover, FIVE) > 0:  # the side to move makes five
        if not attacking:
            return 0
        five_points(st, attacker, work, moves, keys)
        work[W_LINE + ply] = work[moves]
        return 1
    fives = five_points(st, 3 - mover, work, moves, keys) if stat(st, 3 - mover, FIVE) else 0
    if fives == 1:  # the only move: block
        block = work[moves]
        play(cells, pat, st, table, block, mover)
        rest = threat_search(cells, pat, st, table, memo, work, ctx, stop, attacker,
                             plies - 1, ply + 1, not attacking, fours_only)
        unplay(cells, pat, st, table, block)
        work[W_LINE + ply] = block
        return rest + 1 if rest > 0 else 0
    if fives >= 2:  # two fives against none: whoever is to move cannot stop both
        if attacking or plies < 2:
            return 0
        work[W_LINE + ply + 1] = work[moves + 1]  # the defender blocks one, and the
        work[W_LINE + ply] = work[moves]  # attacker plays the other
        return 2
    if plies < 3:
        return 0
    slot = np.int64(st[ST_KEY] & ((1 << MEMO_BITS) - 1))
    lookup = _memo_key(st, ctx[CTX_SALT], attacker, attacking, fours_only)
    if memo[slot, 0] == lookup and memo[slot, 1] >= plies:
        return 0
    if attacking:
        # An open three wins in 5 plies at the earliest: three, answer, open four, block,
        # five.
        count = attacking_moves(st, attacker, fours_only or plies < 5, work, moves, keys)
    elif fours_only or stat(st, attacker, OPEN_FOUR) == 0:
        return 0  # the attacker's last move threatened no five (nor, in a VCT, an open four)
    else:
        count = defences(cells, pat, st, attacker, work, moves, keys)
    found = 0
    for i in range(count):
        move = work[moves + i]
        play(cells, pat, st, table, move, mover)
        rest = threat_search(cells, pat, st, table, memo, work, ctx, stop, attacker,
                             plies - 1, ply + 1, not attacking, fours_only)
        unplay(cells, pat, st, table, move)
        if attacking and rest > 0:  # one threat that wins is enough
            work[W_LINE + ply] = move
            found = rest + 1
            break
        if not attacking:  # every answer must lose; the line follows the longest defence
            if rest == 0:
                found = 0
                break
            if rest + 1 > found:
                found = rest + 1
                work[keys] = move  # the move list's sort keys are free once sorted
                work[keys + 1 : keys + 1 + rest] = work[W_LINE + ply + 1 : W_LINE + ply + 1 + rest]
        if ctx[CTX_ABORTED] != 0:
            found = 0
            break
    if found > 0 and not attacking:
        work[W_LINE + ply : W_LINE + ply + found] = work[keys : keys + found]
    if found == 0 and ctx[CTX_ABORTED] == 0 and not (
            ctx[CTX_THREAT_CAP] > 0 and ctx[CTX_NODES] >= ctx[CTX_THREAT_CAP]):
        memo[slot, 0] = lookup
        memo[slot, 1] = plies
    return found
