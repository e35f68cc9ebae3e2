"""Whole stacks for the system tests, over TLS when ``ARENA_TEST_TLS=1``.

``launcher(...)`` is the launcher `arena up` uses, with mutual TLS switched on by the
environment switch (or by ``tls=True``), so the whole system suite can run over TLS:
``ARENA_TEST_TLS=1 make pytest``. Tests reach a stack's services with ``stack_channel``
and ``stack_client``, which speak whatever the stack serves.
"""

from __future__ import annotations

import os
from typing import Any

import grpc
from arena.clients.sdk import ArenaClient, StackAddresses, open_channel
from arena.services.common.launcher import Launcher

TEST_TLS = os.environ.get("ARENA_TEST_TLS", "").strip().lower() in ("1", "true", "yes", "on")


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
