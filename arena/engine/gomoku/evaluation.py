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
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import numpy.typing as npt

from arena.engine.datafiles import read_once

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
DEFAULT_WEIGHTS = "arena-gomoku"

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


def load_weights(name: str = DEFAULT_WEIGHTS) -> tuple[Weights, str]:
    """(weights, SHA-256 of the file) of a shipped weight set, read once."""
    return read_once(WEIGHTS_DIR / f"{name}.json", _weights_of)
