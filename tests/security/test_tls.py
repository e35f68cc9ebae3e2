"""Transport security: TLS servers refuse plaintext and strangers' certificates, mutual TLS
refuses callers without a certificate of the CA, `arena up --mutual-tls` runs a ladder
that `arena` commands drive without TLS options, and the certificates' keys stay private."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from arena.clients.sdk import ArenaClient, StackAddresses
from arena.services.common.auth import TokenStore
from arena.services.common.config import Config
from arena.services.common.embedded_redis import EmbeddedRedis
from arena.services.common.launcher import Launcher
from arena.services.common.server import ServerHandle, build_server, check_health
from arena.services.common.tls import LocalPKI, TLSError, ensure_local_pki, server_credentials
from arena.services.worker.engines.catalog import sample_catalog_path
from cryptography import x509

from arena.errors import InvalidArgumentError, UnavailableError
from tests.security.conftest import USERS
from tests.support.servers import ADMIN_TOKEN, TOKENS
from tests.support.stacks import stack_client

REPO = Path(__file__).resolve().parents[2]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_local_pki_keys_are_private_and_kept_while_valid(tmp_path: Path) -> None:
    pki = ensure_local_pki(tmp_path / "tls")
    keys = (pki.ca_key, pki.service_key, pki.client_key)
    assert [_mode(key) for key in keys] == [0o600] * 3
    assert _mode(pki.folder) == 0o700
    before = {p: p.read_bytes() for p in pki.folder.iterdir()}
    assert ensure_local_pki(tmp_path / "tls") == pki
    assert {p: p.read_bytes() for p in pki.folder.iterdir()} == before  # reused
    ensure_local_pki(tmp_path / "tls", ["localhost", "127.0.0.1", "::1", "registry"])
    assert pki.service_cert.read_bytes() != before[pki.service_cert]  # a new name: remade
    names = x509.load_pem_x509_certificate(pki.service_cert.read_bytes()).extensions \
        .get_extension_for_class(x509.SubjectAlternativeName).value
    assert "registry" in names.get_values_for_type(x509.DNSName)


@pytest.fixture(scope="module")
def pkis(tmp_path_factory: pytest.TempPathFactory) -> tuple[LocalPKI, LocalPKI]:
    """Ours, and a stranger's with the same names."""
    base = tmp_path_factory.mktemp("pki")
    return ensure_local_pki(base / "ours"), ensure_local_pki(base / "theirs")


def _registry(redis_server: EmbeddedRedis, pki: LocalPKI, mutual: bool) -> ServerHandle:
    from arena.services.registry.server import create_service

    config = Config(role="registry", redis_url=redis_server.url,
                    tls_cert_file=str(pki.service_cert), tls_key_file=str(pki.service_key),
                    tls_client_ca_file=str(pki.ca_file) if mutual else "")
    registrations, names, on_stop = create_service(config)
    handle = build_server(registrations, names, "127.0.0.1:0", TokenStore(TOKENS),
                          credentials=server_credentials(config)).start()
    handle.on_stop.extend(on_stop)
    return handle


@pytest.fixture(params=[False, True], ids=["tls", "mutual-tls"])
def tls_registry(request: pytest.FixtureRequest, redis_server: EmbeddedRedis,
                 redis_client: redis.Redis,
                 pkis: tuple[LocalPKI, LocalPKI]) -> Iterator[tuple[str, bool]]:
    handle = _registry(redis_server, pkis[0], request.param)
    yield f"127.0.0.1:{handle.port}", request.param
    handle.stop(0)


def _presets(target: str, **tls: str) -> int:
    addresses = StackAddresses(registry=target, token=ADMIN_TOKEN, **tls)
    with ArenaClient(addresses=addresses, timeout_s=5) as sdk:
        return len(sdk.list_presets())


def _files(pki: LocalPKI, client: LocalPKI | None = None) -> dict[str, str]:
    files = {"ca_file": str(pki.ca_file)}
    if client is not None:
        files |= {"cert_file": str(client.client_cert), "key_file": str(client.client_key)}
    return files


def test_a_client_with_the_ca_is_served(tls_registry: tuple[str, bool],
                                        pkis: tuple[LocalPKI, LocalPKI]) -> None:
    target, _mutual = tls_registry
    ours, _ = pkis
    assert _presets(target, **_files(ours, ours)) > 0


def test_a_plaintext_client_is_refused(tls_registry: tuple[str, bool]) -> None:
    target, _ = tls_registry
    with pytest.raises(UnavailableError):
        _presets(target)
    assert not check_health(target)  # health too: nothing is served in clear


def test_a_client_trusting_another_ca_is_refused(tls_registry: tuple[str, bool],
                                                 pkis: tuple[LocalPKI, LocalPKI]) -> None:
    target, _ = tls_registry
    ours, theirs = pkis
    with pytest.raises(UnavailableError):
        _presets(target, **_files(theirs, ours))


def test_mutual_tls_refuses_callers_without_a_certificate_of_its_ca(
        tls_registry: tuple[str, bool], pkis: tuple[LocalPKI, LocalPKI]) -> None:
    target, mutual = tls_registry
    ours, theirs = pkis
    if not mutual:
        assert _presets(target, **_files(ours)) > 0  # no certificate needed
        return
    for files in (_files(ours), _files(ours, theirs)):
        with pytest.raises(UnavailableError):
            _presets(target, **files)


def test_bad_tls_settings_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(TLSError, match="ARENA_TLS_KEY_FILE"):
        server_credentials(Config(tls_cert_file="/x.pem"))
    with pytest.raises(TLSError, match="mutual TLS is TLS first"):
        server_credentials(Config(tls_client_ca_file="/ca.pem"))
    (tmp_path / "junk.pem").write_text("not a certificate")
    with pytest.raises(TLSError, match="not a PEM file"):
        server_credentials(Config(tls_cert_file=str(tmp_path / "junk.pem"),
                                  tls_key_file=str(tmp_path / "junk.pem")))
    with pytest.raises(InvalidArgumentError, match="cannot read the TLS CA file"):
        _presets("127.0.0.1:1", ca_file=str(tmp_path / "missing.pem"))
    with pytest.raises(InvalidArgumentError, match="needs a CA file"):
        _presets("127.0.0.1:1", cert_file=str(tmp_path / "junk.pem"))


def test_a_service_with_an_unreadable_certificate_stops_with_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "ARENA_TLS_CERT_FILE": str(tmp_path / "nope.pem"),
           "ARENA_TLS_KEY_FILE": str(tmp_path / "nope.key"),
           "ARENA_REDIS_URL": "redis://127.0.0.1:1/0"}
    result = subprocess.run([sys.executable, "-m", "arena.services.registry"], env=env,
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"arena-registry: configuration error: cannot read the certificate "
        f"(ARENA_TLS_CERT_FILE) {tmp_path / 'nope.pem'}: No such file or directory"]


def test_the_container_health_check_speaks_tls(tls_registry: tuple[str, bool],
                                               pkis: tuple[LocalPKI, LocalPKI]) -> None:
    """deploy/healthcheck.py checks a TLS service as the service itself serves it."""
    target, _ = tls_registry
    ours, _ = pkis
    base = {"PATH": os.environ["PATH"]}
    tls = {"ARENA_TLS_CERT_FILE": str(ours.service_cert),
           "ARENA_TLS_KEY_FILE": str(ours.service_key), "ARENA_TLS_CA_FILE": str(ours.ca_file)}
    command = [sys.executable, str(REPO / "deploy" / "healthcheck.py"), target]
    served = subprocess.run(command, env=base | tls, capture_output=True, text=True,
                            timeout=60, check=False)
    assert served.returncode == 0, served.stderr
    assert served.stdout.strip() == f"{target}: SERVING"
    plaintext = subprocess.run(command, env=base, capture_output=True, text=True, timeout=60,
                               check=False)
    assert plaintext.returncode == 1


# -- the whole stack over mutual TLS ----------------------------------------------------------


def _arena(home: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    """`arena` as a user runs it: the stack file is all it knows (no TLS options)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env |= {"ARENA_HOME": str(home), "PYTHONPATH": str(REPO)}
    result = subprocess.run([sys.executable, "-m", "arena.clients", *args], env=env,
                            capture_output=True, text=True, timeout=600, cwd=home)
    assert (result.returncode == 0) == ok, result.stderr + result.stdout
    return result


def test_a_ladder_on_a_mutual_tls_stack_through_the_cli(secure_stack: Launcher) -> None:
    """A built-in bot against a protocol engine's bot: the worker reaches the registry with
    its certificate and offers the catalog `arena up --engines` gave it."""
    home = secure_stack.home
    assert "arena-nboard-fast" in _arena(home, "engine", "list", "--game", "othello").stdout
    _arena(home, "bot", "register", "--name", "tls-rookie", "--from-preset", "lab-beginner")
    _arena(home, "bot", "register", "--name", "tls-nboard", "--game", "othello", "--engine",
           "arena-nboard-fast")  # at the catalog's depth 6, which a bot cannot change
    out = _arena(home, "ladder", "create", "tls-rookie", "tls-nboard", "--games-per-pairing",
                 "2", "--move-time-ms", "500", "--watch").stdout
    ladder_id = out.split()[1].rstrip(":")
    assert "2/2 100%" in out
    standings = json.loads(_arena(home, "ladder", "standings", ladder_id, "--json").stdout)
    assert sorted(row["games"] for row in standings["rows"]) == [2, 2]
    matches = json.loads(_arena(home, "match", "list", "--ladder", ladder_id, "--json").stdout)
    assert [m["status"] for m in matches] == ["MATCH_STATUS_FINISHED"] * 2
    assert [m["result"]["termination"] for m in matches] == ["TERMINATION_NORMAL"] * 2, (
        [m["result"] for m in matches])


def _offered_by(stack: Launcher, engine: str) -> int:
    with stack_client(stack, stack.admin_token) as admin:
        return sum(offer.workers for offer in admin.list_engines() if offer.name == engine)


def test_a_worker_joining_through_the_stack_file_gets_what_the_others_have(
        secure_stack: Launcher, tmp_path: Path) -> None:
    """`arena worker` told nothing but ARENA_HOME joins the mutual-TLS stack: the stack file
    gives it the certificates, its Redis user and the catalog of `arena up --engines`."""
    assert _offered_by(secure_stack, "arena-nboard-fast") == 1
    ready = tmp_path / "worker.port"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env |= {"ARENA_HOME": str(secure_stack.home), "ARENA_WARM_GAMES": "othello",
            "PYTHONPATH": str(REPO)}
    log = tmp_path / "worker.log"
    with log.open("w") as output:
        worker = subprocess.Popen(
            [sys.executable, "-m", "arena.clients", "worker", "--listen", "127.0.0.1:0",
             "--ready-file", str(ready), "--worker-id", "tls-joiner"],
            env=env, stdout=output, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 180
        while not ready.exists() or _offered_by(secure_stack, "arena-nboard-fast") < 2:
            assert worker.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "the joining worker never offered its engines"
            time.sleep(0.2)
        target = f"127.0.0.1:{ready.read_text()}"
        assert not check_health(target)
        assert check_health(target, credentials=secure_stack.client_credentials())
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=60) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()


def test_every_server_of_the_stack_refuses_plaintext(secure_stack: Launcher) -> None:
    for name, process in secure_stack.processes.items():
        assert not check_health(process.target), f"{name} answers plaintext"
        assert check_health(process.target, credentials=secure_stack.client_credentials())


def test_the_cli_with_a_wrong_ca_is_refused(secure_stack: Launcher,
                                            pkis: tuple[LocalPKI, LocalPKI]) -> None:
    _, theirs = pkis
    refused = _arena(secure_stack.home, "--tls-ca", str(theirs.ca_file), "bot", "list",
                     ok=False)
    assert refused.stderr.startswith("arena: error:") and "Traceback" not in refused.stderr


def test_the_stack_file_names_the_ca_and_keeps_secrets_private(secure_stack: Launcher) -> None:
    home = secure_stack.home
    manifest = json.loads((home / "stack.json").read_text())
    assert manifest["tls"]["ca_file"] == str(home / "tls" / "ca.pem")
    assert manifest["tls"]["mutual"] is True
    private = [*home.joinpath("tls").glob("*.key"), *home.joinpath("secrets").iterdir(),
               home / "redis-durable" / "users.acl", home / "redis-cache" / "users.acl"]
    assert len(private) == 3 + 5 + 2
    assert {_mode(path) for path in private} == {0o600}
    passwords = [p.read_text().strip() for p in home.joinpath("secrets").iterdir()]
    logs = "".join(p.read_text() for p in (home / "logs").iterdir())
    acls = "".join(p.read_text() for p in home.glob("redis-*/users.acl"))
    for secret in [*passwords, *USERS.values()]:
        assert secret not in logs and secret not in acls
    assert "redis_url = 'redis://registry:***@127.0.0.1:" in logs


@pytest.mark.parametrize("flag", ["--mutual-tls", "--tls"])
def test_arena_up_tls_from_the_command_line(tmp_path: Path, flag: str) -> None:
    """`arena up --mutual-tls --engines` (and `--tls`): the flags reach the launcher, the
    stack file names the files, a command in another shell connects with nothing but the
    stack file, and the worker (with the stack's certificate and Redis user) offers the
    catalog's engines. `arena up --tls` stopped at once: the top-level parser took `--tls`
    for an abbreviation of its `--tls-ca`, `--tls-cert` or `--tls-key` ('ambiguous
    option')."""
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env |= {"ARENA_HOME": str(home), "ARENA_WARM_GAMES": "othello", "PYTHONPATH": str(REPO)}
    up = subprocess.Popen([sys.executable, "-m", "arena.clients", "up", flag,
                           "--workers", "1", "--engines", "arena",
                           "--no-web"], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 180
        while not (home / "stack.json").exists():
            assert up.poll() is None, up.stdout.read().decode() if up.stdout else ""
            assert time.monotonic() < deadline, f"arena up {flag} did not come up"
            time.sleep(0.2)
        manifest = json.loads((home / "stack.json").read_text())
        assert manifest["tls"]["mutual"] is (flag == "--mutual-tls")
        assert manifest["engines"] == str(sample_catalog_path())  # the name, resolved
        presets = _arena(home, "bot", "presets").stdout
        assert "lab-beginner" in presets
        while "arena-nboard-fast" not in _arena(home, "engine", "list").stdout:
            assert time.monotonic() < deadline, "the worker never offered its engines"
            time.sleep(0.5)
        for target in manifest["services"].values():
            assert not check_health(target)  # plaintext refused everywhere
    finally:
        up.send_signal(signal.SIGTERM)
        output = up.communicate(timeout=60)[0].decode()
    assert up.returncode == 0, output
    assert ("mutual TLS" in output) is (flag == "--mutual-tls"), output
    assert str(home / "tls" / "ca.pem") in output
