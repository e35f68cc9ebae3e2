"""Matches in the durable Redis: creation (validated), reading, listing, deleting.

Layout (all under ``arena:``):

* ``arena:match:{id}``: the ``Match`` without its moves (config, bots, status, result).
* ``arena:match:{id}:moves``: list of ``MoveRecord`` bytes, index = ply (passes included).
* ``arena:match:{id}:events``: stream of ``MatchEvent`` bytes (what WatchMatch replays).
* ``arena:match:{id}:final``: set once, when the result is written (see ``ledger``).
* ``arena:matches`` and ``arena:matches:{bot|ladder|game}:{value}``: sorted sets of ids,
  all scores 0, so they sort by id; ids start with the creation time in milliseconds,
  so reverse lexical order is newest first and page tokens are plain ids.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import redis
from arena.services.common import paging
from arena.services.referee.delivery import publish_match_job, results_key, started_key
from google.protobuf import timestamp_pb2

from arena.errors import (
    FailedPreconditionError,
    FieldViolation,
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
)
from arena.games import GameError, Position, new_position, position_from_text
from arena.v1 import common_pb2, match_pb2, referee_pb2

GAME_NAMES = {common_pb2.GAME_KIND_OTHELLO: "othello", common_pb2.GAME_KIND_GOMOKU: "gomoku"}
DEFAULT_VARIANT = {"othello": "standard", "gomoku": "freestyle"}
DEFAULT_SIZE = {"othello": 8, "gomoku": 15}
DEFAULT_MOVE_TIME_MS = 1000
MAX_MOVE_TIME_MS = 600_000
MAX_GRACE_MS = 10_000
DEFAULT_TREE_NODES = 2000
MAX_TREE_NODES = 200_000
FINISHED_STATES = (match_pb2.MATCH_STATUS_FINISHED, match_pb2.MATCH_STATUS_CANCELLED)


def match_key(match_id: str) -> str:
    return f"arena:match:{match_id}"


def moves_key(match_id: str) -> str:
    return f"arena:match:{match_id}:moves"


def events_key(match_id: str) -> str:
    return f"arena:match:{match_id}:events"


def final_key(match_id: str) -> str:
    return f"arena:match:{match_id}:final"


ALL_MATCHES = "arena:matches"


def index_keys(match: match_pb2.Match) -> list[str]:
    keys = [ALL_MATCHES, f"arena:matches:bot:{match.black.name}",
            f"arena:matches:game:{match.config.game.kind}"]
    if match.white.name != match.black.name:
        keys.append(f"arena:matches:bot:{match.white.name}")
    if match.config.ladder_id:
        keys.append(f"arena:matches:ladder:{match.config.ladder_id}")
    return keys


def tree_key(match_id: str, ply: int) -> str:
    """Where a ply's search tree lives in the cache Redis."""
    return f"arena:tree:{match_id}:{ply}"


def game_name(kind: common_pb2.GameKind.ValueType) -> str:
    name = GAME_NAMES.get(kind)
    if name is None:
        raise InvalidArgumentError.for_fields(
            [FieldViolation("config.game.kind", "must be GAME_KIND_OTHELLO or GAME_KIND_GOMOKU")])
    return str(name)


def start_position(match: match_pb2.Match) -> Position:
    """The position the bots start from (after the opening)."""
    return position_from_text(game_name(match.config.game.kind), match.start_position)


def new_match_id(now_ms: int | None = None) -> str:
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    return f"{now_ms:013d}-{secrets.token_hex(4)}"


# --- creation ---------------------------------------------------------------------------


def _normalized_game(spec: common_pb2.GameSpec, out: list[FieldViolation]) -> str | None:
    name = GAME_NAMES.get(spec.kind)
    if name is None:
        out.append(FieldViolation("config.game.kind", "must be othello or gomoku"))
        return None
    spec.variant = spec.variant or DEFAULT_VARIANT[name]
    spec.board_size = spec.board_size or DEFAULT_SIZE[name]
    try:
        new_position(name, spec.variant, spec.board_size)
    except GameError as exc:
        out.append(FieldViolation("config.game", str(exc)))
        return None
    return str(name)


def _check_time_control(tc: common_pb2.TimeControl, out: list[FieldViolation]) -> None:
    tc.move_time_ms = tc.move_time_ms or DEFAULT_MOVE_TIME_MS
    if not 1 <= tc.move_time_ms <= MAX_MOVE_TIME_MS:
        out.append(FieldViolation("config.time_control.move_time_ms",
                                  f"must be in 1..{MAX_MOVE_TIME_MS}, got {tc.move_time_ms}"))
    if tc.game_time_ms < 0:
        out.append(FieldViolation("config.time_control.game_time_ms", "must not be negative"))
    if not 0 <= tc.grace_ms <= MAX_GRACE_MS:
        out.append(FieldViolation("config.time_control.grace_ms",
                                  f"must be in 0..{MAX_GRACE_MS}, got {tc.grace_ms}"))


def _start_after_opening(
    config: match_pb2.MatchConfig, game: str, out: list[FieldViolation]
) -> Position | None:
    spec = config.game
    try:
        if config.start_position:
            position = position_from_text(game, config.start_position)
            if position.variant != spec.variant or position.size != spec.board_size:
                out.append(FieldViolation("config.start_position",
                                          f"is not a {spec.variant} {spec.board_size}x"
                                          f"{spec.board_size} position"))
                return None
        else:
            position = new_position(game, spec.variant, spec.board_size)
    except GameError as exc:
        out.append(FieldViolation("config.start_position", str(exc)))
        return None
    for index, move in enumerate(config.opening):
        try:
            position.push(move)
        except GameError as exc:
            out.append(FieldViolation(f"config.opening[{index}]", str(exc)))
            return None
    if position.is_game_over():
        out.append(FieldViolation("config.opening", "leaves no game to play"))
        return None
    return position


def _resolve_bot(
    client: redis.Redis, field: str, ref: common_pb2.BotRef, kind: int, out: list[FieldViolation]
) -> common_pb2.BotRef | None:
    from arena.services.registry.store import BotStore

    if not ref.name:
        out.append(FieldViolation(field, "must name a bot"))
        return None
    try:
        bot = BotStore(client).get(ref.name, ref.version)
    except NotFoundError as exc:
        out.append(FieldViolation(field, str(exc)))
        return None
    if bot.spec.game != kind:
        out.append(FieldViolation(field, f"bot {ref.name!r} does not play this game"))
        return None
    if bot.retired and ref.version == 0:
        raise FailedPreconditionError(f"bot {ref.name!r} is retired")
    return common_pb2.BotRef(name=ref.name, version=bot.version)


def create_match(
    client: redis.Redis, config: match_pb2.MatchConfig, owner: str
) -> match_pb2.Match:
    """Validate ``config``, resolve the bot versions, store the match and queue it."""
    config = match_pb2.MatchConfig.FromString(config.SerializeToString())  # caller's stays put
    violations: list[FieldViolation] = []
    game = _normalized_game(config.game, violations)
    _check_time_control(config.time_control, violations)
    if config.tree_node_budget < 0 or config.tree_node_budget > MAX_TREE_NODES:
        violations.append(FieldViolation("config.tree_node_budget",
                                         f"must be in 0..{MAX_TREE_NODES}"))
    if config.capture_trees and config.tree_node_budget == 0:
        config.tree_node_budget = DEFAULT_TREE_NODES
    position = _start_after_opening(config, game, violations) if game else None
    black = _resolve_bot(client, "config.black", config.black, config.game.kind, violations)
    white = _resolve_bot(client, "config.white", config.white, config.game.kind, violations)
    if violations or position is None or black is None or white is None:
        raise InvalidArgumentError.for_fields(violations)
    now_ms = int(time.time() * 1000)
    created = timestamp_pb2.Timestamp()
    created.FromMilliseconds(now_ms)
    match = match_pb2.Match(
        id=new_match_id(now_ms), config=config, black=black, white=white,
        status=match_pb2.MATCH_STATUS_PENDING, owner=owner, created_at=created,
        start_position=position.to_text(),
    )
    with client.pipeline(transaction=True) as pipe:
        pipe.set(match_key(match.id), match.SerializeToString())
        for key in index_keys(match):
            pipe.zadd(key, {match.id: 0})
        pipe.execute()
    publish_match_job(client, match.id)
    return match


# --- reading ------------------------------------------------------------------------------


@dataclass
class MatchStore:
    """Read side of the matches (the referee's runner is the only writer of game state)."""

    client: redis.Redis

    def header(self, match_id: str) -> match_pb2.Match:
        payload: Any = self.client.get(match_key(match_id))
        if payload is None:
            raise NotFoundError(f"no match {match_id!r}")
        return match_pb2.Match.FromString(payload)

    def records(self, match_id: str) -> list[match_pb2.MoveRecord]:
        return [match_pb2.MoveRecord.FromString(raw)
                for raw in _list(self.client.lrange(moves_key(match_id), 0, -1))]

    def get(self, match_id: str) -> match_pb2.Match:
        """The match with its moves so far."""
        # Read the moves first: a header that says FINISHED then always has every move.
        records = self.records(match_id)
        match = self.header(match_id)
        if match.status in FINISHED_STATES:
            records = self.records(match_id)
        match.moves.extend(records)
        return match

    def list(self, request: referee_pb2.ListMatchesRequest) -> referee_pb2.ListMatchesResponse:
        size = paging.page_size(request.page.page_size)
        after = paging.decode_page_token(request.page.page_token)
        found: list[match_pb2.Match] = []
        last = ""
        for match_id in self._ids(_index_for(request), after):
            last = match_id
            try:
                match = self.header(match_id) if request.summary_only else self.get(match_id)
            except NotFoundError:
                continue  # deleted while we listed
            if _accepts(request, match):
                found.append(match)
                if len(found) == size:
                    break
        more = len(found) == size and last != ""
        token = paging.encode_page_token(last) if more else ""
        return referee_pb2.ListMatchesResponse(matches=found, next_page_token=token)

    def _ids(self, key: str, after: str, batch: int = 200) -> Iterator[str]:
        upper = f"({after}" if after else "+"
        while True:
            ids: Any = self.client.zrevrangebylex(key, upper, "-", start=0, num=batch)
            for raw in ids:
                yield raw.decode()
            if len(ids) < batch:
                return
            upper = f"({ids[-1].decode()}"

    def delete(self, match_id: str, principal_name: str, is_admin: bool,
               cache: redis.Redis | None) -> None:
        match = self.header(match_id)
        if not is_admin and principal_name != match.owner:
            raise PermissionDeniedError(f"{principal_name} may not delete match {match_id} "
                                        f"owned by {match.owner}")
        if match.status not in FINISHED_STATES:
            raise FailedPreconditionError(f"match {match_id} is still running")
        records = self.records(match_id)
        with self.client.pipeline(transaction=True) as pipe:
            for key in index_keys(match):
                pipe.zrem(key, match_id)
            pipe.delete(match_key(match_id), moves_key(match_id), events_key(match_id),
                        final_key(match_id), results_key(match_id), started_key(match_id))
            pipe.execute()
        trees = [tree_key(match_id, record.ply) for record in records if record.has_tree]
        if cache is not None and trees:
            cache.delete(*trees)


def _list(reply: Any) -> list[bytes]:
    return list(reply)


def _index_for(request: referee_pb2.ListMatchesRequest) -> str:
    if request.ladder_id:
        return f"arena:matches:ladder:{request.ladder_id}"
    if request.bot_name:
        return f"arena:matches:bot:{request.bot_name}"
    if request.game:
        return f"arena:matches:game:{request.game}"
    return ALL_MATCHES


def _accepts(request: referee_pb2.ListMatchesRequest, match: match_pb2.Match) -> bool:
    if request.status and match.status != request.status:
        return False
    if request.game and match.config.game.kind != request.game:
        return False
    if request.ladder_id and match.config.ladder_id != request.ladder_id:
        return False
    return not request.bot_name or request.bot_name in (match.black.name, match.white.name)


