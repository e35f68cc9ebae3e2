"""A protocol engine's options, as a bot or a catalog gives them: which may be set, and how.

NBoard engines take ``depth`` (1..60), ``contempt`` (-64..64) and ``version`` (1..2); GTP
engines take ``clock`` (true: tell the engine each move's time; GTP has no command for a
depth or a level, so an engine's strength is otherwise on its command line); Gomocup brains
take any ``INFO`` key in lower case except those the manager sets for every move
(``MANAGED_INFO``), each one line of text or a number.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from arena.errors import FieldViolation
from arena.text import unprintable

GAMES_OF_PROTOCOL = {"nboard": ("othello",), "gomocup": ("gomoku",), "gtp": ("othello",)}
OptionValue = str | int | float | bool
# INFO keys the worker sets itself for every move; an engine's options may not.
MANAGED_INFO = frozenset({"timeout_turn", "timeout_match", "time_left", "max_memory", "rule",
                          "game_type"})
# The protocols with a fixed set of options: name -> (type, lowest, highest).
_KNOWN_OPTIONS: dict[str, dict[str, tuple[type, float, float]]] = {
    "nboard": {"depth": (int, 1, 60), "contempt": (float, -64, 64), "version": (int, 1, 2)},
    "gtp": {"clock": (bool, 0, 1)},
}
_PROTOCOL_NAMES = {"nboard": "NBoard", "gtp": "GTP"}
MAX_INFO_CHARS = 1000
MAX_EXACT_NUMBER = 2**53 - 1  # the largest integer a JSON number (a double) keeps exactly
_INFO_KEY_RE = re.compile(r"[a-z][a-z0-9_]{0,40}")
ENGINE_NAME_RE = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")  # an engine's name in a catalog


def validate_options(protocol: str, options: Mapping[str, object], where: str
                     ) -> list[FieldViolation]:
    """Problems with an engine's protocol options (see the module docstring)."""
    if protocol in _KNOWN_OPTIONS:
        return _known_options(protocol, options, where)
    problems = []
    for key, value in options.items():
        if not _INFO_KEY_RE.fullmatch(key) or key in MANAGED_INFO:
            problems.append(FieldViolation(
                f"{where}.{key}", "not an INFO key an engine may set (lower case; the worker "
                                  f"sets {', '.join(sorted(MANAGED_INFO))} itself)"))
        elif not isinstance(value, str | int | float) or (isinstance(value, str) and (
                len(value) > MAX_INFO_CHARS or unprintable(value) is not None)):
            problems.append(FieldViolation(
                f"{where}.{key}", f"must be a number or one line of at most {MAX_INFO_CHARS} "
                                  "printable characters (it is sent on the engine's input)"))
        elif not isinstance(value, str) and not (
                math.isfinite(value) and abs(value) <= MAX_EXACT_NUMBER):
            # (99999999999999999999 was kept, and sent, as 1e+20)
            problems.append(FieldViolation(
                f"{where}.{key}", f"must be a number within ±{MAX_EXACT_NUMBER} (a bot's "
                                  f"options are kept as JSON numbers), got {value!r}"))
    return problems


def catalog_overrides(catalog: Mapping[str, object], options: Mapping[str, object],
                      engine: str, where: str) -> list[FieldViolation]:
    """A bot's ``options`` that would change one the operator's catalog sets for
    ``engine``: the catalog's win (its ``thread_num``, ``hash_size``, ``max_node`` or
    ``depth`` bound what one engine process may take), so a bot that sets one to another
    value is refused; the same value is no change."""
    return [FieldViolation(f"{where}.{key}",
                           f"the operator's catalog sets {key} = {_shown(catalog[key])} for "
                           f"engine {engine!r}, which a bot cannot change (leave it out)")
            for key, value in sorted(options.items())
            if key in catalog and not _same(value, catalog[key])]


def _same(one: object, other: object) -> bool:
    """Option values alike (a bot's numbers come as floats: 12.0 is 12; true is not 1)."""
    return isinstance(one, bool) is isinstance(other, bool) and one == other


def _shown(value: object) -> str:
    """A value as a catalog writes it: ``12``, ``0.5``, ``true``, ``"text"``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return f'"{value}"' if isinstance(value, str) else str(value)


def option_items(options: Mapping[str, object]) -> tuple[tuple[str, OptionValue], ...]:
    """Validated options as the spec keeps them: sorted, hashable."""
    return tuple(sorted((key, value) for key, value in options.items()
                        if isinstance(value, str | int | float)))


def _known_options(protocol: str, options: Mapping[str, object], where: str
                   ) -> list[FieldViolation]:
    known = _KNOWN_OPTIONS[protocol]
    problems = []
    for key, value in options.items():
        if key not in known:
            problems.append(FieldViolation(f"{where}.{key}", f"unknown {_PROTOCOL_NAMES[protocol]} "
                                                             f"option (known: {', '.join(known)})"))
            continue
        kind, low, high = known[key]
        if kind is bool:
            if not isinstance(value, bool):
                problems.append(FieldViolation(f"{where}.{key}", "must be true or false"))
            continue
        is_number = isinstance(value, int | float) and not isinstance(value, bool)
        if not is_number or (kind is int and not isinstance(value, int)) or not (
                low <= value <= high):  # type: ignore[operator]
            problems.append(FieldViolation(f"{where}.{key}",
                                           f"must be {kind.__name__} in {low:g}..{high:g}"))
    return problems
