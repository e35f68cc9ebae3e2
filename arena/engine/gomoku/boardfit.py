"""Fitting a board network (``evaluation.BoardNet``) on labelled positions, in numpy.

The network is small (2,866 weights at 16 channels), so its fit needs no deep
learning library: the forward and backward passes are written out here over mini-batches,
the 5x5 depthwise mixing as 25 shifted slices of a zero-padded grid (``_forward``,
``_backward``). What the fit minimises is the mean soft log-loss of the float network
against the labels (the side to move's chance of a win); what the kernels compute, and
what a training is measured by, is its integer form (``evaluation.board_values``).

Positions are kept compactly (``BoardInputs``: per cell its stone and the two colours'
cell codes, ``patterns.cell_code``), and the 17 float inputs per cell are built per
mini-batch: all of a 45,000-position file's at once would take 1.4 GB (in float64).

The schedule is the one the network's form was chosen with (in PyTorch,
``bench/gomoku_eval_probe.py``; README.md): Adam over ``PASSES`` passes in mini-batches
of ``BATCH``, the rate rising from a 25th of ``PEAK_RATE`` to it over the first
``WARM_SHARE`` of the steps and falling to nearly zero over the rest (cosine-shaped),
Adam's momentum moving the other way (``one_cycle``); each mini-batch is seen in one of
the board's eight symmetries, drawn at random. The class counts of a cell are summed over
its four directions, so a symmetry only moves cells. All of it is drawn from one seed:
the same seed, positions and labels give the same weights.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from arena.engine.gomoku.board import FREESTYLE
from arena.engine.gomoku.evaluation import (
    BLACK_CLASSES,
    BLACK_STONE,
    BOARD_HEAD,
    BOARD_KERNEL,
    CELL_INPUTS,
    CLASS_ROWS,
    CONSTANT,
    HAND_WEIGHTS,
    WHITE_CLASSES,
    WHITE_STONE,
    BoardNet,
    board_values,
    code_class_counts,
    head_logits,
    square_sums,
)
from arena.engine.gomoku.patterns import cell_codes, setup

SIZE = 15
CELLS = SIZE * SIZE
HALF = BOARD_KERNEL // 2
PASSES = 15
BATCH = 256
PEAK_RATE = 0.002
WARM_SHARE = 0.3  # of the steps, spent raising the rate to its peak
START_DIVISOR = 25.0  # the first rate: the peak's 25th
END_DIVISOR = 25.0 * 10_000  # the last: the peak's 250,000th
MOMENTUM = (0.95, 0.85)  # Adam's first decay at the lowest rate and at the peak
SQUARE_SHARE = 0.001  # the new gradient's share in Adam's moving mean of its square
SYMMETRIES = 8
MEASURE_CHUNK = 512  # positions per call of the integer evaluation (its grids are int64)
TRAINING_TYPE = np.float32  # twice as fast as float64; the loss moves in the 4th digit
_COUNTS = code_class_counts()


@dataclass(frozen=True)
class BoardInputs:
    """Positions as the board network reads them: per position and cell (``CELLS``, row
    by row) its stone (0 empty, 1 black, 2 white) and its cell code for Black and for
    White (``patterns.cell_code``; 0 on stones, which have no classes), and whether Black
    is to move."""

    cells: npt.NDArray[np.int8]
    black: npt.NDArray[np.int16]
    white: npt.NDArray[np.int16]
    black_to_move: npt.NDArray[np.bool_]

    def __len__(self) -> int:
        return len(self.black_to_move)

    def subset(self, chosen: npt.NDArray[np.bool_] | npt.NDArray[np.int64]) -> BoardInputs:
        return BoardInputs(self.cells[chosen], self.black[chosen], self.white[chosen],
                           self.black_to_move[chosen])


def board_inputs(moves: Sequence[Sequence[int]]) -> BoardInputs:
    """The inputs of the positions after ``moves`` (freestyle 15x15, Black first), read
    by the engine's own ``patterns.setup`` and ``patterns.cell_codes``."""
    n = len(moves)
    cells = np.zeros((n, CELLS), dtype=np.int8)
    codes = np.zeros((2, n, CELLS), dtype=np.int16)
    for i, played in enumerate(moves):
        cells[i], _pat, st, _table = setup(SIZE, FREESTYLE, list(played), HAND_WEIGHTS)
        for colour in (1, 2):
            codes[colour - 1, i] = cell_codes(st, colour, CELLS)
    black_to_move = np.array([len(played) % 2 == 0 for played in moves], dtype=np.bool_)
    return BoardInputs(cells, codes[0], codes[1], black_to_move)


def board_net_values(net: BoardNet, inputs: BoardInputs) -> npt.NDArray[np.int64]:
    """``evaluation.board_values`` of every position of ``inputs``: the kernels' integer
    evaluation, in chunks (its 5x5 sums are int64 grids)."""
    parts = [board_values(net, inputs.cells[start:end], inputs.black[start:end].astype(np.int64),
                          inputs.white[start:end].astype(np.int64), SIZE,
                          inputs.black_to_move[start:end])
             for start, end in _chunks(len(inputs))]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def logits(net: BoardNet, inputs: BoardInputs) -> npt.NDArray[np.float64]:
    """The float network's log-odds that the side to move wins (what the fit minimises
    the loss of; the kernels' integers differ from it by their rounding alone)."""
    net = _typed(net, np.float64)
    parts = [_forward(net, _planes(inputs.cells[start:end], inputs.black[start:end],
                                   inputs.white[start:end], np.float64),
                      inputs.black_to_move[start:end])[0]
             for start, end in _chunks(len(inputs))]
    return np.concatenate(parts) if parts else np.zeros(0)


def _chunks(n: int) -> list[tuple[int, int]]:
    return [(start, min(n, start + MEASURE_CHUNK)) for start in range(0, n, MEASURE_CHUNK)]


# A network's start is drawn from a seed: an int, or (seed, k) for a fit's k-th further start
# (``train.start_seed``).
Seed = int | tuple[int, int]


def fit_board(inputs: BoardInputs, label: npt.NDArray[np.float64], channels: int, l2: float,
              seed: Seed, say: Callable[[str], None] | None = None, passes: int = PASSES,
              batch: int = BATCH) -> BoardNet:
    """A board network of ``channels`` channels minimising the mean soft log-loss of its
    log-odds against ``label`` (the side to move's chance of a win), plus ``l2`` times its
    squared weights over 2, fitted from a start drawn from ``seed`` (module docstring).
    Returned as its file keeps it (``BoardNet.to_json``'s rounding), so what a training
    measures is what a search reads."""
    rng = np.random.default_rng(seed)
    net = _start(channels, rng)
    first = {name: np.zeros_like(value) for name, value in _parts(net).items()}
    second = {name: np.zeros_like(value) for name, value in _parts(net).items()}
    steps = passes * -(-len(inputs) // batch)
    step = 0
    for done in range(1, passes + 1):
        started, total = time.monotonic(), 0.0
        for chosen in np.array_split(rng.permutation(len(inputs)), steps // passes):
            turn = int(rng.integers(SYMMETRIES))
            cells, black, white = (_turned(grid[chosen], turn)
                                   for grid in (inputs.cells, inputs.black, inputs.white))
            loss, grads = gradients(net, cells, black, white, inputs.black_to_move[chosen],
                                    label[chosen], l2)
            total += loss * len(chosen)
            rate, momentum = one_cycle(step, steps)
            step += 1
            slopes = _parts(grads)
            for name, value in _parts(net).items():
                adam_step(value, slopes[name], first[name], second[name], step, rate,
                          1.0 - momentum)
        if say is not None:
            say(f"board pass {done}/{passes}: training log-loss {total / len(inputs):.4f} "
                f"({time.monotonic() - started:.0f} s)")
    return BoardNet.from_json(_typed(net, np.float64).to_json())


def one_cycle(step: int, steps: int) -> tuple[float, float]:
    """(rate, Adam's first decay) at ``step`` (from 0) of ``steps``: the rate rises from
    the peak's ``START_DIVISOR``-th to the peak over ``WARM_SHARE`` of the steps, then
    falls to its ``END_DIVISOR``-th, each along half a cosine; the momentum falls as the
    rate rises and rises as it falls (PyTorch's ``OneCycleLR``, which the probe used)."""
    warm = WARM_SHARE * steps
    low, high = MOMENTUM
    if step < warm:
        share = step / warm
        return (_cosine(PEAK_RATE / START_DIVISOR, PEAK_RATE, share),
                _cosine(low, high, share))
    share = (step - warm) / max(steps - warm - 1.0, 1.0)
    return _cosine(PEAK_RATE, PEAK_RATE / END_DIVISOR, share), _cosine(high, low, share)


def _cosine(start: float, end: float, share: float) -> float:
    """From ``start`` at share 0 to ``end`` at share 1, slowly at both ends."""
    return end + (start - end) * (1.0 + math.cos(math.pi * min(share, 1.0))) / 2.0


def adam_step(value: npt.NDArray[Any], grad: npt.NDArray[Any], first: npt.NDArray[Any],
              second: npt.NDArray[Any], step: int, rate: float, share: float) -> None:
    """One Adam step of ``value`` in place: ``first`` and ``second``, the moving means of
    the gradient and its square (the new one's share ``share`` and ``SQUARE_SHARE``), each
    corrected for its start at zero; ``step`` counts from 1. The board network's fit and
    the linear evaluation's network (``train.network_fit``) both step so."""
    first += share * (grad - first)
    second += SQUARE_SHARE * (grad * grad - second)
    step_size = rate * (first / (1 - (1 - share)**step)) / (
        np.sqrt(second / (1 - (1 - SQUARE_SHARE)**step)) + 1e-8)
    value -= step_size.astype(value.dtype)


def _start(channels: int, rng: np.random.Generator) -> BoardNet:
    """The seeded start: each weight and bias uniform within one over the square root of
    the number of values its unit sums (the usual start of such layers)."""
    shapes = BoardNet.shapes(channels)
    reach = {"first": CELL_INPUTS, "taps": BOARD_KERNEL**2, "bias": BOARD_KERNEL**2,
             "head_in": 2 * channels, "head_bias": 2 * channels, "head_out": BOARD_HEAD,
             "head_out_bias": BOARD_HEAD}
    return _typed(BoardNet(**{name: rng.uniform(-1.0, 1.0, shape) / math.sqrt(reach[name])
                              for name, shape in shapes.items()}), TRAINING_TYPE)


def _parts(net: BoardNet) -> dict[str, npt.NDArray[Any]]:
    return {name: getattr(net, name) for name in net.shapes()}


def _typed(net: BoardNet, kind: type[np.floating[Any]]) -> BoardNet:
    return BoardNet(**{name: value.astype(kind) for name, value in _parts(net).items()})


def _turned(grid: npt.NDArray[Any], turn: int) -> npt.NDArray[Any]:
    """Per-position rows of cells in symmetry ``turn`` (0..7: a quarter turn ``turn %
    4`` times, mirrored from 4 on)."""
    square = np.rot90(grid.reshape(-1, SIZE, SIZE), turn % 4, axes=(1, 2))
    if turn >= 4:
        square = square[:, :, ::-1]
    return np.ascontiguousarray(square).reshape(-1, CELLS)


def _planes(cells: npt.NDArray[np.int8], black: npt.NDArray[np.int16],
            white: npt.NDArray[np.int16], kind: type[np.floating[Any]]) -> npt.NDArray[Any]:
    """``[position, cell, input]``: the network's ``CELL_INPUTS`` inputs of each cell."""
    x = np.zeros((*cells.shape, CELL_INPUTS), dtype=kind)
    x[..., BLACK_STONE] = cells == 1
    x[..., WHITE_STONE] = cells == 2
    x[..., CONSTANT] = 1.0
    x[..., BLACK_CLASSES : BLACK_CLASSES + CLASS_ROWS] = _COUNTS[black]
    x[..., WHITE_CLASSES : WHITE_CLASSES + CLASS_ROWS] = _COUNTS[white]
    return x


@dataclass
class _Forward:
    """What the backward pass reads of the forward one."""

    x: npt.NDArray[Any]  # [position, cell, input]
    pre: npt.NDArray[Any]  # [position, cell, channel]: the cells' values before rectifying
    padded: npt.NDArray[Any]  # [position, row, column, channel]: rectified, zero around
    mixed: npt.NDArray[Any]  # [position, cell, channel]: the 5x5 sums, bias added
    strongest: npt.NDArray[np.int64]  # [position, channel]: the cell of the maximum
    pooled: npt.NDArray[Any]  # [position, 2 channels]: the means, then the maxima
    head: npt.NDArray[Any]  # [position, BOARD_HEAD]: the head's sums before rectifying
    side: npt.NDArray[np.int64]  # 0 Black to move, 1 White


def _forward(net: BoardNet, x: npt.NDArray[Any], black_to_move: npt.NDArray[np.bool_]
             ) -> tuple[npt.NDArray[Any], _Forward]:
    """The log-odds of the positions whose cells' inputs are ``x``, and what the backward
    pass needs."""
    n, channels = len(x), net.channels
    pre = x @ net.first
    padded, mixed = square_sums(np.maximum(pre, 0.0), net.taps, SIZE)
    mixed = mixed.reshape(n, CELLS, channels) + net.bias
    y = np.maximum(mixed, 0.0)
    strongest = y.argmax(axis=1)
    pooled = np.concatenate([y.mean(axis=1), np.take_along_axis(y, strongest[:, None], 1)[:, 0]],
                            axis=1)
    side = np.where(black_to_move, 0, 1)
    head, out = head_logits(net, pooled, side)
    return out, _Forward(x, pre, padded, mixed, strongest, pooled, head, side)


def gradients(net: BoardNet, cells: npt.NDArray[np.int8], black: npt.NDArray[np.int16],
              white: npt.NDArray[np.int16], black_to_move: npt.NDArray[np.bool_],
              label: npt.NDArray[np.float64], l2: float) -> tuple[float, BoardNet]:
    """The mean soft log-loss of ``net`` on the positions given as ``BoardInputs`` holds
    them, plus ``l2`` times its squared weights over 2, and its gradient (a ``BoardNet``
    of the same shapes), computed in the type of ``net``'s weights."""
    kind = net.first.dtype.type
    out, seen = _forward(net, _planes(cells, black, white, kind), black_to_move)
    y = label.astype(kind)
    # log(1 + e^out) - y out, written to stay finite for large |out|
    loss = float(np.mean(np.maximum(out, 0.0) - y * out + np.log1p(np.exp(-np.abs(out)))))
    chance = 1.0 / (1.0 + np.exp(-np.clip(out, -40.0, 40.0)))
    grads = _backward(net, seen, ((chance - y) / len(y)).astype(kind))
    weights = _parts(net)
    penalty = sum(float(np.sum(value * value)) for value in weights.values())
    for name, value in _parts(grads).items():
        value += l2 * weights[name]
    return loss + l2 * penalty / 2.0, grads


def _backward(net: BoardNet, seen: _Forward, d_out: npt.NDArray[Any]) -> BoardNet:
    """The gradient of the weights from that of the log-odds, ``d_out``."""
    n, channels = len(d_out), net.channels
    side = seen.side
    rectified = np.maximum(seen.head, 0.0)
    d_head = d_out[:, None] * net.head_out[side] * (seen.head > 0)
    head_in, head_bias = np.zeros_like(net.head_in), np.zeros_like(net.head_bias)
    head_out, head_out_bias = np.zeros_like(net.head_out), np.zeros_like(net.head_out_bias)
    for s in (0, 1):
        mine = side == s
        head_out[s] = rectified[mine].T @ d_out[mine]
        head_out_bias[s] = d_out[mine].sum()
        head_in[s] = seen.pooled[mine].T @ d_head[mine]
        head_bias[s] = d_head[mine].sum(axis=0)
    d_pooled = np.einsum("nj,nij->ni", d_head, net.head_in[side])
    d_y = np.repeat(d_pooled[:, None, :channels] / CELLS, CELLS, axis=1)
    rows, columns = np.indices((n, channels))
    d_y[rows, seen.strongest, columns] += d_pooled[:, channels:]
    d_mixed = (d_y * (seen.mixed > 0)).reshape(n, SIZE, SIZE, channels)
    taps = np.zeros_like(net.taps)
    d_padded = np.zeros_like(seen.padded)
    scratch = np.empty_like(d_mixed)
    for dy in range(BOARD_KERNEL):
        for dx in range(BOARD_KERNEL):
            window = (slice(None), slice(dy, dy + SIZE), slice(dx, dx + SIZE))
            taps[dy, dx] = np.einsum("nyxc,nyxc->c", seen.padded[window], d_mixed)
            np.multiply(d_mixed, net.taps[dy, dx], out=scratch)
            d_padded[window] += scratch
    d_pre = (d_padded[:, HALF : HALF + SIZE, HALF : HALF + SIZE].reshape(n, CELLS, channels)
             * (seen.pre > 0))
    first = seen.x.reshape(-1, CELL_INPUTS).T @ d_pre.reshape(-1, channels)
    return BoardNet(first, taps, d_mixed.sum(axis=(0, 1, 2)), head_in, head_bias, head_out,
                    head_out_bias)
