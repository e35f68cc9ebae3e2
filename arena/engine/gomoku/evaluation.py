"""arena-gomoku's static evaluation: weights per line class and per cell kind, trained by
Arena.

The evaluation of a position for the side to move is a constant plus, per line class from
``TWO`` to ``OPEN_FOUR``, a weight times the number of (empty cell, direction) pairs of
that class, once for the side to move and once for the opponent: the class counts the
kernels keep up to date stone by stone anyway (``patterns.stat``). Then, per side, one
weight per candidate cell for the four line classes a stone there makes, as a multiset
(``QUADS`` kinds: a four with an open three and two nothings, two open twos with a two and
a three, ...): what the cell is worth to that side, combinations of threats on two lines
at once included. The kernels keep each cell's four classes packed as one code per side
(``patterns.cell_code``), so ``patterns.setup`` looks each code's weight up once and a
leaf reads one number per candidate and side (``search.evaluate``;
``search.cell_features`` counts the kinds for the training). The weights are log-odds of a
win in units of ``EVAL_SCALE``, fitted by ``arena engine train gomoku`` (``train.py``);
the shipped set is ``weights/arena-gomoku.json``, which records its command and metrics
(since version 7: fitted to Rapfi's evaluations of the self-play positions, ``--teacher``).
The kernels read them from the state array (``patterns.ST_EVAL``,
``patterns.ST_CELL_EVAL``), written once per search by ``patterns.setup``.

A weight set may add a small network over the same features (since version 8): ``hidden``
rectified units, each a weighted sum of the features (``NET_SCALE`` units of the unit's
activation per unit), and per unit the weight of its activation in the evaluation. A leaf
then adds, per candidate cell and side, the input row of the cell's kind to each unit:
``hidden`` additions where the linear part makes one. As one int64 array (``Weights``): the
``FEATURES`` linear weights, then the inputs (``FEATURES`` rows of ``hidden``), then the
``hidden`` output weights; without a network, the linear weights alone.

A weight set may instead carry a board network over every cell of the board
(``BoardNet``, below), which then evaluates alone; a search may let the linear set
screen its leaves first (``search.screened``).
"""

from __future__ import annotations

import functools
import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from arena.engine.datafiles import read_once
from arena.engine.gomoku.config import TRAINED_WEIGHTS

EVAL_SCALE = 1000  # evaluation units per unit of log-odds
MAX_WEIGHT = 20_000  # per pair: far beyond any fitted weight
# Feature layout: the constant, then classes TWO..OPEN_FOUR (1..6) of the side to move,
# then the same classes of the opponent; then, per side (the side to move's first), the
# candidate cells by the four line classes a stone there makes: QUADS kinds, each a
# multiset of four classes from NONE to OPEN_FOUR (a five counted as an open four),
# numbered by ``QUAD_INDEX`` of the classes sorted best first.
FIRST_CLASS, LAST_CLASS = 1, 6
PER_SIDE = LAST_CLASS - FIRST_CLASS + 1
FIRST_QUAD = 1 + 2 * PER_SIDE
_QUAD_KINDS = list(itertools.combinations_with_replacement(range(LAST_CLASS, -1, -1), 4))
QUADS = len(_QUAD_KINDS)
QUAD_INDEX = np.full((LAST_CLASS + 1,) * 4, -1, dtype=np.int64)
QUAD_INDEX[tuple(np.array(_QUAD_KINDS).T)] = np.arange(QUADS)
FEATURES = FIRST_QUAD + 2 * QUADS
# Version 2's hand-set weights in this layout: (12 * ours - 10 * theirs) / 10 of the
# per-class weights 2, 6, 8, 30, 30, 120 (times ten; only their shape matters).
_HAND_CLASS = np.array([2, 6, 8, 30, 30, 120], dtype=np.int64)
HAND_WEIGHTS = np.concatenate([[0], 12 * _HAND_CLASS, -10 * _HAND_CLASS,
                               np.zeros(2 * QUADS)]).astype(np.int64)

MAX_HIDDEN = 32  # the kernels' room for hidden units
NET_SCALE = 4096  # a hidden unit's units per unit of activation

WEIGHTS_DIR = Path(__file__).with_name("weights")

Weights = npt.NDArray[np.int64]


def hidden_units(weights: Weights) -> int:
    """How many hidden units ``weights`` holds (0: the linear evaluation alone)."""
    return (len(weights) - FEATURES) // (FEATURES + 1)


def combined(linear: Weights, inputs: Weights, outputs: Weights) -> Weights:
    """One weight array (the layout above) of the linear weights and a network's
    ``inputs`` (``FEATURES`` by ``hidden``) and ``outputs`` (``hidden``; none: no
    network)."""
    weights = np.concatenate([linear, inputs.ravel(), outputs]).astype(np.int64)
    if weights.shape != (FEATURES + hidden_units(weights) * (FEATURES + 1),):
        raise ValueError(f"expected {FEATURES} weights and a network, got {weights.shape}")
    if hidden_units(weights) > MAX_HIDDEN:
        raise ValueError(f"at most {MAX_HIDDEN} hidden units, got {hidden_units(weights)}")
    return weights


def network(weights: Weights) -> tuple[Weights, Weights]:
    """(inputs, outputs) of the network in ``weights``: shapes (``FEATURES``, hidden) and
    (hidden,)."""
    hidden = hidden_units(weights)
    inputs = weights[FEATURES : FEATURES + FEATURES * hidden].reshape(FEATURES, hidden)
    return inputs, weights[FEATURES + FEATURES * hidden :]


def values(x: npt.NDArray[np.int64] | npt.NDArray[np.float64], weights: Weights
           ) -> npt.NDArray[np.int64]:
    """The evaluation of feature rows ``x`` (before the kernels' bound), as the kernels
    compute it. Rows of floats (the training's) take the floating-point matrix products,
    several times faster, and give the same integers while every sum stays below 2**53."""
    value = x @ weights[:FEATURES]
    if hidden_units(weights):
        inputs, outputs = network(weights)
        value += np.maximum(x @ inputs, 0) @ outputs // NET_SCALE
    return np.asarray(value, dtype=np.int64)


def _weights_of(raw: bytes) -> Weights:
    """The weights of a file written by ``train.save`` (read-only); ``ValueError`` if
    malformed."""
    try:
        body = json.loads(raw)
        linear = np.array(body["weights"], dtype=np.int64)
        net = body.get("network", {"inputs": np.zeros((FEATURES, 0)), "outputs": []})
        inputs = np.array(net["inputs"], dtype=np.int64)
        outputs = np.array(net["outputs"], dtype=np.int64)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"not a gomoku weight file ({exc})") from exc  # JSON's errors too
    if linear.shape != (FEATURES,):
        raise ValueError(f"expected {FEATURES} weights, got shape {linear.shape}")
    if outputs.ndim != 1 or inputs.shape != (FEATURES, len(outputs)):
        raise ValueError(f"expected network inputs of shape ({FEATURES}, hidden) and "
                         f"outputs of shape (hidden,), got {inputs.shape} and {outputs.shape}")
    weights = combined(linear, inputs, outputs)
    weights.setflags(write=False)
    return weights


def read_weights(path: Path) -> Weights:
    """The weights of a file written by ``train.save``; ``ValueError`` if malformed."""
    return read_once(path, _weights_of)[0]


def load_weights(name: str = TRAINED_WEIGHTS) -> tuple[Weights, str]:
    """(weights, SHA-256 of the file) of a shipped weight set, read once."""
    return read_once(WEIGHTS_DIR / f"{name}.json", _weights_of)


# The board network (2026-12-01; shipped as ``config.BOARD_WEIGHTS`` since 2026-12-02, the
# preset arena-gomoku-board; README.md): a weight set may carry one instead of the linear
# evaluation and its network (``BoardNet``; the file's "board" section). It reads every
# cell of the board from Black's view: per cell, 17 inputs (``CELL_INPUTS``: a black stone,
# a white stone, the constant 1, and per colour how many of the cell's four lines make
# each class TWO..FIVE for that colour) give ``BOARD_CHANNELS`` rectified values (a fixed
# number: the kernels' state keeps room for that many); each channel is
# mixed over the 5x5 square around the cell (``BOARD_KERNEL``, its own weights per channel,
# cells off the board count 0), plus a bias, rectified; the mean and the maximum of each
# channel over the board's cells, through a layer of ``BOARD_HEAD`` rectified units (one
# head for Black to move, one for White), give the log-odds that the side to move wins.
# The kernels keep the cells' values and the 5x5 sums up to date stone by stone in
# integers (``board_ints``: exact, so a position's value never depends on the order its
# stones came in) and run the pooling and the head at a leaf.
CELL_INPUTS = 17
BLACK_STONE, WHITE_STONE, CONSTANT, BLACK_CLASSES, WHITE_CLASSES = 0, 1, 2, 3, 10
CLASS_ROWS = 7  # TWO..FIVE
BOARD_CHANNELS = 16
BOARD_KERNEL = 5
TAPS = BOARD_KERNEL * BOARD_KERNEL
BOARD_HEAD = 64
CELL_SCALE = 4096  # a cell value's integer units per unit
TAP_SCALE = 2048  # a 5x5 weight's integer units per unit
SUM_SCALE = CELL_SCALE * TAP_SCALE
CODE_CLASS_BITS = 3  # a cell's code: its class per direction, 3 bits each (patterns)
CELL_CODES = 1 << (4 * CODE_CLASS_BITS)
# The kernels keep the sums in int32; the scales above keep their value within 0.002 of
# the float network's log-odds (at 64 and 64, 0.1).
SUM_LIMIT = 2**31 - 1


@dataclass(frozen=True, eq=False)  # hashed by identity: its integer form is cached per net
class BoardNet:
    """A board network's weights (floats; the file's "board" section). ``first``: per
    cell input (``CELL_INPUTS``) its weight on each of the ``BOARD_CHANNELS`` channels;
    ``taps[dy, dx, c]``: channel c's weight of the cell (dy - 2, dx - 2) away; ``bias``:
    per channel, added to the 5x5 sum; the heads, index 0 for Black to move and 1 for
    White: ``head_in`` (2, 2 * ``BOARD_CHANNELS`` (the means, then the maxima),
    ``BOARD_HEAD``), ``head_bias`` (2, ``BOARD_HEAD``), ``head_out`` (2, ``BOARD_HEAD``),
    ``head_out_bias`` (2,)."""

    first: npt.NDArray[np.float64]
    taps: npt.NDArray[np.float64]
    bias: npt.NDArray[np.float64]
    head_in: npt.NDArray[np.float64]
    head_bias: npt.NDArray[np.float64]
    head_out: npt.NDArray[np.float64]
    head_out_bias: npt.NDArray[np.float64]

    @property
    def channels(self) -> int:
        """``BOARD_CHANNELS`` in every network the kernels take; fewer in the training's
        small tests."""
        return int(self.first.shape[1])

    @staticmethod
    def shapes(channels: int = BOARD_CHANNELS) -> dict[str, tuple[int, ...]]:
        c = channels
        return {"first": (CELL_INPUTS, c), "taps": (BOARD_KERNEL, BOARD_KERNEL, c),
                "bias": (c,), "head_in": (2, 2 * c, BOARD_HEAD), "head_bias": (2, BOARD_HEAD),
                "head_out": (2, BOARD_HEAD), "head_out_bias": (2,)}

    def to_json(self) -> dict[str, object]:
        return {name: np.round(getattr(self, name), 6).tolist() for name in self.shapes()}

    @classmethod
    def from_json(cls, body: object) -> BoardNet:
        """``ValueError`` if ``body`` is not a board section of this layout."""
        if not isinstance(body, dict):
            raise ValueError("the board section is not an object")
        try:
            parts = {name: np.array(body[name], dtype=np.float64) for name in _BOARD_PARTS}
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"the board section lacks or garbles {exc}") from exc
        first = parts["first"]
        if first.shape != (CELL_INPUTS, BOARD_CHANNELS):
            raise ValueError(f"board: first must have shape ({CELL_INPUTS}, "
                             f"{BOARD_CHANNELS}), got {first.shape}")
        net = cls(**parts)
        for name, shape in net.shapes().items():
            if parts[name].shape != shape:
                raise ValueError(f"board: {name} must have shape {shape}, got "
                                 f"{parts[name].shape}")
            if not np.all(np.isfinite(parts[name])):
                raise ValueError(f"board: {name} holds a number that is not finite")
        board_ints(net)  # its integer form must fit the kernels
        return net


_BOARD_PARTS = ("first", "taps", "bias", "head_in", "head_bias", "head_out", "head_out_bias")


@dataclass(frozen=True)
class BoardInts:
    """A board network in the kernels' integers: per cell code (``CELL_CODES``) of Black
    and of White the cell's value before rectifying, in ``CELL_SCALE`` units (the sum of
    Black's row, constant included, and White's); the rectified value of a black and of a
    white stone; the 5x5 weights (``TAPS`` rows, ``TAP_SCALE`` units) and the biases
    (``SUM_SCALE`` units). The heads stay floats."""

    black_codes: npt.NDArray[np.int32]
    white_codes: npt.NDArray[np.int32]
    stones: npt.NDArray[np.int32]
    taps: npt.NDArray[np.int32]
    bias: npt.NDArray[np.int32]


def code_class_counts() -> npt.NDArray[np.float64]:
    """``[code, k]``: how many of a cell code's four directions make class ``k + 1``
    (TWO..FIVE): the class inputs of a cell for one colour."""
    shifts = CODE_CLASS_BITS * np.arange(4)
    classes = (np.arange(CELL_CODES)[:, None] >> shifts) & ((1 << CODE_CLASS_BITS) - 1)
    counts = np.stack([(classes == k + 1).sum(axis=1) for k in range(CLASS_ROWS)], axis=1)
    return counts.astype(np.float64)


@functools.lru_cache(maxsize=8)
def board_ints(net: BoardNet) -> BoardInts:
    """The kernels' integer form of ``net`` (read-only, made once per network: a
    training measures a network chunk by chunk); ``ValueError`` if a 5x5 sum could leave
    int32."""
    counts = code_class_counts()
    first = net.first
    black = counts @ first[BLACK_CLASSES : BLACK_CLASSES + CLASS_ROWS] + first[CONSTANT]
    white = counts @ first[WHITE_CLASSES : WHITE_CLASSES + CLASS_ROWS]
    stones = np.maximum(first[[BLACK_STONE, WHITE_STONE]] + first[CONSTANT], 0.0)

    def units(values: npt.NDArray[np.float64], scale: int) -> npt.NDArray[np.int32]:
        scaled = np.rint(values * scale)
        if np.abs(scaled).max(initial=0) > SUM_LIMIT // TAPS:
            raise ValueError("board: a weight too large for the kernels' integers")
        return scaled.astype(np.int32)

    ints = BoardInts(units(black, CELL_SCALE), units(white, CELL_SCALE),
                     units(stones, CELL_SCALE), units(net.taps.reshape(TAPS, -1), TAP_SCALE),
                     units(net.bias, SUM_SCALE))
    largest_cell = np.maximum(
        np.maximum(ints.black_codes.astype(np.int64).max(axis=0)
                   + ints.white_codes.astype(np.int64).max(axis=0), 0),
        ints.stones.max(axis=0))
    if np.any(np.abs(ints.taps).sum(axis=0) * largest_cell + np.abs(ints.bias) > SUM_LIMIT):
        raise ValueError("board: a 5x5 sum could leave the kernels' integers")
    for part in vars(ints).values():
        part.setflags(write=False)
    return ints


def board_cell_values(ints: BoardInts, cells: npt.NDArray[np.int8],
                      black: npt.NDArray[np.int64], white: npt.NDArray[np.int64]
                      ) -> npt.NDArray[np.int64]:
    """``[position, cell, channel]``: the cells' rectified values (``CELL_SCALE`` units)
    of positions with stones ``cells`` (0 empty, 1 black, 2 white) and cell codes
    ``black`` and ``white`` (``patterns.cell_code``)."""
    empty = np.maximum(ints.black_codes[black].astype(np.int64) + ints.white_codes[white], 0)
    stones = ints.stones.astype(np.int64)
    return np.asarray(np.where((cells == 1)[..., None], stones[0],
                               np.where((cells == 2)[..., None], stones[1], empty)),
                      dtype=np.int64)


def board_sums(ints: BoardInts, values: npt.NDArray[np.int64], size: int
               ) -> npt.NDArray[np.int64]:
    """``[position, cell, channel]``: the 5x5 sums of the cells' ``values`` (zero padding),
    biases added, rectified (``SUM_SCALE`` units)."""
    n, channels = len(values), values.shape[-1]
    _, sums = square_sums(values, ints.taps.reshape(BOARD_KERNEL, BOARD_KERNEL, channels), size)
    return np.asarray(np.maximum(sums + ints.bias, 0).reshape(n, size * size, channels),
                      dtype=np.int64)


def square_sums(values: npt.NDArray[Any], taps: npt.NDArray[Any], size: int
                ) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
    """(the cells' ``values`` ``[position, cell, channel]`` on a grid ``[position, row,
    column, channel]`` with zeros around, their 5x5 sums by ``taps`` ``[dy, dx, channel]``
    on the board's grid), in the type of ``values``: the network's mixing, for its integer
    form here and its float form in the training (``boardfit``)."""
    n, channels = len(values), values.shape[-1]
    half = BOARD_KERNEL // 2
    padded = np.zeros((n, size + 2 * half, size + 2 * half, channels), dtype=values.dtype)
    padded[:, half : half + size, half : half + size] = values.reshape(n, size, size, channels)
    sums = np.zeros((n, size, size, channels), dtype=values.dtype)
    scratch = np.empty_like(sums)
    for dy in range(BOARD_KERNEL):
        for dx in range(BOARD_KERNEL):
            np.multiply(padded[:, dy : dy + size, dx : dx + size], taps[dy, dx], out=scratch)
            sums += scratch
    return padded, sums


def board_head(net: BoardNet, sums: npt.NDArray[np.int64], black_to_move: npt.NDArray[np.bool_]
               ) -> npt.NDArray[np.float64]:
    """The log-odds that the side to move wins, from the rectified 5x5 sums of each
    position's cells (``board_sums``)."""
    pooled = np.concatenate([sums.sum(axis=1) / (sums.shape[1] * SUM_SCALE),
                             sums.max(axis=1) / SUM_SCALE], axis=1)
    return np.asarray(head_logits(net, pooled, np.where(black_to_move, 0, 1))[1],
                      dtype=np.float64)


def head_logits(net: BoardNet, pooled: npt.NDArray[Any], side: npt.NDArray[np.int64]
                ) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
    """(the head's units before rectifying, the log-odds) of positions whose channels
    pooled to ``pooled``, ``side`` 0 where Black is to move and 1 where White is."""
    hidden = np.einsum("ni,nij->nj", pooled, net.head_in[side]) + net.head_bias[side]
    out = (np.einsum("nj,nj->n", np.maximum(hidden, 0.0), net.head_out[side])
           + net.head_out_bias[side])
    return hidden, out


def board_values(net: BoardNet, cells: npt.NDArray[np.int8], black: npt.NDArray[np.int64],
                 white: npt.NDArray[np.int64], size: int,
                 black_to_move: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
    """The board network's evaluation (``EVAL_SCALE`` units, before the kernels' bound)
    of positions given as ``board_cell_values`` takes them: the kernels' integers, so
    equal to ``search.evaluate`` up to the heads' rounding."""
    ints = board_ints(net)
    sums = board_sums(ints, board_cell_values(ints, cells, black, white), size)
    return np.rint(board_head(net, sums, black_to_move) * EVAL_SCALE).astype(np.int64)


def _board_of(raw: bytes) -> BoardNet | None:
    """The board network of a weight file, None if it has none; ``ValueError`` if its
    board section is malformed."""
    try:
        body = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"not a gomoku weight file ({exc})") from exc
    if not isinstance(body, dict) or body.get("board") is None:
        return None
    return BoardNet.from_json(body["board"])


def read_board(path: Path) -> BoardNet | None:
    """The board network of a file written by ``train.save``, None if it has none."""
    read_weights(path)  # the rest of the file must hold together too
    return read_once(path, _board_of)[0]


def load_board(name: str = TRAINED_WEIGHTS) -> BoardNet | None:
    """The board network of a shipped weight set, None if it has none (read once)."""
    return read_board(WEIGHTS_DIR / f"{name}.json")
