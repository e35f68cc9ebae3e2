"""Bot specs: validation, presets, content hashes and the TOML bot file (no I/O).

The registry service stores what this package accepts; the referee and the workers read
engine configs back with :func:`builtin_config`.
"""

from arena.bots.presets import (
    apply_preset,
    list_presets,
    merge_config,
    preset_configs,
    preset_problem,
)
from arena.bots.spec import (
    builtin_config,
    config_from_struct,
    config_to_struct,
    content_hash,
    evaluator_hash,
    new_version,
)
from arena.bots.validation import check_spec, evaluator_game, known_evaluators, validate_spec

__all__ = [
    "apply_preset",
    "builtin_config",
    "check_spec",
    "config_from_struct",
    "config_to_struct",
    "content_hash",
    "evaluator_game",
    "evaluator_hash",
    "known_evaluators",
    "list_presets",
    "merge_config",
    "new_version",
    "preset_configs",
    "preset_problem",
    "validate_spec",
]
