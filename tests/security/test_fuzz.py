"""The API fuzzer (``tests/support/fuzz.py``) against a real stack over mutual TLS: a few
thousand random, mutated and undecodable requests per service, to every method of every
served service, from random callers. No INTERNAL, no UNKNOWN, and every process is still
alive and SERVING at the end. ``ARENA_FUZZ_CASES`` sets the cases per service;
``bench/api_fuzz.py`` runs 100,000+ and prints the status-code table."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from arena.services.common.launcher import Launcher
from arena.services.common.server import check_health
from google.protobuf.descriptor import MethodDescriptor
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.security.conftest import USERS
from tests.support import rpc
from tests.support.fuzz import BUGS, Fuzzer, payloads, tokens, vocabulary
from tests.support.stacks import cancel_everything

CASES_PER_SERVICE = int(os.environ.get("ARENA_FUZZ_CASES", "2000"))
# The registry last: its cases retire and change the bots the others' requests name.
SERVICES = ("arena.v1.Engine", "arena.v1.Ladder", "arena.v1.Referee", "arena.v1.Status",
            "arena.v1.BotRegistry")


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
    methods = rpc.served_methods(service)
    requests = {rpc.path(m): payloads(m, fuzzer.words) for m in methods}
    callers = tokens(fuzzer.stack.admin_token, fuzzer.user_token)

    @settings(max_examples=CASES_PER_SERVICE, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def case(data: st.DataObject) -> None:
        method: MethodDescriptor = data.draw(st.sampled_from(methods), label="method")
        payload = data.draw(requests[rpc.path(method)], label="payload")
        token = data.draw(callers, label="token")
        outcome = fuzzer.case(method, payload, token)
        assert outcome.code not in BUGS, (
            f"{rpc.path(method)} answered {outcome.code.name}: {outcome.details}")

    case()
    for method in methods:  # hypothesis drew every method
        assert any(fuzzer.table[(rpc.path(method), code)] for code in
                   {c for _, c in fuzzer.table}), rpc.path(method)


def test_the_stack_is_still_healthy(fuzzer: Fuzzer) -> None:
    stack = fuzzer.stack
    assert sum(fuzzer.table.values()) >= CASES_PER_SERVICE * len(SERVICES)
    for name, process in stack.processes.items():
        assert process.alive(), f"{name} died during the fuzz:\n{process.log_tail()}"
        assert check_health(process.target, credentials=stack.client_credentials()), name
    for server in (stack.durable, stack.cache):
        assert server is not None and server.alive()
