"""The presets shipped with the engines, and registering a bot "from a preset".

Presets live in the engine modules (``PRESETS``: name -> config). Registering from a
preset deep-merges the caller's overrides into the preset's config, so
``--from-preset terra --depth-end 8`` changes one number and keeps the rest.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping

from arena.bots.spec import builtin_config, config_to_struct
from arena.errors import FieldViolation, InvalidArgumentError
from arena.games import GAMES, GameKind, game
from arena.text import shown
from arena.v1 import bots_pb2, common_pb2

_FAITHFUL_TIES = ("; like the original, it keeps the first of equal moves in board order, "
                  "so against the other level it often fills the board from the edge to a "
                  "225-move draw (the -centre presets break ties toward the centre)")
# What each shipped preset is; presets the engines add later get a generic description.
DESCRIPTIONS: dict[str, str] = {
    "kreversi-default": "KReversi's CreateBot() bot: class default tables, depth 2/2/2",
    "lucy": "KReversi's Lucy: disc-count tables, depth 6/6/7, force pass 1500",
    "madoka": "KReversi's Madoka: strong stable-disc weight (60), depth 5/5/6",
    "ryo": "KReversi's Ryo: the class default tables, depth 5/5/6",
    "terra": "KReversi's Terra: sharp X-square penalties, depth 6/6/7",
    "lab-beginner": "Reversi lab EvaluateTest, Beginner (look-ahead 0)",
    "lab-intermediate": "Reversi lab EvaluateTest, Intermediate (look-ahead 1)",
    "lab-advanced": "Reversi lab EvaluateTest, Advanced (look-ahead 3)",
    "arena-fast": "Arena's Othello evaluator: tapered weights, depth 6, exact endgame at 14",
    "arena-strong": "Arena's Othello evaluator with deeper search, exact endgame at 20",
    "arena-pattern": "Arena's pattern evaluator (weights per game stage, trained by Arena on "
                     "its own self-play games), search as arena-strong with ProbCut",
    "sharpmoku-normal": "SharpMoku's Normal level (depth 2)" + _FAITHFUL_TIES,
    "sharpmoku-hard": "SharpMoku's Hard level (depth 4)" + _FAITHFUL_TIES,
    "sharpmoku-normal-centre": "SharpMoku's Normal level (depth 2), ties broken toward the "
                               "centre (centre_ties = true)",
    "sharpmoku-hard-centre": "SharpMoku's Hard level (depth 4), ties broken toward the centre "
                             "(centre_ties = true)",
    "arena-gomoku": "Arena's Gomoku bot: alpha-beta over incremental threat patterns, with "
                    "VCF and VCT (threat-sequence) searches at the root",
    "arena-gomoku-board": "arena-gomoku's search evaluated by its board network (a small "
                          "convolutional network over every cell, trained by Arena); "
                          "its nodes are slower; at equal time it scores more than "
                          "arena-gomoku against Rapfi at 100,000 nodes (docs/bots.md)",
}


def plain(value: object) -> object:
    """A config value as JSON-like Python: tuples and arrays become lists, numpy ints int."""
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return plain(value.tolist())
    if isinstance(value, bool | str | None):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    raise ValueError(f"unsupported config value {value!r}")


PresetConfigs = dict[str, tuple[GameKind, dict[str, object]]]


def preset_configs(kind: GameKind = common_pb2.GAME_KIND_UNSPECIFIED) -> PresetConfigs:
    """Preset name -> (game kind, config) for one game, or every game."""
    found: PresetConfigs = {}
    for each in GAMES:
        if kind not in (common_pb2.GAME_KIND_UNSPECIFIED, each.kind):
            continue
        for name, config in each.engine().presets.items():
            as_dict = plain(config)
            assert isinstance(as_dict, dict)
            found[name] = (each.kind, as_dict)
    return dict(sorted(found.items()))


def list_presets(kind: GameKind = common_pb2.GAME_KIND_UNSPECIFIED) -> list[bots_pb2.Preset]:
    """The shipped presets, with their full seed parameters, sorted by name."""
    presets = []
    for name, (preset_kind, config) in preset_configs(kind).items():
        evaluator = config.get("evaluator", "?")
        title = game(preset_kind).name
        presets.append(bots_pb2.Preset(
            name=name, game=preset_kind,
            description=DESCRIPTIONS.get(name, f"{evaluator} preset for {title}"),
            engine=bots_pb2.BuiltinEngine(config=config_to_struct(config)),
        ))
    return presets


def preset_problem(name: str, kind: GameKind) -> str | None:
    """Why ``name`` cannot label a bot of game ``kind``, or None."""
    configs = preset_configs()
    if name not in configs:
        return f"unknown preset {name!r} (known: {', '.join(configs)})"
    preset_kind = configs[name][0]
    if kind in (g.kind for g in GAMES) and preset_kind != kind:
        return f"preset {name!r} is for {game(preset_kind).name}, not {game(kind).name}"
    return None


def merge_config(base: Mapping[str, object], overrides: Mapping[str, object]) -> dict[str, object]:
    """``base`` with ``overrides`` on top; nested tables merge key by key, lists replace."""
    merged = dict(base)
    for key, value in overrides.items():
        current = merged.get(key)
        if isinstance(current, Mapping) and isinstance(value, Mapping):
            merged[key] = merge_config(current, value)
        else:
            merged[key] = value
    return merged


def apply_preset(spec: bots_pb2.BotSpec, preset: str) -> bots_pb2.BotSpec:
    """A copy of ``spec`` whose engine is ``preset`` with ``spec.builtin.config`` as overrides.

    The game comes from the preset when the spec leaves it unset. Raises
    InvalidArgumentError (``from_preset``, ``spec.game``, ``spec.external``).
    """
    configs = preset_configs()
    if preset not in configs:
        raise InvalidArgumentError.for_fields([FieldViolation(
            "from_preset", f"unknown preset {preset!r} (known: {', '.join(configs)})")])
    kind, config = configs[preset]
    if spec.WhichOneof("engine") == "external":
        raise InvalidArgumentError.for_fields([FieldViolation(
            "spec.external", "a preset gives a built-in engine; drop the external engine")])
    if spec.game != common_pb2.GAME_KIND_UNSPECIFIED and spec.game != kind:
        raise InvalidArgumentError.for_fields([FieldViolation(
            "spec.game", f"preset {preset!r} is for {game(kind).name}, not "
            f"{game(spec.game).name}")])
    overrides = builtin_config(spec)
    if overrides.get("evaluator", config["evaluator"]) != config["evaluator"]:
        # the overrides' evaluator replaced the preset's, and its parameters were refused
        # as unknown to that evaluator, one by one
        raise InvalidArgumentError.for_fields([FieldViolation(
            "from_preset", f"preset {preset!r} plays the {config['evaluator']!r} evaluator, "
            f"and the engine parameters name {shown(overrides['evaluator'])}: leave the "
            "evaluator out of them, or give it without the preset")])
    merged = bots_pb2.BotSpec()
    merged.CopyFrom(spec)
    merged.game = kind
    merged.preset = preset
    merged.builtin.config.CopyFrom(config_to_struct(merge_config(config, overrides)))
    return merged
