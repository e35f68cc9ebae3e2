"""Redis ACL users: each service logs in as its own user, with data commands only; nobody
else may do more than PING; the ACL file holds digests, never passwords; Redis URLs with
passwords are masked wherever the configuration is shown."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import redis
from arena.services.common.config import Config
from arena.services.common.launcher import Launcher
from arena.services.common.redis_acl import SERVICE_USERS, main, secret_name
from arena.services.referee.status import QueueCollector


def _login(url: str, user: str | None, password: str | None) -> redis.Redis:
    return redis.Redis.from_url(url, username=user, password=password, socket_timeout=5)


def _password(stack: Launcher, user: str) -> str:
    return stack.redis_passwords[user].read_text().strip()


def test_a_caller_without_a_user_may_only_ping(secure_stack: Launcher) -> None:
    durable, cache = secure_stack.manifest()["redis"], secure_stack.manifest()["cache"]
    for url in (str(durable), str(cache)):
        anonymous = _login(url, None, None)
        assert anonymous.ping()
        with pytest.raises(redis.exceptions.NoPermissionError):
            anonymous.get("arena:bots")
        with pytest.raises(redis.exceptions.AuthenticationError):
            _login(url, "worker", "wrong").ping()


@pytest.mark.parametrize("user", sorted(SERVICE_USERS))
def test_service_users_run_data_commands_only_on_their_servers(secure_stack: Launcher,
                                                               user: str) -> None:
    urls = {"durable": str(secure_stack.manifest()["redis"]),
            "cache": str(secure_stack.manifest()["cache"])}
    for server, url in urls.items():
        client = _login(url, user, _password(secure_stack, user))
        if server not in SERVICE_USERS[user]:
            with pytest.raises(redis.exceptions.AuthenticationError):
                client.ping()
            continue
        key = f"arena:acl-test:{user}"
        assert client.set(key, "1") and client.get(key) == b"1"
        assert client.xadd(f"{key}:stream", {"a": "1"})
        assert client.delete(key, f"{key}:stream") == 2
        for dangerous in (("FLUSHALL",), ("CONFIG", "GET", "*"), ("KEYS", "*"),
                          ("DEBUG", "SLEEP", "0"), ("ACL", "LIST"), ("SHUTDOWN",)):
            with pytest.raises(redis.exceptions.NoPermissionError):
                client.execute_command(*dangerous)


def test_the_referee_user_exports_the_queue_figures(secure_stack: Launcher) -> None:
    """The exporter reads Redis memory with INFO, which the services' users may not run:
    on every stack with users it exported no queue figure at all (arena_queue_exporter 0,
    no arena_workers_alive, no stream lengths), and ArenaQueueFiguresMissing fired."""
    manifest, password = secure_stack.manifest(), _password(secure_stack, "referee")
    collector = QueueCollector(_login(str(manifest["redis"]), "referee", password),
                               _login(str(manifest["cache"]), "referee", password),
                               holder="acl-test")
    families = {family.name: family for family in collector.collect()}
    assert [s.value for s in families["arena_queue_exporter"].samples] == [1.0]
    assert [s.value for s in families["arena_workers_alive"].samples] == [1.0]
    used = {s.labels["redis"]: s.value
            for s in families["arena_redis_memory_used_bytes"].samples}
    assert sorted(used) == ["cache", "durable"] and min(used.values()) > 0
    with pytest.raises(redis.exceptions.NoPermissionError):  # INFO only, not its neighbours
        _login(str(manifest["redis"]), "referee", password).execute_command("CONFIG", "GET",
                                                                             "*")


def test_the_acl_file_holds_digests_not_passwords(secure_stack: Launcher) -> None:
    acl = (secure_stack.home / "redis-durable" / "users.acl").read_text()
    for user in ("admin", *SERVICE_USERS):
        password = _password(secure_stack, user)
        assert password not in acl
        assert f"#{hashlib.sha256(password.encode()).hexdigest()}" in acl


def test_the_acl_file_of_a_container_comes_from_its_secret_files(tmp_path: Path) -> None:
    """What the image's entry point runs (`arena-entrypoint redis durable|cache`)."""
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    assert main(["cache", str(secrets), str(tmp_path / "none.acl")]) == 64
    for user in ("referee", "worker", "ladder"):
        (secrets / secret_name(user)).write_text(f"a-long-password-of-{user}\n")
    assert main(["cache", str(secrets), str(tmp_path / "cache.acl")]) == 0
    acl = (tmp_path / "cache.acl").read_text()
    assert (tmp_path / "cache.acl").stat().st_mode & 0o777 == 0o600
    users = sorted(line.split()[1] for line in acl.splitlines())
    assert users == ["default", "referee", "worker"]  # the ladder never sees the cache
    assert "a-long-password" not in acl
    for weak in ("short", "replace-me-with-a-long-random-password"):
        (secrets / secret_name("worker")).write_text(weak)
        assert main(["cache", str(secrets), str(tmp_path / "weak.acl")]) == 64
    assert not (tmp_path / "weak.acl").exists()


def test_redis_credentials_join_the_urls_and_are_masked(tmp_path: Path) -> None:
    password = tmp_path / "password"
    password.write_text("s3cr3t/pw\n")
    env = {"ARENA_REDIS_URL": "redis://redis:6379/0", "ARENA_CACHE_URL": "rediss://cache:6379/0",
           "ARENA_REDIS_USERNAME": "referee", "ARENA_REDIS_PASSWORD_FILE": str(password),
           "ARENA_REDIS_CA_FILE": "/ca.pem", "ARENA_TLS_CERT_FILE": "/me.pem",
           "ARENA_TLS_KEY_FILE": "/me.key"}
    config = Config.load("referee", [], env)
    assert config.redis_url == "redis://referee:s3cr3t%2Fpw@redis:6379/0"
    assert config.cache_url == ("rediss://referee:s3cr3t%2Fpw@cache:6379/0?ssl_ca_certs=%2Fca.pem"
                                "&ssl_certfile=%2Fme.pem&ssl_keyfile=%2Fme.key")
    cache = redis.connection.parse_url(config.cache_url)
    assert (cache["username"], cache["password"], cache["ssl_ca_certs"]) == (
        "referee", "s3cr3t/pw", "/ca.pem")
    shown = "\n".join(config.describe())
    assert "s3cr3t" not in shown
    assert "redis_url = 'redis://referee:***@redis:6379/0'" in shown
    inline = Config.load("ladder", [], {"ARENA_REDIS_URL": "redis://:inline-pw@r:1/0"})
    assert "inline-pw" not in "\n".join(inline.describe())
    with pytest.raises(ValueError, match="cannot read the secret file"):
        Config.load("ladder", [], {"ARENA_REDIS_PASSWORD_FILE": str(tmp_path / "missing")})
