"""The gRPC side of the web gateway: SDK clients per credential, and the reads a page
makes, composed from the services' RPCs.

Every function here blocks (the SDK is synchronous); the app runs them in worker
threads. Which token a call carries is decided in one place, :class:`Gateway`:

* reads use the gateway's service token while reading is open, the reader's own token
  when it is restricted (``ARENA_WEB_READ=token``);
* actions always use the token the person entered, never the service token, so the
  services apply their own ownership and role rules to that person.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

import anyio.to_thread
from arena.clients.sdk import ArenaClient, pool_size
from arena.services.common import paging
from arena.services.common.lru import LruCache
from arena.services.web.settings import WebSettings
from arena.services.web.views import (
    Json,
    TreeIndex,
    bot_json,
    clock_json,
    engine_config,
    game_json,
    ladder_json,
    match_summary_json,
    ratings_json,
    result_json,
    standing_json,
    with_defaults,
)

from arena.errors import ArenaError, FieldViolation, InvalidArgumentError, UnauthenticatedError
from arena.v1 import bots_pb2, common_pb2, match_pb2

T = TypeVar("T")

STATUSES = {
    "pending": match_pb2.MATCH_STATUS_PENDING, "running": match_pb2.MATCH_STATUS_RUNNING,
    "finished": match_pb2.MATCH_STATUS_FINISHED, "cancelled": match_pb2.MATCH_STATUS_CANCELLED,
}
GAMES = {"othello": common_pb2.GAME_KIND_OTHELLO, "gomoku": common_pb2.GAME_KIND_GOMOKU}
RESULTS = ("black", "white", "draw", "forfeit", "win", "loss")
# A filtered match listing reads at most this many matches per request (then it
# returns what it found and a token to go on), so no request scans the whole history.
SCAN_LIMIT = 1000
SCAN_PAGE = 200
VERSIONS_SHOWN = 30
RECORD_GAMES = 200
# Missing keys of a built-in config take the engine's defaults, which are these presets'
# configs (docs/bots.md): a bot page shows every parameter the bot plays with.
DEFAULT_PRESETS = {"kreversi": "kreversi-default", "arena": "arena-fast",
                   "pattern": "arena-pattern", "lab": "lab-intermediate",
                   "sharpmoku": "sharpmoku-normal", "arena-gomoku": "arena-gomoku"}


class Gateway:
    """SDK clients by credential, and blocking calls run off the event loop."""

    def __init__(self, settings: WebSettings) -> None:
        self.settings = settings
        self._clients: OrderedDict[str, ArenaClient] = OrderedDict()
        self._lock = threading.Lock()
        self.trees: LruCache[tuple[str, str, int], TreeIndex] = LruCache(size=8, ttl_s=300.0)
        # A ladder's name never changes ("" when it has none): read once per ladder.
        self.ladder_names: LruCache[str, str] = LruCache(size=4096)

    def _new_client(self, token: str) -> ArenaClient:
        s = self.settings
        return ArenaClient(registry=s.registry or None, referee=s.referee or None,
                           ladder=s.ladder or None, engine=s.engine or None,
                           token=token or None)

    def _cached_client(self, token: str) -> ArenaClient:
        """One client (and so one set of channels) per token, the most recent 64 kept."""
        with self._lock:
            client = self._clients.get(token)
            if client is None:
                client = self._clients[token] = self._new_client(token)
                while len(self._clients) > 64:
                    self._clients.popitem(last=False)[1].close()
            self._clients.move_to_end(token)
            return client

    def read_credential(self, token: str | None) -> str:
        """The token reads go out with (the service token while reading is open)."""
        if self.settings.read_access == "open":
            return self.settings.service_token
        if not token:
            raise UnauthenticatedError("reading needs a token here: enter yours in the page")
        return token

    def reader(self, token: str | None) -> ArenaClient:
        return self._cached_client(self.read_credential(token))

    def actor(self, token: str | None) -> ArenaClient:
        """A client acting as the person: their token, never the service's."""
        if not token:
            raise UnauthenticatedError("this action needs your token: enter it in the page")
        return self._cached_client(token)

    def stream_client(self, token: str | None) -> ArenaClient:
        """A client of its own for one live stream: closing it cancels the stream."""
        return self._new_client(self.read_credential(token))

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        return await anyio.to_thread.run_sync(lambda: function(*args))

    def close(self) -> None:
        with self._lock:
            for client in self._clients.values():
                client.close()
            self._clients.clear()

    def tree(self, client: ArenaClient, credential: str, match_id: str, ply: int) -> TreeIndex:
        """A stored search tree, kept indexed for a while: the viewer loads it in slices.
        A kept one is served only while its match exists: a deleted match's trees (deleted
        here, through another replica or with `arena match delete`) were served from here
        for the five minutes they were kept, while the match itself was not found."""
        key = (credential, match_id, ply)
        index = self.trees.get(key)
        if index is None:
            return self.trees.put(key, TreeIndex(client.get_search_tree(match_id, ply)))
        client.get_match(match_id)  # NOT_FOUND once deleted
        return index

    def name_ladders(self, client: ArenaClient, matches: list[Json]) -> list[Json]:
        """Each match's ``ladder_name`` beside its ``ladder_id`` (None when it has no
        ladder, the ladder has no name or cannot be read now), so that a page names a
        ladder as the ladder list does. Each ladder is read once (its standings carry its
        name), then kept. A name is only a label: when the ladder service fails or is slow
        to answer, the rest go unnamed (one failed call, not one per ladder) and the
        matches are still listed."""
        failed = False
        for match in matches:
            ladder_id = match.get("ladder_id")
            name = self.ladder_names.get(ladder_id) if ladder_id else None
            if ladder_id and name is None and not failed:
                try:
                    info = client.get_standings(ladder_id).ladder
                except ArenaError:
                    failed = True
                else:
                    name = self.ladder_names.put(ladder_id, info.config.name)
            match["ladder_name"] = name or None
        return matches


# -- composed reads (blocking) --------------------------------------------------------------


def list_matches(client: ArenaClient, filters: dict[str, str], page_token: str,
                 limit: int) -> Json:
    """Matches newest first, filtered by ladder, bot, status, game and result. The
    referee filters what it can; the result is filtered here, page by page, reading at
    most ``SCAN_LIMIT`` matches per call, and at most ``limit`` are returned: the next
    page continues after the last one returned (the referee's tokens continue after a
    match id)."""
    query = match_query(filters)
    keep = result_filter(filters.get("result", ""), filters.get("bot", ""))
    found: list[Json] = []
    scanned = 0
    token = page_token
    while True:
        page = client.list_matches(page_size=SCAN_PAGE if keep else limit,
                                   page_token=token, summary_only=True, **query)
        token = page.next_page_token
        for index, match in enumerate(page.matches):
            scanned += 1
            if keep is None or keep(match):
                found.append(match_summary_json(match))
                if len(found) == limit:  # the page holds more: the next starts after it
                    if index < len(page.matches) - 1:
                        token = paging.encode_page_token(match.id)
                    break
        if not token or len(found) >= limit or scanned >= SCAN_LIMIT:
            break
    return {"matches": found, "next_page_token": token or None, "scanned": scanned}


def match_query(filters: dict[str, str]) -> dict[str, Any]:
    query: dict[str, Any] = {"ladder_id": filters.get("ladder", ""),
                             "bot_name": filters.get("bot", "")}
    status = filters.get("status", "")
    if status:
        if status not in STATUSES:
            raise bad_query("status", f"unknown status {status!r}; known: {', '.join(STATUSES)}")
        query["status"] = STATUSES[status]
    elif filters.get("result"):
        query["status"] = match_pb2.MATCH_STATUS_FINISHED
    if filters.get("game"):
        query["game"] = game_kind(filters["game"])
    return query


def bad_query(name: str, description: str, what: str = "query") -> InvalidArgumentError:
    """A refusal of the address's query parameter ``name`` (``what``: "address" for a part
    of the path), named as the form fields are."""
    return InvalidArgumentError(f"bad {what}", [FieldViolation(name, description)])


def game_kind(name: str) -> common_pb2.GameKind.ValueType:
    """The kind of the game named ``name`` in an address ("othello", "gomoku")."""
    if name not in GAMES:
        raise bad_query("game", f"unknown game {name!r}; known: {', '.join(GAMES)}")
    return GAMES[name]


def result_filter(result: str, bot: str) -> Callable[[match_pb2.Match], bool] | None:
    if not result:
        return None
    if result not in RESULTS:
        raise bad_query("result", f"unknown result {result!r}; known: {', '.join(RESULTS)}")
    if result in ("win", "loss") and not bot:
        raise bad_query("result", f"result {result!r} needs a bot: whose {result}?")

    def keep(match: match_pb2.Match) -> bool:
        outcome = result_json(match)
        if outcome is None or outcome["void"]:
            return False
        if result == "forfeit":
            return outcome["forfeited"] is not None
        if result == "draw":
            return outcome["winner"] is None
        if result in ("black", "white"):
            return bool(outcome["winner"] == result)
        name, _, version = bot.partition("@")  # NAME or NAME@VERSION, as the referee reads it
        black = match.black.name == name and version in ("", str(match.black.version))
        side = "black" if black else "white"
        won = outcome["winner"] == side
        return won if result == "win" else outcome["winner"] not in (None, side)

    return keep


def bot_page(client: ArenaClient, name: str, version: int) -> Json:
    """A bot version with its version history, recent games and results by opponent."""
    bot = client.get_bot(name, version)
    latest = client.get_bot(name) if version else bot
    first = max(1, latest.version - VERSIONS_SHOWN + 1)
    versions = [client.get_bot(name, v) if v != bot.version else bot
                for v in range(latest.version, first - 1, -1)]
    data = bot_json(bot)
    data["config"], data["defaulted"] = config_with_defaults(client, data)
    data["latest_version"] = latest.version
    data["versions"] = [{
        "version": v.version, "created_at": bot_json(v)["created_at"], "preset": v.spec.preset,
        "description": v.spec.description, "evaluator_hash": v.evaluator_hash,
    } for v in versions]
    data |= bot_record(client, name)
    data["ratings"] = bot_ratings(client, bot)
    return data


def bot_ratings(client: ArenaClient, bot: bots_pb2.BotVersion) -> list[Json]:
    """Where each version of the bot stands in the arena's rating lists of its game (every
    variant and size it was rated in; each clock's too, where its ladders had several)."""
    return [{"game": game_json(rated.game), "pool": row.pool, "of": pool_size(rated, row),
             "clock": clock_json(rated.clock) if rated.HasField("clock") else None,
             **standing_json(row.standing)}
            for rated, row in client.bot_ratings(bot.spec.name, bot.spec.game)]

def config_with_defaults(client: ArenaClient, bot: Json) -> tuple[Json, list[str]]:
    preset = DEFAULT_PRESETS.get(bot["evaluator"])
    presets = {p.name: p for p in client.list_presets()} if preset else {}
    if preset not in presets:
        return bot["config"], []
    return with_defaults(bot["config"], engine_config(presets[preset].engine))


def bot_record(client: ArenaClient, name: str) -> Json:
    matches = list(client.iter_matches(limit=RECORD_GAMES, bot_name=name, summary_only=True))
    by_opponent: dict[str, dict[str, int]] = {}
    for match in matches:
        outcome = result_json(match)
        if outcome is None or outcome["void"]:
            continue  # a void game has no result to count
        side, other = ("black", match.white) if match.black.name == name else ("white",
                                                                              match.black)
        line = by_opponent.setdefault(other.name, {"wins": 0, "draws": 0, "losses": 0})
        key = ("draws" if outcome["winner"] is None
               else "wins" if outcome["winner"] == side else "losses")
        line[key] += 1
    opponents = [{"opponent": opponent, **line, "games": sum(line.values())}
                 for opponent, line in sorted(by_opponent.items())]
    return {"recent": [match_summary_json(m) for m in matches[:12]],
            "by_opponent": opponents, "games_counted": len(matches)}


def ladder_list(client: ArenaClient, page_token: str, limit: int,
                running_only: bool = False) -> Json:
    page = client.list_ladders(page_size=limit, page_token=page_token,
                               running_only=running_only)
    return {"ladders": [ladder_json(ladder, openings=False) for ladder in page.ladders],
            "next_page_token": page.next_page_token or None}


def bot_list(client: ArenaClient, filters: dict[str, str], page_token: str,
             limit: int) -> Json:
    name = filters.get("game", "")
    page = client.list_bots(game=game_kind(name) if name else common_pb2.GAME_KIND_UNSPECIFIED,
                            name_prefix=filters.get("prefix", ""),
                            include_retired=filters.get("retired", "") in ("1", "true"),
                            page_size=limit, page_token=page_token)
    return {"bots": [bot_json(bot) for bot in page.bots],
            "next_page_token": page.next_page_token or None}


def rating_list(client: ArenaClient, game: str, variant: str, size: int,
                clock: common_pb2.TimeControl | None = None) -> Json:
    """The arena's rating list of a game (an empty variant or 0 size: its default), of
    the ladders at ``clock`` only (None: every clock)."""
    spec = common_pb2.GameSpec(kind=game_kind(game), variant=variant, board_size=size)
    return ratings_json(client.get_ratings(spec, clock))
