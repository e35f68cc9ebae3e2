"""SharpMoku's bot (EvaluateV3 + its Minimax), rebuilt from the facts we read of it.

The evaluator scores only the last stone placed, L, of colour P. Through L it reads
four lines, each a window of at most 9 cells: up to 4 cells each way, a walk stopping
at the board edge or just after the first opponent stone. The edge is NOT a block, so
a four against the edge matches no pattern. Each line is put in the first class whose
pattern it contains (win, open four, open three, blocked four, blocked three, open
two); the class counts give a score by a fixed ladder. The same is done as if L were
the opponent's stone, and the result is ``2 * PlayerValue + EnemyValue``.

Differences from the C# source, on purpose:
- Scores are int64. The source uses ``int``: ``1e9 * wins`` and ``2 * PlayerValue``
  overflow (two fives through one stone give 4e9), which C# wraps to a negative
  number. We keep the mathematical value.
- The source's min nodes return as soon as ``score > alpha`` (an inverted test: any
  reply better for the root player cuts). We use the textbook ``score <= alpha``.
- Candidates come in ascending cell order (the source uses a dictionary's insertion
  order), so among equal scores the later cell in that order wins, as in the source.
- When a move fills the board the source returns without undoing it; we undo.
- Exact-five (the source plays freestyle only): a shape counts as a five, a four or a
  blocked four only if the stones it shows, once completed, would not touch another own
  stone just past it (that would make six, which is no win). The line is read 5 cells
  each way instead of 4, so such a stone is always in sight. Freestyle reads 4 as the
  source does and is unchanged.
What we keep: the leaf value is the last stone's score for whoever played it, with no
sign flip; the root checks (own score >= 1e7 plays, opponent score >= 10,000 blocks);
radius 2 at the root (radius 1 above 30 candidates) and radius 1 below; no win test
inside the tree.

Ties: the root checks keep the first of equal scores in board order, the search the
last. When nothing on the board scores (quiet play, scores +0), that choice walks to the
board's edge, and Normal against Hard fills the board to a 225-move draw. The option
``centre_ties`` (off by default) tries the root's moves from the centre outwards and keeps
the first of equal scores, in the root checks and in the search: the move played is then
the most central of the best. Below the root nothing changes (a node's value does not
depend on which of its equal moves it records).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

import arena.engine.numba_cache  # noqa: F401  (where numba caches the kernels below)
from arena.engine.gomoku.board import (
    DIRECTIONS,
    EMPTY,
    Cells,
    Counts,
    candidates,
    other,
    place,
    remove,
)
from arena.engine.gomoku.control import (
    CTX_ABORTED,
    Context,
    StopArray,
    poll_stop,
    search_kernel,
)
from arena.engine.gomoku.tree import (
    KIND_LEAF,
    KIND_MAX,
    KIND_MIN,
    TreeBuffer,
    tree_close,
    tree_open,
)

# Pattern classes in matching order (the first class whose pattern a line holds).
WIN, OPEN4, OPEN3, BLOCKED4, BLOCKED3, OPEN2 = range(6)
CLASS_NAMES = ("win", "open4", "open3", "blocked4", "blocked3", "open2")
FREESTYLE_REACH = 4  # cells read each way from the stone, as the source does
EXACT_REACH = 5  # one more: the stone that would turn a five into six
WINDOW = 2 * EXACT_REACH + 1

# Patterns from the mover's side: 1 own, -1 opponent, 0 empty.
PATTERNS: tuple[tuple[int, tuple[int, ...]], ...] = (
    (WIN, (1, 1, 1, 1, 1)),
    (OPEN4, (0, 1, 1, 1, 1, 0)),
    (OPEN3, (0, 1, 1, 1, 0, 0)),
    (OPEN3, (0, 0, 1, 1, 1, 0)),
    (OPEN3, (0, 1, 0, 1, 1, 0)),
    (OPEN3, (0, 1, 1, 0, 1, 0)),
    (BLOCKED4, (-1, 1, 0, 1, 1, 1)),
    (BLOCKED4, (-1, 1, 1, 0, 1, 1)),
    (BLOCKED4, (-1, 1, 1, 1, 0, 1)),
    (BLOCKED4, (-1, 1, 1, 1, 1, 0)),
    (BLOCKED4, (0, 1, 1, 1, 1, -1)),
    (BLOCKED4, (1, 0, 1, 1, 1, -1)),
    (BLOCKED4, (1, 1, 0, 1, 1, -1)),
    (BLOCKED4, (1, 1, 1, 0, 1, -1)),
    (BLOCKED3, (-1, 1, 1, 1, 0, 0)),
    (BLOCKED3, (-1, 1, 1, 0, 1, 0)),
    (BLOCKED3, (-1, 1, 0, 1, 1, 0)),
    (BLOCKED3, (0, 0, 1, 1, 1, -1)),
    (BLOCKED3, (0, 1, 0, 1, 1, -1)),
    (BLOCKED3, (0, 1, 1, 0, 1, -1)),
    (BLOCKED3, (-1, 1, 0, 1, 0, 1, -1)),
    (BLOCKED3, (-1, 0, 1, 1, 1, 0, -1)),
    (BLOCKED3, (-1, 1, 1, 0, 0, 1, -1)),
    (BLOCKED3, (-1, 1, 0, 0, 1, 1, -1)),
    (OPEN2, (0, 0, 1, 1, 0, 0)),
    (OPEN2, (0, 1, 0, 1, 0, 0)),
    (OPEN2, (0, 0, 1, 0, 1, 0)),
    (OPEN2, (0, 1, 1, 0, 0, 0)),
    (OPEN2, (0, 0, 0, 1, 1, 0)),
    (OPEN2, (0, 1, 0, 0, 1, 0)),
)

_PATTERN_CELLS = np.zeros((len(PATTERNS), 7), dtype=np.int64)
_PATTERN_LENGTH = np.array([len(p) for _, p in PATTERNS], dtype=np.int64)
_PATTERN_CLASS = np.array([c for c, _ in PATTERNS], dtype=np.int64)
for _row, (_, _cells) in enumerate(PATTERNS):
    _PATTERN_CELLS[_row, : len(_cells)] = _cells

WIN_SCORE = 1_000_000_000
ROOT_WIN_THRESHOLD = 10_000_000
ROOT_BLOCK_THRESHOLD = 10_000
ALPHA0 = -1
BETA0 = 10_000_000
MAX_DEPTH = 6

Window = npt.NDArray[np.int64]
ClassCounts = npt.NDArray[np.int64]


@njit(cache=True)
def line_window(
    cells: Cells, size: int, move: int, dx: int, dy: int, reach: int, out: Window
) -> int:
    """The line through ``move`` from its stone's side (1 own, -1 opp, 0 empty); length.

    At most ``reach`` cells each way, stopping at the edge or just after an opponent stone.
    """
    colour = cells[move]
    if colour == EMPTY:
        return 0
    x0 = move % size
    y0 = move // size
    back = np.zeros(EXACT_REACH, dtype=np.int64)
    n_back = 0
    for k in range(1, reach + 1):
        x = x0 - k * dx
        y = y0 - k * dy
        if not (0 <= x < size and 0 <= y < size):
            break
        value = _relative(cells[y * size + x], colour)
        back[n_back] = value
        n_back += 1
        if value == -1:
            break
    length = 0
    for i in range(n_back - 1, -1, -1):
        out[length] = back[i]
        length += 1
    out[length] = 1
    length += 1
    for k in range(1, reach + 1):
        x = x0 + k * dx
        y = y0 + k * dy
        if not (0 <= x < size and 0 <= y < size):
            break
        value = _relative(cells[y * size + x], colour)
        out[length] = value
        length += 1
        if value == -1:
            break
    return length


@njit(cache=True)
def _relative(cell: int, colour: int) -> int:
    if cell == EMPTY:
        return 0
    return 1 if cell == colour else -1


@njit(cache=True)
def line_class(window: Window, length: int, exact: bool) -> int:
    """The first pattern class contained in the window, or -1.

    With ``exact`` (exact-five), a five-class shape with an own stone just past either end
    does not count: completing it would make six.
    """
    for p in range(_PATTERN_LENGTH.shape[0]):
        plen = _PATTERN_LENGTH[p]
        cls = _PATTERN_CLASS[p]
        for start in range(length - plen + 1):
            matched = True
            for i in range(plen):
                if window[start + i] != _PATTERN_CELLS[p, i]:
                    matched = False
                    break
            if matched and exact and _overline_shape(window, length, start, plen, cls):
                matched = False
            if matched:
                return int(cls)
    return -1


@njit(cache=True)
def _overline_shape(window: Window, length: int, start: int, plen: int, cls: int) -> bool:
    """Whether a five-class match at ``start`` touches an own stone just past an end."""
    if cls != WIN and cls != OPEN4 and cls != BLOCKED4:
        return False
    before = start > 0 and window[start - 1] == 1
    after = start + plen < length and window[start + plen] == 1
    return before or after


@njit(cache=True)
def class_counts(cells: Cells, size: int, move: int, exact: bool, out: ClassCounts) -> None:
    """Per class, how many of the four lines through ``move`` fall in it."""
    window = np.zeros(WINDOW, dtype=np.int64)
    reach = EXACT_REACH if exact else FREESTYLE_REACH
    out[:] = 0
    for d in range(4):
        length = line_window(
            cells, size, move, DIRECTIONS[d, 0], DIRECTIONS[d, 1], reach, window)
        cls = line_class(window, length, exact)
        if cls >= 0:
            out[cls] += 1


@njit(cache=True)
def score_by_pattern(counts: ClassCounts) -> int:
    """SharpMoku's score ladder over the class counts (the first rule that applies)."""
    wins, open4, open3 = counts[WIN], counts[OPEN4], counts[OPEN3]
    blocked4, blocked3, open2 = counts[BLOCKED4], counts[BLOCKED3], counts[OPEN2]
    if wins > 0:
        return int(WIN_SCORE * wins)
    if open4 > 0:
        return 100_000_000
    if blocked4 > 1:
        return 10_000_000
    if open3 > 0 and blocked4 > 0:
        return 1_000_000
    if open3 > 1:
        return 100_000
    if open3 == 1:
        return _by_twos(open2, 40_000, 38_000, 35_000, 3_450)
    if blocked4 == 1:
        return _by_twos(open2, 4_500, 4_200, 4_100, 4_050)
    if blocked3 == 3 and open2 == 1:
        return 2_800
    if blocked3 == 2 and open2 in (1, 2):
        return 3_000 if open2 == 2 else 2_900
    if blocked3 == 1 and open2 in (1, 2, 3):
        return _by_twos(open2, 3_400, 3_300, 3_100, 0)
    if open2 == 4:
        return 2_700
    if open2 == 3:
        return 2_500
    if open2 == 2:
        return 2_000
    if open2 == 1:
        return 1_000
    return 0


@njit(cache=True)
def _by_twos(open2: int, three: int, two: int, one: int, otherwise: int) -> int:
    if open2 == 3:
        return three
    if open2 == 2:
        return two
    if open2 == 1:
        return one
    return otherwise


@njit(cache=True)
def stone_value(cells: Cells, size: int, move: int, exact: bool) -> int:
    counts = np.zeros(6, dtype=np.int64)
    class_counts(cells, size, move, exact, counts)
    return score_by_pattern(counts)


@njit(cache=True)
def get_score(cells: Cells, size: int, move: int, exact: bool) -> int:
    """``2 * PlayerValue + EnemyValue`` of the stone on ``move`` (the board is restored)."""
    colour = cells[move]
    player_value = stone_value(cells, size, move, exact)
    cells[move] = other(colour)
    enemy_value = stone_value(cells, size, move, exact)
    cells[move] = colour
    return 2 * player_value + enemy_value


@njit(cache=True)
def order_from_centre(moves: npt.NDArray[np.int64], count: int, size: int) -> None:
    """Sort ``moves[:count]`` by distance from the board's centre, stable (board order)."""
    centre = size // 2
    for i in range(1, count):
        move = moves[i]
        key = (move % size - centre) ** 2 + (move // size - centre) ** 2
        j = i
        while j > 0 and (moves[j - 1] % size - centre) ** 2 + (
                moves[j - 1] // size - centre) ** 2 > key:
            moves[j] = moves[j - 1]
            j -= 1
        moves[j] = move


@njit(cache=True)
def best_single_move(
    cells: Cells, near1: Counts, size: int, colour: int, centre_ties: bool, exact: bool
) -> tuple[int, int]:
    """Over the radius-1 candidates, the highest ``get_score`` for a ``colour`` stone.

    Returns (move, score); the first of equal scores is kept, in board order or, with
    ``centre_ties``, from the centre out. (-1, -1) with no candidate.
    """
    moves = np.empty(cells.shape[0], dtype=np.int64)
    count = candidates(cells, near1, moves)
    if centre_ties:
        order_from_centre(moves, count, size)
    best_move, best_score = -1, -1
    for i in range(count):
        cells[moves[i]] = colour
        score = get_score(cells, size, moves[i], exact)
        cells[moves[i]] = EMPTY
        if score > best_score:
            best_move, best_score = moves[i], score
    return best_move, best_score


@njit(cache=True)
def root_moves(cells: Cells, near1: Counts, near2: Counts, out: npt.NDArray[np.int64]) -> int:
    """Radius 2 around the stones, or radius 1 when radius 2 gives more than 30 cells."""
    count = candidates(cells, near2, out)
    if count > 30:
        count = candidates(cells, near1, out)
    return count


@njit(cache=True)
def alpha_beta(
    cells: Cells, near1: Counts, near2: Counts, size: int, colour: int, depth: int,
    ply: int, is_max: bool, alpha: int, beta: int, last: int, stones: int,
    buffer: npt.NDArray[np.int64], ctx: Context, stop: StopArray, tree: TreeBuffer,
    parent: int, centre_ties: bool, exact: bool,
) -> tuple[int, int]:
    """Minimax with alpha-beta; returns (score, move). ``colour`` moves at this node.

    With ``centre_ties`` the root tries its moves from the centre out and keeps the first
    of equal scores (later ones come back as bounds no better than it).
    """
    node = tree_open(tree, ctx, parent, last, ply, depth, alpha, beta)
    poll_stop(ctx, stop)
    moves = buffer[ply]
    count = 0
    first_of_ties = centre_ties and ply == 0
    if depth > 0:
        if ply == 0:
            count = root_moves(cells, near1, near2, moves)
            if first_of_ties:
                order_from_centre(moves, count, size)
        else:
            count = candidates(cells, near1, moves)
    if count == 0:
        score = get_score(cells, size, last, exact)
        tree_close(tree, node, score, KIND_LEAF, False)
        return score, -1
    best_score = -(2**62) if is_max else 2**62
    best_move = moves[0]
    cut = False
    for i in range(count):
        move = moves[i]
        place(cells, near1, near2, size, move, colour)
        score, _ = alpha_beta(
            cells, near1, near2, size, other(colour), depth - 1, ply + 1, not is_max,
            alpha, beta, move, stones + 1, buffer, ctx, stop, tree, node, centre_ties, exact,
        )
        remove(cells, near1, near2, size, move)
        if ctx[CTX_ABORTED] != 0:
            if i == 0:  # nothing finished here: report this move rather than none
                best_score, best_move = score, move
            break
        if stones + 1 == cells.shape[0]:
            best_score, best_move = score, move
            break
        # ">=" / "<=": among equal scores the later move is kept, as in the source.
        if first_of_ties:
            if score > best_score:
                best_score, best_move = score, move
        elif (is_max and score >= best_score) or (not is_max and score <= best_score):
            best_score, best_move = score, move
        if is_max:
            alpha = max(alpha, score)
        else:
            beta = min(beta, score)
        if alpha >= beta:
            cut = True
            break
    tree_close(tree, node, best_score, KIND_MAX if is_max else KIND_MIN, cut)
    return best_score, best_move


@search_kernel
def choose(
    cells: Cells, near1: Counts, near2: Counts, size: int, colour: int, depth: int,
    centre_ties: bool, exact: bool, ctx: Context, stop: StopArray, tree: TreeBuffer,
) -> tuple[int, int, int]:
    """SharpMoku's move choice on a non-empty board: (move, score, how).

    ``how`` is 1 for the root win check, 2 for the must-block check, 3 for the search.
    The whole choice is one kernel that releases the interpreter lock.
    """
    move, score = best_single_move(cells, near1, size, colour, centre_ties, exact)
    if score >= ROOT_WIN_THRESHOLD:
        return move, score, 1
    block, threat = best_single_move(cells, near1, size, 3 - colour, centre_ties, exact)
    if threat >= ROOT_BLOCK_THRESHOLD:
        return block, threat, 2
    buffer = np.empty((depth + 1, cells.shape[0]), dtype=np.int64)
    # Not literals: a literal argument to the recursive kernel would compile (and cache)
    # a second specialisation of it.
    zero = depth * 0
    stones = zero + int(np.count_nonzero(cells))
    score, move = alpha_beta(
        cells, near1, near2, size, colour, depth, zero, zero == 0, zero + ALPHA0,
        zero + BETA0, zero - 1, stones, buffer, ctx, stop, tree, zero - 1, centre_ties, exact,
    )
    return move, score, 3
