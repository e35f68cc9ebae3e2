"""One stack for the security tests: mutual TLS, Redis ACL users, three users besides the
admin (alice owns things, bob is another user, mallory is the fuzzer)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from arena.services.common.launcher import Launcher

from tests.support.stacks import launcher

USERS = {"alice": "alice-token", "bob": "bob-token", "mallory": "mallory-token"}


@pytest.fixture(scope="session")
def secure_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launcher]:
    """`arena up --mutual-tls` with one match worker and one analysis worker."""
    tokens = {token: {"name": name, "role": "user"} for name, token in USERS.items()}
    env = {"ARENA_TOKENS": json.dumps(tokens), "ARENA_WARM_GAMES": "othello"}
    with launcher(tls=True, home=tmp_path_factory.mktemp("secure"), workers=1, analysts=1,
                  env=env) as stack:
        yield stack
