"""Idempotency keys of create calls: a client that retries a create after a timeout gets
what its first call made, not a second one.

A create script is wrapped by :func:`idempotent`: its first key is the request's key
(``keys.request``; empty for a call without one), its first two arguments the new object's
id and the key's lifetime. If the key names an object already, the script returns that id
and creates nothing; otherwise it records the new id under the key, runs the body (whose
own keys and arguments follow) and returns the new id.
"""

from __future__ import annotations

from typing import Any

import redis
from redis.commands.core import Script

REQUEST_TTL_S = 24 * 3600

_MADE = """
if KEYS[1] ~= '' then
  local made = redis.call('GET', KEYS[1])
  if made then return made end
end
"""
_RECORD = """
if KEYS[1] ~= '' then redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2]) end
"""
REFUSED = "!refused"  # what a guard returns to refuse a create: nothing is written


def idempotent(client: redis.Redis, body: str, guard: str = "") -> Script:
    """A create script: ``body`` (with KEYS from 2 and ARGV from 3) runs once per request.
    ``guard`` (Lua, the same KEYS and ARGV) runs first for a request not yet served and
    may ``return '!refused'`` (``REFUSED``): then nothing is written, not even the
    request's key, so a retry is judged again."""
    return client.register_script(_MADE + guard + _RECORD + body + "\nreturn ARGV[1]\n")


def create_once(script: Script, request_key: str, new_id: str, keys: list[str],
                args: list[Any]) -> str:
    """Run a create script; returns ``new_id``, the id an earlier request made, or
    ``REFUSED`` if its guard refused."""
    made = script(keys=[request_key, *keys], args=[new_id, REQUEST_TTL_S, *args])
    return made.decode() if isinstance(made, bytes) else str(made)


def made_for(client: redis.Redis, request_key: str) -> str:
    """The id the request with this key made ("" if none)."""
    made: Any = client.get(request_key)
    return made.decode() if made else ""
