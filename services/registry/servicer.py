"""The BotRegistry RPCs: authorize, validate with ``arena.bots``, store with BotStore.

Order of checks in every mutating RPC: authenticated (the interceptor), the bot exists
(NOT_FOUND), the caller may touch it (PERMISSION_DENIED), then the spec is valid
(INVALID_ARGUMENT), so a stranger learns nothing from validation messages.

An update whose spec equals the latest version's (same content hash) changes nothing and
stores nothing: it returns the latest version as it is, so retrying an update, or running
the same `arena bot update` twice, never makes versions that differ only in number.
A registration with a ``request_id`` that the caller's same registration already used
returns the version it registered; the key used again for another one is refused
(ALREADY_EXISTS), as are the referee's and the ladder service's creates
(``protocol/requests.py``).
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Callable
from datetime import UTC, datetime

import grpc
from arena.clients.sdk import ArenaClient
from arena.services.common.auth import Principal, current_principal
from arena.services.common.egress import EgressPolicy, EgressRefused, split_address
from arena.services.common.protocol.bots import BotFilter, BotStore, folded_name
from arena.services.common.protocol.requests import CreateRequest
from arena.services.common.quotas import Quotas, usage_user

from arena.bots import apply_preset, check_spec, content_hash, list_presets, new_version
from arena.bots.spec import config_from_struct
from arena.bots.validation import canonical_address, validate_bot_name
from arena.errors import (
    AlreadyExistsError,
    FailedPreconditionError,
    FieldViolation,
    InvalidArgumentError,
    NotFoundError,
)
from arena.games import game
from arena.protocols.options import catalog_overrides, validate_options
from arena.v1 import bots_pb2, engine_pb2, match_pb2, registry_pb2, registry_pb2_grpc

Offers = Callable[[], list[engine_pb2.EngineOffer]]

log = logging.getLogger(__name__)


class _Unchanged(Exception):  # a signal out of BotStore.append, not an error
    """An update that would store the latest version's spec again."""

    def __init__(self, latest: bots_pb2.BotVersion) -> None:
        super().__init__(latest.spec.name)
        self.latest = latest


@functools.cache
def _presets_by_folded_name() -> dict[str, str]:
    return {folded_name(preset.name): preset.name for preset in list_presets()}


def _keep_presets_names(name: str, from_preset: str, caller: Principal) -> None:
    """Refuse a new bot named as a preset, or folding to a preset's name: `arena play
    --bot NAME` plays the preset, and in ladders and standings such a bot would pass for
    one. An admin may register a preset as the bot of its own name (`make demo` does)."""
    preset = _presets_by_folded_name().get(folded_name(name))
    if preset is None or (caller.is_admin and name == preset == from_preset):
        return
    clash = "is a preset's" if name == preset else f"reads as the preset {preset!r}"
    raise AlreadyExistsError(
        f"the bot name {name!r} {clash} (`arena bot presets`): a preset's name is kept "
        "for the preset, so that no bot passes for one; choose another")


def _require_name(name: str, field: str) -> None:
    violations = validate_bot_name(name, field)
    if violations:
        raise InvalidArgumentError.for_fields(violations)


class BotRegistryServicer(registry_pb2_grpc.BotRegistryServicer):
    """Thin adapter: each method checks, calls the core and the store, returns protobufs."""

    def __init__(self, store: BotStore, quotas: Quotas | None = None,
                 referee: ArenaClient | None = None, egress: EgressPolicy | None = None,
                 offers: Offers = list) -> None:
        self._store = store
        self._offers = offers  # the protocol engines live workers offer now
        self._egress = egress or EgressPolicy()
        self._quotas = quotas or Quotas()
        self._referee = referee  # to cancel a retired bot's matches

    def RegisterBot(
        self, request: registry_pb2.RegisterBotRequest, context: grpc.ServicerContext
    ) -> bots_pb2.BotVersion:
        caller = current_principal()
        self._quotas.spend(caller, "creates_per_minute")
        owner = caller.name
        served = CreateRequest.of("bot", owner, request.request_id, request, "request_id")
        made = self._store.made_for(served) if request.request_id else ""
        if made:  # a retry: its bot, though its engine may no longer be offered, say
            return self._store.get(made, 1)
        spec = request.spec
        if request.from_preset:
            spec = apply_preset(spec, request.from_preset)
        offered = self._offers() if spec.WhichOneof("engine") == "protocol" else []
        spec = self._engine_game(spec, offered)
        check_spec(spec)
        _keep_presets_names(spec.name, request.from_preset, caller)
        spec = self._reachable(spec, offered)
        return self._store.create(new_version(spec, 1, owner, datetime.now(UTC)),
                                  self._bot_bytes(owner), served)

    def GetBot(
        self, request: registry_pb2.GetBotRequest, context: grpc.ServicerContext
    ) -> bots_pb2.BotVersion:
        current_principal()
        _require_name(request.bot.name, "bot.name")
        return self._store.get(request.bot.name, request.bot.version)

    def ListBots(
        self, request: registry_pb2.ListBotsRequest, context: grpc.ServicerContext
    ) -> registry_pb2.ListBotsResponse:
        current_principal()
        where = BotFilter(request.game, request.owner, request.name_prefix,
                          request.include_retired)
        bots, next_token = self._store.list_bots(where, request.page.page_size,
                                            request.page.page_token)
        for bot in bots:  # pictures stay out of lists (GetBot has them): pages stay small,
            bot.avatar_omitted = bool(bot.spec.avatar_png)  # but say there is one
            bot.spec.avatar_png = b""
        return registry_pb2.ListBotsResponse(bots=bots, next_page_token=next_token)

    def UpdateBot(
        self, request: registry_pb2.UpdateBotRequest, context: grpc.ServicerContext
    ) -> bots_pb2.BotVersion:
        principal = current_principal()
        self._quotas.spend(principal, "creates_per_minute")
        _require_name(request.name, "name")
        spec = bots_pb2.BotSpec()
        spec.CopyFrom(request.spec)
        spec.name = spec.name or request.name

        def build(latest: bots_pb2.BotVersion) -> bots_pb2.BotVersion:
            principal.require_owner_or_admin(latest.owner, f"bot {request.name!r}")
            violations = []
            if spec.name != request.name:
                violations.append(FieldViolation("spec.name", "a bot cannot be renamed: "
                                                 f"must be {request.name!r} or empty"))
            if spec.game and spec.game != latest.spec.game:
                violations.append(FieldViolation("spec.game", "a bot cannot change its game"))
            if violations:
                raise InvalidArgumentError.for_fields(violations)
            spec.game = latest.spec.game
            check_spec(spec)
            checked = self._reachable(spec)
            if content_hash(checked) == latest.content_hash:
                raise _Unchanged(latest)
            # The owner stays the bot's creator, also when an admin makes the change.
            return new_version(checked, latest.version + 1, latest.owner, datetime.now(UTC))

        try:
            return self._store.append(request.name, build, self._bot_bytes)
        except _Unchanged as unchanged:
            return unchanged.latest

    def _bot_bytes(self, owner: str) -> int:
        """The owner's ``bot_bytes`` quota for the store (0: none, an admin's)."""
        return self._quotas.of(owner).cap("bot_bytes")

    def RetireBot(
        self, request: registry_pb2.RetireBotRequest, context: grpc.ServicerContext
    ) -> bots_pb2.BotVersion:
        principal = current_principal()
        _require_name(request.name, "name")
        latest = self._store.get(request.name)
        principal.require_owner_or_admin(latest.owner, f"bot {request.name!r}")
        retired = self._store.retire(request.name)
        if request.cancel_matches:
            self._cancel_matches(request.name, principal)
        return retired

    @staticmethod
    def _engine_game(spec: bots_pb2.BotSpec, offered: list[engine_pb2.EngineOffer],
                     ) -> bots_pb2.BotSpec:
        """A protocol engine's new bot with no game plays its engine's game, when the
        engine plays one (the catalog says so); an engine no worker offers, or one that
        plays several games, is a field error naming what to give."""
        if spec.game or spec.WhichOneof("engine") != "protocol":
            return spec
        name = spec.protocol.engine
        games = {g for o in offered if o.name == name for g in o.games}
        if not games:
            raise InvalidArgumentError.for_fields([FieldViolation(
                "spec.protocol.engine", f"no live worker offers engine {name!r} "
                                        "(`arena engine list`)")])
        if len(games) > 1:
            plays = ", ".join(sorted(game(g).name for g in games))
            raise InvalidArgumentError.for_fields([FieldViolation(
                "spec.game", f"engine {name!r} plays {plays}: say which")])
        filled = bots_pb2.BotSpec()
        filled.CopyFrom(spec)
        filled.game = games.pop()
        return filled

    def _reachable(self, spec: bots_pb2.BotSpec,
                   offered: list[engine_pb2.EngineOffer] | None = None) -> bots_pb2.BotSpec:
        """The spec as stored, once the arena can run it: an external bot must be somewhere
        the arena may dial (``egress``), its address kept in one spelling
        (``canonical_address``); a protocol engine must be offered by live workers,
        and its checksum is pinned (the one asked for, or the only one offered)."""
        engine = spec.WhichOneof("engine")
        if engine == "external":
            address = canonical_address(spec.external.address)
            if address != spec.external.address:  # stored in one spelling
                respelled = bots_pb2.BotSpec()
                respelled.CopyFrom(spec)
                respelled.external.address = address
                spec = respelled
            try:
                self._egress.check(*split_address(address))
            except (EgressRefused, ValueError) as exc:
                if isinstance(exc, EgressRefused):
                    log.info("refused external bot address: %s", exc.detail)
                raise InvalidArgumentError.for_fields(
                    [FieldViolation("spec.external.address", str(exc))]) from None
        if engine != "protocol":
            return spec
        offer = self._offer(spec.game, spec.protocol,
                            self._offers() if offered is None else offered)
        options = config_from_struct(spec.protocol.options)
        violations = validate_options(offer.protocol, options, "spec.protocol.options") or \
            catalog_overrides(config_from_struct(offer.options), options, offer.name,
                              "spec.protocol.options")
        if violations:
            raise InvalidArgumentError.for_fields(violations)
        pinned = bots_pb2.BotSpec()
        pinned.CopyFrom(spec)
        pinned.protocol.checksum = offer.checksum
        return pinned

    @staticmethod
    def _offer(kind: int, wanted: bots_pb2.ProtocolEngine,
               offered: list[engine_pb2.EngineOffer]) -> engine_pb2.EngineOffer:
        """The live match workers' build of the wanted engine among ``offered`` (raises a
        field error); one only analysts offer cannot play a match."""
        offered = [o for o in offered if o.workers > 0]
        builds = [o for o in offered if o.name == wanted.engine]
        if not builds:
            names = sorted({o.name for o in offered if kind in o.games})
            raise InvalidArgumentError.for_fields([FieldViolation(
                "spec.protocol.engine",
                f"no live worker offers engine {wanted.engine!r} (offered for "
                f"{game(kind).name}: {', '.join(names) or 'none'}; `arena engine list`)")])
        if kind not in builds[0].games:
            plays = ", ".join(game(g).name for g in builds[0].games)
            raise InvalidArgumentError.for_fields([FieldViolation(
                "spec.protocol.engine",
                f"engine {wanted.engine!r} plays {plays}, not {game(kind).name}")])
        if wanted.checksum:
            for offer in builds:
                if offer.checksum == wanted.checksum:
                    return offer
            raise InvalidArgumentError.for_fields([FieldViolation(
                "spec.protocol.checksum",
                f"no live worker offers engine {wanted.engine!r} with this checksum "
                f"(offered: {_builds(builds)})")])
        if len(builds) > 1:
            raise InvalidArgumentError.for_fields([FieldViolation(
                "spec.protocol.checksum",
                f"live workers offer {len(builds)} builds of engine {wanted.engine!r} "
                f"({_builds(builds)}): name one")])
        return builds[0]

    def _cancel_matches(self, name: str, principal: Principal) -> None:
        """Cancel the bot's pending and running matches through the referee, as the user
        who retires it: in a match someone else created that withdraws the bot (a loss).
        The pending ones first: a running one cancelled frees a place of its owner's
        running matches, which a pending one of the bot would take (read as pending
        after that, it was running, and played on with the retired bot); one that starts
        while they are cancelled is among the running, read after them."""
        if self._referee is None:
            raise FailedPreconditionError("this registry knows no referee (ARENA_REFEREE) to "
                                          "cancel matches with")
        for status in (match_pb2.MATCH_STATUS_PENDING, match_pb2.MATCH_STATUS_RUNNING):
            for match in list(self._referee.iter_matches(bot_name=name, status=status,
                                                         summary_only=True)):
                with contextlib.suppress(FailedPreconditionError, NotFoundError):
                    self._referee.cancel_match(
                        match.id, f"bot {name} retired",
                        as_user="" if principal.is_admin else principal.name)

    def ListEngines(
        self, request: registry_pb2.ListEnginesRequest, context: grpc.ServicerContext
    ) -> registry_pb2.ListEnginesResponse:
        current_principal()
        if request.game:
            game(request.game)  # an unknown game is INVALID_ARGUMENT
        return registry_pb2.ListEnginesResponse(
            engines=[o for o in self._offers() if not request.game or request.game in o.games])

    def ListPresets(
        self, request: registry_pb2.ListPresetsRequest, context: grpc.ServicerContext
    ) -> registry_pb2.ListPresetsResponse:
        current_principal()
        return registry_pb2.ListPresetsResponse(presets=list_presets(request.game))

    def GetUsage(
        self, request: registry_pb2.GetBotUsageRequest, context: grpc.ServicerContext
    ) -> registry_pb2.BotUsage:
        """What a user's bot versions take of their ``bot_bytes`` quota: the caller's, or
        (admins) anyone's; a user with no bots uses nothing."""
        user = usage_user(current_principal(), request.user)
        return registry_pb2.BotUsage(user=user, bot_bytes=self._store.stored_bytes(user),
                                     bot_bytes_limit=self._bot_bytes(user))


def _builds(builds: list[engine_pb2.EngineOffer]) -> str:
    return ", ".join(f"{o.checksum} on {o.workers} worker{'s' if o.workers != 1 else ''}"
                     for o in builds)
