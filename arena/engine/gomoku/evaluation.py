"""arena-gomoku's static evaluation: a weight per line class and side, trained by Arena.

The evaluation of a position for the side to move is a constant plus, per line class
from ``TWO`` to ``OPEN_FOUR``, a weight times the number of (empty cell, direction) pairs
of that class, once for the side to move and once for the opponent: the class counts the
kernels keep up to date stone by stone anyway (``patterns.stat``). Then, per side, a
weight times the number of combination cells of each kind (``COMBINATIONS``): cells where
one stone makes threats on two lines at once; and one weight per candidate cell for the
two best line classes a stone there makes (``PAIRS`` kinds: an open three with an open
two, a four with a two, ...). Both depend only on the cell's four classes, which the
kernels keep packed as one code per cell and side (``patterns.cell_code``), so
``patterns.setup`` adds the two weights up once per code and a leaf reads one number per
candidate and side (``search.evaluate``; ``search.cell_features`` counts the same for the
training). The weights are log-odds of a win in units of ``EVAL_SCALE``, fitted by ``arena
engine train gomoku`` (``train.py``); the shipped set is ``weights/arena-gomoku.json``,
which records its command and metrics. The kernels read them from the state array
(``patterns.ST_EVAL``, ``patterns.ST_CELL_EVAL``), written once per search by
``patterns.setup``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import numpy.typing as npt

from arena.engine.datafiles import read_once

EVAL_SCALE = 1000  # evaluation units per unit of log-odds
MAX_WEIGHT = 20_000  # per pair: far beyond any fitted weight
# Feature layout: the constant, then classes TWO..OPEN_FOUR (1..6) of the side to move,
# then the same classes of the opponent; then the combination cells of the side to move,
# then the opponent's: a four-three or two fours (a win against no four), two open threes,
# two other threats (threes, fours, open threes; at least one plain three).
FIRST_CLASS, LAST_CLASS = 1, 6
PER_SIDE = LAST_CLASS - FIRST_CLASS + 1
COMBINATIONS = 3
FIRST_COMBINATION = 1 + 2 * PER_SIDE
# Then, per side, the candidate cells by the two best line classes a stone there makes
# (both from TWO to OPEN_FOUR, a five counted as an open four): PAIRS kinds per side,
# numbered by ``PAIR_INDEX[best, second]`` (-1: the second best is below TWO).
FIRST_PAIR = FIRST_COMBINATION + 2 * COMBINATIONS
_PAIR_KINDS = [(best, second) for best in range(FIRST_CLASS, LAST_CLASS + 1)
               for second in range(FIRST_CLASS, best + 1)]
PAIRS = len(_PAIR_KINDS)
PAIR_INDEX = np.full((8, 8), -1, dtype=np.int64)
PAIR_INDEX[tuple(np.array(_PAIR_KINDS).T)] = np.arange(PAIRS)
FEATURES = FIRST_PAIR + 2 * PAIRS
# Version 2's hand-set weights in this layout: (12 * ours - 10 * theirs) / 10 of the
# per-class weights 2, 6, 8, 30, 30, 120 (times ten; only their shape matters).
_HAND_CLASS = np.array([2, 6, 8, 30, 30, 120], dtype=np.int64)
HAND_WEIGHTS = np.concatenate([[0], 12 * _HAND_CLASS, -10 * _HAND_CLASS,
                               np.zeros(2 * COMBINATIONS + 2 * PAIRS)]).astype(np.int64)

WEIGHTS_DIR = Path(__file__).with_name("weights")
DEFAULT_WEIGHTS = "arena-gomoku"

Weights = npt.NDArray[np.int64]


def _weights_of(raw: bytes) -> Weights:
    """The weights of a file written by ``train.save`` (read-only); ``ValueError`` if
    malformed."""
    try:
        weights = np.array(json.loads(raw)["weights"], dtype=np.int64)
    except (KeyError, TypeError, ValueError) as exc:  # JSONDecodeError is a ValueError
        raise ValueError(f"not a gomoku weight file ({exc})") from exc
    if weights.shape != (FEATURES,):
        raise ValueError(f"expected {FEATURES} weights, got shape {weights.shape}")
    weights.setflags(write=False)
    return weights


def read_weights(path: Path) -> Weights:
    """The weights of a file written by ``train.save``; ``ValueError`` if malformed."""
    return read_once(path, _weights_of)[0]


def load_weights(name: str = DEFAULT_WEIGHTS) -> tuple[Weights, str]:
    """(weights, SHA-256 of the file) of a shipped weight set, read once."""
    return read_once(WEIGHTS_DIR / f"{name}.json", _weights_of)
