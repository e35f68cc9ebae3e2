"""Bot configuration: validation, defaults, content hash, and compilation to kernel data.

A config is a JSON-able dict whose ``"evaluator"`` key is ``kreversi``, ``lab``, ``arena`` or
``pattern``. Missing keys take defaults (KReversi: its ``CreateBot()`` bot; arena:
``arena-fast``; pattern: ``arena-pattern``). A pattern config names a shipped weight set;
its normalized form carries the SHA-256 of that file (``weights_sha256``), so the hash of
the config, which the shared search cache keys on, changes with the weights. A pattern
config's ``probcut`` (0..40, the threshold in tenths of the fitted error; 0: off) turns on
the midgame search's ProbCut; when on, the normalized config carries the SHA-256 of the
fitted table too (``probcut_sha256``, ``probcut.py``).

Depth conventions, converted here to *plies searched* (``BotSpec.plies``):

* kreversi ``depth`` d (per phase, 1..10) searches d-1 plies, as the original does (its root is
  at depth d-1). Depth 1 would search 0 plies, which crashes the original; we search 1 ply.
* lab ``look_ahead`` d (0, 1, 3) searches d+1 plies.
* arena ``depth`` is already in plies.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from arena.engine.othello.evaluate import (
    ARENA,
    ARENA_SIZE,
    ARENA_TERMS,
    KR_FORCE_PASS,
    KR_MOBILITY,
    KR_MOBILITY_FLIPS,
    KR_SIZE,
    KR_STABLE,
    KR_TABLES,
    KR_USE_TABLE,
    KREVERSI,
    LAB,
    LAB_SIZE,
)
from arena.engine.othello.patterns import PATTERN, load_weight_set, weight_sets
from arena.engine.othello.presets import ARENA_DEFAULT_WEIGHTS, KREVERSI_DEFAULT, PRESETS
from arena.engine.othello.probcut import load_table, search_rows, table_problem
from arena.errors import (
    FieldViolation,
    InvalidArgumentError,
    integer_violation,
    unknown_key,
)

PHASES = ("begin", "middle", "end")
LOOK_AHEADS = (0, 1, 3)
_KREVERSI_KEYS = frozenset(KREVERSI_DEFAULT) | {"evaluator"}
_LAB_KEYS = frozenset({"evaluator", "look_ahead"})
_ARENA_KEYS = frozenset(PRESETS["arena-fast"]) | {"evaluator"}
_PATTERN_KEYS = frozenset(PRESETS["arena-pattern"]) | {
    "evaluator", "weights_sha256", "probcut_sha256"
}
PROBCUT_MAX = 40  # tenths of sigma
# The evaluators shape ``depth`` in two ways, and `arena bot register` offers the options of
# every preset: a value of the other shape says which evaluator takes it.
_DEPTH_PER_PHASE = (" (one depth for the whole game, `depth = N`, is the arena and pattern "
                    "evaluators')")
_DEPTH_WHOLE_GAME = (" (a depth per game phase, depth.begin, depth.middle and depth.end, is "
                     "the kreversi evaluator's)")


@dataclass(frozen=True)
class BotSpec:
    """A validated config turned into what the search needs."""

    kind: int
    params: npt.NDArray[np.int64]
    plies: tuple[int, int, int]  # by KReversi phase of the root board (begin, middle, end)
    time_ms: int | None
    prune: bool
    ordered: bool
    use_tt: bool
    random_ties: bool
    endgame_empties: int  # solve exactly at or below this many empties (-1: never)
    probcut: npt.NDArray[np.int64] | None = None  # ProbCut's kernel table (None: off)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_int(
    out: list[FieldViolation], path: str, value: object, low: int, high: int, hint: str = ""
) -> None:
    violation = integer_violation(path, value, low, high, hint)
    if violation is not None:
        out.append(violation)


def _check_bool(out: list[FieldViolation], path: str, value: object) -> None:
    if not isinstance(value, bool):
        out.append(FieldViolation(path, f"must be true or false, got {value!r}"))


def _unknown(key: str, keys: frozenset[str], evaluator: str) -> FieldViolation:
    return FieldViolation(key, unknown_key(key, keys - {"evaluator"}, f"the {evaluator} evaluator"))


def _check_keys(
    out: list[FieldViolation], path: str, value: object, keys: tuple[str, ...], hint: str = ""
) -> dict[str, object] | None:
    """A dict with exactly ``keys``; returns it when the shape is right."""
    if not isinstance(value, dict):
        out.append(FieldViolation(path, f"must be a table with keys {', '.join(keys)}, got "
                                        f"{value!r}{hint}"))
        return None
    for key in value:
        if key not in keys:
            out.append(FieldViolation(f"{path}.{key}", "unknown key"))
    for key in keys:
        if key not in value:
            out.append(FieldViolation(f"{path}.{key}", "missing"))
    return value


def _check_table(out: list[FieldViolation], path: str, table: object) -> None:
    if not isinstance(table, list) or len(table) != 8:
        out.append(FieldViolation(path, "must be 8 rows of 8 integers"))
        return
    for r, row in enumerate(table):
        if not isinstance(row, list) or len(row) != 8:
            out.append(FieldViolation(f"{path}[{r}]", "must be a row of 8 integers"))
            continue
        for c, cell in enumerate(row):
            _check_int(out, f"{path}[{r}][{c}]", cell, -350, 350)


def _validate_kreversi(config: dict[str, object], out: list[FieldViolation]) -> None:
    for key, value in config.items():
        if key == "position_tables":
            tables = _check_keys(out, key, value, PHASES)
            for phase in PHASES if tables else ():
                if tables is not None and phase in tables:
                    _check_table(out, f"{key}.{phase}", tables[phase])
        elif key in ("mobility", "depth"):
            values = _check_keys(out, key, value, PHASES,
                                 _DEPTH_PER_PHASE if key == "depth" else "")
            low, high = (-70, 70) if key == "mobility" else (1, 10)
            for phase in PHASES if values else ():
                if values is not None and phase in values:
                    _check_int(out, f"{key}.{phase}", values[phase], low, high)
        elif key in ("use_position_table", "random_tied_root_moves", "mobility_counts_flips"):
            _check_bool(out, key, value)
        elif key == "stable_disc_score":
            _check_int(out, key, value, -60, 60)
        elif key == "force_pass_score":
            _check_int(out, key, value, -2000, 2000)
        elif key == "time_limit_s":
            _check_int(out, key, value, 1, 60)
        elif key not in _KREVERSI_KEYS:
            out.append(_unknown(key, _KREVERSI_KEYS, "kreversi"))


def _validate_arena(config: dict[str, object], out: list[FieldViolation]) -> None:
    for key, value in config.items():
        if key == "weights":
            weights = _check_keys(out, key, value, ARENA_TERMS)
            for term in ARENA_TERMS if weights else ():
                pair = weights.get(term) if weights is not None else None
                if term not in (weights or {}):
                    continue
                if not isinstance(pair, list) or len(pair) != 2:
                    out.append(FieldViolation(f"weights.{term}", "must be [begin, end]"))
                    continue
                for i, w in enumerate(pair):
                    _check_int(out, f"weights.{term}[{i}]", w, -10_000, 10_000)
        elif not _validate_search_limits(key, value, out) and key not in _ARENA_KEYS:
            out.append(_unknown(key, _ARENA_KEYS, "arena"))


def _validate_search_limits(key: str, value: object, out: list[FieldViolation]) -> bool:
    """Check ``depth``, ``time_ms`` or ``endgame_empties``; False for any other key."""
    if key == "depth":
        _check_int(out, key, value, 1, 60, _DEPTH_WHOLE_GAME)
    elif key == "time_ms":
        _check_int(out, key, value, 1, 600_000)
    elif key == "endgame_empties":
        _check_int(out, key, value, 0, 30)
    else:
        return False
    return True


def _validate_pattern(config: dict[str, object], out: list[FieldViolation]) -> None:
    for key, value in config.items():
        if key == "weights":
            if not isinstance(value, str) or value not in weight_sets():
                out.append(FieldViolation(
                    key, f"must be one of the shipped weight sets {weight_sets()}, got {value!r}"
                ))
        elif key in ("weights_sha256", "probcut_sha256"):
            if not isinstance(value, str):
                out.append(FieldViolation(key, "must be a string"))
        elif key == "probcut":
            _check_int(out, key, value, 0, PROBCUT_MAX)
        elif not _validate_search_limits(key, value, out) and key not in _PATTERN_KEYS:
            out.append(_unknown(key, _PATTERN_KEYS, "pattern"))
    name = config.get("weights", PRESETS["arena-pattern"]["weights"])
    digest = config.get("weights_sha256")
    if not out and digest is not None and digest != load_weight_set(str(name))[1]:
        out.append(FieldViolation(
            "weights_sha256", f"does not match the shipped weight set {name!r}"
        ))
    probcut = config.get("probcut", PRESETS["arena-pattern"]["probcut"])
    if not out and probcut != 0:
        problem = table_problem(str(name))
        if problem is not None:
            out.append(FieldViolation("probcut", problem))
        elif "probcut_sha256" in config and config["probcut_sha256"] != load_table(str(name))[1]:
            out.append(FieldViolation(
                "probcut_sha256", f"does not match the ProbCut table of {name!r}"
            ))
    elif not out and "probcut_sha256" in config:
        out.append(FieldViolation("probcut_sha256", "only with probcut on (1..40)"))


def validate_config(config: object) -> list[FieldViolation]:
    """Every problem with ``config``, each with its field path; empty when valid."""
    out: list[FieldViolation] = []
    if not isinstance(config, dict):
        return [FieldViolation("config", "must be an object")]
    kind = config.get("evaluator")
    if kind == "kreversi":
        _validate_kreversi(config, out)
    elif kind == "lab":
        for key in config:
            if key not in _LAB_KEYS:
                out.append(_unknown(key, _LAB_KEYS, "lab"))
        look = config.get("look_ahead", 1)
        if not _is_int(look) or look not in LOOK_AHEADS:
            out.append(FieldViolation("look_ahead", f"must be one of 0, 1, 3, got {look!r}"))
    elif kind == "arena":
        _validate_arena(config, out)
    elif kind == "pattern":
        _validate_pattern(config, out)
    else:
        out.append(
            FieldViolation("evaluator", f"must be kreversi, lab, arena or pattern, got {kind!r}")
        )
    return out


def normalize_config(config: dict[str, object]) -> dict[str, object]:
    """The config with every default filled in; raises ``InvalidArgumentError`` if invalid."""
    violations = validate_config(config)
    if violations:
        raise InvalidArgumentError.for_fields(violations)
    kind = config["evaluator"]
    if kind == "kreversi":
        base = copy.deepcopy(KREVERSI_DEFAULT)
    elif kind == "lab":
        base = {"evaluator": "lab", "look_ahead": 1}
    elif kind == "pattern":
        base = copy.deepcopy(PRESETS["arena-pattern"])
        base.update(copy.deepcopy(config))
        base["weights_sha256"] = load_weight_set(str(base["weights"]))[1]
        if base["probcut"] != 0:
            base["probcut_sha256"] = load_table(str(base["weights"]))[1]
        return base
    else:
        base = copy.deepcopy(PRESETS["arena-fast"])
    base.update(copy.deepcopy(config))
    return base


def evaluator_hash(config: dict[str, object]) -> str:
    """Stable SHA-256 of the normalized config: equal hashes search identically."""
    canonical = json.dumps(normalize_config(config), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _kreversi_spec(config: dict[str, object]) -> BotSpec:
    params = np.zeros(KR_SIZE, dtype=np.int64)
    params[0] = KREVERSI
    tables = config["position_tables"]
    mobility = config["mobility"]
    depth = config["depth"]
    assert isinstance(tables, dict) and isinstance(mobility, dict) and isinstance(depth, dict)
    for i, phase in enumerate(PHASES):
        flat = [cell for row in tables[phase] for cell in row]
        params[KR_TABLES + 64 * i : KR_TABLES + 64 * (i + 1)] = flat
        params[KR_MOBILITY + i] = mobility[phase]
    params[KR_USE_TABLE] = int(bool(config["use_position_table"]))
    params[KR_STABLE] = int(config["stable_disc_score"])  # type: ignore[call-overload]
    params[KR_FORCE_PASS] = int(config["force_pass_score"])  # type: ignore[call-overload]
    params[KR_MOBILITY_FLIPS] = int(bool(config["mobility_counts_flips"]))
    b, m, e = (max(1, int(depth[phase]) - 1) for phase in PHASES)
    return BotSpec(
        kind=KREVERSI,
        params=params,
        plies=(b, m, e),
        time_ms=1000 * int(config["time_limit_s"]),  # type: ignore[call-overload]
        prune=True,
        ordered=True,
        use_tt=True,
        random_ties=bool(config["random_tied_root_moves"]),
        endgame_empties=-1,
    )


def _arena_spec(config: dict[str, object]) -> BotSpec:
    params = np.zeros(ARENA_SIZE, dtype=np.int64)
    params[0] = ARENA
    weights = config["weights"]
    assert isinstance(weights, dict)
    for i, term in enumerate(ARENA_TERMS):
        begin, end = weights.get(term, ARENA_DEFAULT_WEIGHTS[term])
        params[1 + 2 * i] = begin
        params[2 + 2 * i] = end
    return _full_search_spec(ARENA, params, config)


def _pattern_spec(config: dict[str, object]) -> BotSpec:
    params, _ = load_weight_set(str(config["weights"]))
    spec = _full_search_spec(PATTERN, params, config)
    t_tenths = int(config["probcut"])  # type: ignore[call-overload]
    if t_tenths == 0:
        return spec
    return dataclasses.replace(spec, probcut=search_rows(str(config["weights"]), t_tenths))


def _full_search_spec(kind: int, params: npt.NDArray[np.int64], config: dict[str, object]
                      ) -> BotSpec:
    """Arena's own searches (arena, pattern): every enhancement on, one depth throughout."""
    plies = int(config["depth"])  # type: ignore[call-overload]
    return BotSpec(
        kind=kind,
        params=params,
        plies=(plies, plies, plies),
        time_ms=int(config["time_ms"]),  # type: ignore[call-overload]
        prune=True,
        ordered=True,
        use_tt=True,
        random_ties=False,
        endgame_empties=int(config["endgame_empties"]),  # type: ignore[call-overload]
    )


def compile_config(config: dict[str, object]) -> BotSpec:
    """Validate, fill defaults and build the kernel parameters of a bot."""
    full = normalize_config(config)
    if full["evaluator"] == "pattern":
        return _pattern_spec(full)
    if full["evaluator"] == "kreversi":
        return _kreversi_spec(full)
    if full["evaluator"] == "arena":
        return _arena_spec(full)
    params = np.zeros(LAB_SIZE, dtype=np.int64)
    params[0] = LAB
    plies = int(full["look_ahead"]) + 1  # type: ignore[call-overload]
    # The lab's example player: plain minimax, row-major order, first best move kept.
    return BotSpec(
        kind=LAB,
        params=params,
        plies=(plies, plies, plies),
        time_ms=None,
        prune=False,
        ordered=False,
        use_tt=False,
        random_ties=False,
        endgame_empties=-1,
    )
