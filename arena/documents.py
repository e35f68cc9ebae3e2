"""JSON and TOML that someone wrote (a request body, a record, a bot file, a config), read
with plain words for the one value Python refuses that the formats allow.

Python turns no integer of more than 4,300 digits from text into a number
(``sys.get_int_max_str_digits``: the conversion takes time quadratic in the digits), and
says so in words meant for a programmer ("Exceeds the limit (4300 digits) for integer
string conversion ... use sys.set_int_max_str_digits()"). These readers refuse such a
number with ``NumberTooLong``, a ``ValueError`` that says what it is; everything else
is ``json.loads``'s and ``tomllib.loads``'s.
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path
from typing import IO, Any, AnyStr

from arena.errors import InvalidArgumentError

# A file someone names on a command line (a config, a catalog, an OBF file) holds text of a
# few KB: past this it is a wrong file, or /dev/zero, which would be read for ever.
MAX_DOCUMENT_BYTES = 1 << 20
# The byte order mark, as a character: some editors start a UTF-8 file with it.
BOM = "\ufeff"


class NumberTooLong(ValueError):
    """A number of more digits than Python reads."""


def _limit() -> int:
    return sys.get_int_max_str_digits()


def read_integer(text: str) -> int:
    """``int(text)``, a number past the digit limit refused with ``NumberTooLong``."""
    digits = len(text.lstrip("+-"))
    if 0 < _limit() < digits:
        raise NumberTooLong(f"a number of {digits:,} digits (at most {_limit():,} are read)")
    return int(text)


def read_json(text: str | bytes | bytearray, **options: Any) -> Any:
    """``json.loads``, a number past the digit limit refused with ``NumberTooLong``.
    Read again with a guarded integer reader only when the first reading fails without a
    syntax error: the guard, a Python call per integer, would make every reading of an
    integer-heavy document 2.6 times slower (a 1.5 MB replay: 101 against 38 ms)."""
    try:
        return json.loads(text, **options)
    except json.JSONDecodeError:
        raise
    except ValueError:  # Python's digit limit, or one of the caller's own hooks
        return json.loads(text, parse_int=read_integer, **options)


def read_toml(text: str) -> dict[str, Any]:
    """``tomllib.loads``, a number past the digit limit refused with ``NumberTooLong``
    (tomllib does not say where it is)."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        raise
    except ValueError:  # tomllib converts its integers with int(), unguarded
        raise NumberTooLong(f"a number of more than {_limit():,} digits") from None


def refuse_overwrite(path: Path, force: bool, option: str, other_way: str = "") -> None:
    """Where a command would write, checked before it asks or plays anything: a folder is
    refused (``option``, the command's option that names the file, takes a file), and so
    is a file that is there unless ``force`` (its ``--force``); ``other_way`` names another
    way out. A device (``/dev/stdout``) is written to."""
    if path.is_dir():
        raise InvalidArgumentError(f"{path} is a folder: {option} takes the file to write")
    if path.is_file() and not force:
        raise InvalidArgumentError(f"{path} exists (use --force to overwrite{other_way})")


def read_bounded(handle: IO[AnyStr], limit: int, what: str) -> AnyStr:
    """At most ``limit`` bytes (or characters) from ``handle``; more is an error naming
    ``what``."""
    data = handle.read(limit + 1)
    if len(data) > limit:
        raise InvalidArgumentError(f"{what} is over the limit of {limit:,} bytes")
    return data


def decode_text(given: bytes | str, what: str) -> str:
    """The UTF-8 text of ``given`` as someone's editor saved it: newlines made ``\\n``,
    and a byte order mark first (Windows Notepad writes one) left out. Bytes that are not
    UTF-8 are an ``InvalidArgumentError`` naming ``what`` and the first bad byte."""
    if isinstance(given, bytes):  # the mark is UTF-8 too: it decodes to BOM
        try:
            given = given.decode()
        except UnicodeDecodeError as exc:
            raise InvalidArgumentError(f"{what} is not UTF-8 text: byte {exc.start + 1:,} is "
                                       f"{exc.object[exc.start]:#04x}") from None
    return given.removeprefix(BOM).replace("\r\n", "\n").replace("\r", "\n")


def read_text_document(path: Path | str, what: str, limit: int = MAX_DOCUMENT_BYTES) -> str:
    """The text of the file ``path`` (``decode_text``), read up to ``limit`` bytes: more,
    or bytes that are not UTF-8, is an ``InvalidArgumentError`` naming ``what`` and the
    file. ``OSError`` as ``open`` raises it."""
    with open(path, "rb") as handle:
        raw = read_bounded(handle, limit, f"{what} {path}")
    return decode_text(raw, f"{what} {path}")
