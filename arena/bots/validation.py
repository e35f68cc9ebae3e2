"""Validation of a whole bot spec, field by field.

Everything a spec can get wrong is reported at once, each problem under the dotted path
of the field a client sent (``spec.name``, ``spec.builtin.config.depth.end``). The engine
modules own their parameter schemas; this module adds what is about the bot as a whole:
names, avatars, external addresses, and which evaluator may play which game.
"""

from __future__ import annotations

import ipaddress
import re
import struct
import unicodedata
import zlib

from arena.bots.presets import preset_problem
from arena.bots.spec import builtin_config
from arena.errors import FieldViolation, InvalidArgumentError
from arena.games import GAMES, Game, GameKind, UnknownGameError, game
from arena.protocols.options import ENGINE_NAME_RE
from arena.text import shown, unprintable_problem
from arena.v1 import bots_pb2

NAME_MAX_CHARS = 64
DESCRIPTION_MAX_CHARS = 10_000
AVATAR_MAX_SIDE = 1024  # pixels
AVATAR_MAX_BYTES = 256 * 1024
MOVE_DEADLINE_MAX_MS = 600_000
CONFIG_PREFIX = "spec.builtin.config"

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Allowed bit depths per PNG colour type (PNG spec, table 11.1).
_PNG_BIT_DEPTHS = {0: {1, 2, 4, 8, 16}, 2: {8, 16}, 3: {1, 2, 4, 8}, 4: {8, 16}, 6: {8, 16}}
_HOST_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")
_CHECKSUM = re.compile(r"[0-9a-f]{64}")


# Printable characters that show as nothing: Unicode's default ignorable code points that
# are not already unprintable (format characters are: ``unprintable_problem``), such as
# Hangul fillers, the combining grapheme joiner and variation selectors, and the blank
# Braille pattern. A name of them alone reads as blank; one that holds them, as another
# name ('al-fa\u034fst' shows as 'al-fast').
_INVISIBLE_RANGES = ((0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F),
                     (0x2800, 0x2800), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0),
                     (0xE0000, 0xE0FFF))


def invisible(char: str) -> bool:
    """``char`` shows as nothing (``_INVISIBLE_RANGES``)."""
    code = ord(char)
    return any(low <= code <= high for low, high in _INVISIBLE_RANGES)


# Scripts whose letters read alike: a name that mixes them ('\u0430rena-strong', a
# Cyrillic a) passes for another (Unicode TR39's restriction levels refuse these mixes).
_LOOKALIKE_SCRIPTS = ("LATIN", "CYRILLIC", "GREEK")


def validate_name(name: str, field: str = "spec.name") -> list[FieldViolation]:
    """1 to 64 printable characters, not all blank (KReversi refuses a blank name); an
    invisible letter counts as blank."""
    if not name:
        return [FieldViolation(field, "must not be empty")]
    if len(name) > NAME_MAX_CHARS:
        return [FieldViolation(field, f"must be at most {NAME_MAX_CHARS} characters, "
                                      f"got {len(name)}")]
    problem = unprintable_problem(name)
    if problem is not None:
        return [FieldViolation(field, problem)]
    visible = _visible(name)
    if not visible.strip():
        return [FieldViolation(field, "must not be blank")]
    if visible != visible.strip():
        return [FieldViolation(field, "must not start or end with a space (or a letter that "
                                      "shows as one)")]
    hidden = next((char for char in name if invisible(char)), None)
    if hidden is not None:
        return [FieldViolation(field, f"must not hold U+{ord(hidden):04X}, a character that "
                                      "shows as nothing (such a name passes for another)")]
    return []


def _visible(name: str) -> str:
    return "".join(" " if invisible(char) else char for char in name)


def _scripts(name: str) -> list[str]:
    """The look-alike scripts (``_LOOKALIKE_SCRIPTS``) whose letters ``name`` holds."""
    found = {next((script for script in _LOOKALIKE_SCRIPTS
                   if unicodedata.name(char, "").startswith(script + " ")), "")
             for char in name if char.isalpha()}
    return [script for script in _LOOKALIKE_SCRIPTS if script in found]


BOT_REF_FORM = "expected NAME or NAME@VERSION, versions counting from 1"


def split_bot_ref(text: str) -> tuple[str, int] | None:
    """``NAME`` (version 0: the latest) or ``NAME@VERSION`` (1 to 9 ASCII digits: '²' is
    a digit to ``isdigit``, not to ``int``; not 0, which would quietly mean the latest) as
    ``(name, version)``; None for anything else (``BOT_REF_FORM`` says what is wanted). A
    bot's name holds no ``@`` (``validate_bot_name``)."""
    name, sep, version = text.partition("@")
    if not name or (sep and not (version.isascii() and version.isdigit()
                                 and len(version) <= 9 and int(version) > 0)):
        return None
    return name, int(version or 0)


def validate_bot_name(name: str, field: str = "spec.name") -> list[FieldViolation]:
    """A name as ``validate_name`` wants it, without ``@``: ``NAME@VERSION`` names a
    version, so a bot called ``x@1`` could never be asked to play. Nor ``.`` or ``..``:
    a browser reads ``/bots/.`` (also written ``%2E``) as ``/bots/``, so such a bot's
    page could never be opened."""
    found = validate_name(name, field)
    if not found and len(mixed := _scripts(name)) > 1:
        found.append(FieldViolation(field, f"must not mix {' and '.join(m.title() for m in mixed)}"
                                           " letters (they read alike: such a name passes for "
                                           "another)"))
    if not found and "@" in name:
        found.append(FieldViolation(field, "must not contain '@' (NAME@VERSION names a "
                                           "bot's version)"))
    if not found and name in (".", ".."):
        found.append(FieldViolation(field, f"must not be {name!r} (an address cannot "
                                           "name it)"))
    return found


def png_problem(data: bytes) -> str | None:
    """Why ``data`` is not a well-formed PNG file, or None if it is one.

    Checks the signature, every chunk's length and CRC, a valid IHDR first, at least one
    IDAT and IEND last. The image data is not decompressed (a small file can inflate
    enormously); the CRCs already catch truncation and corruption.
    """
    if not data.startswith(PNG_SIGNATURE):
        return "is not a PNG file (bad signature)"
    offset, chunk_types = len(PNG_SIGNATURE), list[bytes]()
    while offset < len(data):
        if offset + 12 > len(data):
            return f"is truncated at byte {offset}"
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        end = offset + 12 + length
        if end > len(data):
            return f"chunk {kind!r} at byte {offset} runs past the end of the file"
        body = data[offset + 8:end - 4]
        (crc,) = struct.unpack(">I", data[end - 4:end])
        if zlib.crc32(kind + body) != crc:
            return f"chunk {kind!r} at byte {offset} has a bad CRC"
        if not chunk_types and (problem := _ihdr_problem(kind, body)):
            return problem
        chunk_types.append(kind)
        offset = end
        if kind == b"IEND":
            break
    if offset != len(data):
        return "has data after the IEND chunk"
    if not chunk_types or chunk_types[-1] != b"IEND":
        return "has no IEND chunk"
    if b"IDAT" not in chunk_types:
        return "has no image data (IDAT)"
    return None


def _ihdr_problem(kind: bytes, body: bytes) -> str | None:
    if kind != b"IHDR" or len(body) != 13:
        return "does not start with a valid IHDR chunk"
    width, height, depth, colour, compression, filtering, interlace = struct.unpack(
        ">IIBBBBB", body
    )
    if not (0 < width < 2**31 and 0 < height < 2**31):
        return f"has an invalid size {width}x{height}"
    if depth not in _PNG_BIT_DEPTHS.get(colour, set()):
        return f"has an invalid colour type {colour} / bit depth {depth}"
    if compression != 0 or filtering != 0 or interlace not in (0, 1):
        return "has an invalid compression, filter or interlace method"
    return None


def validate_avatar(data: bytes, field: str = "spec.avatar_png") -> list[FieldViolation]:
    """Empty (no picture) or a well-formed PNG of at most 256 KiB and at most
    ``AVATAR_MAX_SIDE`` pixels a side. Every viewer's browser decodes it to 4 bytes a
    pixel: 256 KiB of deflated zeros can declare 40000x40000 pixels, 6.4 GB each."""
    if not data:
        return []
    if len(data) > AVATAR_MAX_BYTES:
        return [FieldViolation(field, f"must be at most {AVATAR_MAX_BYTES} bytes, "
                                      f"got {len(data)}")]
    problem = png_problem(data)
    if problem is None:
        width, height = struct.unpack(">II", data[16:24])  # IHDR, checked by png_problem
        if max(width, height) > AVATAR_MAX_SIDE:
            problem = (f"is {width}x{height} pixels; an avatar is at most "
                       f"{AVATAR_MAX_SIDE}x{AVATAR_MAX_SIDE}")
    return [FieldViolation(field, problem)] if problem else []


def address_problem(address: str) -> str | None:
    """Why ``address`` is not ``host:port`` (hostname, IPv4 or [IPv6]), or None."""
    host, sep, port = address.rpartition(":")
    if not sep or not host:
        return f"must be host:port, got {address!r}"
    if not port.isascii() or not port.isdigit() or not 1 <= int(port) <= 65535:
        return f"port must be a number in 1..65535, got {port!r}"
    if host.startswith("["):
        if not host.endswith("]"):
            return f"bad IPv6 host {host!r}"
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return f"bad IPv6 host {host!r}"
        return None
    labels = host.split(".")
    if all(label.isascii() and label.isdigit() for label in labels):
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            return f"bad IPv4 host {host!r}"
        return None
    if len(host) > 253 or not all(_HOST_LABEL.fullmatch(label) for label in labels):
        return f"bad host name {host!r}"
    return None


def canonical_address(address: str) -> str:
    """One spelling of a valid ``address`` (``address_problem`` None): the host in lower
    case (an IPv6 one compressed), the port without leading zeros. A worker keeps a
    connection per address: ``127.0.0.1:007000`` and ``HOST.example:7000`` were each one
    more, so one listening port could hold any number of a worker's connections."""
    host, _, port = address.rpartition(":")
    if host.startswith("["):
        host = f"[{ipaddress.IPv6Address(host[1:-1]).compressed}]"
    return f"{host.lower()}:{int(port)}"


def validate_external(engine: bots_pb2.ExternalEngine) -> list[FieldViolation]:
    found = []
    problem = address_problem(engine.address)
    if problem:
        found.append(FieldViolation("spec.external.address", problem))
    if not 0 <= engine.move_deadline_ms <= MOVE_DEADLINE_MAX_MS:
        found.append(FieldViolation(
            "spec.external.move_deadline_ms",
            f"must be in 0..{MOVE_DEADLINE_MAX_MS} (0 = the match's limit), "
            f"got {engine.move_deadline_ms}"))
    return found


def validate_protocol(kind: int, engine: bots_pb2.ProtocolEngine) -> list[FieldViolation]:
    """The shape of a protocol engine reference. Its options depend on the engine's
    protocol, which only the catalog knows: the registry checks them against the engine
    live workers offer."""
    found = []
    if not ENGINE_NAME_RE.fullmatch(engine.engine):
        found.append(FieldViolation("spec.protocol.engine",
                                    f"must name an engine of the catalog, got {engine.engine!r}"))
    if engine.checksum and not _CHECKSUM.fullmatch(engine.checksum):
        found.append(FieldViolation("spec.protocol.checksum", "must be 64 hex digits"))
    return found


def _prefixed(violation: FieldViolation) -> FieldViolation:
    """An engine's violation (``depth.end``) under the request path of the config."""
    field = violation.field
    if field in ("", "config"):
        return FieldViolation(CONFIG_PREFIX, violation.description)
    if field.startswith("config."):
        field = field[len("config."):]
    separator = "" if field.startswith("[") else "."
    return FieldViolation(f"{CONFIG_PREFIX}{separator}{field}", violation.description)


def evaluator_game(evaluator: object) -> Game | None:
    """The game whose engine offers ``evaluator`` (None: no engine does, or it is no name)."""
    if not isinstance(evaluator, str):
        return None
    return next((g for g in GAMES if evaluator in g.engine().evaluators), None)


def known_evaluators() -> list[str]:
    return sorted(name for g in GAMES for name in g.engine().evaluators)


def validate_builtin(kind: GameKind, config: dict[str, object]) -> list[FieldViolation]:
    """The evaluator must exist and play game ``kind``; its engine validates the rest."""
    evaluator = config.get("evaluator")
    field = f"{CONFIG_PREFIX}.evaluator"
    plays = evaluator_game(evaluator)
    if plays is None:
        known = ", ".join(known_evaluators())
        return [FieldViolation(field, f"unknown evaluator {evaluator!r} (known: {known})")]
    if kind in (g.kind for g in GAMES) and plays.kind != kind:
        return [FieldViolation(field, f"evaluator {evaluator!r} plays {plays.name}, "
                                      f"not {game(kind).name}")]
    return [_prefixed(v) for v in plays.engine().validate_config(config)]


def validate_spec(spec: bots_pb2.BotSpec) -> list[FieldViolation]:
    """Every problem with ``spec``; an empty list means it may be stored."""
    found = validate_bot_name(spec.name)
    try:
        game(spec.game)
    except UnknownGameError:
        names = ", ".join(g.name for g in GAMES)
        found.append(FieldViolation("spec.game", f"must be one of {names}"))
    if len(spec.description) > DESCRIPTION_MAX_CHARS:
        found.append(FieldViolation("spec.description", f"must be at most "
                                    f"{DESCRIPTION_MAX_CHARS} characters"))
    elif problem := unprintable_problem(spec.description, keep="\n\t"):
        found.append(FieldViolation("spec.description", f"{problem} (or newlines, tabs)"))
    found += validate_avatar(spec.avatar_png)
    engine = spec.WhichOneof("engine")
    if engine == "builtin":
        found += validate_builtin(spec.game, builtin_config(spec))
    elif engine == "external":
        found += validate_external(spec.external)
    elif engine == "protocol":
        found += validate_protocol(spec.game, spec.protocol)
    else:
        # A preset names where a configuration came from and gives none itself: a bot file
        # with `preset = "terra"` where it meant `from_preset` got the bare line.
        hint = (f" (preset {shown(spec.preset)} only records where a configuration came "
                "from: to start from it, register with --from-preset or write from_preset "
                "in the bot file)") if spec.preset else ""
        found.append(FieldViolation("spec.engine",
                                    f"one of builtin, external or protocol is required{hint}"))
    if spec.preset:
        problem = preset_problem(spec.preset, spec.game)
        if problem:
            found.append(FieldViolation("spec.preset", problem))
    return found


def check_spec(spec: bots_pb2.BotSpec) -> None:
    """Raise InvalidArgumentError listing every bad field, or return if the spec is valid."""
    violations = validate_spec(spec)
    if violations:
        raise InvalidArgumentError.for_fields(violations)
