"""The ASGI app: page routes, the JSON + server-sent-events API, headers and errors.

Pages are one HTML shell (``static/index.html``) served at every page address; its
modules draw the page from the API. The API is read-only except for the actions
(create a match or a ladder, cancel a ladder, delete a match), which need the
person's own token in ``Authorization: Bearer ...``, never in an address.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from arena.clients.sdk import ArenaClient
from arena.services.common import metrics
from arena.services.web import forms, live
from arena.services.web.addresses import ClientAddresses
from arena.services.web.errors import BodyTooLargeError, form_field, http_status, public
from arena.services.web.gateway import (
    Gateway,
    bad_query,
    bot_list,
    bot_page,
    ladder_list,
    list_matches,
    rating_list,
)
from arena.services.web.settings import WebSettings
from arena.services.web.shared import SharedReads
from arena.services.web.turns import AnalysisSlots, ViewerTurns
from arena.services.web.views import (
    analysis_json,
    game_json,
    ladder_json,
    match_json,
    match_summary_json,
    ply_view,
    standings_json,
)
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import BaseRoute, Match, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arena import errors
from arena.bots.validation import split_bot_ref
from arena.documents import read_json
from arena.games import GAMES, Position
from arena.games import game as rules
from arena.records import match_position
from arena.rpc import INT32_MAX, INT64_MAX
from arena.v1 import common_pb2, engine_pb2, referee_pb2

log = logging.getLogger(__name__)

STATIC = Path(str(resources.files("arena.services.web") / "static"))
MAX_BODY_BYTES = 64 * 1024
EXPORTS = {"native": referee_pb2.REPLAY_FORMAT_NATIVE, "ggf": referee_pb2.REPLAY_FORMAT_GGF,
           "transcript": referee_pb2.REPLAY_FORMAT_TRANSCRIPT,
           "psq": referee_pb2.REPLAY_FORMAT_PSQ}

# Scripts, styles and everything else only from this origin; no inline script, no
# framing, no plugins. Images may be blobs (avatars fetched with a token).
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob:; "
       "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
       "form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=()"),
]


PAGES = ["/", "/ladders", "/ladders/{ladder_id}", "/ratings", "/bots", "/bots/{name:path}",
         "/matches", "/matches/{match_id}", "/matches/{match_id}/tree/{ply:int}", "/editor"]


class SecurityHeaders:
    """Adds the security headers to every response, and ``no-store`` to the API's."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        api = scope["path"].startswith("/api/")

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += SECURITY_HEADERS
                if api and not any(name == b"cache-control" for name, _ in headers):
                    headers.append((b"cache-control", b"no-store"))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)


def bearer(request: Request) -> str | None:
    """The caller's token from ``Authorization: Bearer ...`` (the only place we look)."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


_INTEGER = re.compile(r"-?[0-9]{1,24}")  # an int64 has 19 digits; leading zeros too


def query_int(request: Request, name: str, default: int, low: int, high: int) -> int:
    return checked_int(name, request.query_params.get(name), default, low, high)


_FLAGS = {"": False, "0": False, "false": False, "1": True, "true": True}


def query_flag(request: Request, name: str) -> bool:
    value = request.query_params.get(name, "")
    if value not in _FLAGS:
        raise bad_query(name, "expected 1, true, 0 or false")
    return _FLAGS[value]


_VIOLATIONS_SHOWN = 5


def only_queries(names: Iterable[str], handler: Handler) -> Handler:
    """``handler`` for addresses with at most these query parameters, each once: anything
    else is a bad query naming it, as a misspelt filter would otherwise be a silent no-op
    (and each made-up one another question that no shared answer serves)."""
    allowed = frozenset(names)
    takes = f"this address takes {', '.join(sorted(allowed))}" if allowed else \
        "this address takes none"

    async def checked(request: Request) -> Response:
        seen: set[str] = set()
        bad: list[errors.FieldViolation] = []
        for name, _ in request.query_params.multi_items():
            if name not in allowed:
                bad.append(errors.FieldViolation(name[:64], f"unknown parameter; {takes}"))
            elif name in seen:
                bad.append(errors.FieldViolation(name, "given more than once"))
            seen.add(name)
        if bad:
            raise errors.InvalidArgumentError("bad query", bad[:_VIOLATIONS_SHOWN])
        return await handler(request)
    return checked


def method_not_allowed(message: str, allowed: list[str]) -> JSONResponse:
    return JSONResponse({"error": {"status": "method-not-allowed", "message": message}},
                        status_code=405, headers={"allow": ", ".join(allowed)})


def checked_int(name: str, text: str | None, default: int, low: int, high: int,
                what: str = "query") -> int:
    """An integer from an address, within [low, high] (protobuf's int32 fields and our
    own limits), or INVALID_ARGUMENT naming the part of the address (``what``: a bad
    "query", or "address" for a part of the path)."""
    if text is None or text == "":
        return default
    # ASCII digits, a few (int() takes '٣' and refuses '²', and reads 5,000 digits slowly);
    # 19 were refused while the message offered every int64.
    if not _INTEGER.fullmatch(text) or not low <= int(text) <= high:
        raise bad_query(name, f"expected an integer {low}..{high}", what)
    return int(text)


def error_response(exc: errors.ArenaError) -> JSONResponse:
    exc = public(exc)
    status, code = http_status(exc)
    if isinstance(exc, errors.InvalidArgumentError):  # a service's fields as the form's
        exc = errors.InvalidArgumentError(exc.message, [
            errors.FieldViolation(form_field(v.field), v.description) for v in exc.violations])
    message, violations = errors.reported(exc)
    body: dict[str, Any] = {"status": code, "message": message}
    if violations:
        body["fields"] = [{"field": v.field, "description": v.description}
                          for v in violations]
    headers = {"www-authenticate": "Bearer"} if status == 401 else None
    return JSONResponse({"error": body}, status_code=status, headers=headers)


Handler = Callable[[Request], Awaitable[Response]]


def api(handler: Handler, route: str) -> Handler:
    """Domain errors become JSON with the matching HTTP status; anything else is a bug,
    logged, and a plain 500 without details. Each answer is counted and timed under
    ``route``, the path template (``arena_web_requests_total``)."""
    async def wrapped(request: Request) -> Response:
        began = time.perf_counter()
        try:
            response = await handler(request)
        except errors.ArenaError as exc:
            response = error_response(exc)
        except Exception:
            log.exception("%s %s failed", request.method, request.url.path)
            response = JSONResponse(
                {"error": {"status": "internal", "message": "internal error"}}, status_code=500)
        answered(route, request.method, response.status_code, began)
        return response
    return wrapped


def answered(route: str, method: str, status: int, began: float) -> None:
    """Count and time one answer of the API (methods outside HTTP's are 'other')."""
    metrics.WEB_REQUESTS.labels(route, method if method in metrics.WEB_METHODS else "other",
                                str(status)).inc()
    metrics.WEB_SECONDS.labels(route).observe(time.perf_counter() - began)


def media_type(request: Request) -> str:
    """The body's media type without its parameters, in lower case: media types are
    case-insensitive (RFC 9110), and ``Application/JSON`` was refused as no JSON."""
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


def bad_body(description: str) -> errors.InvalidArgumentError:
    """A body refused whole, named as the forms name a body that is no JSON object."""
    return errors.InvalidArgumentError.for_fields([errors.FieldViolation("body", description)])


async def json_body(request: Request) -> object:
    if media_type(request) != "application/json":
        raise bad_body("send the body as application/json")
    too_large = BodyTooLargeError(f"body larger than {MAX_BODY_BYTES} bytes")
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > MAX_BODY_BYTES:
        raise too_large
    body = bytearray()
    async for chunk in request.stream():  # read no further than the limit
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise too_large
    try:
        data = read_json(body, parse_constant=_not_json)
    except ValueError as exc:
        raise bad_body(f"body is not JSON: {exc}") from None
    except RecursionError:  # 64 KiB of '[' is deeper than Python's stack
        raise bad_body("body is not JSON we read: nested too deeply") from None
    half = _lone_surrogate(data)
    if half is not None:
        raise bad_body(f"body is not JSON we read: a string holds {half!r}, half of a "
                       "UTF-16 surrogate pair and no character")
    return data


def _lone_surrogate(data: object) -> str | None:
    """The first lone surrogate in any string of ``data`` (keys too), or None. Python's
    reader takes ``"\\ud800"`` (and the bytes CESU-8 writes for it) as a string no UTF-8
    holds: as a bot's name it failed in protobuf, as a field's name in the JSON of the
    error naming it, both times a 500. Walked without recursion: the body may be nested
    as deeply as the reader goes."""
    pending = [data]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            try:
                item.encode()
            except UnicodeEncodeError as exc:
                return item[exc.start:exc.start + 1]
        elif isinstance(item, dict):
            pending += item.keys()
            pending += item.values()
        elif isinstance(item, list):
            pending += item
    return None


def _not_json(constant: str) -> object:
    """Python's reader takes NaN and Infinity; JSON has no such numbers."""
    raise ValueError(f"{constant} is not a JSON number")


class Api:
    """The handlers, bound to one gateway."""

    def __init__(self, gateway: Gateway, stopping: asyncio.Event) -> None:
        self.gateway = gateway
        self.stopping = stopping
        self.slots = live.StreamSlots(gateway.settings.max_streams,
                                      gateway.settings.max_streams_per_viewer)
        self.turns = ViewerTurns(gateway.settings.calls_per_viewer)
        self.analyses = AnalysisSlots(gateway.settings.analyses)
        self.addresses = ClientAddresses(gateway.settings.trusted_proxies,
                                         gateway.settings.forwarded_header)
        # Everyone reads the same with the service token while reading is open.
        self.reads = SharedReads() if gateway.settings.read_access == "open" else None
        self.broadcasts = live.Broadcasts() if gateway.settings.read_access == "open" else None

    def viewer(self, request: Request) -> str:
        """Who a request is read as: the token where reading needs one (a made-up one is
        refused by the services), else the client's address (``addresses.py``: behind
        a trusted proxy, the one it forwards). While reading is open a token reads
        nothing, so it is no viewer of its own: any made-up token would buy another
        share."""
        token = bearer(request)
        if token and self.gateway.settings.read_access == "token":
            return f"token {token}"
        peer = request.client.host if request.client else None
        forwarded = request.headers.getlist(self.addresses.header)
        return f"address {self.addresses.client(peer, forwarded)}"

    def reading(self, handler: Handler) -> Handler:
        """A read: in its viewer's turn, its answer shared (``shared.SharedReads``)."""
        turned = self.in_turn(handler)
        return self.reads.shared(turned) if self.reads is not None else turned

    def acting(self, handler: Handler) -> Handler:
        """An action: in its viewer's turn; after one that may have acted, no read answered
        before is shared. A refused one (a 4xx: no token, another's match, a bad body)
        changed nothing, and forgets nothing: else anyone, with no token, could keep every
        viewer's reads from being shared.

        A body refused is first a token refused, if it is one (``judged_token``): the form
        is read before any service judges the token, so a made-up token, or none, with a
        bad body got a 400 where a good body gets the 401."""
        turned = self.in_turn(handler)

        def acted(status: int) -> None:
            if self.reads is not None and not 400 <= status < 500:
                self.reads.forget()

        async def act(request: Request) -> Response:
            try:
                response = await turned(request)
            except errors.InvalidArgumentError:
                acted(400)
                await self.judged_token(self.gateway.actor(bearer(request)),
                                        lambda client: client.get_usage())
                raise
            except BaseException as exc:  # a service failing, a client gone: it may have acted
                acted(http_status(exc)[0])
                raise
            acted(response.status_code)
            return response
        return act

    async def judged_token(self, client: ArenaClient,
                           ask: Callable[[ArenaClient], object]) -> None:
        """UNAUTHENTICATED if the service ``ask`` questions with ``client``'s token does
        not know it; only its verdict on the token is taken from that question."""
        try:
            await self.gateway.run(ask, client)
        except errors.UnauthenticatedError:
            raise
        except errors.ArenaError:
            pass

    def in_turn(self, handler: Handler) -> Handler:
        """``handler`` run as one of its viewer's requests (``turns.ViewerTurns``)."""
        async def turned(request: Request) -> Response:
            async with self.turns.turn(self.viewer(request)):
                return await handler(request)
        return turned

    def reader(self, request: Request) -> ArenaClient:
        return self.gateway.reader(bearer(request))

    async def config(self, request: Request) -> Response:
        """What the pages need to know of this gateway and of the rules: every game's
        variants (the first its default) and boards, so that no page keeps its own copy."""
        return JSONResponse({"read_access": self.gateway.settings.read_access,
                             "formats": list(EXPORTS),
                             "games": {played.name: {"title": played.title,
                                                     "variants": list(played.variants),
                                                     "sizes": list(played.sizes),
                                                     "default_size": played.default_size}
                                       for played in GAMES}})

    # -- ladders ---------------------------------------------------------------------

    async def ladders(self, request: Request) -> Response:
        limit = query_int(request, "limit", 50, 1, 200)
        token = request.query_params.get("page_token", "")
        return JSONResponse(await self.gateway.run(ladder_list, self.reader(request), token,
                                                   limit, query_flag(request, "running")))

    async def ladder(self, request: Request) -> Response:
        client = self.reader(request)
        standings = await self.gateway.run(client.get_standings, request.path_params["id"])
        return JSONResponse(standings_json(standings))

    async def ratings(self, request: Request) -> Response:
        game = request.query_params.get("game", "othello")
        variant = request.query_params.get("variant", "")
        size = query_int(request, "size", 0, 0, INT32_MAX)
        parts = ("move_time_ms", "game_time_ms", "increment_ms")
        clock = None
        if any(part in request.query_params for part in parts):  # one clock's ladders only
            clock = common_pb2.TimeControl(
                move_time_ms=query_int(request, parts[0], 0, 0, INT32_MAX),
                game_time_ms=query_int(request, parts[1], 0, 0, INT64_MAX),
                increment_ms=query_int(request, parts[2], 0, 0, INT32_MAX))
        return JSONResponse(await self.gateway.run(rating_list, self.reader(request), game,
                                                   variant, size, clock))

    async def ladder_events(self, request: Request) -> Response:
        ladder_id = request.path_params["id"]
        return await self._stream(request, f"ladder {ladder_id}", live.watch_ladder(ladder_id),
                                  lambda: live.ladder_events, keep_all=False,
                                  knows_token=lambda client: client.get_ladder_usage())

    async def create_ladder(self, request: Request) -> Response:
        body = await json_body(request)
        client = self.gateway.actor(bearer(request))
        body = await self._bots_game(client, body, "bots")
        config, key = forms.ladder_config(body), forms.request_id(body)
        info = await self.gateway.run(client.create_ladder, config, key)
        return JSONResponse(ladder_json(info), status_code=201)

    async def cancel_ladder(self, request: Request) -> Response:
        client = self.gateway.actor(bearer(request))
        info = await self.gateway.run(client.cancel_ladder, request.path_params["id"])
        return JSONResponse(ladder_json(info))

    # -- bots ------------------------------------------------------------------------

    async def bots(self, request: Request) -> Response:
        limit = query_int(request, "limit", 100, 1, 200)
        filters = {k: request.query_params.get(k, "") for k in ("game", "prefix")}
        filters["retired"] = "1" if query_flag(request, "retired") else ""
        token = request.query_params.get("page_token", "")
        return JSONResponse(await self.gateway.run(bot_list, self.reader(request), filters,
                                                   token, limit))

    async def bot(self, request: Request) -> Response:
        version = query_int(request, "version", 0, 0, INT32_MAX)
        data = await self.gateway.run(bot_page, self.reader(request),
                                      request.path_params["name"], version)
        return JSONResponse(data)

    async def avatar(self, request: Request) -> Response:
        version = query_int(request, "version", 0, 0, INT32_MAX)
        client = self.reader(request)
        bot = await self.gateway.run(client.get_bot, request.path_params["name"], version)
        if not bot.spec.avatar_png:
            raise errors.NotFoundError(f"{bot.spec.name} has no avatar")
        return Response(bot.spec.avatar_png, media_type="image/png",
                        headers={"cache-control": "private, max-age=60"})

    # -- matches ---------------------------------------------------------------------

    async def matches(self, request: Request) -> Response:
        limit = query_int(request, "limit", 50, 1, 200)
        filters = {k: request.query_params.get(k, "").strip()
                   for k in ("ladder", "bot", "status", "result", "game")}
        token = request.query_params.get("page_token", "")
        client = self.reader(request)
        found = await self.gateway.run(list_matches, client, filters, token, limit)
        await self.gateway.run(self.gateway.name_ladders, client, found["matches"])
        return JSONResponse(found)

    async def match(self, request: Request) -> Response:
        client = self.reader(request)
        match = await self.gateway.run(client.get_match, request.path_params["id"])
        data = await self.gateway.run(match_json, match)
        await self.gateway.run(self.gateway.name_ladders, client, [data])
        return JSONResponse(data)

    async def match_events(self, request: Request) -> Response:
        match_id = request.path_params["id"]
        return await self._stream(request, f"match {match_id}", live.watch_match(match_id),
                                  live.MatchEvents, keep_all=True,
                                  knows_token=lambda client: client.get_usage())

    async def create_match(self, request: Request) -> Response:
        body = await json_body(request)
        client = self.gateway.actor(bearer(request))
        body = await self._bots_game(client, body, "black")
        config, key = forms.match_config(body), forms.request_id(body)
        match = await self.gateway.run(client.create_match, config, key)
        return JSONResponse(match_summary_json(match), status_code=201)

    async def analysis(self, request: Request) -> Response:
        """A bot's move and search on one of the match's positions (the analysis pool, as
        the person: their quota)."""
        ply, bot, time_ms = forms.analysis(await json_body(request))
        client = self.gateway.actor(bearer(request))
        match = await self.gateway.run(client.get_match, request.path_params["id"])
        spec, position, history = match_position(match, ply)
        reply = await self._analyze(client, spec, position, bot, time_ms, history)
        return JSONResponse(analysis_json(reply, position, ply))

    async def position(self, request: Request) -> Response:
        """The board editor's position checked by the rules: its text form, its game, and
        its view (legal moves, whether the game is over) as a match page's ply shows it."""
        position = forms.edited_position(await json_body(request))
        spec = rules(position.game).spec(position.variant, position.size)
        return JSONResponse({"position": position.to_text(), "game": game_json(spec),
                             "view": ply_view(position, 0)})

    async def position_analysis(self, request: Request) -> Response:
        """A bot's move and search in any position (the board editor's), as the person:
        the analysis pool and their quota, as a match's position."""
        body = await json_body(request)
        client = self.gateway.actor(bearer(request))
        body = await self._bots_game(client, body, "bot")
        position, bot, time_ms = forms.position_analysis(body)
        spec = rules(position.game).spec(position.variant, position.size)
        reply = await self._analyze(client, spec, position, bot, time_ms, [])
        return JSONResponse(analysis_json(reply, position, 0))

    async def _bots_game(self, client: ArenaClient, body: Any, field: str) -> Any:
        """``body`` with the ``game`` it leaves out filled in: the game its bot (``field``,
        a reference or a list of them: the first) plays, as the CLI does; as it is when it
        names its game or the bot cannot be read (the service then says what is wrong
        with it). The forms read an opening, a start or a position in the game's own terms:
        Gomoku's ``h8`` was read as Othello's, and a match of two Gomoku bots refused as
        one of Othello."""
        if not isinstance(body, dict) or "game" in body:
            return body
        first = body.get(field)
        if isinstance(first, list):
            first = first[0] if first else None
        if not isinstance(first, str):
            return body
        ref = split_bot_ref(first)
        if ref is None:
            return body
        try:
            bot = await self.gateway.run(client.get_bot, ref[0], ref[1])
        except errors.ArenaError:
            return body
        return {**body, "game": rules(bot.spec.game).name}

    async def _analyze(self, client: ArenaClient, spec: common_pb2.GameSpec,
                       position: Position, bot: common_pb2.BotRef, time_ms: int,
                       history: list[int]) -> engine_pb2.AnalyzeResponse:
        """``bot``'s answer in ``position`` (reached by ``history``), in one of the
        gateway's analysis slots."""
        with self.analyses.slot():
            return await self.gateway.run(
                lambda: client.analyze(common_pb2.Position(game=spec, text=position.to_text()),
                                       bot=bot, limits=common_pb2.SearchLimits(time_ms=time_ms),
                                       history=history))

    async def cancel_match(self, request: Request) -> Response:
        client = self.gateway.actor(bearer(request))
        match = await self.gateway.run(client.cancel_match, request.path_params["id"],
                                       "cancelled from the web page")
        return JSONResponse(match_summary_json(match))

    async def delete_match(self, request: Request) -> Response:
        client = self.gateway.actor(bearer(request))
        await self.gateway.run(client.delete_match, request.path_params["id"])
        return Response(status_code=204)

    async def export(self, request: Request) -> Response:
        name = request.path_params["format"]
        if name not in EXPORTS:
            raise errors.NotFoundError(f"no export format {name!r}; known: {', '.join(EXPORTS)}")
        client = self.reader(request)
        replay = await self.gateway.run(client.get_replay, request.path_params["id"],
                                        EXPORTS[name])
        filename = re.sub(r"[^A-Za-z0-9._-]", "_", replay.filename) or f"match.{name}"
        media = "application/json" if name == "native" else "text/plain"
        return Response(replay.content, media_type=f"{media}; charset=utf-8",
                        headers={"content-disposition": f'attachment; filename="{filename}"'})

    async def tree(self, request: Request) -> Response:
        """A slice of a stored search tree: ``node`` (default the root) and its
        descendants ``levels`` deep, the node's board, and the tree's PV path."""
        node = query_int(request, "node", -1, -1, INT32_MAX)
        levels = query_int(request, "levels", 1, 0, 4)
        credential = self.gateway.read_credential(bearer(request))
        client = self.reader(request)
        ply = checked_int("ply", request.path_params["ply"], 0, 0, INT32_MAX, "address")
        index = await self.gateway.run(self.gateway.tree, client, credential,
                                       request.path_params["id"], ply)
        if node < 0:
            node = index.roots[0] if index.roots else -1
        if node not in index.nodes:
            raise errors.NotFoundError(f"no node {node} in this tree")
        return JSONResponse(index.summary() | {
            "node": index.subtree(node, levels, budget=2000), "board": index.board_json(node)})

    # -- live ------------------------------------------------------------------------

    async def _stream(self, request: Request, key: str,
                      open_stream: Callable[[ArenaClient], Any],
                      new_events: Callable[[], Callable[[Any], list[live.Event]]],
                      keep_all: bool, knows_token: Callable[[ArenaClient], object],
                      ) -> Response:
        """A page's live stream: shared with every other page of the same thing while
        reading is open (``live.Broadcasts``), else a gRPC stream of its own, read with
        the viewer's token.

        Where reading needs a token, the service the stream reads from is first asked a
        cheap question of its own with that token (``knows_token``: the caller's usage):
        the stream's answer starts 200 before the service has judged anything, so a
        made-up token got a 200 and then an ``error`` event, where every other read
        with it is a 401. Only its verdict on the token is taken from that question;
        any other failure is the stream's to tell, as before."""
        viewer = self.viewer(request)
        token = bearer(request)
        self.gateway.read_credential(token)  # no token where one is needed: 401 now
        if self.gateway.settings.read_access == "token":
            await self.judged_token(self.reader(request), knows_token)
        self.slots.take(viewer)

        def start(on_over: Callable[[live.Broadcast], None]) -> live.Broadcast:
            return live.Broadcast(self.gateway.stream_client(token), open_stream,
                                  new_events(), keep_all, on_over)

        def cast() -> live.Broadcast:
            if self.broadcasts is None:
                return start(lambda _: None)
            return self.broadcasts.get(key, start)

        body = live.follow(cast, self.stopping,
                           functools.partial(self.slots.give_back, viewer))
        return StreamingResponse(body, media_type="text/event-stream",
                                 headers={"cache-control": "no-store",
                                          "x-accel-buffering": "no"})


def page_shell(request: Request) -> Response:
    return FileResponse(STATIC / "index.html", headers={"cache-control": "no-cache"})


@dataclass
class Lifecycle:
    """Shutdown in two steps: ``draining`` turns /healthz to 503 (load balancers stop
    sending), then ``stopping`` ends the live streams so the server can close."""

    draining: bool = False
    stopping: asyncio.Event = field(default_factory=asyncio.Event)


def create_app(settings: WebSettings, lifecycle: Lifecycle | None = None) -> ASGIApp:
    gateway = Gateway(settings)
    lifecycle = lifecycle or Lifecycle()
    handlers = Api(gateway, lifecycle.stopping)

    async def healthz(request: Request) -> Response:
        if lifecycle.draining:
            return JSONResponse({"status": "draining"}, status_code=503)
        return JSONResponse({"status": "serving"})

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        gateway.close()

    def get(path: str, handler: Handler, *queries: str) -> Route:
        return Route(path, api(only_queries(queries, handlers.reading(handler)), path),
                     methods=["GET", "HEAD"])

    def post(path: str, handler: Handler, method: str = "POST") -> Route:
        return Route(path, api(only_queries((), handlers.acting(handler)), path),
                     methods=[method])

    def live_stream(path: str, handler: Handler) -> Route:
        """A live stream takes GET alone. Starlette adds HEAD wherever a route takes GET,
        and a stream's HEAD opened the stream: a gRPC stream and one of the viewer's live
        slots held as long as the connection stayed open, for an answer with no body. So
        HEAD is refused (405) as any method the address does not take, and the 405s of
        its other methods do not offer it."""
        route = Route(path, api(only_queries((), handler), path), methods=["GET"])
        route.methods = {"GET"}
        return route

    api_routes = [
        get("/api/config", handlers.config),
        get("/api/ladders", handlers.ladders, "limit", "page_token", "running"),
        post("/api/ladders", handlers.create_ladder),
        get("/api/ladders/{id}", handlers.ladder),
        live_stream("/api/ladders/{id}/events", handlers.ladder_events),
        post("/api/ladders/{id}/cancel", handlers.cancel_ladder),
        get("/api/ratings", handlers.ratings, "game", "variant", "size", "move_time_ms",
            "game_time_ms", "increment_ms"),
        get("/api/bots", handlers.bots, "limit", "page_token", "game", "prefix", "retired"),
        get("/api/bots/{name:path}", handlers.bot, "version"),
        get("/api/avatars/{name:path}", handlers.avatar, "version"),
        get("/api/matches", handlers.matches, "limit", "page_token", "ladder", "bot", "status",
            "result", "game"),
        post("/api/matches", handlers.create_match),
        get("/api/matches/{id}", handlers.match),
        post("/api/matches/{id}", handlers.delete_match, method="DELETE"),
        live_stream("/api/matches/{id}/events", handlers.match_events),
        post("/api/matches/{id}/cancel", handlers.cancel_match),
        post("/api/matches/{id}/analysis", handlers.analysis),
        # the rules only: no service, no action to share reads past
        Route("/api/positions", api(only_queries((), handlers.in_turn(handlers.position)),
                                    "/api/positions"), methods=["POST"]),
        post("/api/analysis", handlers.position_analysis),
        get("/api/matches/{id}/export/{format}", handlers.export),
        get("/api/matches/{id}/trees/{ply}", handlers.tree, "node", "levels"),
    ]
    routes = [
        Route("/healthz", healthz, methods=["GET", "HEAD"]),
        *api_routes,
        Mount("/api", app=functools.partial(api_unrouted, api_routes)),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
        *(Route(path, page_shell, methods=["GET", "HEAD"]) for path in PAGES),
    ]
    app = Starlette(routes=routes, lifespan=lifespan,
                    exception_handlers={HTTPException: http_error})
    # Starlette's own slash redirect names the host of the request's Host header.
    app.router.redirect_slashes = False
    app.router.default = functools.partial(slash_redirect, routes, app.router.default)
    return SecurityHeaders(app)


async def slash_redirect(routes: list[BaseRoute], not_found: ASGIApp, scope: Scope,
                         receive: Receive, send: Send) -> None:
    """An address no route took, which one takes with its trailing slash added or taken
    away (``/api`` -> ``/api/``, ``/ladders/`` -> ``/ladders``): a 307 there, as Starlette
    redirects, but to a path (under the root path the server gives, the query kept),
    never a whole URL. Starlette's named the host of the Host header, which is the
    client's to write: ``Host: evil.example`` sent a viewer (or a cache that keys on the
    path alone) to ``http://evil.example/api/``."""
    if scope["type"] == "http" and (redirect := _slash_moved(routes, scope)) is not None:
        await redirect(scope, receive, send)
        return
    await not_found(scope, receive, send)


def _slash_moved(routes: Sequence[BaseRoute], scope: Scope) -> Response | None:
    """The 307 to the address one of ``routes`` takes with the trailing slash of
    ``scope``'s path added or taken away, if there is one (``slash_redirect``)."""
    root, path = scope.get("root_path", ""), scope["path"]
    if (path[len(root):] if root and path.startswith(root) else path) == "/":
        return None
    moved = path.rstrip("/") if path.endswith("/") else path + "/"
    if all(route.matches({**scope, "path": moved})[0] is Match.NONE for route in routes):
        return None
    # One leading slash: '//host/...' would be another site's address.
    location = "/" + moved.lstrip("/")
    for char, escaped in (("%", "%25"), ("?", "%3F"), ("#", "%23"), ("\\", "%5C")):
        location = location.replace(char, escaped)
    query = scope.get("query_string", b"").decode("latin-1")
    return RedirectResponse(location + (f"?{query}" if query else ""))


async def api_unrouted(routes: list[Route], scope: Scope, receive: Receive,
                       send: Send) -> None:
    """An API request no route took: 405 with the methods the address takes when some
    route has its path (a catch-all under /api outranks Starlette's own 405, which it
    gives only where no route matches in full), else 404."""
    began = time.perf_counter()
    outer = {**scope, "root_path": scope.get("app_root_path", "")}  # the Mount's is /api
    matched = [route for route in routes
               if route.methods and route.matches(outer)[0] is Match.PARTIAL]
    allowed = sorted({method for route in matched for method in route.methods or ()})
    # a method the address does not take is counted under the address's route (it was
    # 'unrouted', which the docs keep for an address no route takes)
    counted = matched[0].path if matched else "unrouted"
    response: Response
    if allowed:
        response = method_not_allowed(f"{scope['method'][:16]} is not taken here; this "
                                      f"address takes {', '.join(allowed)}", allowed)
    elif (moved := _slash_moved(routes, outer)) is not None:  # /api/matches/ as the pages'
        response = moved
    else:
        response = JSONResponse({"error": {"status": "not-found", "message": "no such API"}},
                                status_code=404)
    answered(counted, scope["method"], response.status_code, began)
    await response(scope, receive, send)


async def http_error(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    if (status == 404 and request.method in ("GET", "HEAD")
            and not request.url.path.startswith(("/api/", "/static/"))):
        # A page address no page takes: the site's own "Not found" page (the shell's
        # router says it), with its header and links, not a bare line of text.
        return FileResponse(STATIC / "index.html", status_code=404,
                            headers={"cache-control": "no-cache"})
    detail = exc.detail if isinstance(exc, HTTPException) else "internal error"
    headers = exc.headers if isinstance(exc, HTTPException) else None  # a 405's allow
    return Response(f"{status} {detail}\n", status_code=status, media_type="text/plain",
                    headers=headers)
