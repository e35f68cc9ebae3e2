"""Whole stacks for the system tests, over TLS when ``ARENA_TEST_TLS=1``.

``launcher(...)`` is the launcher `arena up` uses, with mutual TLS switched on by the
environment switch (or by ``tls=True``), so the whole system suite can run over TLS:
``ARENA_TEST_TLS=1 make pytest``. Tests reach a stack's services with ``stack_channel``
and ``stack_client``, which speak whatever the stack serves.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from typing import Any

import grpc
from arena.clients.sdk import ArenaClient, StackAddresses, open_channel
from arena.services.common.launcher import Launcher

from arena.errors import FailedPreconditionError, NotFoundError
from arena.v1 import ladder_pb2, match_pb2

TEST_TLS = os.environ.get("ARENA_TEST_TLS", "").strip().lower() in ("1", "true", "yes", "on")
# Users of the security stack besides the admin: alice owns things, bob is another user,
# mallory is the fuzzer.
USERS = {"alice": "alice-token", "bob": "bob-token", "mallory": "mallory-token"}


def security_env() -> dict[str, str]:
    """The settings of the security tests' stack (and of the fuzz benchmark's)."""
    tokens = {token: {"name": name, "role": "user"} for name, token in USERS.items()}
    # The fuzzer's searches stay short: its cases must not wait on each other.
    quotas = {"users": {"mallory": {"analyze_time_ms": 300, "move_time_ms": 2000}}}
    return {"ARENA_TOKENS": json.dumps(tokens), "ARENA_QUOTAS": json.dumps(quotas),
            "ARENA_WARM_GAMES": "othello"}


def launcher(tls: bool = TEST_TLS, **options: Any) -> Launcher:
    """A launcher serving (mutual) TLS if ``tls``, which defaults to the switch."""
    return Launcher(tls=tls, mutual_tls=tls, **options)


def stack_channel(stack: Launcher, target: str) -> grpc.Channel:
    """A channel to one of the stack's addresses, with the stack's client credentials."""
    return open_channel(target, stack.client_credentials())


def stack_client(stack: Launcher, token: str, **targets: str) -> ArenaClient:
    """The SDK aimed at ``targets`` (default: the stack's roles), with its TLS files."""
    tls: dict[str, str] = {}
    if stack.pki is not None:
        tls = {"ca_file": str(stack.pki.ca_file), "cert_file": str(stack.pki.client_cert),
               "key_file": str(stack.pki.client_key)}
    return ArenaClient(addresses=StackAddresses(token=token, **(targets or stack.roles()),
                                                **tls))


def arena_command(stack: Launcher, *argv: str, token: str = "",
                  timeout_s: float = 60) -> subprocess.CompletedProcess[str]:
    """``arena ARGV`` as a user runs it against the stack, in a process of its own (the
    stack's manifest written first: stack.json is where the command finds the stack), with
    ``token`` (default: the stack's admin token)."""
    stack.write_manifest()
    env = dict(os.environ, ARENA_HOME=str(stack.home), ARENA_TOKEN=token or stack.admin_token)
    return subprocess.run([sys.executable, "-m", "arena.clients", *argv], env=env,
                          capture_output=True, text=True, timeout=timeout_s)


def cancel_everything(stack: Launcher) -> None:
    """Cancel every running ladder and unfinished match, so the workers are free again."""
    with stack_client(stack, stack.admin_token) as admin:
        for ladder in list(admin.iter_ladders()):
            if ladder.status == ladder_pb2.LADDER_STATUS_RUNNING:
                with contextlib.suppress(FailedPreconditionError, NotFoundError):
                    admin.cancel_ladder(ladder.id)
        for status in (match_pb2.MATCH_STATUS_PENDING, match_pb2.MATCH_STATUS_RUNNING):
            for match in list(admin.iter_matches(status=status, summary_only=True)):
                with contextlib.suppress(FailedPreconditionError, NotFoundError):
                    admin.cancel_match(match.id)
