"""Where Arena keeps its local state: one rule for the launcher, the CLI and the SDK.

The home folder is the ``--home`` option where a command has one, else ``$ARENA_HOME``,
else ``.arena`` in the current folder. `arena up` writes ``stack.json`` there (where every
service listens) and ``admin.token``; clients read both.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

HOME_ENV = "ARENA_HOME"
DEFAULT_HOME = ".arena"
STACK_FILE = "stack.json"
ADMIN_TOKEN_FILE = "admin.token"


def arena_home(explicit: Path | str | None = None, env: Mapping[str, str] | None = None) -> Path:
    """The home folder, as an absolute path."""
    env = os.environ if env is None else env
    return Path(explicit or env.get(HOME_ENV) or DEFAULT_HOME).resolve()
