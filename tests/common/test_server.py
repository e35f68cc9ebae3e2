"""The bootstrap every service uses: binding, health, reflection, errors, auth, shutdown."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from arena.services.common.auth import Principal, TokenStore, current_principal
from arena.services.common.config import Config
from arena.services.common.quotas import Quotas
from arena.services.common.server import STUCK_EXIT_CODE, ServerHandle, build_server
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from arena import errors
from arena.rpc import field_violations
from arena.v1 import (
    bots_pb2,
    common_pb2,
    match_pb2,
    referee_pb2,
    referee_pb2_grpc,
    registry_pb2,
    registry_pb2_grpc,
)
from tests.support.processes import signal_when_ready

ERRORS: dict[str, tuple[Exception, grpc.StatusCode]] = {
    "invalid": (
        errors.InvalidArgumentError.for_fields(
            [errors.FieldViolation("spec.name", "must not be blank")]
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
    ),
    "value": (ValueError("bad move 'z9'"), grpc.StatusCode.INVALID_ARGUMENT),
    "missing": (errors.NotFoundError("no bot x"), grpc.StatusCode.NOT_FOUND),
    "dup": (errors.AlreadyExistsError("taken"), grpc.StatusCode.ALREADY_EXISTS),
    "state": (errors.FailedPreconditionError("retired"), grpc.StatusCode.FAILED_PRECONDITION),
    "who": (errors.UnauthenticatedError("no token"), grpc.StatusCode.UNAUTHENTICATED),
    "nope": (errors.PermissionDeniedError("not yours"), grpc.StatusCode.PERMISSION_DENIED),
    "down": (errors.UnavailableError("redis down"), grpc.StatusCode.UNAVAILABLE),
    "slow": (errors.DeadlineExceededError("too slow"), grpc.StatusCode.DEADLINE_EXCEEDED),
    "bug": (KeyError("oops"), grpc.StatusCode.INTERNAL),
}


class RaisingRegistry(registry_pb2_grpc.BotRegistryServicer):
    def GetBot(self, request: registry_pb2.GetBotRequest, context: Any) -> bots_pb2.BotVersion:
        if request.bot.name == "whoami":
            return bots_pb2.BotVersion(owner=current_principal().name)
        if request.bot.name == "sleepy":
            time.sleep(float(request.bot.version) / 1000)
            return bots_pb2.BotVersion(version=request.bot.version)
        raise ERRORS[request.bot.name][0]


class RaisingReferee(referee_pb2_grpc.RefereeServicer):
    def WatchMatch(self, request: referee_pb2.WatchMatchRequest, context: Any) -> Iterator[Any]:
        yield match_pb2.MatchEvent(match_id="m1")
        raise errors.NotFoundError(f"match {request.match_id} is gone")


def _serve(tokens: TokenStore | None = None) -> ServerHandle:
    return build_server(
        [
            lambda s: registry_pb2_grpc.add_BotRegistryServicer_to_server(RaisingRegistry(), s),
            lambda s: referee_pb2_grpc.add_RefereeServicer_to_server(RaisingReferee(), s),
        ],
        ["arena.v1.BotRegistry", "arena.v1.Referee"],
        "127.0.0.1:0",
        tokens,
    ).start()


@pytest.fixture
def server() -> Iterator[ServerHandle]:
    handle = _serve()
    yield handle
    handle.stop(0)


def _get_bot(port: int, name: str, metadata: Any = None, version: int = 0) -> bots_pb2.BotVersion:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = registry_pb2_grpc.BotRegistryStub(channel)
        request = registry_pb2.GetBotRequest(bot=common_pb2.BotRef(name=name, version=version))
        reply: bots_pb2.BotVersion = stub.GetBot(request, timeout=5, metadata=metadata)
        return reply


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_each_domain_error_maps_to_its_status_code(server: ServerHandle, name: str) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        _get_bot(server.port, name)
    assert caught.value.code() == ERRORS[name][1]
    assert caught.value.code() != grpc.StatusCode.UNKNOWN


def test_invalid_argument_carries_field_violations(server: ServerHandle) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        _get_bot(server.port, "invalid")
    assert field_violations(caught.value) == [
        errors.FieldViolation("spec.name", "must not be blank")
    ]


def test_internal_errors_do_not_leak_details(server: ServerHandle) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        _get_bot(server.port, "bug")
    assert "oops" not in (caught.value.details() or "")


def test_errors_in_server_streams_are_mapped(server: ServerHandle) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        stream = referee_pb2_grpc.RefereeStub(channel).WatchMatch(
            referee_pb2.WatchMatchRequest(match_id="m9"), timeout=5
        )
        first = next(stream)
        assert first.match_id == "m1"
        with pytest.raises(grpc.RpcError) as caught:
            next(stream)
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    assert "m9" in (caught.value.details() or "")


def test_reflection_lists_the_services(server: ServerHandle) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        reply = next(stub.ServerReflectionInfo(iter([request]), timeout=5))
    names = {s.name for s in reply.list_services_response.service}
    assert {"arena.v1.BotRegistry", "arena.v1.Referee", "grpc.health.v1.Health"} <= names


def _health(port: int, service: str = "") -> int:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=2)
        return int(reply.status)


def test_two_servers_on_port_zero_and_health_flips_during_shutdown() -> None:
    first, second = _serve(), _serve()
    try:
        assert first.port != second.port
        for handle in (first, second):
            assert _health(handle.port) == health_pb2.HealthCheckResponse.SERVING
            serving = _health(handle.port, "arena.v1.Referee")
            assert serving == health_pb2.HealthCheckResponse.SERVING
        # A slow call keeps the first server in its grace period while we look at health.
        answers: list[bots_pb2.BotVersion] = []
        slow = threading.Thread(
            target=lambda: answers.append(_get_bot(first.port, "sleepy", None, 1500))
        )
        slow.start()
        time.sleep(0.2)
        stopper = threading.Thread(target=first.stop, args=(5.0,))
        stopper.start()
        time.sleep(0.2)
        # New RPCs are refused while stopping, so read the health servicer directly.
        assert first.health.Check(health_pb2.HealthCheckRequest(service=""), None).status == (
            health_pb2.HealthCheckResponse.NOT_SERVING
        )
        assert _health(second.port) == health_pb2.HealthCheckResponse.SERVING
        slow.join()
        stopper.join()
        assert [a.version for a in answers] == [1500]  # the in-flight call got its grace
    finally:
        second.stop(0)


def test_auth_missing_unknown_and_valid_tokens() -> None:
    tokens = TokenStore({"s3cret": Principal("alice", "user")})
    handle = _serve(tokens)
    try:
        for metadata, code in [
            (None, grpc.StatusCode.UNAUTHENTICATED),
            ((("authorization", "Bearer wrong"),), grpc.StatusCode.UNAUTHENTICATED),
        ]:
            with pytest.raises(grpc.RpcError) as caught:
                _get_bot(handle.port, "whoami", metadata)
            assert caught.value.code() == code
        reply = _get_bot(handle.port, "whoami", (("authorization", "Bearer s3cret"),))
        assert reply.owner == "alice"
        assert _health(handle.port) == health_pb2.HealthCheckResponse.SERVING  # no token needed
    finally:
        handle.stop(0)


def test_token_store_reads_env_and_rejects_bad_files(tmp_path: Any) -> None:
    path = tmp_path / "tokens.json"
    path.write_text('{"t1": {"name": "bob", "role": "user"}}')
    env = {"ARENA_TOKENS_FILE": str(path), "ARENA_ADMIN_TOKEN": "root"}
    store = TokenStore.from_config(Config.load("registry", [], env))
    assert store.lookup("t1") == Principal("bob", "user")
    assert store.lookup("root") == Principal("admin", "admin")
    assert store.lookup("nobody") is None
    path.write_text('{"t1": {"name": "bob", "role": "emperor"}}')
    with pytest.raises(ValueError, match="emperor"):
        TokenStore.from_config(Config.load("registry", [], {"ARENA_TOKENS_FILE": str(path)}))


def test_operator_files_saved_by_notepad_read_and_bad_bytes_name_the_file(tmp_path: Any) -> None:
    """A tokens, admin token or quotas file with a byte order mark and Windows newlines
    reads as without them (the mark once failed the tokens' JSON, and would have become
    part of an admin token read raw); bytes that are not UTF-8 name the file."""
    bom = b"\xef\xbb\xbf"
    tokens, admin, quotas = (tmp_path / name for name in ("tokens.json", "admin", "q.json"))
    tokens.write_bytes(bom + b'{"t1": {"name": "bob", "role": "user"}}\r\n')
    admin.write_bytes(bom + b"root-token\r\n")
    quotas.write_bytes(bom + b'{"user": {"running_matches": 3}}\r\n')
    env = {"ARENA_TOKENS_FILE": str(tokens), "ARENA_ADMIN_TOKEN_FILE": str(admin),
           "ARENA_QUOTAS_FILE": str(quotas)}
    config = Config.load("registry", [], env)
    store = TokenStore.from_config(config)
    assert store.lookup("t1") == Principal("bob", "user")
    assert store.lookup("root-token") == Principal("admin", "admin")
    assert Quotas.from_config(config).user.running_matches == 3
    for name, path in (("tokens", tokens), ("admin token", admin), ("quotas", quotas)):
        path.write_bytes(b'\xff\xfe{}')
        with pytest.raises(ValueError, match=f"the {name} file.* {path} is not UTF-8 text: "
                                             "byte 1 is 0xff"):
            Quotas.from_config(Config.load("registry", [], env))
        path.write_bytes(bom + b"{}")


SERVE_AND_SIGNAL_ANOTHER_THREAD = """
import signal, sys, threading, time
from pathlib import Path
from arena.services.common.server import build_server, serve

ready = Path(sys.argv[1])

def deliver_to_this_thread() -> None:
    while not ready.exists():
        time.sleep(0.01)
    # Sent to this thread, not the process: the kernel may pick any thread for a
    # process's SIGTERM, and here it picks this one.
    signal.pthread_kill(threading.get_ident(), signal.SIGTERM)

threading.Thread(target=deliver_to_this_thread, daemon=True).start()
serve(build_server([], []), ready_file=ready, grace_s=0.1)
"""


def test_a_sigterm_that_reaches_another_thread_still_stops_the_server(tmp_path: Any) -> None:
    """A worker under make test once ignored a SIGTERM for a minute (its main thread waited
    in serve, and the signal had gone to one of its other threads)."""
    ready = tmp_path / "port"
    done = subprocess.run([sys.executable, "-c", SERVE_AND_SIGNAL_ANOTHER_THREAD, str(ready)],
                          capture_output=True, text=True, timeout=15, check=False)
    assert ready.exists() and done.returncode == 0, done.stderr[-3000:]


SERVE_AND_HANG_IN_THE_STOP = """
import sys, threading
from pathlib import Path
from arena.services.common.server import build_server, serve

def never_returns() -> None:
    threading.Event().wait()

handle = build_server([], [])
handle.on_stop.append(never_returns)
serve(handle, ready_file=Path(sys.argv[1]), grace_s=0.1, stop_deadline_s=1.0)
"""


def test_a_stop_that_hangs_ends_the_process_with_every_threads_stack(tmp_path: Any) -> None:
    """A service stops within its deadline whatever hangs, and says where it hung: its
    log is all an operator has of a process that outlived its launcher."""
    code, err = signal_when_ready(SERVE_AND_HANG_IN_THE_STOP, tmp_path / "port")
    assert code == STUCK_EXIT_CODE, err[-3000:]
    assert "still stopping after 1 s" in err
    assert 'in never_returns' in err  # the stuck thread's stack (faulthandler's form)
