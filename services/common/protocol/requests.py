"""Idempotency keys of create calls: a client that retries a create after a timeout gets
what its first call made, not a second one; a key used again for a different request is
refused (AlreadyExistsError), not answered with what the first request made.

A create script is wrapped by :func:`idempotent`: its first key is the request's key
(``keys.request``; empty for a call without one), its first two arguments the new object's
id and what to record under the key (``CreateRequest.record``: that id and the request's
digest). If the key holds a record already, the script returns it after '=' and creates
nothing; otherwise it records the new one, runs the body (whose own keys and arguments
follow) and returns the new id after '+'. The marks keep both apart from a guard's refusal
and from each other, whatever the ids (a bot's name may start with '!'). The record and the
objects are written in one script, so no retry can find one without the other.

A key recorded before digests were kept holds the id alone: it serves any request with
that key until it expires (``REQUEST_TTL_S``), as every key did then.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import redis
from arena.services.common.protocol import keys
from arena.services.common.protocol.keys import RequestKind
from google.protobuf.message import Message
from redis.commands.core import Script

from arena.errors import AlreadyExistsError, FieldViolation, InvalidArgumentError

REQUEST_TTL_S = 24 * 3600
MAX_REQUEST_ID_CHARS = 128

_MADE = """
if KEYS[1] ~= '' then
  local made = redis.call('GET', KEYS[1])
  if made then return '=' .. made end
end
"""
_RECORD = f"""
if KEYS[1] ~= '' then redis.call('SET', KEYS[1], ARGV[2], 'EX', {REQUEST_TTL_S}) end
"""
REFUSED = "!refused"  # what a guard returns to refuse a create: nothing is written

# What a key's earlier request did, in the refusal of a different one.
_MADE_WHAT = {"match": "made match", "match-import": "imported match",
              "ladder": "made ladder", "bot": "registered bot"}


def request_digest(message: Message, *left_out: str) -> str:
    """What a request asked for, as a digest of ``message`` (deterministically serialized)
    without the fields ``left_out`` (the key itself, and whatever the key already scopes):
    a retry has the same digest, a different request another."""
    asked = type(message)()
    asked.CopyFrom(message)
    for field in left_out:
        asked.ClearField(field)
    return hashlib.sha256(asked.SerializeToString(deterministic=True)).hexdigest()


@dataclass(frozen=True)
class CreateRequest:
    """A create call's idempotency key (``request_id``, per owner; "" for a call without
    one) and the digest of what it asked for (``request_digest``)."""

    kind: RequestKind
    owner: str
    request_id: str
    digest: str

    @classmethod
    def of(cls, kind: RequestKind, owner: str, request_id: str, asked: Message,
           *left_out: str) -> CreateRequest:
        """The request of a create call asking for ``asked`` (without the fields
        ``left_out``: see ``request_digest``); InvalidArgumentError for a key too long.
        Without a key nothing is compared, so nothing is digested (an import's record
        may be a megabyte)."""
        if len(request_id) > MAX_REQUEST_ID_CHARS:
            raise InvalidArgumentError.for_fields([FieldViolation(
                "request_id", f"must be at most {MAX_REQUEST_ID_CHARS} characters")])
        digest = request_digest(asked, *left_out) if request_id else ""
        return cls(kind, owner, request_id, digest)

    @property
    def key(self) -> str:
        return keys.request(self.kind, self.owner, self.request_id) if self.request_id else ""

    def record(self, new_id: str) -> str:
        """What the key holds once the request made ``new_id``."""
        return f"{new_id} {self.digest}"

    def made(self, record: str) -> str:
        """The id in a key's ``record``, if this request is the one that made it;
        AlreadyExistsError (nothing created) if another request with the same key did."""
        made, _, digest = record.rpartition(" ")
        if not made:  # recorded before digests were kept: the id alone
            return record
        if digest != self.digest:
            raise AlreadyExistsError(
                f"request_id {self.request_id!r} already {_MADE_WHAT[self.kind]} {made} "
                "with different settings; use a new request_id")
        return made


def idempotent(client: redis.Redis, body: str, guard: str = "") -> Script:
    """A create script: ``body`` (with KEYS from 2 and ARGV from 3) runs once per request.
    ``guard`` (Lua, the same KEYS and ARGV) runs first for a request not yet served and
    may refuse it by returning a string that starts with '!' (``REFUSED``, or a reason of
    its own): then nothing is written, not even the request's key, so a retry is judged
    again."""
    return client.register_script(_MADE + guard + _RECORD + body + "\nreturn '+' .. ARGV[1]\n")


def create_once(script: Script, request: CreateRequest | None, new_id: str, keys: list[str],
                args: list[Any]) -> str:
    """Run a create script; returns ``new_id``, the id the same request made earlier, or
    the guard's refusal ('!...'). AlreadyExistsError if a different request made
    something with this key."""
    return create_or_find(script, request, new_id, keys, args)[0]


def create_or_find(script: Script, request: CreateRequest | None, new_id: str,
                   keys: list[str], args: list[Any]) -> tuple[str, bool]:
    """``create_once``, and whether this call created it: for a store whose new id may be
    the earlier one's (a bot's name)."""
    key, record = (request.key, request.record(new_id)) if request else ("", "")
    answer = script(keys=[key, *keys], args=[new_id, record, *args])
    answer = answer.decode() if isinstance(answer, bytes) else str(answer)
    said, made = answer[:1], answer[1:]
    if said == "+":
        return made, True
    if said == "=" and request is not None:
        return request.made(made), False
    return answer, False  # the guard's refusal


def made_for(client: redis.Redis, request: CreateRequest) -> str:
    """The id the same request made ("" if none); AlreadyExistsError if a different request
    made something with this key."""
    record: Any = client.get(request.key)
    return request.made(record.decode()) if record else ""
