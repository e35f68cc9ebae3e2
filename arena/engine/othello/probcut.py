"""ProbCut (Buro, 1995): the fitted tables of the midgame search's selective cut.

At a node with ``d`` plies left the value of a deep search is predicted from a shallow one
at ``d' = probcut_depth(d)`` by a line, ``v_d ~ a * v_d' + b``, with a normal error of
spread ``sigma``. The search cuts the node when the shallow search shows the deep value
beyond the window by ``t`` sigmas or more (``search.py``); ``t`` is the bot's ``probcut``
setting in tenths (0: off).

``a``, ``b`` and ``sigma`` are fitted by Arena itself, per disc bucket (``discs // 10``) and
depth, on positions it reaches and searches (``fit``; the command is
``arena engine probcut othello``): games from the ``othello-balanced`` openings, each move
played at random (a quarter of them) or by a 1-ply pattern search, stopped at a seeded disc
count; each position is searched by iterative deepening with ProbCut off, and every pair
(shallow, deep) of iteration values of its bucket is one sample of a least-squares line.
The table is shipped beside its weight set (``weights/NAME.probcut.json``) with the command
that made it and the weights' SHA-256; a bucket with too few samples takes the fit of all
buckets at that depth, and depths past the deepest fitted one take the deepest fitted
depth of the same parity.
"""

from __future__ import annotations

import functools
import json
import random
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

from arena.engine.datafiles import read_once
from arena.engine.othello import patterns
from arena.engine.othello.patterns import load_weight_set
from arena.engine.othello.search import (
    PC_BUCKETS,
    PC_DEPTHS,
    PC_MIN_DEPTH,
    PC_SCORE_LIMIT,
    probcut_depth,
)

TABLE_SUFFIX = ".probcut.json"
MIN_SAMPLES = 30  # a bucket's own line needs this many samples at a depth
MIN_SLOPE = 0.2  # a flatter fitted line cannot predict the deep value: no cut there
RANDOM_SHARE = 0.25  # share of the sampling games' moves played at random
FIRST_DISCS, LAST_DISCS = 10, 54  # positions are sampled with this many discs


def table_path(weights: str) -> Path:
    return patterns.WEIGHTS_DIR / f"{weights}{TABLE_SUFFIX}"


def has_table(weights: str) -> bool:
    return table_path(weights).is_file()


def load_table(weights: str) -> tuple[dict[str, object], str]:
    """(the table, SHA-256 of its file) fitted for the weight set ``weights``."""
    return read_once(table_path(weights), json.loads)


def table_problem(weights: str) -> str | None:
    """Why the weight set's table cannot serve (missing, or fitted for other weights)."""
    if not has_table(weights):
        return f"weight set {weights!r} has no ProbCut table ({table_path(weights).name})"
    table, _ = load_table(weights)
    if table.get("weights_sha256") != load_weight_set(weights)[1]:
        return (f"the ProbCut table of {weights!r} was fitted for other weights: refit it "
                f"with: {table.get('command')}")
    return None


def kernel_rows(table: dict[str, object], t_tenths: int) -> npt.NDArray[np.int64]:
    """The search state's ProbCut region (``search.ST_PC_TABLE``) for threshold ``t``:
    per bucket and depth, a in thousandths, b, and t * sigma, in evaluation units."""
    rows = np.zeros((PC_BUCKETS, PC_DEPTHS, 3), dtype=np.int64)
    fitted = table["rows"]
    assert isinstance(fitted, list)
    for row in fitted:
        slope = float(row["a"])
        if slope < MIN_SLOPE:
            continue
        rows[int(row["bucket"]), int(row["depth"])] = (
            round(1000 * slope), round(float(row["b"])),
            round(t_tenths * float(row["sigma"]) / 10),
        )
    deepest = max((int(r["depth"]) for r in fitted), default=0)
    for depth in range(deepest + 1, PC_DEPTHS):
        source = deepest - ((deepest - depth) & 1)  # the same parity
        rows[:, depth] = rows[:, source]
    return rows.reshape(-1)


def search_rows(weights: str, t_tenths: int) -> npt.NDArray[np.int64]:
    """``kernel_rows`` of the weight set's table, computed once per table file and
    threshold (a bot's spec is compiled for every move); read-only."""
    return _search_rows(weights, load_table(weights)[1], t_tenths)


@functools.lru_cache(maxsize=32)
def _search_rows(weights: str, digest: str, t_tenths: int) -> npt.NDArray[np.int64]:
    rows = kernel_rows(load_table(weights)[0], t_tenths)
    rows.setflags(write=False)
    return rows


# -- fitting ---------------------------------------------------------------------------------


def sample_positions(count: int, seed: int, weights: str) -> list[tuple[int, int, int]]:
    """``count`` positions (p, o, colour of p), one per game, reproducible from ``seed``."""
    from arena.engine.api import Limits
    from arena.engine.othello.bitboard import PASS, legal_moves, parse_position
    from arena.engine.othello.engine import choose_move
    from arena.openings import load_suite
    from arena.openings.suites import start_position_after

    suite = load_suite("othello-balanced")
    bot = {"evaluator": "pattern", "weights": weights, "depth": 1, "time_ms": 600_000,
           "endgame_empties": 0, "probcut": 0}
    out: list[tuple[int, int, int]] = []
    game = 0
    while len(out) < count:
        rng = random.Random(f"{seed}:{game}")
        game += 1
        opening = rng.choice(suite.openings)
        pos = parse_position(start_position_after("othello", "standard", 8, opening))
        target = rng.randint(FIRST_DISCS, LAST_DISCS)
        while 64 - pos.empties() < target:
            moves = legal_moves(pos)
            if not moves:
                break
            if moves == [PASS]:
                pos = pos.play(PASS)
                continue
            if rng.random() < RANDOM_SHARE:
                move = rng.choice(moves)
            else:
                move = choose_move(pos.to_text(), bot, Limits(depth=1)).move
            pos = pos.play(move)
        moves = legal_moves(pos)
        if moves and moves != [PASS]:
            out.append((pos.player, pos.opponent, pos.turn))
    return out


def iteration_values(
    positions: list[tuple[int, int, int]], max_depth: int, weights: str
) -> npt.NDArray[np.int64]:
    """Each position's value after each iteration 1..max_depth (column d), ProbCut off."""
    from arena.engine.othello.bitboard import Position
    from arena.engine.othello.budget import TimeBudget
    from arena.engine.othello.config import compile_config
    from arena.engine.othello.engine import search_template
    from arena.engine.othello.search import (
        DEEPEN_STEP,
        DP_DEPTH,
        DP_MOVE,
        DP_SCORE,
        SearchBuffers,
    )

    spec = compile_config({"evaluator": "pattern", "weights": weights, "endgame_empties": 0,
                           "probcut": 0})
    buffers = SearchBuffers(tt_bits=18)
    stop = np.zeros(1, dtype=np.int64)
    values = np.zeros((len(positions), max_depth + 1), dtype=np.int64)
    for n, (p, o, turn) in enumerate(positions):
        pos = Position(p, o, turn) if turn == 0 else Position(o, p, turn)
        template = search_template(spec, pos, TimeBudget("wall", 0))
        buffers.hist.fill(0)
        depth, first = 0, -1
        while depth < max_depth:
            status = buffers.deepen(p, o, turn, (depth + 1, max_depth), 64, first, 0, 0, True,
                                    spec.params, template, stop)
            depth, first = int(buffers.out[DP_DEPTH]), int(buffers.out[DP_MOVE])
            values[n, depth] = int(buffers.out[DP_SCORE])
            if status != DEEPEN_STEP:
                break
    return values


def _line(x: npt.NDArray[np.float64], y: npt.NDArray[np.float64]) -> tuple[float, float, float]:
    """Least squares y ~ a x + b: (a, b, sigma of the residuals)."""
    design = np.stack([x, np.ones_like(x)], axis=1)
    (a, b), *_ = np.linalg.lstsq(design, y, rcond=None)
    residuals = y - (a * x + b)
    sigma = float(np.sqrt((residuals @ residuals) / max(1, len(x) - 2)))
    return float(a), float(b), sigma


def fit_rows(
    discs: npt.NDArray[np.int64], values: npt.NDArray[np.int64], max_depth: int
) -> list[dict[str, object]]:
    """One line per bucket and depth 3..max_depth (see the module docstring)."""
    buckets = np.minimum(discs // 10, PC_BUCKETS - 1)
    rows: list[dict[str, object]] = []
    for depth in range(PC_MIN_DEPTH, max_depth + 1):
        shallow = int(probcut_depth(depth))
        x, y = values[:, shallow].astype(np.float64), values[:, depth].astype(np.float64)
        usable = (np.abs(x) < PC_SCORE_LIMIT) & (np.abs(y) < PC_SCORE_LIMIT)
        if usable.sum() < 3:
            continue
        pooled = _line(x[usable], y[usable])
        for bucket in range(PC_BUCKETS):
            mine = usable & (buckets == bucket)
            own = int(mine.sum()) >= MIN_SAMPLES
            a, b, sigma = _line(x[mine], y[mine]) if own else pooled
            rows.append({"bucket": bucket, "depth": depth, "shallow": shallow,
                         "a": round(a, 4), "b": round(b, 1), "sigma": round(sigma, 1),
                         "samples": int(mine.sum()), "pooled": not own})
    return rows


def fit(positions: int, seed: int, max_depth: int, weights: str) -> dict[str, object]:
    """Sample, search and fit (see the module docstring); the table with its figures."""
    if not 1 <= positions <= 100_000:
        raise ValueError(f"positions must be in 1..100000, got {positions}")
    if not PC_MIN_DEPTH <= max_depth < PC_DEPTHS:
        raise ValueError(f"max depth must be in {PC_MIN_DEPTH}..{PC_DEPTHS - 1}, got {max_depth}")
    started = time.monotonic()
    sample = sample_positions(positions, seed, weights)
    sampled = time.monotonic()
    values = iteration_values(sample, max_depth, weights)
    discs = np.array([bin(p | o).count("1") for p, o, _ in sample], dtype=np.int64)
    rows = fit_rows(discs, values, max_depth)
    return {
        "command": (f"arena engine probcut othello --positions {positions} --seed {seed} "
                    f"--max-depth {max_depth} --weights {weights}"),
        "weights": weights,
        "weights_sha256": load_weight_set(weights)[1],
        "positions": positions,
        "seed": seed,
        "max_depth": max_depth,
        "seconds": {"sample": round(sampled - started, 1),
                    "search": round(time.monotonic() - sampled, 1)},
        "rows": rows,
    }


def save(table: dict[str, object], path: Path) -> Path:
    path.write_text(json.dumps(table, indent=1) + "\n")
    return path
