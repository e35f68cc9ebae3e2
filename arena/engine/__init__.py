"""The search engines (Othello, Gomoku) behind one boundary (`arena.engine.api`).

Their kernels are compiled by numba and cached on disk (``numba_cache``, which each
compiled package imports first). Importing this package, or ``api``, loads no numba: the
command line, which needs only the engines' data types, starts in a fraction of the time.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any


def numba_cache_base() -> str:
    """The folder under which numba caches the compiled kernels (``numba_cache`` adds a
    folder per source hash): ``NUMBA_CACHE_DIR``, else beside this package's sources."""
    default = Path(__file__).resolve().parent / "__pycache__" / "numba"
    return os.environ.get("NUMBA_CACHE_DIR") or str(default)


def lazy_exports(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A package's ``__getattr__`` that imports each exported name from its module
    (``homes``: name -> module in the package) on first use and keeps it."""
    def exported(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        setattr(sys.modules[package], name, value)
        return value
    return exported
