"""Where numba caches the compiled kernels; imported first by each compiled package
(``othello``, ``gomoku``), so the cache is placed before any kernel is defined.

Numba's on-disk cache checks only the source file of each compiled function, so a kernel
that inlines a kernel from another, changed, file would silently keep the old code. The
cache therefore lives in a folder named by a hash of the compiled packages' sources (the
`othello` and `gomoku` folders): any change there starts a fresh cache, and an unchanged
tree reuses it. ``NUMBA_CACHE_DIR`` (set in the container image, for example) still
chooses where those folders live.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba

from arena.engine import numba_cache_base

_ROOT = Path(__file__).resolve().parent  # arena/engine
COMPILED_PACKAGES = ("othello", "gomoku")


def engine_source_hash(root: Path = _ROOT) -> str:
    """A short hash of every Python source file of the compiled engine packages."""
    digest = hashlib.sha256()
    for package in COMPILED_PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _place_numba_cache() -> None:
    base = numba_cache_base()
    numba.config.CACHE_DIR = os.path.join(base, engine_source_hash())  # type: ignore[attr-defined]


_place_numba_cache()
