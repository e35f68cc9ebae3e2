"""What one user may ask of a shared arena: the quotas, per role and per user.

Every limit is refused as RESOURCE_EXHAUSTED naming the limit and its value, checked
before any work is done. Admins have no limits. The configuration (``quotas``, JSON, or
``quotas_file``) overrides the defaults below for every user and for named users::

    {"user": {"running_matches": 2}, "users": {"alice": {"move_time_ms": 120000}}}

How the limits are kept:

* ``running_matches``: a referee admits a user's match only while fewer of that user's
  matches run; the others wait, parked, in the order they were made (``Ledger.admit``), so
  one user's flood of matches does not all run at once. A running match has at most one
  move in flight, but that bounds neither how long a move holds a worker nor the user's
  part of a small pool: the workers share themselves between the owners who want one
  (``services/worker/fair.py``; ``docs/delivery.md``).
* ``queued_matches``: unfinished matches (pending, parked or running) per user.
* ``running_ladders``: ladders (and version tests) running at once per user, kept by the
  ladder store's scripts as ladders start and end; one more is refused until one ends.
  A user's waiting ladders cost the service little (``Ladders.schedule_each``), but every
  running ladder is read at each reconcile round and holds its configuration.
* ``ladder_games``, ``move_time_ms``, ``game_time_ms``, ``tree_nodes``, ``analyze_time_ms``:
  checked on the request.
* ``creates_per_minute`` (CreateMatch, CreateLadder, RegisterBot, UpdateBot, ImportMatch)
  and ``analyses_per_minute`` (Analyze): per user and service, a fixed one-minute window.
* ``analyses_at_once``: Analyze calls running or waiting for a slot at once, per
  analysis worker (slots go to waiting calls in the order they came).
* ``open_streams``: live streams (WatchMatch, WatchLadder) open at once, per service
  process; each holds one of the server's threads (``server.Gate``).
* ``calls_at_once``: the other calls running at once, per service process; more wait for
  their turn, in the order they came, up to four times as many (``server.Gate``). A
  process's calls share one CPU: this bounds one user's part of it, whatever they ask.
* ``bot_bytes``: the bytes of every bot version a user owns, avatars included (each
  version keeps its own), kept by the registry's store scripts.
* ``match_bytes``: the bytes of every match a user owns and has not deleted, played or
  imported (its header, moves and events), kept by the referee's store and ledger scripts
  as they write. A new match or import is refused when it would pass the limit; a match
  made while there was room is cancelled at its start if the limit is taken by then
  (``TERMINATION_NOT_STARTED``); one started plays to its end, so a user passes the limit
  by at most what their running matches store.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import redis
from arena.services.common.auth import Principal, TokenStore
from arena.services.common.config import Config
from arena.services.common.protocol.limits import RateLimiter

from arena.documents import read_text_document
from arena.errors import (
    FieldViolation,
    InvalidArgumentError,
    PermissionDeniedError,
    ResourceExhaustedError,
)
from arena.text import shown, unprintable

UNLIMITED_VALUE = 2**31 - 1
# Of a user named in a GetUsage call by an admin: names come from the token configuration,
# and no answer echoes a megabyte of one back.
MAX_USER_CHARS = 200


@dataclass(frozen=True)
class Quota:
    """One user's limits (see the module docstring)."""

    running_matches: int = 4
    queued_matches: int = 200
    running_ladders: int = 50
    ladder_games: int = 5000
    move_time_ms: int = 60_000
    game_time_ms: int = 3_600_000
    tree_nodes: int = 50_000
    analyze_time_ms: int = 15_000
    creates_per_minute: int = 600
    analyses_per_minute: int = 60
    open_streams: int = 20
    analyses_at_once: int = 1
    calls_at_once: int = 2
    bot_bytes: int = 64 * 1024 * 1024
    match_bytes: int = 256 * 1024 * 1024

    def cap(self, name: str) -> int:
        """The limit ``name`` as the store scripts and the admission take it: 0 for none."""
        limit = int(getattr(self, name))
        return 0 if limit >= UNLIMITED_VALUE else limit

    def check(self, name: str, asked: int) -> None:
        """Refuse ``asked`` over the limit ``name`` (none at ``UNLIMITED_VALUE``: an int64
        request such as a game budget may ask for more)."""
        limit = int(getattr(self, name))
        if asked > limit and limit < UNLIMITED_VALUE:
            raise ResourceExhaustedError(f"quota {name} is {limit}; the request asks for "
                                         f"{asked}", name)


UNLIMITED = Quota(**{f.name: UNLIMITED_VALUE for f in dataclasses.fields(Quota)})


class Quotas:
    """The quotas of every user, and the rate limits kept in Redis."""

    def __init__(self, user: Quota | None = None, overrides: Mapping[str, Quota] | None = None,
                 admins: frozenset[str] = frozenset(), client: redis.Redis | None = None,
                 service: str = "") -> None:
        self.user, self.overrides, self.admins = user or Quota(), dict(overrides or {}), admins
        self._rates = RateLimiter(client, service) if client is not None else None

    @classmethod
    def from_config(cls, config: Config, client: redis.Redis | None = None) -> Quotas:
        raw = config.quotas or (read_text_document(config.quotas_file, "the quotas file "
                                                   "(ARENA_QUOTAS_FILE)")
                                if config.quotas_file else "{}")
        try:
            data = json.loads(raw)
            if not isinstance(data, dict):
                raise ValueError('the quotas are a JSON object: {"user": {...}, "users": '
                                 '{"NAME": {...}}}')
            unknown = sorted(set(data) - {"user", "users"})
            if unknown:  # a misspelt "user" applied no quota at all
                raise ValueError(f"unknown key {unknown[0]!r}; known: 'user', 'users'")
            users = data.get("users", {})
            if not isinstance(users, dict):
                raise ValueError(f"'users' is an object of quotas by user name, got {users!r}")
            user = _quota(Quota(), data.get("user", {}))
            overrides = {str(name): _quota(user, values) for name, values in users.items()}
        except (ValueError, TypeError, AttributeError) as exc:
            raise ValueError(f"bad quotas (ARENA_QUOTAS / ARENA_QUOTAS_FILE): {exc}") from None
        admins = frozenset(p.name for p in TokenStore.from_config(config).principals()
                           if p.is_admin) if config.auth else frozenset({"anonymous"})
        return cls(user, overrides, admins, client, config.role)

    def of(self, name: str) -> Quota:
        """The quota of the user called ``name`` (an owner of matches or ladders)."""
        if name in self.admins:
            return UNLIMITED
        return self.overrides.get(name, self.user)

    def for_caller(self, principal: Principal) -> Quota:
        return UNLIMITED if principal.is_admin else self.of(principal.name)

    def spend(self, principal: Principal, rate: str) -> None:
        """Count one call against the caller's per-minute ``rate`` (refused past it)."""
        limit = int(getattr(self.for_caller(principal), rate))
        if self._rates is None or limit >= UNLIMITED_VALUE:
            return
        used = self._rates.hit(principal.name, rate)
        if used > limit:
            raise ResourceExhaustedError(
                f"quota {rate} is {limit}; retry in {self._rates.retry_after_s()} s", rate)


def usage_user(caller: Principal, user: str) -> str:
    """Whose usage a GetUsage call (Referee's, BotRegistry's) reads: ``user``, or the
    caller's own when it is empty. Another user's is for admins only (PERMISSION_DENIED),
    named in at most ``MAX_USER_CHARS`` printable characters (INVALID_ARGUMENT)."""
    user = user or caller.name
    if user != caller.name and not caller.is_admin:
        raise PermissionDeniedError(f"{caller.name} may not read the usage of {shown(user)}")
    if user != caller.name and (len(user) > MAX_USER_CHARS or unprintable(user)):
        raise InvalidArgumentError.for_fields([FieldViolation(
            "user", f"a user's name: at most {MAX_USER_CHARS} printable characters, "
                    f"got {shown(user)}")])
    return user


def _quota(base: Quota, values: Any) -> Quota:
    if not isinstance(values, dict):
        raise TypeError(f"a quota must be an object, got {values!r}")
    known = {f.name for f in dataclasses.fields(Quota)}
    unknown = set(values) - known
    if "import_bytes" in unknown:
        raise ValueError("quota 'import_bytes' is now 'match_bytes': it counts played "
                         "matches too")
    if unknown:
        raise ValueError(f"unknown quota {sorted(unknown)[0]!r}; known: {', '.join(sorted(known))}")
    for key, value in values.items():
        # 0 is no limit to the store scripts (``Quota.cap``): a quota of 0, meant to allow
        # nothing, allowed everything; and a number past the scripts' 32 bits was none.
        if isinstance(value, bool) or not isinstance(value, int) or not (
                1 <= value <= UNLIMITED_VALUE):
            raise ValueError(f"quota {key} must be an integer in 1..{UNLIMITED_VALUE} "
                             f"({UNLIMITED_VALUE}: no limit), got {value!r}")
    return dataclasses.replace(base, **values)
