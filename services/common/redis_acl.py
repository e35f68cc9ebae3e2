"""Redis ACL users: one per service, each with a password and only what it needs.

Each service has its own user and password, exists only on the servers it uses (the
registry and the ladder service never see the cache), and may run only the data commands
it uses (reads, writes, streams, scripts, transactions), never administrative or dangerous
ones (``CONFIG``, ``FLUSHALL``, ``KEYS``, ``DEBUG``, ``SHUTDOWN``, ``ACL`` ...). A caller
that logs in as nobody may only ``PING`` (health checks). ``admin`` is the operator's user.

Why every key (``~*``) rather than each service's own: a create script without an
idempotency key passes the empty string as its first key (``protocol/requests.py``), and
no ACL key pattern but ``*`` admits the empty key, so a narrower pattern refuses every
such call. With a placeholder key there instead, :data:`SERVICE_KEYS` could name
``arena:*`` for every service and ``arena:bot*`` for the registry. The servers are
Arena's own, so nothing else lives in them meanwhile.

The ACL file holds SHA-256 digests of the passwords, never the passwords. It is written at
the Redis server's start from the password files: by the launcher for `arena up`, and by
the image's entry point (``arena-entrypoint redis durable|cache``) from the mounted secrets
``redis_<user>_password`` in Compose and Kubernetes (``docs/deploy.md``).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import secrets
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

Server = Literal["durable", "cache"]
ADMIN = "admin"
# Which Redis servers each service user exists on.
SERVICE_USERS: Mapping[str, tuple[Server, ...]] = {
    "registry": ("durable",),
    "referee": ("durable", "cache"),
    "ladder": ("durable",),
    "worker": ("durable", "cache"),
}
SERVICE_KEYS = ("*",)
COMMANDS = ("-@all", "+@read", "+@write", "+@scripting", "+@transaction", "+@connection",
            "-@dangerous")
# Beyond those, by user: the referee holding the exporter lease reads ``INFO memory`` of
# both servers (``arena_redis_memory_*``). INFO is in @dangerous for what else it tells
# (clients, persistence, replication): no key, no password. Without it the exporter failed
# at each scrape and exported none of the queue figures. And ``TIME`` (in no category
# but @fast): a referee notes when its run started by Redis's clock, the one the match
# group's idle times count by, and GetStatus compares them (``referees``); without it
# GetStatus failed with INTERNAL on a stack with users.
EXTRA_COMMANDS: Mapping[str, tuple[str, ...]] = {"referee": ("+info", "+time")}
PROBE = "user default on nopass resetkeys resetchannels -@all +ping"
MIN_PASSWORD = 16


def secret_name(user: str) -> str:
    """The file (Compose secret, Kubernetes Secret key) holding ``user``'s password."""
    return f"redis_{user}_password"


def user_line(user: str, password: str) -> str:
    digest = hashlib.sha256(password.encode()).hexdigest()
    if user == ADMIN:
        return f"user {ADMIN} on #{digest} ~* &* +@all"
    keys = " ".join(f"~{pattern}" for pattern in SERVICE_KEYS)
    commands = " ".join((*COMMANDS, *EXTRA_COMMANDS.get(user, ())))
    return f"user {user} on #{digest} resetkeys {keys} resetchannels {commands}"


def acl_text(server: Server, passwords: Mapping[str, str]) -> str:
    """The ACL file of one server: the probe, the admin and the services' users that use
    it, for those of them ``passwords`` has."""
    wanted = [ADMIN, *(u for u, servers in SERVICE_USERS.items() if server in servers)]
    lines = [PROBE] + [user_line(user, passwords[user]) for user in wanted
                       if passwords.get(user)]
    return "\n".join(lines) + "\n"


def write_private(path: Path, text: str) -> None:
    """Written whole, readable by its owner only from the start."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    tmp.replace(path)


def local_passwords(folder: Path) -> dict[str, Path]:
    """Password files for every user under ``folder`` (made once, 0600): `arena up`."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)
    found = {}
    for user in (ADMIN, *SERVICE_USERS):
        path = folder / secret_name(user)
        if not path.is_file():
            write_private(path, secrets.token_urlsafe(24) + "\n")
        found[user] = path
    return found


def read_passwords(files: Mapping[str, Path]) -> dict[str, str]:
    return {user: path.read_text().strip() for user, path in files.items()}


def weak(password: str) -> bool:
    """Too short to stand a guessing attack, or a manifest's placeholder left in place."""
    return len(password) < MIN_PASSWORD or password.startswith("replace-me")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m arena.services.common.redis_acl",
        description="Write the ACL file of one Arena Redis server from the password files "
                    f"in SECRETS ({secret_name('<user>')}; users without one are left out).")
    parser.add_argument("server", choices=("durable", "cache"))
    parser.add_argument("secrets", type=Path, help="folder of the password files")
    parser.add_argument("output", type=Path, help="the ACL file to write (0600)")
    args = parser.parse_args(argv)
    files = {user: args.secrets / secret_name(user) for user in (ADMIN, *SERVICE_USERS)}
    present = {user: path for user, path in files.items() if path.is_file()}
    if not any(user in present for user, servers in SERVICE_USERS.items()
               if args.server in servers):
        print(f"redis-acl: no service password in {args.secrets} "
              f"(expected files like {secret_name('registry')})", file=sys.stderr)
        return 64
    passwords = read_passwords(present)
    for user, password in passwords.items():
        if weak(password):
            print(f"redis-acl: the password in {present[user]} is a placeholder or shorter "
                  f"than {MIN_PASSWORD} characters", file=sys.stderr)
            return 64
    write_private(args.output, acl_text(args.server, passwords))
    return 0


if __name__ == "__main__":
    sys.exit(main())
