"""Bot files: a bot spec as readable TOML, Arena's counterpart of KReversi's .bot files.

A file holds one spec::

    name = "terra-deep"
    game = "othello"
    description = "Terra, searching deeper in the endgame"
    preset = "terra"

    [builtin]
    evaluator = "kreversi"
    stable_disc_score = 60

    [builtin.depth]
    begin = 6
    middle = 6
    end = 8

or an ``[external]`` table (``address``, ``move_deadline_ms``) instead of ``[builtin]``,
or a ``[protocol]`` table: an engine of the workers' catalog (``engine``, ``checksum`` as
pinned by the registry; left out, the registry pins the one live workers offer) with its
protocol settings in ``[protocol.options]``.
The picture, if any, is ``avatar_png``: base64 in a multi-line string. A hand-written file
may say ``from_preset = "terra"`` and give only overrides in ``[builtin]``. Reading and
writing are pure functions over strings; the CLI does the file I/O.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field

from arena.bots.spec import builtin_config, config_from_struct, config_to_struct
from arena.documents import NumberTooLong, read_toml
from arena.games import game
from arena.text import shown
from arena.v1 import bots_pb2

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f",
            "\r": "\\r"}
_ENGINE_KEYS = ("builtin", "external", "protocol")
_TOP_KEYS = ("name", "game", "description", "preset", "from_preset", "avatar_png",
             *_ENGINE_KEYS)
_EXTERNAL_KEYS = ("address", "move_deadline_ms")
_PROTOCOL_KEYS = ("engine", "checksum", "options")
_BASE64_LINE = 76


class BotFileError(ValueError):
    """A bot file that cannot be read: bad TOML, or a key of the wrong type."""


@dataclass
class BotFile:
    """What a bot file says: the spec, and the preset its ``[builtin]`` overrides, if any."""

    spec: bots_pb2.BotSpec = field(default_factory=bots_pb2.BotSpec)
    from_preset: str = ""


# -- writing -------------------------------------------------------------------------------

def toml_string(text: str) -> str:
    """A TOML basic string; control characters escaped as the TOML spec requires."""
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else toml_string(key)


def toml_value(value: object) -> str:
    """One value in TOML syntax; lists of lists (position tables) get a row per line."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list):
        if value and all(isinstance(item, list) for item in value):
            return _rows(value)
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    if isinstance(value, Mapping):
        pairs = ", ".join(f"{toml_key(str(k))} = {toml_value(v)}" for k, v in value.items())
        return "{" + pairs + "}" if pairs else "{}"
    raise BotFileError(f"cannot write {value!r} to a bot file")


def _rows(rows: list[object]) -> str:
    """A list of lists, one inner list per line; numbers right-aligned like a board."""
    cells = [[toml_value(cell) for cell in row] for row in rows if isinstance(row, list)]
    numeric = all(isinstance(c, int | float) for row in rows if isinstance(row, list)
                  for c in row)
    width = max((len(cell) for row in cells for cell in row), default=0) if numeric else 0
    lines = "".join("  [" + ", ".join(c.rjust(width) for c in row) + "],\n" for row in cells)
    return f"[\n{lines}]"


def _key_order(key: str) -> tuple[int, str]:
    """The evaluator first, game phases in playing order, everything else by name."""
    return ({"evaluator": 0, "begin": 1, "middle": 2, "end": 3}.get(key, 4), key)


def toml_table(header: str, table: Mapping[str, object]) -> str:
    """``[header]`` with its plain keys, then one sub-table per nested mapping."""
    ordered = sorted(table.items(), key=lambda item: _key_order(item[0]))
    plain = [(k, v) for k, v in ordered if not isinstance(v, Mapping)]
    nested = [(k, v) for k, v in ordered if isinstance(v, Mapping)]
    lines = [f"[{header}]"] + [f"{toml_key(k)} = {toml_value(v)}" for k, v in plain]
    text = "\n".join(lines) + "\n"
    for key, sub in nested:
        assert isinstance(sub, Mapping)
        text += "\n" + toml_table(f"{header}.{toml_key(key)}", sub)
    return text


def _avatar_text(data: bytes) -> str:
    encoded = base64.b64encode(data).decode()
    lines = [encoded[i:i + _BASE64_LINE] for i in range(0, len(encoded), _BASE64_LINE)]
    return '"""\n' + "\n".join(lines) + '\n"""'


def spec_to_toml(spec: bots_pb2.BotSpec, comment: str = "") -> str:
    """The bot file of ``spec``; ``comment`` lines go at the top, prefixed with ``#``."""
    head = "".join(f"# {line}".rstrip() + "\n" for line in comment.splitlines())
    lines = [f"name = {toml_string(spec.name)}"]
    if spec.game:
        lines.append(f"game = {toml_string(game(spec.game).name)}")
    if spec.description:
        lines.append(f"description = {toml_string(spec.description)}")
    if spec.preset:
        lines.append(f"preset = {toml_string(spec.preset)}")
    if spec.avatar_png:
        lines.append(f"avatar_png = {_avatar_text(spec.avatar_png)}")
    text = head + "\n".join(lines) + "\n"
    engine = spec.WhichOneof("engine")
    if engine == "builtin":
        text += "\n" + toml_table("builtin", builtin_config(spec))
    elif engine == "external":
        text += "\n" + toml_table("external", {
            "address": spec.external.address,
            "move_deadline_ms": spec.external.move_deadline_ms,
        })
    elif engine == "protocol":
        table: dict[str, object] = {"engine": spec.protocol.engine}
        if spec.protocol.checksum:
            table["checksum"] = spec.protocol.checksum
        options = config_from_struct(spec.protocol.options)
        if options:
            table["options"] = options
        text += "\n" + toml_table("protocol", table)
    return text


# -- reading -------------------------------------------------------------------------------

def _expect(data: Mapping[str, object], key: str, kind: type, what: str) -> object:
    value = data[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise BotFileError(f"{key} must be {what}, got {shown(value)}")
    return value


def _read_avatar(text: str) -> bytes:
    try:
        return base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise BotFileError(f"avatar_png is not valid base64: {exc}") from None


def _read_external(table: Mapping[str, object]) -> bots_pb2.ExternalEngine:
    unknown = sorted(set(table) - set(_EXTERNAL_KEYS))
    if unknown:
        raise BotFileError(f"unknown key external.{unknown[0]} (known: address, "
                           "move_deadline_ms)")
    engine = bots_pb2.ExternalEngine()
    if "address" in table:
        engine.address = str(_expect(table, "address", str, "a string like host:port"))
    if "move_deadline_ms" in table:
        deadline = _expect(table, "move_deadline_ms", int, "an integer")
        assert isinstance(deadline, int)
        if not -(2**31) <= deadline < 2**31:
            raise BotFileError(f"move_deadline_ms is out of range: {shown(deadline)}")
        engine.move_deadline_ms = deadline
    return engine


def _read_protocol(table: Mapping[str, object]) -> bots_pb2.ProtocolEngine:
    unknown = sorted(set(table) - set(_PROTOCOL_KEYS))
    if unknown:
        raise BotFileError(f"unknown key protocol.{unknown[0]} (known: "
                           f"{', '.join(_PROTOCOL_KEYS)})")
    engine = bots_pb2.ProtocolEngine()
    engine.options.SetInParent()  # no options: an empty table, as the CLI sends
    if "engine" in table:
        engine.engine = str(_expect(table, "engine", str, "an engine name (`arena engine list`)"))
    if "checksum" in table:
        engine.checksum = str(_expect(table, "checksum", str, "64 hex digits"))
    if "options" in table:
        options = _expect(table, "options", dict, "a table")
        assert isinstance(options, dict)
        try:
            engine.options.CopyFrom(config_to_struct(options))
        except ValueError as exc:
            raise BotFileError(f"protocol.options: {exc}") from None
    return engine


def parse_bot_file(text: str) -> BotFile:
    """The spec a bot file describes. Raises BotFileError; the registry validates the rest."""
    try:
        data = read_toml(text)
    except (tomllib.TOMLDecodeError, NumberTooLong) as exc:
        raise BotFileError(f"not a valid bot file: {exc}") from None
    except RecursionError:
        raise BotFileError("not a valid bot file: nested too deeply") from None
    unknown = sorted(set(data) - set(_TOP_KEYS))
    if unknown:
        raise BotFileError(f"unknown key {unknown[0]!r} (known: {', '.join(_TOP_KEYS)})")
    engines = [key for key in _ENGINE_KEYS if key in data]
    if len(engines) > 1:
        raise BotFileError("a bot has one engine: [builtin], [external] or [protocol], not "
                           + " and ".join(f"[{key}]" for key in engines))
    result = BotFile()
    spec = result.spec
    for key in ("name", "description", "preset", "from_preset"):
        if key in data:
            value = str(_expect(data, key, str, "a string"))
            if key == "from_preset":
                result.from_preset = value
            else:
                setattr(spec, key, value)
    if "game" in data:
        try:
            spec.game = game(str(_expect(data, "game", str, "a string"))).kind
        except BotFileError:
            raise
        except ValueError as exc:
            raise BotFileError(str(exc)) from None
    if "avatar_png" in data:
        spec.avatar_png = _read_avatar(str(_expect(data, "avatar_png", str, "base64 text")))
    if "builtin" in data:
        table = _expect(data, "builtin", dict, "a table")
        assert isinstance(table, dict)
        try:
            spec.builtin.config.CopyFrom(config_to_struct(table))
        except ValueError as exc:
            raise BotFileError(f"builtin: {exc}") from None
    if "external" in data:
        table = _expect(data, "external", dict, "a table")
        assert isinstance(table, dict)
        spec.external.CopyFrom(_read_external(table))
    if "protocol" in data:
        table = _expect(data, "protocol", dict, "a table")
        assert isinstance(table, dict)
        spec.protocol.CopyFrom(_read_protocol(table))
    return result
