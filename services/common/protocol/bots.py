"""Bot versions in the durable Redis: immutable, atomically created and appended.

Key layout: ``keys.bot_version`` (``BotVersion`` bytes, written once), ``keys.bot`` (the
latest version number, the retired flag), ``keys.BOT_NAMES`` and ``keys.BOT_NAME_FOLDS``.
Only the registry reads or writes them; every other service asks the registry (GetBot).

Creating and appending are Lua scripts, so a check and its writes are one atomic step:
of N concurrent registrations of one name exactly one finds the name free.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import redis
from arena.services.common import paging
from arena.services.common.protocol import keys
from arena.services.common.protocol.keys import BOT_NAMES as NAMES_KEY
from arena.services.common.protocol.keys import bot_version as version_key
from arena.services.common.protocol.limits import FITS_LUA, counted_bytes, over_bytes
from arena.services.common.protocol.requests import (
    CreateRequest,
    create_or_find,
    idempotent,
    made_for,
)

from arena.errors import (
    AlreadyExistsError,
    FailedPreconditionError,
    FieldViolation,
    InvalidArgumentError,
    NotFoundError,
    ResourceExhaustedError,
)
from arena.v1 import bots_pb2, common_pb2

OWNER = "registry"

# Both count the payload's bytes against its owner's counter, and refuse (_OVER, -3) when
# the owner's limit (0: none) would be passed, before anything is written.

# (idempotent, the name as the new id) KEYS: latest, version 1, names, owner's bytes,
# folded names. ARGV: payload, limit, folded name. Refuses with _TAKEN, _LOOKALIKE
# (another name folds the same) or _OVER.
_TAKEN, _LOOKALIKE, _OVER = "!taken", "!lookalike", "!over"
_CREATE_GUARD = FITS_LUA + f"""
if redis.call('EXISTS', KEYS[2]) == 1 then return '{_TAKEN}' end
local like = redis.call('HGET', KEYS[6], ARGV[5])
if like and like ~= ARGV[1] then return '{_LOOKALIKE}' end
if not fits(KEYS[5], string.len(ARGV[3]), tonumber(ARGV[4])) then return '{_OVER}' end
"""
_CREATE = """
redis.call('SET', KEYS[2], 1)
redis.call('SET', KEYS[3], ARGV[3])
redis.call('ZADD', KEYS[4], 0, ARGV[1])
redis.call('HSET', KEYS[6], ARGV[5], ARGV[1])
redis.call('INCRBY', KEYS[5], string.len(ARGV[3]))
"""

# KEYS: latest, new version, retired, owner's bytes. ARGV: the version the caller built
# on, payload, limit. Returns 1 done, 0 someone else appended first, -1 no such bot,
# -2 retired, -3 over the owner's limit.
_APPEND = FITS_LUA + """
local latest = redis.call('GET', KEYS[1])
if not latest then return -1 end
if redis.call('EXISTS', KEYS[3]) == 1 then return -2 end
if tonumber(latest) ~= tonumber(ARGV[1]) then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
if not fits(KEYS[4], string.len(ARGV[2]), tonumber(ARGV[3])) then return -3 end
redis.call('SET', KEYS[2], ARGV[2])
redis.call('SET', KEYS[1], tonumber(ARGV[1]) + 1)
redis.call('INCRBY', KEYS[4], string.len(ARGV[2]))
return 1
"""

# KEYS: latest, retired. Returns 1, or -1 if there is no such bot.
_RETIRE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
redis.call('SET', KEYS[2], '1')
return 1
"""

# What a retired bot keeps and refuses, said wherever its name is refused.
RETIRED = ("retired (a retired bot keeps its name and its history, and takes no new "
           "version: register the new one under another name)")


def folded_name(name: str) -> str:
    """The form two names share when a reader cannot tell them apart: compatibility
    characters made plain (full-width letters, ligatures), case folded, and every dash
    (``‐``, ``–``, ``−``...) a hyphen-minus."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    return "".join("-" if unicodedata.category(char) == "Pd" or char == "\u2212" else char
                   for char in folded)


@dataclass(frozen=True)
class BotFilter:
    """What ListBots selects: zero values select everything."""

    game: common_pb2.GameKind.ValueType = common_pb2.GAME_KIND_UNSPECIFIED
    owner: str = ""
    name_prefix: str = ""
    include_retired: bool = False

    def accepts(self, bot: bots_pb2.BotVersion) -> bool:
        return (
            (not self.game or bot.spec.game == self.game)
            and (not self.owner or bot.owner == self.owner)
            and (self.include_retired or not bot.retired)
        )


class BotStore:
    """Reads and writes bot versions; every method is safe to call concurrently."""

    def __init__(self, client: redis.Redis) -> None:
        self._redis = _binary(client)
        client = self._redis
        self._create = idempotent(client, _CREATE, _CREATE_GUARD)
        self._append = client.register_script(_APPEND)
        self._retire = client.register_script(_RETIRE)
        self._folded = False

    def get(self, name: str, version: int = 0) -> bots_pb2.BotVersion:
        """One version (0 = the latest), with ``retired`` telling the bot's current state."""
        if version < 0:
            raise InvalidArgumentError.for_fields(
                [FieldViolation("bot.version", f"must be 0 (latest) or positive, got {version}")])
        pipe = self._redis.pipeline(transaction=False)
        pipe.get(keys.bot(name, "latest"))
        pipe.exists(keys.bot(name, "retired"))
        latest, retired = pipe.execute()
        if latest is None:
            raise NotFoundError(f"no bot named {name!r}")
        wanted = version or int(latest)
        payload = self._redis.get(version_key(name, wanted))
        if not isinstance(payload, bytes):
            raise NotFoundError(f"bot {name!r} has no version {wanted} (latest is {int(latest)})")
        return _parse(payload, bool(retired))

    def made_for(self, request: CreateRequest) -> str:
        """The name of the bot the same register request made ("" if none);
        AlreadyExistsError if a different request used its key."""
        return made_for(self._redis, request)

    def create(self, bot: bots_pb2.BotVersion, limit: int = 0,
               request: CreateRequest | None = None) -> bots_pb2.BotVersion:
        """Store version 1 of a new bot, or return the version 1 the same ``request``
        registered earlier; AlreadyExistsError if the name is taken (or a different
        request used the key), ResourceExhaustedError if its owner's versions would pass
        ``limit`` bytes (0: no limit)."""
        name, payload = bot.spec.name, bot.SerializeToString()
        self._fold_names_once()
        touched = [keys.bot(name, "latest"), version_key(name, 1), NAMES_KEY,
                   keys.owner_bot_bytes(bot.owner), keys.BOT_NAME_FOLDS]
        made, created = create_or_find(self._create, request, name, touched,
                                       [payload, limit, folded_name(name)])
        if made == _TAKEN:
            raise AlreadyExistsError(f"a bot named {name!r} already exists{self._whose(name)}")
        if made == _LOOKALIKE:
            like = self._redis.hget(keys.BOT_NAME_FOLDS, folded_name(name))
            other = like.decode() if isinstance(like, bytes) else str(like)
            raise AlreadyExistsError(
                f"the bot name {name!r} reads as {other!r}{self._whose(other)}: names that "
                "differ only in case, in the width of their characters or in their dashes are "
                "one name; choose another")
        if made == _OVER:
            raise self._over(bot.owner, len(payload), limit)
        return bot if created else self.get(made, 1)

    def _fold_names_once(self) -> None:
        """Fold the names of the bots registered before names were folded (once per store;
        HSETNX keeps what is there, so replicas doing it at once agree)."""
        if self._folded:
            return
        pipe = self._redis.pipeline(transaction=False)
        for raw in self._redis.zrange(NAMES_KEY, 0, -1):
            name = raw.decode() if isinstance(raw, bytes) else str(raw)
            pipe.hsetnx(keys.BOT_NAME_FOLDS, folded_name(name), name)
        pipe.execute()
        self._folded = True

    def _whose(self, name: str) -> str:
        """', owned by OWNER' for a taken name (owners are public, as in every listing):
        names are shared by all users, so the one who asked learns whether it is theirs."""
        try:
            bot = self.get(name)
        except NotFoundError:  # deleted since: nothing to add
            return ""
        return f", owned by {bot.owner}" + (f" and {RETIRED}" if bot.retired else "")

    def stored_bytes(self, owner: str) -> int:
        """What ``owner``'s bot versions take (their ``bot_bytes`` counter)."""
        return counted_bytes(self._redis, keys.owner_bot_bytes(owner))

    def _over(self, owner: str, size: int, limit: int) -> ResourceExhaustedError:
        return over_bytes(self._redis, keys.owner_bot_bytes(owner), "bot_bytes", limit, owner,
                          "bot versions", size, "an avatar counts in every version")

    def append(
        self, name: str, build: Callable[[bots_pb2.BotVersion], bots_pb2.BotVersion],
        limit_of: Callable[[str], int] = lambda owner: 0,
    ) -> bots_pb2.BotVersion:
        """Add the version ``build(latest)`` returns, atomically after ``latest``, if its
        owner's versions stay within ``limit_of(owner)`` bytes (0: no limit).

        ``build`` may raise (permission, validation) and is called again if another
        update landed in between, so each new version is built on the one it follows.
        """
        while True:
            latest = self.get(name)
            if latest.retired:
                raise FailedPreconditionError(f"bot {name!r} is {RETIRED}")
            new = build(latest)
            new.version = latest.version + 1
            touched = [keys.bot(name, "latest"), version_key(name, new.version),
                       keys.bot(name, "retired"), keys.owner_bot_bytes(new.owner)]
            payload, limit = new.SerializeToString(), limit_of(new.owner)
            outcome = int(self._append(keys=touched, args=[latest.version, payload, limit]))
            if outcome == 1:
                return new
            if outcome == -3:
                raise self._over(new.owner, len(payload), limit)
            if outcome == -1:
                raise NotFoundError(f"no bot named {name!r}")
            if outcome == -2:
                raise FailedPreconditionError(f"bot {name!r} is {RETIRED}")

    def retire(self, name: str) -> bots_pb2.BotVersion:
        """Mark the bot retired (idempotent); its versions stay readable."""
        if int(self._retire(keys=[keys.bot(name, "latest"), keys.bot(name, "retired")])) == -1:
            raise NotFoundError(f"no bot named {name!r}")
        return self.get(name)

    def list_bots(
        self, where: BotFilter, page_size: int = 0, page_token: str = ""
    ) -> tuple[list[bots_pb2.BotVersion], str]:
        """Latest versions in name order, and the token of the next page ("" at the end)."""
        size = paging.page_size(page_size)
        after = paging.decode_page_token(page_token)
        found: list[bots_pb2.BotVersion] = []
        for names in self._name_batches(where.name_prefix, after, max(size + 1, 32)):
            for bot in self._latest_many(names):
                if where.accepts(bot):
                    found.append(bot)
                    if len(found) > size:
                        return found[:size], paging.encode_page_token(found[size - 1].spec.name)
        return found, ""

    def _name_batches(self, prefix: str, after: str, batch: int) -> Iterator[list[str]]:
        """Names in byte order, with ``prefix``, strictly after ``after``, a batch at a time."""
        low = prefix.encode()
        # 0xFF never occurs in UTF-8, so every name with the prefix sorts below this bound.
        stop = b"[" + low + b"\xff" if prefix else b"+"
        cursor = after.encode()
        while True:
            start = b"(" + cursor if cursor and cursor >= low else b"[" + low
            raw = self._redis.zrangebylex(NAMES_KEY, start, stop, start=0, num=batch)
            if not raw:
                return
            names = [item.decode() if isinstance(item, bytes) else item for item in raw]
            yield names
            cursor = names[-1].encode()

    def _latest_many(self, names: list[str]) -> list[bots_pb2.BotVersion]:
        """The latest versions of ``names`` in two round trips (missing names skipped)."""
        pipe = self._redis.pipeline(transaction=False)
        for name in names:
            pipe.get(keys.bot(name, "latest"))
            pipe.exists(keys.bot(name, "retired"))
        replies = pipe.execute()
        states = [(name, replies[2 * i], bool(replies[2 * i + 1]))
                  for i, name in enumerate(names) if replies[2 * i] is not None]
        for name, latest, _retired in states:
            pipe.get(version_key(name, int(latest)))
        payloads = pipe.execute()
        return [_parse(payload, retired)
                for (_name, _latest, retired), payload in zip(states, payloads, strict=True)
                if isinstance(payload, bytes)]


def _binary(client: redis.Redis) -> redis.Redis:
    """``client``, or a twin on the same server if it decodes replies (payloads are bytes)."""
    pool = client.connection_pool
    if not pool.connection_kwargs.get("decode_responses"):
        return client
    kwargs = {**pool.connection_kwargs, "decode_responses": False}
    return redis.Redis(connection_pool=redis.ConnectionPool(
        connection_class=pool.connection_class, **kwargs))


def _parse(payload: bytes, retired: bool) -> bots_pb2.BotVersion:
    bot = bots_pb2.BotVersion()
    bot.ParseFromString(payload)
    bot.retired = retired
    return bot
