"""One stack for the security tests: mutual TLS, Redis ACL users, three users besides the
admin (``stacks.USERS``: alice owns things, bob is another user, mallory is the fuzzer)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from arena.services.common.launcher import Launcher
from arena.services.worker.engines.catalog import sample_catalog_path

from tests.support.stacks import USERS, launcher, security_env

__all__ = ["USERS", "secure_stack"]


@pytest.fixture(scope="session")
def secure_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launcher]:
    """`arena up --mutual-tls --engines` (Arena's own catalog) with one match worker and one
    analysis worker."""
    with launcher(tls=True, home=tmp_path_factory.mktemp("secure"), workers=1, analysts=1,
                  engines=sample_catalog_path(), env=security_env()) as stack:
        yield stack
