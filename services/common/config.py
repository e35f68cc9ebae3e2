"""One configuration object per service process: command-line flags over the environment
over defaults, every setting declared once in :data:`SETTINGS`.

Each setting has a name (the attribute of :class:`Config`), an ``ARENA_*`` environment
variable, a default, the services that read it and a one-line meaning; the settings that
services also take as flags name the flag. ``docs/configuration.md`` lists the same table
(a test keeps them equal), and a service logs its effective configuration at start with
secrets masked.

Precedence: a flag given on the command line wins, then the environment, then the default.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from arena.services.common.protocol.delivery import DeliveryConfig

from arena.documents import read_text_document

ALL = ("registry", "referee", "worker", "ladder", "web")
REDIS_USERS = ("registry", "referee", "worker", "ladder")  # the roles that use Redis


@dataclass(frozen=True)
class Setting:
    """One configurable value (see the module docstring)."""

    name: str
    env: str
    default: Any
    meaning: str
    readers: tuple[str, ...] = ALL
    flag: str = ""  # a command-line flag too ("--listen")
    secret: bool = False
    # A number's least value (every number is finite and at least 0 unless it says)
    # and its greatest, if it has one.
    low: float = 0
    high: float | None = None


def _delivery(name: str, meaning: str, readers: tuple[str, ...], low: float = 0,
              high: float | None = None) -> Setting:
    default = getattr(DeliveryConfig(), name)
    return Setting(name, f"ARENA_{name.upper()}", default, meaning, readers, low=low,
                   high=high)


SETTINGS: tuple[Setting, ...] = (
    Setting("listen", "ARENA_LISTEN", "127.0.0.1:0",
            "host:port to serve on (port 0 picks a free one)", flag="--listen"),
    Setting("redis_url", "ARENA_REDIS_URL", "redis://127.0.0.1:6379/0",
            "durable Redis: bots, matches, ladders, job streams", flag="--redis-url"),
    Setting("cache_url", "ARENA_CACHE_URL", "redis://127.0.0.1:6380/0",
            "cache Redis: shared transposition table, search trees",
            ("referee", "worker"), flag="--cache-url"),
    Setting("registry", "ARENA_REGISTRY", "", "address of the registry (host:port)",
            ("referee", "worker", "ladder", "web"), flag="--registry"),
    Setting("referee", "ARENA_REFEREE", "", "address of a referee (host:port)",
            ("registry", "ladder", "web"), flag="--referee"),
    Setting("ladder", "ARENA_LADDER", "", "address of the ladder service (host:port)",
            ("web",), flag="--ladder"),
    Setting("engine", "ARENA_ENGINE", "", "address of an analysis worker (host:port)",
            ("web",), flag="--engine"),
    Setting("instance", "ARENA_INSTANCE", "",
            "this process's name in the job streams' consumer groups and in logs "
            "(default: role-host-pid)", flag="--instance"),
    Setting("auth", "ARENA_AUTH", True,
            "require bearer tokens (false: every caller is an anonymous admin; local "
            "experiments only)"),
    Setting("tokens_file", "ARENA_TOKENS_FILE", "",
            'JSON file of tokens: {"<token>": {"name": "alice", "role": "user"}}; a token '
            "is printable ASCII with no spaces, an entry has only name and role, and no "
            "name is both a user's and an admin's (the admin token's is admin): anything "
            "else is refused at start-up"),
    Setting("tokens", "ARENA_TOKENS", "", "the same JSON, inline", secret=True),
    Setting("admin_token", "ARENA_ADMIN_TOKEN", "", "one admin token", secret=True),
    Setting("admin_token_file", "ARENA_ADMIN_TOKEN_FILE", "",
            "a file holding one admin token (containers: a mounted secret)"),
    Setting("service_token", "ARENA_SERVICE_TOKEN", "",
            "the token this service sends when it calls another (default: the admin "
            "token)", ("referee", "worker", "ladder", "web"), secret=True),
    Setting("tls_cert_file", "ARENA_TLS_CERT_FILE", "",
            "PEM certificate (chain) to serve gRPC over TLS with; the service also presents "
            "it when it calls the others (services/common/tls.py)"),
    Setting("tls_key_file", "ARENA_TLS_KEY_FILE", "", "PEM private key of that certificate"),
    Setting("tls_ca_file", "ARENA_TLS_CA_FILE", "",
            "PEM CA bundle to verify the services this one calls (set: it calls them over "
            "TLS)"),
    Setting("tls_client_ca_file", "ARENA_TLS_CLIENT_CA_FILE", "",
            "PEM CA bundle: when set, every caller must present a certificate it signed "
            "(mutual TLS)"),
    Setting("redis_username", "ARENA_REDIS_USERNAME", "",
            "the Redis ACL user this service logs in as on both Redis servers (empty: the "
            "URL's, else the default user)", REDIS_USERS),
    Setting("redis_password_file", "ARENA_REDIS_PASSWORD_FILE", "",
            "a file holding that user's Redis password (containers: a mounted secret)",
            REDIS_USERS),
    Setting("redis_ca_file", "ARENA_REDIS_CA_FILE", "",
            "PEM CA bundle of the Redis servers' certificates (rediss:// URLs); the service "
            "presents its own certificate if it has one", REDIS_USERS),
    Setting("log_level", "ARENA_LOG_LEVEL", "INFO", "DEBUG, INFO, WARNING or ERROR"),
    Setting("quotas", "ARENA_QUOTAS", "",
            'what each user may ask, JSON: {"user": {...}, "users": {"alice": {...}}} '
            "(services/common/quotas.py lists the limits and their defaults); each limit "
            "an integer in 1..2147483647 (2147483647: no limit), any other key refused",
            ("registry", "referee", "worker", "ladder")),
    Setting("quotas_file", "ARENA_QUOTAS_FILE", "", "the same JSON, in a file",
            ("registry", "referee", "worker", "ladder")),
    Setting("grpc_threads", "ARENA_GRPC_THREADS", 256,
            "threads serving gRPC calls; live streams (WatchMatch, WatchLadder) may hold "
            "all but 16 of them, so the other calls are always served",
            ("registry", "referee", "worker", "ladder"), low=1),
    Setting("log_format", "ARENA_LOG_FORMAT", "auto",
            "json (one object per line), text, or auto: text on a terminal, else json"),
    Setting("metrics_listen", "ARENA_METRICS_LISTEN", "",
            "host:port of the Prometheus /metrics endpoint (empty: none)",
            flag="--metrics-listen"),
    Setting("otlp_endpoint", "ARENA_OTLP_ENDPOINT", "",
            "OTLP/gRPC collector for traces, e.g. http://otel-collector:4317 (empty: no "
            "tracing)"),
    Setting("trace_sample_ratio", "ARENA_TRACE_SAMPLE_RATIO", 1.0,
            "share of moves traced when tracing is on (the referee decides per move)", high=1),
    _delivery("cpu_clock", "count the move time of a bot the worker runs (built-in, protocol "
              "engine) as the CPU time it used (false: the wall clock, like external bots)",
              ("referee",)),
    _delivery("cpu_wall_factor", "a move timed on CPU also forfeits when it takes more than "
              "this many times its limit (plus grace and 2 s) on the wall clock",
              ("referee", "worker"), low=1, high=100),
    Setting("max_matches", "ARENA_MAX_MATCHES", 64, "matches one referee runs at once",
            ("referee",), low=1),
    _delivery("max_deliveries", "deliveries of a move job before it is dead-lettered",
              ("worker",), low=1),
    _delivery("min_reclaim_idle_ms", "a silent move job is reclaimed after at least this",
              ("worker",)),
    _delivery("reclaim_margin_ms", "added to a job's budget before it may be reclaimed",
              ("worker",)),
    _delivery("heartbeat_ms", "how often workers and referees refresh their jobs",
              ("referee", "worker"), low=1),
    _delivery("match_idle_ms", "a match job idle this long is resumed by another referee",
              ("referee",), low=1),
    _delivery("grace_ms", "time allowed past a move's limit before it is late",
              ("referee", "worker")),
    _delivery("reserve_hold_ms", "how long a worker holds a job taken ahead (0: never)",
              ("worker",)),
    _delivery("stall_timeout_ms", "a move nobody answers for this long ends the game void",
              ("referee", "worker"), low=1),
    _delivery("unoffered_ms", "a protocol engine's move no live match worker offers the "
              "build of for this long ends the game void", ("referee",), low=1),
    Setting("worker_pool", "ARENA_WORKER_POOL", "match",
            "match: play move jobs; analysis: serve Engine.Analyze only (the two pools "
            "never share capacity)", ("worker",), flag="--pool"),
    Setting("analysis_slots", "ARENA_ANALYSIS_SLOTS", 1,
            "searches an analysis worker runs at once (more calls wait, then are refused)",
            ("worker",), low=1),
    Setting("analysis_wait_ms", "ARENA_ANALYSIS_WAIT_MS", 15_000,
            "how long an Analyze call may wait for a free slot (in the order calls came, "
            "never past its deadline) before RESOURCE_EXHAUSTED",
            ("worker",)),
    Setting("external_allow", "ARENA_EXTERNAL_ALLOW", "",
            "private or loopback places external bots may be at: CIDRs and host patterns, "
            "comma-separated (by default only public addresses)", ("registry", "worker")),
    Setting("io_slots", "ARENA_IO_SLOTS", 16,
            "external bots' moves a match worker waits for at once (beside its search)",
            ("worker",), low=1),
    Setting("engines_catalog", "ARENA_ENGINES_CATALOG", "",
            "the worker's engine catalog: protocol engines (NBoard, Gomocup) it offers (an "
            "analysis worker: analyses with), a TOML file (docs/engines.md; `arena`: Arena's "
            "own engines; empty: none)", ("worker",),
            flag="--engines"),
    Setting("engine_processes", "ARENA_ENGINE_PROCESSES", 4,
            "warm protocol-engine processes one worker keeps (when full, the least recently "
            "used of the owner holding the most is stopped)",
            ("worker",), low=1),
    Setting("warm_games", "ARENA_WARM_GAMES", "othello,gomoku",
            "engines compiled, and their search tables readied, before a worker takes jobs "
            "(empty: none)", ("worker",)),
    Setting("shared_cache", "ARENA_SHARED_CACHE", True,
            "use the shared transposition cache", ("worker",)),
    Setting("ladder_in_flight", "ARENA_LADDER_IN_FLIGHT", 16,
            "games of one ladder scheduled at once", ("ladder",), low=1),
    Setting("ladder_reconcile_s", "ARENA_LADDER_RECONCILE_S", 30.0,
            "how often the ladder service checks its running ladders against the referee",
            ("ladder",), low=0.1),
    Setting("web_read", "ARENA_WEB_READ", "open",
            "open: anyone may read what the web pages show; token: readers need a token too",
            ("web",), flag="--read-access"),
    Setting("web_drain_s", "ARENA_WEB_DRAIN_S", 0.0,
            "on SIGTERM, seconds /healthz answers 503 before the web gateway stops",
            ("web",)),
    Setting("web_max_streams", "ARENA_WEB_MAX_STREAMS", 200,
            "live pages (server-sent-event streams) one web gateway serves at once",
            ("web",), low=1),
    Setting("web_max_streams_per_viewer", "ARENA_WEB_MAX_STREAMS_PER_VIEWER", 20,
            "live pages one viewer (a token, else a client address) has open at once",
            ("web",), low=1),
    Setting("web_calls_per_viewer", "ARENA_WEB_CALLS_PER_VIEWER", 4,
            "API requests of one viewer answered at once; more wait their turn",
            ("web",), low=1),
    Setting("web_analyses", "ARENA_WEB_ANALYSES", 8,
            "analyses (a bot asked about a match position) one web gateway runs at once; "
            "each holds a thread for the bot's time, so past this the next is refused "
            "(503) rather than slowing every reader", ("web",), low=1),
    Setting("web_trusted_proxies", "ARENA_WEB_TRUSTED_PROXIES", "",
            "reverse proxies in front of the web gateway, addresses and networks "
            "comma-separated: a request from one is read as from the client its "
            "X-Forwarded-For names (empty: none; the header is ignored)", ("web",)),
    Setting("web_forwarded_header", "ARENA_WEB_FORWARDED_HEADER", "x-forwarded-for",
            "the header the trusted proxies name the client in: x-forwarded-for, or "
            "forwarded (RFC 7239, its for= nodes); only that one is read", ("web",)),
)
BY_NAME = {setting.name: setting for setting in SETTINGS}


@dataclass(frozen=True)
class Config:
    """The effective configuration of one service process."""

    role: str = ""
    ready_file: Path | None = None  # flag only: where to write the bound port
    listen: str = BY_NAME["listen"].default
    redis_url: str = BY_NAME["redis_url"].default
    cache_url: str = BY_NAME["cache_url"].default
    registry: str = ""
    referee: str = ""
    ladder: str = ""
    engine: str = ""
    instance: str = ""
    auth: bool = True
    tokens_file: str = ""
    tokens: str = ""
    admin_token: str = ""
    admin_token_file: str = ""
    service_token: str = ""
    tls_cert_file: str = ""
    tls_key_file: str = ""
    tls_ca_file: str = ""
    tls_client_ca_file: str = ""
    redis_username: str = ""
    redis_password_file: str = ""
    redis_ca_file: str = ""
    log_level: str = "INFO"
    quotas: str = ""
    quotas_file: str = ""
    grpc_threads: int = 256
    log_format: str = "auto"
    metrics_listen: str = ""
    otlp_endpoint: str = ""
    trace_sample_ratio: float = 1.0
    cpu_clock: bool = DeliveryConfig.cpu_clock
    cpu_wall_factor: float = DeliveryConfig.cpu_wall_factor
    max_matches: int = 64
    max_deliveries: int = DeliveryConfig.max_deliveries
    min_reclaim_idle_ms: int = DeliveryConfig.min_reclaim_idle_ms
    reclaim_margin_ms: int = DeliveryConfig.reclaim_margin_ms
    heartbeat_ms: int = DeliveryConfig.heartbeat_ms
    match_idle_ms: int = DeliveryConfig.match_idle_ms
    grace_ms: int = DeliveryConfig.grace_ms
    reserve_hold_ms: int = DeliveryConfig.reserve_hold_ms
    stall_timeout_ms: int = DeliveryConfig.stall_timeout_ms
    unoffered_ms: int = DeliveryConfig.unoffered_ms
    worker_pool: str = "match"
    analysis_slots: int = 1
    analysis_wait_ms: int = 15_000
    external_allow: str = ""
    io_slots: int = 16
    engines_catalog: str = ""
    engine_processes: int = 4
    warm_games: str = "othello,gomoku"
    shared_cache: bool = True
    ladder_in_flight: int = 16
    ladder_reconcile_s: float = 30.0
    web_read: str = "open"
    web_drain_s: float = 0.0
    web_max_streams: int = 200
    web_max_streams_per_viewer: int = 20
    web_calls_per_viewer: int = 4
    web_analyses: int = 8
    web_trusted_proxies: str = ""
    web_forwarded_header: str = "x-forwarded-for"

    @classmethod
    def load(cls, role: str, argv: Sequence[str] | None = None,
             env: Mapping[str, str] | None = None) -> Config:
        """Flags over ``env`` (default: the process environment) over defaults."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {"role": role}
        for setting in SETTINGS:
            raw = env.get(setting.env)
            if raw is not None and raw != "":
                values[setting.name] = parse_value(setting, raw)
        values.update(_flags(role, argv))
        for name in LISTEN_SETTINGS:
            if values.get(name):
                _check_listen(BY_NAME[name], values[name])
        return cls(**values).with_redis_access()

    @property
    def delivery(self) -> DeliveryConfig:
        return DeliveryConfig(**{f.name: getattr(self, f.name)
                                 for f in fields(DeliveryConfig)})

    @property
    def peer_token(self) -> str:
        """The token this service sends to the others."""
        return self.service_token or self.admin_token or _read_secret(self.admin_token_file)

    def replace(self, **changes: Any) -> Config:
        return dataclasses.replace(self, **changes)

    def with_redis_access(self) -> Config:
        """The Redis URLs as services connect with them: the ACL user and its password
        (read from ``redis_password_file``) and, for ``rediss://``, the CA and this
        service's certificate, unless the URL says otherwise already."""
        password = _read_secret(self.redis_password_file)
        access = {"username": self.redis_username, "password": password,
                  "ssl_ca_certs": self.redis_ca_file, "ssl_certfile": self.tls_cert_file,
                  "ssl_keyfile": self.tls_key_file}
        return self.replace(redis_url=redis_access(self.redis_url, **access),
                            cache_url=redis_access(self.cache_url, **access))

    def describe(self) -> list[str]:
        """``name = value`` lines of the settings this role reads, secrets masked."""
        lines = [f"role = {self.role}"]
        for setting in SETTINGS:
            if self.role in setting.readers:
                value = getattr(self, setting.name)
                shown = "***" if setting.secret and value else repr(masked(value))
                lines.append(f"{setting.name} = {shown}  ({setting.env})")
        return lines


def settings_table() -> str:
    """The settings as the Markdown table ``docs/configuration.md`` shows."""
    lines = ["| variable (flag) | default | read by | meaning |", "|---|---|---|---|"]
    for s in SETTINGS:
        readers = "every service" if s.readers == ALL else ", ".join(s.readers)
        flag = f" (`{s.flag}`)" if s.flag else ""
        shown = str(s.default).lower() if isinstance(s.default, bool) else s.default
        default = "(empty)" if s.default == "" else f"`{shown}`"
        lines.append(f"| `{s.env}`{flag} | {default} | {readers} | {s.meaning}{_bounds(s)} |")
    return "\n".join(lines)


def _bounds(setting: Setting) -> str:
    """The table's note of a number's bounds other than "0 or more"."""
    if type(setting.default) not in (int, float) or (setting.low == 0 and setting.high is None):
        return ""
    return f" ({_range(setting)})"


def redis_access(url: str, username: str = "", password: str = "", **tls_files: str) -> str:
    """``url`` with the user and password in it (if it names none) and, for ``rediss://``,
    the given TLS files as query settings (``ssl_ca_certs``, ... : redis-py's names)."""
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss"):
        return url
    netloc = parts.netloc
    if (username or password) and "@" not in netloc:
        secret = f":{quote(password, safe='')}" if password else ""
        netloc = f"{quote(username, safe='')}{secret}@{netloc}"
    query = dict(parse_qsl(parts.query))
    if parts.scheme == "rediss":
        for name, path in tls_files.items():
            if path:
                query.setdefault(name, path)
    return urlunsplit(parts._replace(netloc=netloc, query=urlencode(query)))


def masked(value: object) -> object:
    """A URL with its password replaced by ``***`` (anything else as it is)."""
    if not isinstance(value, str) or "://" not in value:
        return value
    parts = urlsplit(value)
    credentials, _, host = parts.netloc.rpartition("@")
    if ":" not in credentials:
        return value
    user = credentials.partition(":")[0]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


def parse_value(setting: Setting, raw: str) -> Any:
    """An environment value as the setting's type, a number within the setting's bounds;
    ``ValueError`` names the variable."""
    kind = type(setting.default)
    try:
        if kind is bool:
            lowered = raw.strip().lower()
            if lowered in ("1", "true", "yes", "on"):
                return True
            if lowered in ("0", "false", "no", "off"):
                return False
            raise ValueError("expected true or false")
        value = kind(raw)
        if kind in (int, float):
            _check_bounds(setting, value)
        return value
    except ValueError as exc:
        raise ValueError(f"{setting.env}={raw!r}: {exc}") from None


# The greatest number any setting takes (unless it says less): 24.8 days in milliseconds.
# Past it, values reach timers, Redis and protobuf fields that cannot hold them
# (ARENA_STALL_TIMEOUT_MS=1e20 overflowed every move job's int64 deadline: no match
# could start).
MOST = 2**31 - 1


def _check_bounds(setting: Setting, value: float) -> None:
    if not math.isfinite(value):
        raise ValueError("expected a finite number")
    if setting.high is None and value > MOST:
        raise ValueError(f"expected at most {MOST}")
    high = math.inf if setting.high is None else setting.high
    if not setting.low <= value <= high:
        raise ValueError(f"expected {_range(setting)}")


LISTEN_SETTINGS = ("listen", "metrics_listen")  # host:port to serve on


def _check_listen(setting: Setting, value: str) -> None:
    """``host:port`` with a port the system can bind: gRPC takes 70000 as 4464 (the port
    modulo 65536) and the metrics server raises OverflowError."""
    _, sep, port = value.rpartition(":")
    if not sep or not port.isascii() or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"{setting.env}={value!r}: expected host:port, the port a number "
                         "from 0 to 65535")


def _range(setting: Setting) -> str:
    """A number setting's bounds in words: "1 or more", "a number from 0 to 1"."""
    if setting.high is None:
        return f"{setting.low:g} or more"
    return f"a number from {setting.low:g} to {setting.high:g}"


def _flags(role: str, argv: Sequence[str] | None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog=f"arena-{role}",
                                     description=f"Run the Arena {role} service. Every "
                                                 "setting is also read from the environment "
                                                 "(docs/configuration.md).")
    for setting in SETTINGS:
        if setting.flag and role in setting.readers:
            parser.add_argument(setting.flag, dest=setting.name, default=None,
                                help=f"{setting.meaning} (env {setting.env})")
    parser.add_argument("--ready-file", type=Path, default=None,
                        help="write the bound port here once serving")
    parser.add_argument("--worker-id", dest="instance_alias", default=None,
                        help=argparse.SUPPRESS)  # the former name of --instance
    parser.add_argument("--no-auth", action="store_true",
                        help="accept calls without tokens (local experiments only)")
    args = parser.parse_args(argv)
    given: dict[str, Any] = {k: v for k, v in vars(args).items()
                             if v is not None and k not in ("no_auth", "instance_alias")}
    if args.instance_alias and "instance" not in given:
        given["instance"] = args.instance_alias
    if args.no_auth:
        given["auth"] = False
    return given


def _read_secret(path: str) -> str:
    if not path:
        return ""
    try:
        return read_text_document(path, "the secret file").strip()
    except OSError as exc:
        raise ValueError(f"cannot read the secret file {path}: {exc}") from None
