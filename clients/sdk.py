"""The typed Python SDK: one ``ArenaClient`` over every Arena gRPC service.

    >>> from arena.clients.sdk import ArenaClient
    >>> with ArenaClient() as arena:                  # reads .arena/stack.json
    ...     for bot in arena.iter_bots():
    ...         print(bot.spec.name, bot.version)

Where things are comes from, first match wins: constructor arguments, the environment
(``ARENA_REGISTRY``, ``ARENA_REFEREE``, ``ARENA_LADDER``, ``ARENA_ENGINE``,
``ARENA_TOKEN``), then ``stack.json`` in ``$ARENA_HOME`` (default ``./.arena``), which
``arena up`` writes together with the admin token file.

TLS the same way: a CA file (``ca_file``, ``ARENA_TLS_CA_FILE``, or the stack file's
``tls`` section, which `arena up --tls` writes) makes every channel TLS, verifying the
servers against that CA; a certificate and key (``ARENA_TLS_CERT_FILE``,
``ARENA_TLS_KEY_FILE``) are presented to servers that require one (mutual TLS).

Every call carries a deadline. Idempotent reads are retried on UNAVAILABLE by gRPC
itself, as declared in the channel's service config; nothing here loops by hand. A
failed call raises the matching ``arena.errors`` exception with a one-line message.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import Any, Final, TypeVar

import grpc
from arena.clients.arguments import checked_arguments
from google.protobuf import json_format, struct_pb2

from arena import errors
from arena.games import UnknownGameError
from arena.games import game as game_named
from arena.home import ADMIN_TOKEN_FILE, STACK_FILE, arena_home
from arena.rpc import ServerError, to_arena_error
from arena.v1 import (
    bots_pb2,
    common_pb2,
    engine_pb2,
    engine_pb2_grpc,
    ladder_pb2,
    ladder_pb2_grpc,
    match_pb2,
    referee_pb2,
    referee_pb2_grpc,
    registry_pb2,
    registry_pb2_grpc,
    status_pb2,
    status_pb2_grpc,
)

ROLES: Final = ("registry", "referee", "ladder", "engine")
DEFAULT_TIMEOUT_S: Final = 10.0
WATCH_TIMEOUT_S: Final = 24 * 3600.0
ANALYZE_MARGIN_S: Final = 30.0

# Reads and analysis are safe to repeat, so gRPC may retry them when the server is
# briefly unreachable (a worker restarting, a port not yet accepting).
_RETRIED_METHODS: Final = {
    "arena.v1.BotRegistry": ("GetBot", "ListBots", "ListPresets", "ListEngines"),
    "arena.v1.Referee": ("GetMatch", "ListMatches", "GetReplay", "GetSearchTree"),
    "arena.v1.Ladder": ("GetStandings", "ListLadders", "GetRatings"),
    "arena.v1.Engine": ("Analyze",),
    "arena.v1.Status": ("GetStatus",),
}
SERVICE_CONFIG: Final = json.dumps({
    # A target naming several servers of a role ("ipv4:a,b") spreads calls over them.
    "loadBalancingConfig": [{"round_robin": {}}],
    "methodConfig": [
        {
            "name": [
                {"service": service, "method": method}
                for service, methods in _RETRIED_METHODS.items()
                for method in methods
            ],
            "retryPolicy": {
                "maxAttempts": 4,
                "initialBackoff": "0.1s",
                "maxBackoff": "1s",
                "backoffMultiplier": 2,
                "retryableStatusCodes": ["UNAVAILABLE"],
            },
        }
    ]
})
_CHANNEL_OPTIONS: Final = [
    ("grpc.service_config", SERVICE_CONFIG),
    ("grpc.enable_retries", 1),
    ("grpc.max_receive_message_length", 64 * 1024 * 1024),
]
MAX_PEM_BYTES: Final = 1 << 20  # a CA bundle is a few hundred KiB
# Where the TLS files come from: the StackAddresses field, its variable, the stack file key.
TLS_FILES: Final = {"ca_file": "ARENA_TLS_CA_FILE", "cert_file": "ARENA_TLS_CERT_FILE",
                    "key_file": "ARENA_TLS_KEY_FILE"}


def channel_credentials(ca_file: str, cert_file: str = "",
                        key_file: str = "") -> grpc.ChannelCredentials | None:
    """TLS credentials verifying servers against ``ca_file`` and presenting the client
    certificate if one is given; None (plaintext) without a CA file."""
    if not ca_file:
        if cert_file or key_file:
            raise errors.InvalidArgumentError(
                "a client certificate needs a CA file to verify the server with "
                "(ARENA_TLS_CA_FILE)")
        return None
    if bool(cert_file) != bool(key_file):
        raise errors.InvalidArgumentError("a client certificate needs both its file and its "
                                          "key (ARENA_TLS_CERT_FILE, ARENA_TLS_KEY_FILE)")
    return grpc.ssl_channel_credentials(
        _read_pem(ca_file, "CA"),
        _read_pem(key_file, "client key") if key_file else None,
        _read_pem(cert_file, "client certificate") if cert_file else None)


def _read_pem(path: str, what: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_PEM_BYTES + 1)
    except OSError as exc:
        raise errors.InvalidArgumentError(
            f"cannot read the TLS {what} file {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_PEM_BYTES:
        raise errors.InvalidArgumentError(
            f"the TLS {what} file {path} is larger than {MAX_PEM_BYTES:,} bytes: not a PEM file")
    if b"-----BEGIN " not in data:
        raise errors.InvalidArgumentError(f"the TLS {what} file {path} is not a PEM file")
    return data


def open_channel(target: str, credentials: grpc.ChannelCredentials | None = None,
                 options: list[tuple[str, Any]] | None = None) -> grpc.Channel:
    """A channel to ``target``: plaintext, or TLS with ``credentials``."""
    options = list(_CHANNEL_OPTIONS if options is None else options)
    if credentials is None:
        return grpc.insecure_channel(target, options=options)
    if target.startswith(("ipv4:", "ipv6:")):
        # Several servers behind one target ("ipv4:a,b"): no authority to check the
        # certificates against, so check them against the (shared) host of the first.
        first = target.partition(":")[2].split(",")[0]
        options.append(("grpc.ssl_target_name_override", first.rsplit(":", 1)[0].strip("[]")))
    return grpc.secure_channel(target, credentials, options=options)


@dataclass(frozen=True)
class StackAddresses:
    """Where the services listen and which token to send (see the module docstring)."""

    registry: str = ""
    referee: str = ""
    ladder: str = ""
    engine: str = ""
    token: str = ""
    home: Path = field(default_factory=arena_home)
    ca_file: str = ""
    cert_file: str = ""
    key_file: str = ""

    @classmethod
    def discover(
        cls,
        home: Path | str | None = None,
        env: Mapping[str, str] | None = None,
        **given: str | None,
    ) -> StackAddresses:
        env = os.environ if env is None else env
        state = arena_home(home, env)
        manifest = _read_manifest(state / STACK_FILE)
        roles = manifest.get("roles", {})
        roles = roles if isinstance(roles, dict) else {}
        from_stack = {role: str(roles.get(role, "")) for role in ROLES}
        found: dict[str, str] = {}
        for role in ROLES:
            found[role] = (
                given.get(role) or env.get(f"ARENA_{role.upper()}") or from_stack[role]
            )
        token = given.get("token") or env.get("ARENA_TOKEN") or _read_token(manifest, state)
        tls = manifest.get("tls")
        tls = tls if isinstance(tls, dict) else {}
        for name, variable in TLS_FILES.items():
            found[name] = given.get(name) or env.get(variable) or str(tls.get(name) or "")
        return cls(home=state, token=token, **found)

    def credentials(self) -> grpc.ChannelCredentials | None:
        """TLS credentials for every channel, or None for plaintext (no CA file)."""
        return channel_credentials(self.ca_file, self.cert_file, self.key_file)

    def target(self, role: str) -> str:
        if role not in ROLES:
            raise errors.InvalidArgumentError(
                f"no service role {role!r} (roles: {', '.join(ROLES)})")
        address: str = getattr(self, role)
        if not address:
            raise errors.UnavailableError(
                f"no {role} address: start the stack with `arena up`, or set "
                f"ARENA_{role.upper()} (looked in {self.home / STACK_FILE})"
            )
        return address


def bearer_metadata(token: str) -> tuple[tuple[str, str], ...]:
    """The call metadata that carries ``token`` (none without one). A gRPC header value is
    printable ASCII: gRPC itself refuses any other character on the client side as an
    INTERNAL error, so such a token is refused here as what it is, naming the character
    and not the token (a secret)."""
    if not token:
        return ()
    bad = next((char for char in token if not " " <= char <= "~"), None)
    if bad is not None:
        raise errors.UnauthenticatedError(
            f"the token holds U+{ord(bad):04X}, which no gRPC header can carry (a token is "
            "printable ASCII): check --token, ARENA_TOKEN or the token file")
    return (("authorization", f"Bearer {token}"),)


def _read_manifest(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise errors.InvalidArgumentError(f"unreadable stack file {path}: {exc}") from None
    return data if isinstance(data, dict) else {}


def _read_token(manifest: Mapping[str, Any], state: Path) -> str:
    path = Path(str(manifest.get("token_file") or state / ADMIN_TOKEN_FILE))
    try:
        return path.read_text().strip()
    except OSError:
        return ""


Response = TypeVar("Response")
Message = TypeVar("Message")


def _request(kind: Callable[..., Message], **fields: Any) -> Message:
    """``kind(**fields)``; a value protobuf refuses (a number out of its field's range: the
    types were checked before, against the methods' annotations) is an
    ``InvalidArgumentError`` that names its field, where protobuf says only ``Value out of
    range: ...``."""
    try:
        return kind(**fields)
    except (TypeError, ValueError) as exc:
        name = getattr(getattr(kind, "DESCRIPTOR", None), "name", "request")
        for field_name, value in fields.items():
            try:
                kind(**{field_name: value})
            except (TypeError, ValueError) as refused:
                raise errors.InvalidArgumentError(
                    f"{name}.{field_name}: {refused} (got {value!r})") from None
        raise errors.InvalidArgumentError(f"{name}: {exc}") from None

__all__ = ["ArenaClient", "ServerError", "StackAddresses"]


@checked_arguments
class ArenaClient:
    """Typed calls to the registry, referee, ladder and engine services.

    Channels open lazily, one per address; use the client as a context manager (or
    call ``close()``) to release them. Every public method checks its arguments against
    its annotations before it sends anything (``arena.clients.arguments``): a value of
    the wrong type, or an enum number outside the enum, raises ``InvalidArgumentError``
    naming the method and the argument. An enum argument also takes the enum's names
    (``status="MATCH_STATUS_RUNNING"``).
    """

    def __init__(
        self,
        registry: str | None = None,
        referee: str | None = None,
        ladder: str | None = None,
        engine: str | None = None,
        token: str | None = None,
        home: Path | str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        addresses: StackAddresses | None = None,
        ca_file: str | None = None,
        cert_file: str | None = None,
        key_file: str | None = None,
    ) -> None:
        """Addresses, token and TLS files: ``addresses`` exactly as given (services
        calling each other), else discovered (see the module docstring)."""
        self.addresses = addresses or StackAddresses.discover(
            home, registry=registry, referee=referee, ladder=ladder, engine=engine,
            token=token, ca_file=ca_file, cert_file=cert_file, key_file=key_file,
        )
        self.timeout_s = timeout_s
        self._channels: dict[str, grpc.Channel] = {}

    # -- plumbing ----------------------------------------------------------------------

    def __enter__(self) -> ArenaClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        for channel in self._channels.values():
            channel.close()
        self._channels.clear()

    def channel(self, role: str) -> grpc.Channel:
        """The channel to ``role``'s address (opened once; TLS if a CA file is known)."""
        target = self.addresses.target(role)
        if target not in self._channels:
            self._channels[target] = open_channel(target, self._tls)
        return self._channels[target]

    @cached_property
    def _tls(self) -> grpc.ChannelCredentials | None:
        """The channels' TLS credentials (the files are read once, when first needed)."""
        return self.addresses.credentials()

    def _metadata(self) -> tuple[tuple[str, str], ...]:
        return bearer_metadata(self.addresses.token)

    def _call(
        self,
        role: str,
        method: Callable[..., Response],
        request: object,
        timeout_s: float | None = None,
    ) -> Response:
        try:
            return method(
                request, timeout=timeout_s or self.timeout_s, metadata=self._metadata()
            )
        except grpc.RpcError as exc:
            raise self._error(exc, role) from None

    def _stream(
        self, role: str, method: Callable[..., Any], request: object,
        timeout_s: float,
    ) -> Iterator[Response]:
        call = method(request, timeout=timeout_s, metadata=self._metadata())
        try:
            yield from call
        except grpc.RpcError as exc:
            raise self._error(exc, role) from None
        finally:
            call.cancel()  # stops the stream if the caller abandons it

    def _error(self, exc: grpc.RpcError, role: str) -> errors.ArenaError:
        return to_arena_error(exc, role, self.addresses.target(role),
                              ca_file=self.addresses.ca_file,
                              cert_file=self.addresses.cert_file)

    def _registry(self) -> registry_pb2_grpc.BotRegistryStub:
        return registry_pb2_grpc.BotRegistryStub(self.channel("registry"))

    def _referee(self) -> referee_pb2_grpc.RefereeStub:
        return referee_pb2_grpc.RefereeStub(self.channel("referee"))

    def _ladder(self) -> ladder_pb2_grpc.LadderStub:
        return ladder_pb2_grpc.LadderStub(self.channel("ladder"))

    def _engine(self) -> engine_pb2_grpc.EngineStub:
        return engine_pb2_grpc.EngineStub(self.channel("engine"))

    # -- registry ----------------------------------------------------------------------

    def register_bot(self, spec: bots_pb2.BotSpec, from_preset: str = "",
                     request_id: str = "") -> bots_pb2.BotVersion:
        """Register version 1 of a new bot; a retry with the same ``request_id`` returns the
        version the first call registered (the key with another request: AlreadyExistsError)."""
        request = _request(registry_pb2.RegisterBotRequest, spec=spec,
                           from_preset=from_preset, request_id=request_id)
        return self._call("registry", self._registry().RegisterBot, request)

    def get_bot(self, name: str, version: int = 0) -> bots_pb2.BotVersion:
        request = _request(registry_pb2.GetBotRequest,
                           bot=_request(common_pb2.BotRef, name=name, version=version))
        return self._call("registry", self._registry().GetBot, request)

    def list_bots(
        self,
        game: common_pb2.GameKind.ValueType = common_pb2.GAME_KIND_UNSPECIFIED,
        owner: str = "",
        name_prefix: str = "",
        include_retired: bool = False,
        page_size: int = 0,
        page_token: str = "",
    ) -> registry_pb2.ListBotsResponse:
        request = _request(
            registry_pb2.ListBotsRequest,
            game=game, owner=owner, name_prefix=name_prefix, include_retired=include_retired,
            page=_request(common_pb2.PageRequest, page_size=page_size, page_token=page_token),
        )
        return self._call("registry", self._registry().ListBots, request)

    def iter_bots(
        self,
        game: common_pb2.GameKind.ValueType = common_pb2.GAME_KIND_UNSPECIFIED,
        owner: str = "",
        name_prefix: str = "",
        include_retired: bool = False,
    ) -> Iterator[bots_pb2.BotVersion]:
        """Every bot ``list_bots`` lists with these filters, page by page."""
        token = ""
        while True:
            page = self.list_bots(game=game, owner=owner, name_prefix=name_prefix,
                                  include_retired=include_retired, page_token=token)
            yield from page.bots
            token = page.next_page_token
            if not token:
                return

    def update_bot(self, name: str, spec: bots_pb2.BotSpec) -> bots_pb2.BotVersion:
        request = _request(registry_pb2.UpdateBotRequest, name=name, spec=spec)
        return self._call("registry", self._registry().UpdateBot, request)

    def retire_bot(self, name: str, cancel_matches: bool = False) -> bots_pb2.BotVersion:
        """Retire a bot (it enters no new match); ``cancel_matches`` also cancels its
        pending and running matches."""
        request = _request(registry_pb2.RetireBotRequest, name=name,
                           cancel_matches=cancel_matches)
        return self._call("registry", self._registry().RetireBot, request)

    def list_presets(
        self, game: common_pb2.GameKind.ValueType = common_pb2.GAME_KIND_UNSPECIFIED
    ) -> list[bots_pb2.Preset]:
        request = _request(registry_pb2.ListPresetsRequest, game=game)
        return list(self._call("registry", self._registry().ListPresets, request).presets)

    def list_engines(
        self, game: common_pb2.GameKind.ValueType = common_pb2.GAME_KIND_UNSPECIFIED
    ) -> list[engine_pb2.EngineOffer]:
        """The protocol engines live match workers and analysts offer (name, protocol,
        games, checksum, how many workers and how many analysts), for ``game`` or every
        game."""
        request = _request(registry_pb2.ListEnginesRequest, game=game)
        return list(self._call("registry", self._registry().ListEngines, request).engines)

    # -- referee -----------------------------------------------------------------------

    def create_match(self, config: match_pb2.MatchConfig, request_id: str = "",
                     owner: str = "") -> match_pb2.Match:
        """Queue a match; a retry with the same ``request_id`` returns the match the first
        call created (the key with another config: AlreadyExistsError). ``owner`` creates it
        for another user (services and admins only)."""
        request = _request(referee_pb2.CreateMatchRequest, config=config,
                           request_id=request_id, owner=owner)
        return self._call("referee", self._referee().CreateMatch, request)

    def cancel_match(self, match_id: str, reason: str = "", as_user: str = ""
                     ) -> match_pb2.Match:
        """Stop a pending or running match at once: called off by its creator (cancelled,
        void), or one bot withdrawn by its owner (finished, that bot lost by resignation).
        ``as_user``: cancel as that user (services and admins only)."""
        request = _request(referee_pb2.CancelMatchRequest, match_id=match_id, reason=reason,
                           as_user=as_user)
        return self._call("referee", self._referee().CancelMatch, request)

    def get_match(self, match_id: str) -> match_pb2.Match:
        request = _request(referee_pb2.GetMatchRequest, match_id=match_id)
        return self._call("referee", self._referee().GetMatch, request)

    def list_matches(
        self,
        bot_name: str = "",
        status: match_pb2.MatchStatus.ValueType = match_pb2.MATCH_STATUS_UNSPECIFIED,
        ladder_id: str = "",
        game: common_pb2.GameKind.ValueType = common_pb2.GAME_KIND_UNSPECIFIED,
        summary_only: bool = False,
        page_size: int = 0,
        page_token: str = "",
    ) -> referee_pb2.ListMatchesResponse:
        request = _request(
            referee_pb2.ListMatchesRequest,
            bot_name=bot_name, status=status, ladder_id=ladder_id, game=game,
            summary_only=summary_only,
            page=_request(common_pb2.PageRequest, page_size=page_size, page_token=page_token),
        )
        return self._call("referee", self._referee().ListMatches, request)

    def iter_matches(
        self,
        limit: int = 0,
        bot_name: str = "",
        status: match_pb2.MatchStatus.ValueType = match_pb2.MATCH_STATUS_UNSPECIFIED,
        ladder_id: str = "",
        game: common_pb2.GameKind.ValueType = common_pb2.GAME_KIND_UNSPECIFIED,
        summary_only: bool = False,
    ) -> Iterator[match_pb2.Match]:
        """The matches ``list_matches`` lists with these filters, newest first; at most
        ``limit`` of them (0: all)."""
        token, seen = "", 0
        while True:
            page = self.list_matches(bot_name=bot_name, status=status, ladder_id=ladder_id,
                                     game=game, summary_only=summary_only, page_token=token)
            for match in page.matches:
                yield match
                seen += 1
                if limit and seen >= limit:
                    return
            token = page.next_page_token
            if not token:
                return

    def watch_match(
        self, match_id: str, timeout_s: float = WATCH_TIMEOUT_S
    ) -> Iterator[match_pb2.MatchEvent]:
        request = _request(referee_pb2.WatchMatchRequest, match_id=match_id)
        return self._stream("referee", self._referee().WatchMatch, request, timeout_s)

    def get_replay(
        self,
        match_id: str,
        replay_format: referee_pb2.ReplayFormat.ValueType = referee_pb2.REPLAY_FORMAT_NATIVE,
    ) -> referee_pb2.Replay:
        request = _request(referee_pb2.GetReplayRequest, match_id=match_id,
                           format=replay_format)
        return self._call("referee", self._referee().GetReplay, request)

    def get_search_tree(self, match_id: str, ply: int) -> common_pb2.SearchTree:
        request = _request(referee_pb2.GetSearchTreeRequest, match_id=match_id, ply=ply)
        return self._call("referee", self._referee().GetSearchTree, request)

    def import_match(
        self,
        content: str,
        replay_format: referee_pb2.ReplayFormat.ValueType = referee_pb2.REPLAY_FORMAT_UNSPECIFIED,
        variant: str = "",
        request_id: str = "",
    ) -> match_pb2.Match:
        """Store a game record (native replay, GGF, transcript, PSQ; the format is
        recognised when unspecified) as a finished match of the caller. ``variant`` is
        for records that cannot say it (transcripts, PSQ). A retry with the same
        ``request_id`` returns the match the first call stored (the key with another
        request: AlreadyExistsError)."""
        request = _request(referee_pb2.ImportMatchRequest, content=content,
                           format=replay_format, variant=variant, request_id=request_id)
        return self._call("referee", self._referee().ImportMatch, request)

    def delete_match(self, match_id: str) -> None:
        request = _request(referee_pb2.DeleteMatchRequest, match_id=match_id)
        self._call("referee", self._referee().DeleteMatch, request)

    def get_usage(self, user: str = "") -> referee_pb2.Usage:
        """What a user's matches use of their quotas (``user`` empty: the caller's; another
        user's: admins only)."""
        request = _request(referee_pb2.GetUsageRequest, user=user)
        return self._call("referee", self._referee().GetUsage, request)

    def get_bot_usage(self, user: str = "") -> registry_pb2.BotUsage:
        """What a user's bots use of their quotas (``user`` empty: the caller's; another
        user's: admins only)."""
        request = _request(registry_pb2.GetBotUsageRequest, user=user)
        return self._call("registry", self._registry().GetUsage, request)

    def prune_matches(self, before: datetime, keep_ladder_games: bool = False,
                      dry_run: bool = False, batch: int = 0) -> tuple[int, int]:
        """Forget every finished match recorded and ended before ``before`` (the caller's;
        an admin's call, anyone's; a ladder's games once all of them are, none with
        ``keep_ladder_games``), ``batch``
        examined per call (0: the server's default).
        (examined, forgotten); a dry run forgets nothing and counts what it would."""
        request = _request(referee_pb2.PruneMatchesRequest,
                           keep_ladder_games=keep_ladder_games, dry_run=dry_run, limit=batch)
        request.before.FromDatetime(before)
        examined = pruned = 0
        while True:
            reply = self._call("referee", self._referee().PruneMatches, request)
            examined, pruned = examined + reply.examined, pruned + reply.pruned
            if not reply.next_page_token:
                return examined, pruned
            request.page_token = reply.next_page_token

    # -- ladder ------------------------------------------------------------------------

    def create_ladder(self, config: ladder_pb2.LadderConfig,
                      request_id: str = "") -> ladder_pb2.LadderInfo:
        """Start a ladder; a retry with the same ``request_id`` returns the ladder the first
        call created (the key with another config: AlreadyExistsError)."""
        request = _request(ladder_pb2.CreateLadderRequest, config=config,
                           request_id=request_id)
        return self._call("ladder", self._ladder().CreateLadder, request)

    def get_standings(self, ladder_id: str) -> ladder_pb2.Standings:
        request = _request(ladder_pb2.GetStandingsRequest, ladder_id=ladder_id)
        return self._call("ladder", self._ladder().GetStandings, request)

    def get_ladder_usage(self, user: str = "") -> ladder_pb2.LadderUsage:
        """What a user's ladders use of their quotas (``user`` empty: the caller's; another
        user's: admins only)."""
        request = _request(ladder_pb2.GetLadderUsageRequest, user=user)
        return self._call("ladder", self._ladder().GetUsage, request)

    def get_ratings(self, game: common_pb2.GameSpec,
                    clock: common_pb2.TimeControl | None = None) -> ladder_pb2.Ratings:
        """The arena's rating list of ``game`` (an empty variant or size: the default), of
        the ladders played at ``clock`` only (None: every clock's, pooled)."""
        request = _request(ladder_pb2.GetRatingsRequest, game=game, clock=clock)
        return self._call("ladder", self._ladder().GetRatings, request)

    def bot_ratings(self, name: str, kind: common_pb2.GameKind.ValueType,
                    ) -> list[tuple[ladder_pb2.Ratings, ladder_pb2.RatingRow]]:
        """Each row of bot ``name`` (any version) in the rating lists of its game, every
        variant and size, with the list it is in: the list of every clock, then, where the
        game's ladders had several clocks, the list of each clock the bot played at."""
        try:
            played = game_named(kind)
        except UnknownGameError:  # GAME_KIND_UNSPECIFIED: a GameKind, but no game
            games = ", ".join(f"{name}={number}" for name, number in
                              common_pb2.GameKind.items() if number)
            raise errors.InvalidArgumentError(
                f"bot_ratings: kind must name a game ({games}), got {kind}") from None
        found = []

        def rows(rated: ladder_pb2.Ratings) -> list[ladder_pb2.RatingRow]:
            return [row for row in rated.rows if row.standing.bot.name == name]

        for variant in played.variants:
            for size in played.sizes:
                rated = self.get_ratings(played.spec(variant, size))
                pooled = [(rated, row) for row in rows(rated)]
                found += pooled
                if pooled and len(rated.clocks) > 1:
                    for clock in rated.clocks:
                        at = self.get_ratings(played.spec(variant, size), clock.clock)
                        found += [(at, row) for row in rows(at)]
        return found

    def watch_ladder(
        self, ladder_id: str, timeout_s: float = WATCH_TIMEOUT_S
    ) -> Iterator[ladder_pb2.LadderProgress]:
        request = _request(ladder_pb2.WatchLadderRequest, ladder_id=ladder_id)
        return self._stream("ladder", self._ladder().WatchLadder, request, timeout_s)

    def list_ladders(
        self, page_size: int = 0, page_token: str = "", running_only: bool = False
    ) -> ladder_pb2.ListLaddersResponse:
        request = _request(ladder_pb2.ListLaddersRequest, page=_request(
            common_pb2.PageRequest, page_size=page_size, page_token=page_token),
            running_only=running_only)
        return self._call("ladder", self._ladder().ListLadders, request)

    def iter_ladders(self, limit: int = 0,
                     running_only: bool = False) -> Iterator[ladder_pb2.LadderInfo]:
        """Ladders newest first (``running_only``: the running ones), at most ``limit``
        (0: all), read a page at a time."""
        token, seen = "", 0
        while True:
            page = self.list_ladders(page_token=token, running_only=running_only)
            for ladder in page.ladders:
                yield ladder
                seen += 1
                if limit and seen >= limit:
                    return
            token = page.next_page_token
            if not token:
                return

    def cancel_ladder(self, ladder_id: str) -> ladder_pb2.LadderInfo:
        request = _request(ladder_pb2.CancelLadderRequest, ladder_id=ladder_id)
        return self._call("ladder", self._ladder().CancelLadder, request)

    # -- status ------------------------------------------------------------------------

    def get_status(self, forfeits: int = 0) -> status_pb2.ArenaStatus:
        """The live picture a referee sees: workers (with their engines and current job),
        the move and match queues, running matches, the cache's recent hit rate and the
        latest forfeits (``forfeits``: how many; 0: 10)."""
        request = _request(status_pb2.GetStatusRequest, forfeits=forfeits)
        stub = status_pb2_grpc.StatusStub(self.channel("referee"))
        return self._call("referee", stub.GetStatus, request)

    def check_health(self, role: str) -> bool:
        """True if the ``role``'s server answers gRPC health SERVING (no token needed)."""
        return not self.unhealthy(role)

    def unhealthy(self, role: str) -> str:
        """Why the ``role``'s server does not answer gRPC health SERVING, in the words of
        any failed call (a TLS mistake named as such), or "" if it does."""
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        stub = health_pb2_grpc.HealthStub(self.channel(role))
        try:
            reply = stub.Check(health_pb2.HealthCheckRequest(), timeout=min(self.timeout_s, 2.0))
        except grpc.RpcError as exc:
            return str(self._error(exc, role))
        if reply.status == health_pb2.HealthCheckResponse.SERVING:
            return ""
        return f"{role} at {self.addresses.target(role)} is not serving (health " \
               f"{health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)})"

    # -- engine ------------------------------------------------------------------------

    def analyze(
        self,
        position: common_pb2.Position,
        bot: common_pb2.BotRef | None = None,
        engine_config: Mapping[str, Any] | None = None,
        limits: common_pb2.SearchLimits | None = None,
        history: list[int] | None = None,
        tree_node_budget: int = 0,
        seed: int = 0,
    ) -> engine_pb2.AnalyzeResponse:
        """The move and search of a registered ``bot`` (or an inline ``engine_config``)
        on ``position``: the hint a game program gives. The deadline grows with the
        search's own time limit."""
        request = _request(
            engine_pb2.AnalyzeRequest,
            position=position, history=history or [], limits=limits,
            tree_node_budget=tree_node_budget, seed=seed,
        )
        if bot is not None:
            request.bot_ref.CopyFrom(bot)
        elif engine_config is not None:
            config = struct_pb2.Struct()
            try:
                json_format.ParseDict(dict(engine_config), config)
            except (json_format.ParseError, TypeError, ValueError) as exc:
                raise errors.InvalidArgumentError(
                    f"engine_config must be a JSON object: {exc}") from None
            request.engine.config.CopyFrom(config)
        else:
            raise errors.InvalidArgumentError("analyze needs a bot or an engine configuration")
        time_ms = limits.time_ms if limits is not None else 0
        timeout = max(self.timeout_s, time_ms / 1000.0) + ANALYZE_MARGIN_S
        return self._call("engine", self._engine().Analyze, request, timeout)


def pool_size(rated: ladder_pb2.Ratings, row: ladder_pb2.RatingRow) -> int:
    """How many bots the pool of ``row`` holds in the list ``rated``."""
    return sum(1 for other in rated.rows if other.pool == row.pool)
