"""Bot configurations: presets, validation field by field, and a stable content hash."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from arena.errors import FieldViolation

# Bump when a change to the kernels changes what a configuration plays.
ENGINE_VERSION = "gomoku-1"

SHARPMOKU = "sharpmoku"
ARENA_GOMOKU = "arena-gomoku"

# Per evaluator: key -> (default, minimum, maximum). All parameters are integers.
PARAMETERS: dict[str, dict[str, tuple[int, int, int]]] = {
    SHARPMOKU: {"depth": (2, 1, 6)},
    ARENA_GOMOKU: {
        "max_depth": (20, 1, 40),  # iterative deepening stops here at the latest
        "width": (16, 2, 64),  # candidates searched per node (threat-ordered)
        "vcf_plies": (21, 0, 41),  # longest VCF looked for at the root, in plies
        "tt_bits": (20, 10, 24),  # transposition table of 2**tt_bits entries
    },
}

PRESETS: dict[str, dict[str, object]] = {
    "sharpmoku-normal": {"evaluator": SHARPMOKU, "depth": 2},
    "sharpmoku-hard": {"evaluator": SHARPMOKU, "depth": 4},
    "arena-gomoku": {"evaluator": ARENA_GOMOKU},
}


def validate_config(config: object) -> list[FieldViolation]:
    """Every problem with ``config``; an empty list means it can be used."""
    if not isinstance(config, Mapping):
        return [FieldViolation("config", f"must be an object, got {type(config).__name__}")]
    evaluator = config.get("evaluator")
    if evaluator not in PARAMETERS:
        return [FieldViolation("evaluator", f"must be one of {sorted(PARAMETERS)}, got "
                               f"{evaluator!r}")]
    violations: list[FieldViolation] = []
    allowed = PARAMETERS[str(evaluator)]
    for name, value in config.items():
        if name == "evaluator":
            continue
        if name not in allowed:
            violations.append(FieldViolation(
                str(name), f"unknown for evaluator {evaluator!r} (known: {sorted(allowed)})"))
            continue
        _default, low, high = allowed[name]
        if isinstance(value, bool) or not isinstance(value, int):
            violations.append(FieldViolation(name, f"must be an integer, got {value!r}"))
        elif not low <= value <= high:
            violations.append(FieldViolation(name, f"must be in {low}..{high}, got {value}"))
    return violations


def resolved(config: Mapping[str, object]) -> dict[str, int]:
    """The integer parameters of a valid config, defaults filled in."""
    allowed = PARAMETERS[str(config["evaluator"])]
    values: dict[str, int] = {}
    for name, (default, _low, _high) in allowed.items():
        value = config.get(name, default)
        values[name] = value if isinstance(value, int) else default
    return values


def evaluator_hash(config: Mapping[str, object]) -> str:
    """A hex digest that changes exactly when what the config plays may change.

    Defaults are filled in first, so ``{"evaluator": "sharpmoku"}`` and the same with
    ``"depth": 2`` hash alike.
    """
    from arena.errors import InvalidArgumentError

    violations = validate_config(config)
    if violations:
        raise InvalidArgumentError.for_fields(violations)
    canonical = {"engine": ENGINE_VERSION, "evaluator": config["evaluator"], **resolved(config)}
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()
