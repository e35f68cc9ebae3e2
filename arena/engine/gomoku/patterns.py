"""arena-gomoku's position: line patterns and candidate moves, kept up to date per stone.

For every empty cell, colour and direction we keep the class of the line a stone of that
colour would make there: five, open four (two ways to five), four (one way), open three
(one move from an open four), three (one move from a four), open two, two, none. A class
is read from a table (``build_table``, one per rule) indexed by the ten neighbours along
the line (5 each way, coded empty 0 / own 1 / blocked 2, base 3), so overlines are seen
and exact-five works. Those indexes are themselves kept: a stone changes one digit of the
index of each of the 40 cells on its four lines, so placing it costs 40 additions and
table lookups, with no cell read twice.

The position lives in three arrays:

- ``cells`` (int8, one per cell): ``EMPTY``, ``BLACK`` or ``WHITE``;
- ``pat`` (int8, ``[colour, direction, cell]``): the classes (``NONE`` on stones);
- ``st`` (int64): everything else at fixed offsets (``ST_*``; blocks of ``MAX_CELLS``):
  ``stats[colour, class]`` counts (cell, direction) pairs per class (the static
  evaluation reads them in O(1)); the Zobrist key; the number of stones within Chebyshev
  distance 2 of each cell; the candidate moves (empty cells with such a stone) as a list
  with each cell's place in it; the line indexes; per colour and cell a threat summary
  (``THREAT_*``) for move ordering, which also holds the cell's classes on its four lines
  as one number (``cell_code``, three bits a direction); and the evaluation's weights
  (``evaluation.py``) with, per cell code, the weight of the cell's kind (``cell_quad``),
  so that a leaf reads one number per candidate and side, and the network's if any; and
  a board network if the weight set has one (``ST_BOARD``, ``B_*``, ``H_*``), with each
  cell's values and 5x5 sums: ``play`` and ``unplay`` note the cells whose stone or classes
  changed, and ``flush_board`` brings those up to date when a leaf is evaluated.

One state array instead of a dozen keeps the recursive kernels' calls cheap: numba
updates a reference count for each array argument of each call.
"""

from __future__ import annotations

import functools

import numpy as np
import numpy.typing as npt
from numba import njit

import arena.engine.numba_cache  # noqa: F401  (where numba caches the kernels below)
from arena.engine.gomoku.board import (
    DIRECTIONS,
    EMPTY,
    EXACT_FIVE,
    FREESTYLE,
    MAX_CELLS,
    SIZES,
    ZOBRIST,
    Cells,
)
from arena.engine.gomoku.evaluation import (
    BOARD_CHANNELS,
    BOARD_HEAD,
    BOARD_KERNEL,
    CELL_CODES,
    FEATURES,
    FIRST_QUAD,
    MAX_HIDDEN,
    QUAD_INDEX,
    QUADS,
    TAPS,
    BoardNet,
    Weights,
    board_ints,
    hidden_units,
    load_board,
    load_weights,
    network,
)

NONE, TWO, OPEN_TWO, THREE, OPEN_THREE, FOUR, OPEN_FOUR, FIVE = range(8)
CLASSES = 8  # one row of stats
HALF = 5  # neighbours read each way
TABLE_SIZE = 3**10
_CENTRE = HALF

# Move ordering: per class, its weight (the low 16 bits of a cell's threat summary) and
# the counters it adds to the summary (4 bits each above; a cell has four directions):
# directions with a five, an open four, a four or better, an open three, a three. Above
# those, from ``THREAT_CODE``, the cell's code: its class on each line, 3 bits a direction
# (``cell_code``), which the evaluation weighs (``ST_CELL_EVAL``).
ORDER_WEIGHT = np.array([0, 2, 5, 6, 30, 25, 100, 0], dtype=np.int64)
WEIGHT_MASK = 0xFFFF
COUNTER_MASK = 0xF
THREAT_FIVES, THREAT_OPEN_FOURS, THREAT_FOURS, THREAT_OPEN_THREES, THREAT_THREES = (
    16, 20, 24, 28, 32)
THREAT_STEP = np.array(
    [ORDER_WEIGHT[c] + ((c == FIVE) << THREAT_FIVES) + ((c == OPEN_FOUR) << THREAT_OPEN_FOURS)
     + ((c >= FOUR) << THREAT_FOURS) + ((c == OPEN_THREE) << THREAT_OPEN_THREES)
     + ((c == THREE) << THREAT_THREES) for c in range(8)], dtype=np.int64)
THREAT_CODE = 36
CODE_BITS = 3  # a class, NONE..FIVE
CODE_MASK = (1 << CODE_BITS) - 1
CODES = 1 << (4 * CODE_BITS)
# What a class on direction d adds to the summary: its counters and its digit of the code.
SUMMARY_STEP = np.array([[THREAT_STEP[c] + (c << (THREAT_CODE + CODE_BITS * d))
                          for c in range(CLASSES)] for d in range(4)], dtype=np.int64)
# A summary with any of these counters: a stone there makes a three or better.
THREE_OR_BETTER = sum(COUNTER_MASK << f for f in (THREAT_FIVES, THREAT_FOURS,
                                                  THREAT_OPEN_THREES, THREAT_THREES))

# Offsets into the state array.
ST_STATS = 0  # [colour * CLASSES + class], colours 1 and 2
ST_KEY = 3 * CLASSES
ST_SIZE = ST_KEY + 1
ST_CANDIDATES = ST_KEY + 2  # how many
ST_NEAR = 32
ST_LIST = ST_NEAR + MAX_CELLS  # the candidate cells, in no particular order
ST_PLACE = ST_LIST + MAX_CELLS  # a cell's index in the list, -1 if not a candidate
ST_INDEX = ST_PLACE + MAX_CELLS  # [((colour - 1) * 4 + direction) * MAX_CELLS + cell]
ST_THREAT = ST_INDEX + 8 * MAX_CELLS  # [(colour - 1) * MAX_CELLS + cell]
ST_EVAL = ST_THREAT + 2 * MAX_CELLS  # the evaluation's FEATURES weights
ST_CELL_EVAL = ST_EVAL + FEATURES  # [side * CODES + code], side 0 to move, 1 the opponent
ST_NET_HIDDEN = ST_CELL_EVAL + 2 * CODES  # the network's hidden units, 0 without one
ST_NET_IN = ST_NET_HIDDEN + 1  # [feature * hidden + unit]
ST_NET_OUT = ST_NET_IN + FEATURES * MAX_HIDDEN  # [unit]
# With a board network, the margin by which the linear weights above screen its leaves
# (``search.screened``; 0: no screen).
ST_SCREEN = ST_NET_OUT + MAX_HIDDEN
ST_BOARD = ST_SCREEN + 1  # 1 with a board network, 0 without
# The board network (``evaluation.BoardNet``) as int32 from ``ST_BOARD_INTS`` (``board_view``;
# blocks of ``BOARD_CHANNELS``): its tables per cell code of Black (``B_BLACK``) and of White,
# the stones' values, the 5x5 weights (``TAPS`` rows) and biases; then the position's part,
# kept up to date when a leaf is evaluated (``flush_board``): per cell its value
# (``B_CELLS``) and the 5x5 sum of its neighbours' values without the bias (``B_SUMS``);
# ``B_DELTA`` is room for one change. Then what changed since: per cell its stone
# (``B_STONE``, as ``cells``) and whether it is noted (``B_NOTED``), the noted cells
# (``B_NOTES``) and how many (``B_COUNT``).
B_BLACK = 0
B_WHITE = B_BLACK + CELL_CODES * BOARD_CHANNELS
B_STONES = B_WHITE + CELL_CODES * BOARD_CHANNELS
B_TAPS = B_STONES + 2 * BOARD_CHANNELS
B_BIAS = B_TAPS + TAPS * BOARD_CHANNELS
B_CELLS = B_BIAS + BOARD_CHANNELS
B_SUMS = B_CELLS + MAX_CELLS * BOARD_CHANNELS
B_DELTA = B_SUMS + MAX_CELLS * BOARD_CHANNELS
B_STONE = B_DELTA + BOARD_CHANNELS
B_NOTED = B_STONE + MAX_CELLS
B_NOTES = B_NOTED + MAX_CELLS
B_COUNT = B_NOTES + MAX_CELLS
B_LENGTH = B_COUNT + 1
ST_BOARD_INTS = ST_BOARD + 1
# The heads as float64 from ``ST_BOARD_HEAD`` (``head_view``), per side to move (0 Black):
# the input weights ([mean or maximum of channel i, unit j] at ``i * BOARD_HEAD + j``),
# the units' biases, their output weights and the output bias; then room for the pooled
# channels and the units.
H_SIDE = 2 * BOARD_CHANNELS * BOARD_HEAD + 2 * BOARD_HEAD + 1
H_BIAS = 2 * BOARD_CHANNELS * BOARD_HEAD
H_OUT = H_BIAS + BOARD_HEAD
H_OUT_BIAS = H_OUT + BOARD_HEAD
H_POOLED = 2 * H_SIDE
H_UNITS = H_POOLED + 2 * BOARD_CHANNELS
H_LENGTH = H_UNITS + BOARD_HEAD
ST_BOARD_HEAD = ST_BOARD_INTS + (B_LENGTH + 1) // 2
ST_LENGTH = ST_BOARD_HEAD + H_LENGTH

Patterns = npt.NDArray[np.int8]
State = npt.NDArray[np.int64]
Table = npt.NDArray[np.int8]
POWERS = np.array([3**i for i in range(2 * HALF)], dtype=np.int64)


@njit(cache=True)
def _run_through_centre(line: npt.NDArray[np.int64]) -> int:
    length = 1
    i = _CENTRE - 1
    while i >= 0 and line[i] == 1:
        length += 1
        i -= 1
    i = _CENTRE + 1
    while i < 2 * HALF + 1 and line[i] == 1:
        length += 1
        i += 1
    return length


@njit(cache=True)
def _is_five(line: npt.NDArray[np.int64], rule: int) -> bool:
    length = _run_through_centre(line)
    return length == 5 or (length > 5 and rule == FREESTYLE)


@njit(cache=True)
def build_table(rule: int) -> Table:
    """Class of every neighbourhood (codes 0 empty, 1 own, 2 blocked) for ``rule``."""
    table = np.zeros(TABLE_SIZE, dtype=np.int8)
    line = np.zeros(2 * HALF + 1, dtype=np.int64)
    powers = np.array([3**i for i in range(2 * HALF)], dtype=np.int64)
    # Filling an empty neighbour raises the index, so going down visits successors first.
    for index in range(TABLE_SIZE - 1, -1, -1):
        rest = index
        for i in range(2 * HALF):
            pos = i if i < HALF else i + 1
            line[pos] = rest % 3
            rest //= 3
        line[_CENTRE] = 1
        if _is_five(line, rule):
            table[index] = FIVE
            continue
        fives = 0
        best = NONE
        for i in range(2 * HALF):
            pos = i if i < HALF else i + 1
            if line[pos] != 0:
                continue
            line[pos] = 1
            if _is_five(line, rule):
                fives += 1
            line[pos] = 0
            after = table[index + powers[i]]
            if after == OPEN_FOUR:
                best = max(best, OPEN_THREE)
            elif after == FOUR:
                best = max(best, THREE)
            elif after == OPEN_THREE:
                best = max(best, OPEN_TWO)
            elif after == THREE:
                best = max(best, TWO)
        if fives >= 2:
            table[index] = OPEN_FOUR
        elif fives == 1:
            table[index] = FOUR
        else:
            table[index] = best
    return table


_TABLES: dict[int, Table] = {}


def table_for(rule: int) -> Table:
    if rule not in _TABLES:
        _TABLES[rule] = build_table(rule)
    return _TABLES[rule]


@njit(cache=True)
def stat(st: State, colour: int, cls: int) -> int:
    """``stats[colour, cls]``: (cell, direction) pairs of that class."""
    return int(st[ST_STATS + colour * CLASSES + cls])


@njit(cache=True)
def _set_class(
    pat: Patterns, st: State, colour: int, d: int, cell: int, cls: int
) -> bool:
    """Set a class and what is kept of it; whether it changed."""
    old = pat[colour, d, cell]
    if old != cls:
        row = ST_STATS + colour * CLASSES
        st[row + old] -= 1
        st[row + cls] += 1
        st[ST_THREAT + (colour - 1) * MAX_CELLS + cell] += SUMMARY_STEP[d, cls] - (
            SUMMARY_STEP[d, old])
        pat[colour, d, cell] = cls
        return True
    return False


@njit(cache=True)
def new_state(size: int) -> tuple[Cells, Patterns, State]:
    """The empty board: off-board neighbours count as blocked in every line index."""
    n = size * size
    cells = np.zeros(n, dtype=np.int8)
    pat = np.zeros((3, 4, n), dtype=np.int8)
    st = np.zeros(ST_LENGTH, dtype=np.int64)
    st[ST_SIZE] = size
    for colour in (1, 2):
        st[ST_STATS + colour * CLASSES + NONE] = 4 * n
    st[ST_PLACE : ST_PLACE + MAX_CELLS] = -1
    for cell in range(n):
        x0, y0 = cell % size, cell // size
        for d in range(4):
            index = 0
            for i in range(2 * HALF):
                k = i - HALF if i < HALF else i - HALF + 1
                x, y = x0 + k * DIRECTIONS[d, 0], y0 + k * DIRECTIONS[d, 1]
                if not (0 <= x < size and 0 <= y < size):
                    index += 2 * POWERS[i]
            st[ST_INDEX + d * MAX_CELLS + cell] = index
            st[ST_INDEX + (4 + d) * MAX_CELLS + cell] = index
    return cells, pat, st


@njit(cache=True)
def refresh_classes(cells: Cells, pat: Patterns, st: State, table: Table) -> None:
    """Read every empty cell's classes from its line indexes (after ``new_state``)."""
    for cell in range(cells.shape[0]):
        if cells[cell] == EMPTY:
            for d in range(4):
                for colour in (1, 2):
                    index = st[ST_INDEX + ((colour - 1) * 4 + d) * MAX_CELLS + cell]
                    _set_class(pat, st, colour, d, cell, table[index])


def _seeing_cells() -> npt.NDArray[np.int16]:
    """``[board, move, direction, i]``: the cell that sees ``move`` as its neighbour ``i``
    along the direction (digit ``i`` of its line index), or -1 off the board; boards
    numbered as ``SIZES``."""
    seeing = np.full((len(SIZES), MAX_CELLS, 4, 2 * HALF), -1, dtype=np.int16)
    offsets = np.array([i - HALF if i < HALF else i - HALF + 1 for i in range(2 * HALF)])
    # [direction, i]: how far the seeing cell is from the move along x and y.
    dx = -offsets[None, :] * DIRECTIONS[:, 0, None]
    dy = -offsets[None, :] * DIRECTIONS[:, 1, None]
    for b, size in enumerate(SIZES):
        moves = np.arange(size * size)
        x = (moves % size)[:, None, None] + dx
        y = (moves // size)[:, None, None] + dy
        inside = (x >= 0) & (x < size) & (y >= 0) & (y < size)
        seeing[b, : size * size] = np.where(inside, y * size + x, -1)
    return seeing


SEEING = _seeing_cells()


def _square_cells() -> npt.NDArray[np.int16]:
    """``[board, cell, tap]``: the cell whose 5x5 sum takes ``cell``'s value with weight
    ``tap`` (row ``dy * BOARD_KERNEL + dx``: ``cell`` lies ``dy - 2`` rows and ``dx - 2``
    columns from it), or -1 off the board; boards numbered as ``SIZES``."""
    square = np.full((len(SIZES), MAX_CELLS, TAPS), -1, dtype=np.int16)
    half = BOARD_KERNEL // 2
    steps = np.arange(BOARD_KERNEL) - half
    dy = np.repeat(steps, BOARD_KERNEL)
    dx = np.tile(steps, BOARD_KERNEL)
    for b, size in enumerate(SIZES):
        cells = np.arange(size * size)
        x = (cells % size)[:, None] - dx
        y = (cells // size)[:, None] - dy
        inside = (x >= 0) & (x < size) & (y >= 0) & (y < size)
        square[b, : size * size] = np.where(inside, y * size + x, -1)
    return square


SQUARE = _square_cells()


@njit(cache=True)
def board_of(st: State) -> int:
    """The position's board in ``SEEING``."""
    size = st[ST_SIZE]
    return 0 if size == SIZES[0] else (1 if size == SIZES[1] else 2)


@njit(cache=True)
def board_view(st: State) -> npt.NDArray[np.int32]:
    """The board network's integers (``B_*``) as an int32 view of ``st``."""
    return st[ST_BOARD_INTS : ST_BOARD_HEAD].view(np.int32)


@njit(cache=True)
def head_view(st: State) -> npt.NDArray[np.float64]:
    """The board network's heads (``H_*``) as a float64 view of ``st``."""
    return st[ST_BOARD_HEAD : ST_LENGTH].view(np.float64)


@njit(cache=True, inline="always")
def _note(b: npt.NDArray[np.int32], cell: int) -> None:
    """Note that ``cell``'s stone or classes changed (``b`` is ``board_view``)."""
    if b[B_NOTED + cell] == 0:
        b[B_NOTED + cell] = 1
        b[B_NOTES + b[B_COUNT]] = cell
        b[B_COUNT] += 1


@njit(cache=True, inline="always")
def _board_refresh(st: State, b: npt.NDArray[np.int32], sums: npt.NDArray[np.int32],
                   taps: npt.NDArray[np.int32], delta: npt.NDArray[np.int32], board: int,
                   cell: int) -> None:
    """Bring ``cell``'s value up to date with its stone or codes and, if it changed, the
    5x5 sums that take it: ``TAPS`` multiply-adds per channel. ``b`` is ``board_view``;
    ``sums``, ``taps`` and ``delta`` its parts from ``B_SUMS``, ``B_TAPS`` and
    ``B_DELTA``."""
    channels = BOARD_CHANNELS
    row = B_CELLS + cell * channels
    changed = 0
    if b[B_STONE + cell] != EMPTY:
        stone = B_STONES + (b[B_STONE + cell] - 1) * channels
        for c in range(channels):
            delta[c] = b[stone + c] - b[row + c]
            changed |= delta[c]
    else:
        black = B_BLACK + cell_code(st, 1, cell) * channels
        white = B_WHITE + cell_code(st, 2, cell) * channels
        for c in range(channels):
            delta[c] = max(b[black + c] + b[white + c], 0) - b[row + c]
            changed |= delta[c]
    if changed == 0:
        return
    for c in range(channels):
        b[row + c] += delta[c]
    _spread(sums, taps, delta, board, cell, st[ST_BOARD] * BOARD_CHANNELS)


@njit(cache=True)
def _spread(sums: npt.NDArray[np.int32], taps: npt.NDArray[np.int32],
            delta: npt.NDArray[np.int32], board: int, cell: int, channels: int) -> None:
    """Add ``delta`` (a change of ``cell``'s value) to the 5x5 sums that take it. A
    function of its own, with these arrays only: inlined into the line updates, the
    channel loop did not vectorise (play and unplay 5 times slower). ``channels`` is
    ``BOARD_CHANNELS`` given at run time: with the constant, numba unrolled the loop
    instead (slower again)."""
    for t in range(TAPS):
        taker = SQUARE[board, cell, t]
        if taker < 0:
            continue
        at = taker * channels
        weights = t * channels
        for c in range(channels):
            sums[at + c] += taps[weights + c] * delta[c]


@njit(cache=True)
def flush_board(st: State) -> None:
    """Bring the board network's noted cells up to date (``_board_refresh``), once each
    however often they changed since the last leaf: a move's changes and their taking
    back mostly cancel, and cost nothing then."""
    b = board_view(st)
    # Separate views: indexed from their own starts, the channel loops vectorise.
    sums, taps, delta = b[B_SUMS:B_DELTA], b[B_TAPS:B_BIAS], b[B_DELTA:B_STONE]
    board = board_of(st)
    for i in range(b[B_COUNT]):
        cell = b[B_NOTES + i]
        b[B_NOTED + cell] = 0
        _board_refresh(st, b, sums, taps, delta, board, cell)
    b[B_COUNT] = 0


@njit(cache=True)
def _update_lines(
    cells: Cells, pat: Patterns, st: State, table: Table, move: int, colour: int, sign: int
) -> None:
    """Add (``sign`` 1) or take away (-1) the stone ``colour`` on ``move`` in every line
    index that sees it, and re-read the classes of the empty cells among them (and, with a
    board network, note those whose classes changed)."""
    board = board_of(st)
    networked = st[ST_BOARD] > 0
    if networked:  # a view made only for a board network
        b = board_view(st)
    for d in range(4):
        own = ST_INDEX + ((colour - 1) * 4 + d) * MAX_CELLS
        other = ST_INDEX + ((2 - colour) * 4 + d) * MAX_CELLS
        for i in range(2 * HALF):
            cell = SEEING[board, move, d, i]
            if cell < 0:
                continue
            power = POWERS[i]
            st[own + cell] += sign * power
            st[other + cell] += sign * 2 * power
            if cells[cell] == EMPTY:
                black = _set_class(pat, st, 1, d, cell,
                                   table[st[ST_INDEX + d * MAX_CELLS + cell]])
                white = _set_class(pat, st, 2, d, cell,
                                   table[st[ST_INDEX + (4 + d) * MAX_CELLS + cell]])
                if networked and (black or white):
                    _note(b, cell)


@njit(cache=True)
def _update_near(cells: Cells, st: State, move: int, delta: int) -> None:
    """Count the stone on ``move`` in the neighbourhoods within distance 2 and keep the
    candidate list: empty cells with a stone that near."""
    size = st[ST_SIZE]
    x0, y0 = move % size, move // size
    for y in range(max(0, y0 - 2), min(size, y0 + 3)):
        for x in range(max(0, x0 - 2), min(size, x0 + 3)):
            cell = y * size + x
            st[ST_NEAR + cell] += delta
            near = st[ST_NEAR + cell]
            if delta > 0 and near == 1 and cells[cell] == EMPTY:
                _add_candidate(st, cell)
            elif delta < 0 and near == 0 and st[ST_PLACE + cell] >= 0:
                _drop_candidate(st, cell)


@njit(cache=True)
def _add_candidate(st: State, cell: int) -> None:
    count = st[ST_CANDIDATES]
    st[ST_LIST + count] = cell
    st[ST_PLACE + cell] = count
    st[ST_CANDIDATES] = count + 1


@njit(cache=True)
def _drop_candidate(st: State, cell: int) -> None:
    place = st[ST_PLACE + cell]
    last = st[ST_CANDIDATES] - 1
    moved = st[ST_LIST + last]
    st[ST_LIST + place] = moved
    st[ST_PLACE + moved] = place
    st[ST_PLACE + cell] = -1
    st[ST_CANDIDATES] = last


@njit(cache=True)
def play(cells: Cells, pat: Patterns, st: State, table: Table, move: int, colour: int) -> None:
    """Place a stone and bring classes, stats, candidates and key up to date."""
    cells[move] = colour
    st[ST_KEY] ^= ZOBRIST[colour, move]
    for d in range(4):
        _set_class(pat, st, 1, d, move, NONE)
        _set_class(pat, st, 2, d, move, NONE)
    if st[ST_PLACE + move] >= 0:
        _drop_candidate(st, move)
    _update_near(cells, st, move, 1)
    _update_lines(cells, pat, st, table, move, colour, 1)
    if st[ST_BOARD] > 0:
        b = board_view(st)
        b[B_STONE + move] = colour
        _note(b, move)


@njit(cache=True)
def unplay(cells: Cells, pat: Patterns, st: State, table: Table, move: int) -> None:
    """Take the stone off ``move``: the exact inverse of ``play``."""
    colour = cells[move]
    cells[move] = EMPTY
    st[ST_KEY] ^= ZOBRIST[colour, move]
    _update_lines(cells, pat, st, table, move, colour, -1)
    _update_near(cells, st, move, -1)
    if st[ST_NEAR + move] > 0:
        _add_candidate(st, move)
    for d in range(4):
        _set_class(pat, st, 1, d, move, table[st[ST_INDEX + d * MAX_CELLS + move]])
        _set_class(pat, st, 2, d, move, table[st[ST_INDEX + (4 + d) * MAX_CELLS + move]])
    if st[ST_BOARD] > 0:
        b = board_view(st)
        b[B_STONE + move] = EMPTY
        _note(b, move)


@njit(cache=True)
def threat_summary(st: State, colour: int, cell: int) -> int:
    """The packed ``THREAT_*`` counters and ordering weight of ``cell`` for ``colour``."""
    return int(st[ST_THREAT + (colour - 1) * MAX_CELLS + cell])


@njit(cache=True)
def threat_count(summary: int, field: int) -> int:
    return (summary >> field) & COUNTER_MASK


@njit(cache=True)
def cell_code(st: State, colour: int, cell: int) -> int:
    """The classes of ``cell`` for ``colour``: direction ``d``'s in bits ``3d .. 3d + 2``."""
    return int(st[ST_THREAT + (colour - 1) * MAX_CELLS + cell] >> THREAT_CODE)


def cell_codes(st: State, colour: int, cells: int) -> npt.NDArray[np.int64]:
    """``cell_code`` of each of the board's ``cells`` cells for ``colour``, as one array."""
    start = ST_THREAT + (colour - 1) * MAX_CELLS
    return st[start : start + cells] >> THREAT_CODE


def _code_quads() -> npt.NDArray[np.int64]:
    """Each code's kind (``evaluation.QUAD_INDEX``): its four classes, a five counted as
    an open four, best first. The kinds do not depend on the weights: one table for all."""
    shifts = CODE_BITS * np.arange(4)
    classes = np.minimum((np.arange(CODES)[:, None] >> shifts) & CODE_MASK, OPEN_FOUR)
    best_first = -np.sort(-classes, axis=1)
    kinds: npt.NDArray[np.int64] = QUAD_INDEX[tuple(best_first.T)]
    return kinds


CODE_QUAD = _code_quads()


@njit(cache=True)
def cell_quad(code: int) -> int:
    """The evaluation's kind of a candidate cell with classes ``code`` for one side
    (``CODE_QUAD``)."""
    return int(CODE_QUAD[code])


@njit(cache=True)
def _weigh_cell_codes(st: State) -> None:
    """Fill ``ST_CELL_EVAL`` from the feature weights: per side and code, the weight of
    the cell's kind."""
    for side in range(2):
        for code in range(CODES):
            st[ST_CELL_EVAL + side * CODES + code] = (
                st[ST_EVAL + FIRST_QUAD + side * QUADS + CODE_QUAD[code]])


def _weigh_network(st: State, weights: Weights) -> None:
    """Write the network of ``weights``, if any, at ``ST_NET_*``."""
    hidden = hidden_units(weights)
    st[ST_NET_HIDDEN] = hidden
    inputs, outputs = network(weights)
    st[ST_NET_IN : ST_NET_IN + inputs.size] = inputs.ravel()
    st[ST_NET_OUT : ST_NET_OUT + hidden] = outputs


@njit(cache=True)
def best_class(pat: Patterns, colour: int, cell: int) -> int:
    best = NONE
    for d in range(4):
        best = max(best, pat[colour, d, cell])
    return best


@functools.lru_cache(maxsize=4)
def _board_block(net: BoardNet) -> State:
    """The board network's part of the state array, from ``ST_BOARD`` to ``ST_LENGTH``,
    as ``_weigh_board`` writes it: computed once per network (its integer form takes
    milliseconds, a search's whole budget on a forced move)."""
    block = np.zeros(ST_LENGTH - ST_BOARD, dtype=np.int64)
    block[0] = 1
    ints = board_ints(net)
    b = block[ST_BOARD_INTS - ST_BOARD : ST_BOARD_HEAD - ST_BOARD].view(np.int32)
    for start, part in ((B_BLACK, ints.black_codes), (B_WHITE, ints.white_codes),
                        (B_STONES, ints.stones), (B_TAPS, ints.taps), (B_BIAS, ints.bias)):
        b[start : start + part.size] = part.ravel()
    h = block[ST_BOARD_HEAD - ST_BOARD :].view(np.float64)
    for side in range(2):
        at = side * H_SIDE
        h[at : at + 2 * BOARD_CHANNELS * BOARD_HEAD] = net.head_in[side].ravel()
        h[at + H_BIAS : at + H_BIAS + BOARD_HEAD] = net.head_bias[side]
        h[at + H_OUT : at + H_OUT + BOARD_HEAD] = net.head_out[side]
        h[at + H_OUT_BIAS] = net.head_out_bias[side]
    block.setflags(write=False)
    return block


def _weigh_board(st: State, net: BoardNet) -> None:
    """Write the board network ``net`` from ``ST_BOARD`` (its integers, ``board_ints``, and
    its heads; ``_board_block``); the cells are read by ``refresh_board``."""
    st[ST_BOARD:ST_LENGTH] = _board_block(net)


@njit(cache=True)
def refresh_board(cells: Cells, st: State) -> None:
    """Read every cell's stone, value and 5x5 sums (after ``refresh_classes``)."""
    b = board_view(st)
    for cell in range(cells.shape[0]):
        b[B_STONE + cell] = cells[cell]
        _note(b, cell)
    flush_board(st)


def setup(
    size: int, rule: int, moves: list[int], weights: Weights | None = None,
    board: BoardNet | None = None, screen: int = 0,
) -> tuple[Cells, Patterns, State, Table]:
    """The kernels' arrays for the position after ``moves`` (Black first), evaluated with
    ``weights`` and the board network ``board`` if any (by default the shipped set's,
    ``evaluation.load_weights`` and ``load_board``); with a board network, ``screen``
    is the margin by which ``weights`` screen its leaves (``search.screened``)."""
    table = table_for(rule)
    cells, pat, st = new_state(size)
    if weights is None:
        weights, board = load_weights()[0], load_board()
    st[ST_EVAL : ST_EVAL + FEATURES] = weights[:FEATURES]
    _weigh_cell_codes(st)
    _weigh_network(st, weights)
    refresh_classes(cells, pat, st, table)
    if board is not None:
        _weigh_board(st, board)
        st[ST_SCREEN] = screen
        refresh_board(cells, st)
    for ply, move in enumerate(moves):
        play(cells, pat, st, table, move, 1 + ply % 2)
    return cells, pat, st, table


RULE_IDS = (FREESTYLE, EXACT_FIVE)
