"""How a service calls another: the SDK's client, aimed at the configured addresses.

Services never import each other's code or read each other's keys; when the ladder needs
a match it asks a referee (CreateMatch), when the referee needs a bot it asks the registry
(GetBot). Calls carry this service's token (``Config.peer_token``), a deadline, and gRPC's
own retry of idempotent reads, exactly as any client's.
"""

from __future__ import annotations

import threading

from arena.clients.sdk import ArenaClient, StackAddresses
from arena.services.common.config import Config

from arena.errors import FailedPreconditionError
from arena.games import GAMES, game
from arena.v1 import bots_pb2, common_pb2

PEER_TIMEOUT_S = 10.0


def peer_client(config: Config, timeout_s: float = PEER_TIMEOUT_S) -> ArenaClient:
    tls = config.tls_ca_file  # set: call the others over TLS, presenting our certificate
    addresses = StackAddresses(registry=config.registry, referee=config.referee,
                               ladder=config.ladder, engine=config.engine,
                               token=config.peer_token, ca_file=tls,
                               cert_file=config.tls_cert_file if tls else "",
                               key_file=config.tls_key_file if tls else "")
    return ArenaClient(addresses=addresses, timeout_s=timeout_s)


class BotVersions:
    """Bot versions from the registry, cached: a version never changes once registered.

    ``resolve`` asks the registry every time (a bot's latest version and whether it is
    retired do change); ``get`` of an exact version is asked once per process.
    """

    def __init__(self, client: ArenaClient) -> None:
        self._client = client
        self._cache: dict[tuple[str, int], bots_pb2.BotVersion] = {}
        self._lock = threading.Lock()

    def get(self, ref: common_pb2.BotRef) -> bots_pb2.BotVersion:
        key = (ref.name, ref.version)
        with self._lock:
            found = self._cache.get(key)
        if found is None or not ref.version:
            found = self._client.get_bot(ref.name, ref.version)
            with self._lock:
                self._cache[(ref.name, found.version)] = found
        return found

    def unplayable(self, bot: bots_pb2.BotVersion) -> str:
        """Why no match can play ``bot`` now, naming it: a protocol bot whose pinned
        engine build no live match worker offers (the workers' catalog lost it, or its
        binary changed), whose moves would wait for ever. "" if it can be played."""
        if bot.spec.WhichOneof("engine") != "protocol":
            return ""
        wanted = bot.spec.protocol
        if any(o.name == wanted.engine and o.checksum == wanted.checksum and o.workers
               for o in self._client.list_engines()):
            return ""
        return (f"bot {bot.spec.name!r} v{bot.version} runs protocol engine "
                f"{wanted.engine!r} ({wanted.checksum[:12]}), which no live match worker "
                "offers (`arena engine list`)")

    def resolve(self, ref: common_pb2.BotRef) -> bots_pb2.BotVersion:
        """The exact version ``ref`` names (its latest if unpinned); a retired bot is
        refused whether pinned or not: it enters no new match."""
        bot = self._client.get_bot(ref.name, ref.version)
        if bot.retired:
            raise FailedPreconditionError(f"bot {ref.name!r} is retired")
        with self._lock:
            self._cache[(ref.name, bot.version)] = bot
        return bot


def other_game(bot: bots_pb2.BotVersion, kind: int) -> str:
    """Why ``bot`` cannot play the game of kind ``kind``, naming both games: a field
    violation's text. "" if it can, or if ``kind`` is no game (a violation of its own)."""
    if bot.spec.game == kind or kind not in {g.kind for g in GAMES}:
        return ""
    return f"bot {bot.spec.name!r} plays {game(bot.spec.game).name}, not {game(kind).name}"
