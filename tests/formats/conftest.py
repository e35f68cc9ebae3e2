"""Fixtures for the rules tests: where the shared reference data lives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


def shared_data_dir() -> Path:
    """``../shared/data`` beside the repository, or ``$ARENA_SHARED_DATA``."""
    candidate = REPO_ROOT.parent / "shared" / "data"
    if candidate.is_dir():
        return candidate
    env = os.environ.get("ARENA_SHARED_DATA")
    if env and Path(env).is_dir():
        return Path(env)
    raise FileNotFoundError(
        f"shared data not found at {candidate}; set ARENA_SHARED_DATA to its directory"
    )


@pytest.fixture(scope="session")
def shared_data() -> Path:
    return shared_data_dir()
