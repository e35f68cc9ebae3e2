"""The seed bots as configuration data (values from shared/seed-facts.md, sections 1.2-1.3, 4).

KReversi tables are written row 0 first (row 0 = board row 1, a1..h1), exactly as in its
source. ``depth`` values keep KReversi's own convention (configured d searches d-1 plies);
the conversion to plies happens in ``config.compile_config``.
"""

from __future__ import annotations

Table = list[list[int]]


def _mirror(top: Table) -> Table:
    """Rows 0-3 given; rows 4-7 mirror them (the board's horizontal symmetry)."""
    return [list(row) for row in top] + [list(row) for row in reversed(top)]


_CLASS_OPEN = _mirror(
    [
        [100, -50, 20, 5, 5, 20, -50, 100],
        [-50, -70, -5, -5, -5, -5, -70, -50],
        [20, -5, 15, 3, 3, 15, -5, 20],
        [5, -5, 3, 3, 3, 3, -5, 5],
    ]
)
_CLASS_MIDDLE = _mirror(
    [
        [140, -20, 20, 5, 5, 20, -20, 140],
        [-20, -40, -5, -5, -5, -5, -40, -20],
        [20, -5, 15, 3, 3, 15, -5, 20],
        [5, -5, 3, 3, 3, 3, -5, 5],
    ]
)
# Asymmetric as shipped: [2][7] = 10, [4][2] = 3 and [5][0] = 10 are typos in the original.
_CLASS_END: Table = [
    [20, -5, 10, 5, 5, 10, -5, 20],
    [-5, -10, 5, 5, 5, 5, -10, -5],
    [20, 5, 5, 5, 5, 5, 5, 10],
    [5, 5, 5, 5, 5, 5, 5, 5],
    [5, 5, 3, 5, 5, 5, 5, 5],
    [10, 5, 5, 5, 5, 5, 5, 10],
    [-5, -10, 5, 5, 5, 5, -10, -5],
    [20, -5, 10, 5, 5, 10, -5, 20],
]
_ONES: Table = [[1] * 8 for _ in range(8)]
_MADOKA_OPEN: Table = [
    [100, -50, 10, 5, 5, 10, -50, 100],
    [-50, -100, 5, 5, 5, 5, -100, -50],
    [20, 5, 5, 5, 5, 5, 5, 10],
    [5, 5, 5, 5, 5, 5, 5, 5],
    [5, 5, 3, 5, 5, 5, 5, 5],
    [10, 5, 5, 5, 5, 5, 5, 10],
    [-50, -100, 5, 5, 5, 5, -100, -50],
    [100, -50, 10, 5, 5, 10, -50, 100],
]
_MADOKA_END: Table = [[5] * 8 for _ in range(8)]
for _r, _c in ((0, 0), (0, 7), (7, 0), (7, 7)):
    _MADOKA_END[_r][_c] = 100
_MADOKA_END[4][2] = 3
_TERRA_OPEN = _mirror(
    [
        [100, -60, 20, 5, 5, 20, -60, 100],
        [-60, -120, -5, -5, -5, -5, -120, -60],
        [20, -5, 15, 3, 3, 15, -5, 20],
        [5, -5, 3, 3, 3, 3, -5, 5],
    ]
)
_TERRA_MIDDLE = _mirror(
    [
        [100, -40, 20, 5, 5, 20, -40, 100],
        [-40, -100, -5, -5, -5, -5, -100, -40],
        [20, -5, 15, 3, 3, 15, -5, 20],
        [5, -5, 3, 3, 3, 3, -5, 5],
    ]
)


def _kreversi(
    tables: tuple[Table, Table, Table],
    mobility: tuple[int, int, int],
    depth: tuple[int, int, int],
    stable: int,
    force_pass: int,
    time_s: int,
) -> dict[str, object]:
    phases = ("begin", "middle", "end")
    return {
        "evaluator": "kreversi",
        "position_tables": {k: [list(r) for r in t] for k, t in zip(phases, tables, strict=True)},
        "use_position_table": True,
        "mobility": dict(zip(phases, mobility, strict=True)),
        "depth": dict(zip(phases, depth, strict=True)),
        "stable_disc_score": stable,
        "force_pass_score": force_pass,
        "time_limit_s": time_s,
        "random_tied_root_moves": True,
        "mobility_counts_flips": False,
    }


ARENA_DEFAULT_WEIGHTS: dict[str, list[int]] = {
    "mobility": [90, 50],
    "potential_mobility": [35, 10],
    "corner": [800, 500],
    "x_square": [-350, -80],
    "c_square": [-120, -30],
    "stability": [120, 160],
    "parity": [0, 120],
    "disc": [-8, 30],
}

# KReversi's CreateBot(): depths set 2/3/5 then overwritten with 2/2/2; mobility 10/40/20.
KREVERSI_DEFAULT = _kreversi(
    (_CLASS_OPEN, _CLASS_MIDDLE, _CLASS_END), (10, 40, 20), (2, 2, 2), 10, 1000, 3
)

PRESETS: dict[str, dict[str, object]] = {
    "kreversi-default": KREVERSI_DEFAULT,
    "lucy": _kreversi((_ONES, _ONES, _ONES), (5, 10, 20), (6, 6, 7), 10, 1500, 3),
    "madoka": _kreversi(
        (_MADOKA_OPEN, _MADOKA_OPEN, _MADOKA_END), (50, 50, 10), (5, 5, 6), 60, 1000, 4
    ),
    "ryo": _kreversi(
        (_CLASS_OPEN, _CLASS_MIDDLE, _CLASS_END), (30, 40, 20), (5, 5, 6), 40, 1000, 3
    ),
    "terra": _kreversi(
        (_TERRA_OPEN, _TERRA_MIDDLE, _CLASS_END), (30, 30, 20), (6, 6, 7), 60, 1000, 3
    ),
    "lab-beginner": {"evaluator": "lab", "look_ahead": 0},
    "lab-intermediate": {"evaluator": "lab", "look_ahead": 1},
    "lab-advanced": {"evaluator": "lab", "look_ahead": 3},
    "arena-fast": {
        "evaluator": "arena",
        "weights": {k: list(v) for k, v in ARENA_DEFAULT_WEIGHTS.items()},
        "depth": 6,
        "time_ms": 1000,
        "endgame_empties": 14,
    },
    "arena-strong": {
        "evaluator": "arena",
        "weights": {k: list(v) for k, v in ARENA_DEFAULT_WEIGHTS.items()},
        "depth": 60,
        "time_ms": 2000,
        "endgame_empties": 20,
    },
    "arena-pattern": {
        "evaluator": "pattern",
        "weights": "arena-pattern",
        "depth": 60,
        "time_ms": 2000,
        "endgame_empties": 20,
        "probcut": 15,  # ProbCut at 1.5 sigma: +96 Elo at 100 ms a move (the engine's README)
    },
}


def named_config(name: str) -> dict[str, object]:
    """A preset, or a preset with integer settings changed: ``arena-pattern+probcut=15``
    (the benches' way to name a variant)."""
    preset, *changes = name.split("+")
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r} in {name!r}")
    config = dict(PRESETS[preset])
    for change in changes:
        key, sep, value = change.partition("=")
        if not sep or not value.lstrip("-").isdigit():
            raise ValueError(f"{change!r} in {name!r} is not KEY=INTEGER")
        config[key] = int(value)
    return config
