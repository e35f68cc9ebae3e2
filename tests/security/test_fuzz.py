"""The API fuzzer (``tests/support/fuzz.py``) against a real stack over mutual TLS: a few
thousand random, mutated and undecodable requests per service, to every method of every
served service, from random callers. No INTERNAL, no UNKNOWN, and every process is still
alive and SERVING at the end. ``ARENA_FUZZ_CASES`` sets the cases per service
(2000 by default, about a minute in all on a busy 2-core machine);
``bench/api_fuzz.py`` runs 100,000+ and prints the status-code table."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from arena.services.common.launcher import Launcher
from arena.services.common.server import check_health

from tests.security.conftest import USERS
from tests.support import rpc
from tests.support.fuzz import SERVICES, Fuzzer, fuzz_service, vocabulary
from tests.support.stacks import cancel_everything

CASES_PER_SERVICE = int(os.environ.get("ARENA_FUZZ_CASES", "2000"))


@pytest.fixture(scope="module")
def fuzzer(secure_stack: Launcher) -> Iterator[Fuzzer]:
    fuzzing = Fuzzer(secure_stack, vocabulary(secure_stack, USERS["mallory"]),
                     USERS["mallory"])
    yield fuzzing
    fuzzing.close()
    print("\n" + fuzzing.report())
    cancel_everything(secure_stack)


def test_every_served_service_is_fuzzed() -> None:
    assert sorted(SERVICES) == sorted(rpc.SERVED_BY)


@pytest.mark.parametrize("service", SERVICES)
def test_fuzz(fuzzer: Fuzzer, service: str) -> None:
    fuzz_service(fuzzer, service, CASES_PER_SERVICE, stop_at_bug=True)
    called = {method for method, _code in fuzzer.table}
    for method in rpc.served_methods(service):  # hypothesis drew every method
        assert rpc.path(method) in called, rpc.path(method)


def test_the_stack_is_still_healthy(fuzzer: Fuzzer) -> None:
    stack = fuzzer.stack
    assert sum(fuzzer.table.values()) >= CASES_PER_SERVICE * len(SERVICES)
    for name, process in stack.processes.items():
        assert process.alive(), f"{name} died during the fuzz:\n{process.log_tail()}"
        assert check_health(process.target, credentials=stack.client_credentials()), name
    for server in (stack.durable, stack.cache):
        assert server is not None and server.alive()
