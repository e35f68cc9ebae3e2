"""Where the reference data lives (perft counts, FFO positions, Gomoku openings).

``$ARENA_SHARED_DATA`` if set, else ``../shared/data`` beside the repository (where CI puts
it). Missing data is an error that says so, never a silent skip. The benchmarks use this too.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path:
    explicit = os.environ.get("ARENA_SHARED_DATA")
    path = Path(explicit) if explicit else REPO_ROOT.parent / "shared" / "data"
    if not path.is_dir():
        raise FileNotFoundError(
            f"reference data not found at {path}: put the shared folder beside the "
            "repository or set ARENA_SHARED_DATA"
        )
    return path
