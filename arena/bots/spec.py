"""Bot specs as data: engine configs out of protobuf Structs, content hashes, versions.

A ``google.protobuf.Struct`` stores every number as a double, so ``{"depth": 6}`` comes
back as ``6.0``. Engines want integers: :func:`config_from_struct` turns integral numbers
back into ``int`` and leaves anything else (``6.5``) as a float for validation to refuse.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from datetime import datetime

from google.protobuf import struct_pb2, timestamp_pb2

from arena.games import game
from arena.v1 import bots_pb2

# Doubles represent every integer up to 2**53 exactly; beyond that "integral" means little.
_EXACT_INT_LIMIT = 2**53


def value_to_python(value: struct_pb2.Value) -> object:
    """One Struct value as plain Python, integral numbers as ``int``."""
    kind = value.WhichOneof("kind")
    if kind == "number_value":
        number = value.number_value
        if math.isfinite(number) and number.is_integer() and abs(number) <= _EXACT_INT_LIMIT:
            return int(number)
        return number
    if kind == "string_value":
        return value.string_value
    if kind == "bool_value":
        return value.bool_value
    if kind == "struct_value":
        return config_from_struct(value.struct_value)
    if kind == "list_value":
        return [value_to_python(item) for item in value.list_value.values]
    return None


def config_from_struct(struct: struct_pb2.Struct) -> dict[str, object]:
    """A Struct as a plain dict (the form the engines' ``validate_config`` takes)."""
    return {key: value_to_python(struct.fields[key]) for key in sorted(struct.fields)}


def config_to_struct(config: Mapping[str, object]) -> struct_pb2.Struct:
    """A plain dict as a Struct. Raises ValueError for values a Struct cannot hold, naming
    the first such value's path (``depth.end[0]``)."""
    struct = struct_pb2.Struct()
    try:
        struct.update(dict(config))  # type: ignore[arg-type]  # checked at runtime
    except (TypeError, ValueError, OverflowError) as exc:  # an int past a double's range
        raise ValueError(f"config cannot be stored: {_unstorable(config, '') or exc}") from exc
    return struct


def _unstorable(value: object, path: str) -> str | None:
    """Why the first value under ``value`` a Struct cannot hold cannot be stored, with its
    path; None if every value can be."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{path or 'the config'} has a key that is not text ({key!r})"
            found = _unstorable(item, f"{path}.{key}" if path else key)
            if found:
                return found
        return None
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = _unstorable(item, f"{path}[{i}]")
            if found:
                return found
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            float(value)
        except OverflowError:
            return f"{path}: an integer past what a number can hold (about ±1.8e308)"
        return None
    if value is None or isinstance(value, (str, float, bool)):
        return None
    return (f"{path}: a value of type {type(value).__name__} (only numbers, text, true/false, "
            "lists and tables)")


def builtin_config(spec: bots_pb2.BotSpec) -> dict[str, object]:
    """The engine config of a built-in bot as a plain dict (empty for an external bot)."""
    if spec.WhichOneof("engine") != "builtin":
        return {}
    return config_from_struct(spec.builtin.config)


def _canonical(document: object) -> bytes:
    return json.dumps(
        document, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=True
    ).encode()


def _engine_document(spec: bots_pb2.BotSpec) -> dict[str, object]:
    if spec.WhichOneof("engine") == "external":
        return {"external": {"address": spec.external.address,
                             "move_deadline_ms": spec.external.move_deadline_ms}}
    if spec.WhichOneof("engine") == "builtin":
        return {"builtin": builtin_config(spec)}
    if spec.WhichOneof("engine") == "protocol":
        return {"protocol": {"engine": spec.protocol.engine, "checksum": spec.protocol.checksum,
                             "options": config_from_struct(spec.protocol.options)}}
    return {}


def content_hash(spec: bots_pb2.BotSpec) -> str:
    """Hex sha256 of everything in the spec, independent of protobuf encoding details."""
    document = {
        "name": spec.name,
        "game": game(spec.game).name,
        "description": spec.description,
        "avatar_sha256": hashlib.sha256(spec.avatar_png).hexdigest() if spec.avatar_png else "",
        "engine": _engine_document(spec),
        "preset": spec.preset,
    }
    return hashlib.sha256(_canonical(document)).hexdigest()


def evaluator_hash(spec: bots_pb2.BotSpec) -> str:
    """Hex hash of what determines the bot's search results.

    Built-in bots ask their engine (which fills in defaults, so equivalent configs hash
    alike); the shared transposition cache keys on this. External bots hash their address
    and protocol bots their engine, options and checksum: the hash tells versions apart.
    """
    if spec.WhichOneof("engine") == "builtin":
        return game(spec.game).engine().evaluator_hash(builtin_config(spec))
    return hashlib.sha256(_canonical(_engine_document(spec))).hexdigest()


def new_version(
    spec: bots_pb2.BotSpec, version: int, owner: str, created_at: datetime
) -> bots_pb2.BotVersion:
    """An immutable bot version of a spec that has already been validated."""
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(created_at)
    return bots_pb2.BotVersion(
        spec=spec,
        version=version,
        owner=owner,
        content_hash=content_hash(spec),
        evaluator_hash=evaluator_hash(spec),
        created_at=stamp,
    )
