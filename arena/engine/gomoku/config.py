"""Bot configurations: presets, validation field by field, and a stable content hash."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from arena.errors import FieldViolation, integer_violation, unknown_key

SHARPMOKU = "sharpmoku"
ARENA_GOMOKU = "arena-gomoku"

# Per evaluator: bump when a change to the kernels changes what its configurations play.
ENGINE_VERSIONS = {SHARPMOKU: "gomoku-1", ARENA_GOMOKU: "gomoku-17"}

# Per evaluator: key -> (default, minimum, maximum). All parameters are integers.
PARAMETERS: dict[str, dict[str, tuple[int, int, int]]] = {
    SHARPMOKU: {"depth": (2, 1, 6)},
    ARENA_GOMOKU: {
        "max_depth": (20, 1, 40),  # iterative deepening stops here at the latest
        "width": (16, 2, 64),  # candidates searched per node (threat-ordered)
        "root_width": (64, 2, 225),  # candidates searched at the root (threat-ordered)
        "vcf_plies": (21, 0, 41),  # longest VCF looked for at the root, in plies
        "vct_plies": (15, 0, 41),  # longest VCT (fours and threes) looked for at the root
        "vct_nodes": (20_000, 0, 10_000_000),  # nodes a root VCT may take (0: no cap)
        "tt_bits": (20, 10, 24),  # transposition table of 2**tt_bits entries
        # With board_eval: a leaf whose linear value (``SCREEN_WEIGHTS``) lies more than
        # this many evaluation units beyond the search's window takes that value, moved
        # this far toward the window, instead of the board network's (0: no screen).
        "screen": (1000, 0, 20_000),
    },
}

# Per evaluator: boolean key -> default.
SWITCHES: dict[str, dict[str, bool]] = {
    # SharpMoku keeps the first of equally scored moves in board order (top left first),
    # so when nothing scores, it fills the board from the edge: its two levels draw each
    # other in 225 moves. True breaks such ties toward the centre of the board instead.
    SHARPMOKU: {"centre_ties": False},
    # Version 2's hand-set evaluation weights instead of the trained ones (evaluation.py);
    # the training's self-play uses them, so that its data never depends on what it trained.
    # Late move reductions (version 10); the training's self-play searches without them,
    # as versions 2 to 9 did, so that a recorded training command makes the same games.
    # The shipped board network (``BOARD_WEIGHTS``) instead of the trained linear
    # evaluation: it predicts results better, and with its leaves screened (``screen``)
    # holds its own against it at equal time, but does no better against Rapfi
    # (README.md).
    ARENA_GOMOKU: {"hand_eval": False, "reductions": True, "board_eval": False},
}
# The shipped weight sets (``evaluation.WEIGHTS_DIR``): the trained linear evaluation with
# its network, and the board network.
TRAINED_WEIGHTS = "arena-gomoku"
BOARD_WEIGHTS = "arena-gomoku-board"
# The linear evaluation that screens the board network's leaves (``screen``).
SCREEN_WEIGHTS = TRAINED_WEIGHTS
# Switches of which at most one may be on.
EXCLUSIVE: dict[str, tuple[str, ...]] = {ARENA_GOMOKU: ("hand_eval", "board_eval")}

PRESETS: dict[str, dict[str, object]] = {
    "sharpmoku-normal": {"evaluator": SHARPMOKU, "depth": 2},
    "sharpmoku-hard": {"evaluator": SHARPMOKU, "depth": 4},
    "sharpmoku-normal-centre": {"evaluator": SHARPMOKU, "depth": 2, "centre_ties": True},
    "sharpmoku-hard-centre": {"evaluator": SHARPMOKU, "depth": 4, "centre_ties": True},
    # Every parameter spelled out (the defaults), so that a preset shows what it plays with
    # and `arena bot register` offers each as an option (--max-depth, --width, ...).
    "arena-gomoku": {"evaluator": ARENA_GOMOKU,
                     **{name: spec[0] for name, spec in PARAMETERS[ARENA_GOMOKU].items()},
                     **SWITCHES[ARENA_GOMOKU]},
}
PRESETS["arena-gomoku-board"] = {**PRESETS["arena-gomoku"], "board_eval": True}


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
    switches = SWITCHES[str(evaluator)]
    for name, value in config.items():
        if name == "evaluator":
            continue
        if name in switches:
            if not isinstance(value, bool):
                violations.append(FieldViolation(name, f"must be true or false, got {value!r}"))
            continue
        if name not in allowed:
            violations.append(FieldViolation(str(name), unknown_key(
                name, [*allowed, *switches], f"the {evaluator} evaluator")))
            continue
        _default, low, high = allowed[name]
        violation = integer_violation(name, value, low, high)
        if violation is not None:
            violations.append(violation)
    on = [name for name in EXCLUSIVE.get(str(evaluator), ()) if config.get(name) is True]
    if len(on) > 1:
        violations.append(FieldViolation(on[1], f"cannot be true with {on[0]}: each picks "
                                                 f"the evaluation (set {on[1]} false to use "
                                                 f"{on[0]})"))
    return violations


def resolved(config: Mapping[str, object]) -> dict[str, int]:
    """The parameters of a valid config, defaults filled in (switches as 0 or 1)."""
    evaluator = str(config["evaluator"])
    values: dict[str, int] = {}
    for name, (default, _low, _high) in PARAMETERS[evaluator].items():
        value = config.get(name, default)
        values[name] = value if isinstance(value, int) else default
    for name, on in SWITCHES[evaluator].items():
        values[name] = int(config.get(name, on) is True)
    return values


def weight_set(params: Mapping[str, int]) -> str | None:
    """The shipped weight set an arena-gomoku config (``resolved``) evaluates with, None
    with the hand weights."""
    if params["hand_eval"]:
        return None
    return BOARD_WEIGHTS if params["board_eval"] else TRAINED_WEIGHTS


def screen_margin(params: Mapping[str, int]) -> int:
    """The screen's margin of an arena-gomoku config (``resolved``): its ``screen`` with
    the board network, 0 (no screen) without one."""
    return params["screen"] if params["board_eval"] else 0


def linear_set(params: Mapping[str, int]) -> str | None:
    """The shipped set whose linear weights an arena-gomoku config (``resolved``) reads:
    the screen's (``SCREEN_WEIGHTS``) when a board network's leaves are screened, else
    its evaluation's own (``weight_set``; None: the hand weights)."""
    return SCREEN_WEIGHTS if screen_margin(params) else weight_set(params)


def evaluator_hash(config: Mapping[str, object]) -> str:
    """A hex digest that changes exactly when what the config plays may change.

    Defaults are filled in first, so ``{"evaluator": "sharpmoku"}`` and the same with
    ``"depth": 2`` hash alike. A switch at its default is left out, so adding a switch
    does not change the hashes of the configurations that play as before. An
    arena-gomoku config with a trained evaluation carries the SHA-256 of its shipped
    weight file (``weight_set``), so the hash follows the weights; with the board network's
    leaves screened, that of the screen's file too. ``screen`` without the board network
    changes nothing and is left out.
    """
    from arena.errors import InvalidArgumentError

    violations = validate_config(config)
    if violations:
        raise InvalidArgumentError.for_fields(violations)
    evaluator = str(config["evaluator"])
    values = resolved(config)
    weights = weight_set(values) if evaluator == ARENA_GOMOKU else None
    linear = linear_set(values) if evaluator == ARENA_GOMOKU else None
    if evaluator == ARENA_GOMOKU and not screen_margin(values):
        del values["screen"]  # it plays no part
    for name, on in SWITCHES[evaluator].items():
        if values[name] == int(on):
            del values[name]
    canonical = {"engine": ENGINE_VERSIONS[evaluator], "evaluator": evaluator, **values}
    if weights is not None:
        from arena.engine.gomoku.evaluation import load_weights

        canonical["weights_sha256"] = load_weights(weights)[1]
        if linear is not None and linear != weights:
            canonical["screen_sha256"] = load_weights(linear)[1]
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()
