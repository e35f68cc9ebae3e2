"""Data files the engines ship (weights, tables): each read and parsed once, with its
SHA-256.

A bot's configuration is compiled for every move and its evaluator hash must follow the
file's bytes, so ``read_once`` keeps the parsed value and the digest of the same bytes
until the file's modification time changes (a test or a training run that rewrites the
file is seen at once). The parser must be a module-level function: it is part of the
cache's key.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

T = TypeVar("T")


def read_once(path: Path, parse: Callable[[bytes], T]) -> tuple[T, str]:
    """(``parse`` of the file's bytes, their SHA-256); a ``ValueError`` of the parser is
    raised again with the file's path in front."""
    return cast(tuple[T, str], _read(path, path.stat().st_mtime_ns, parse))


@functools.lru_cache(maxsize=32)
def _read(path: Path, mtime_ns: int, parse: Callable[[bytes], Any]) -> tuple[Any, str]:
    raw = path.read_bytes()
    try:
        value = parse(raw)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from exc
    return value, hashlib.sha256(raw).hexdigest()
