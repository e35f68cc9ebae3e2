"""The gateway's HTTP API as an outsider sees it: plain HTTP against the real stack, with
bad input, missing and wrong tokens, live streams, restricted reading and a clean stop."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from arena.services.web.server import check_http_health
from arena.services.web.shared import FRESH_S

from arena.errors import AlreadyExistsError
from arena.games import new_position
from arena.text import MAX_MESSAGE_CHARS
from arena.v1 import bots_pb2, common_pb2, ladder_pb2, match_pb2
from tests.observability.test_stack import scrape, total
from tests.support.processes import wait_for_file
from tests.support.specs import png_bytes
from tests.web.conftest import USER_TOKEN, Http, WebStack, register, wait_for_ladder


def error_of(body: bytes) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(body)["error"]
    return data


def sse_events(http: Http, path: str, timeout_s: float = 60, token: str | None = None,
               ) -> list[tuple[str, Any]]:
    """Every event of a stream until it ends (`end`)."""
    headers = {"authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(http.base + path, headers=headers)
    events: list[tuple[str, Any]] = []
    with urllib.request.urlopen(request, timeout=timeout_s) as reply:
        assert reply.headers["content-type"].startswith("text/event-stream")
        name, data = "message", ""
        for raw in reply:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data = line[6:]
            elif not line and data:
                events.append((name, json.loads(data)))
                if name in ("end", "error"):
                    return events
                name, data = "message", ""
    return events


def test_every_response_carries_the_security_headers(web: WebStack) -> None:
    for path in ("/", "/ladders", "/static/js/app.js", "/api/ladders", "/api/nope", "/healthz"):
        status, headers, _ = web.http.request("GET", path)
        assert status in (200, 404), path
        csp = headers["content-security-policy"]
        assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
        assert "unsafe-inline" not in csp
        assert headers["x-frame-options"] == "DENY"
        assert headers["x-content-type-options"] == "nosniff"
    _, headers, _ = web.http.request("GET", "/api/ladders")
    assert headers["cache-control"] == "no-store"


def test_pages_are_one_shell_with_no_inline_script(web: WebStack) -> None:
    status, headers, body = web.http.request("GET", f"/ladders/{web.ladder_id}")
    assert status == 200 and headers["content-type"].startswith("text/html")
    html = body.decode()
    assert "<script>" not in html  # every script has a src: the CSP forbids inline ones
    assert html.count("<script") == 2
    for asset in ("/static/arena.css", "/static/theme.js", "/static/js/app.js"):
        assert asset in html
        assert web.http.request("GET", asset)[0] == 200
    assert web.http.request("GET", "/no/such/page")[0] == 404


def _redirect(to: Http, path: str, host: str | None) -> tuple[int, str | None]:
    """The status and ``location`` of a GET of ``path`` (not followed), sent with the Host
    header ``host`` (None: the gateway's own address)."""
    connection = _connect(to, "127.0.0.1")
    try:
        connection.request("GET", path, headers={"host": host} if host else {})
        reply = connection.getresponse()
        reply.read()
        return reply.status, reply.getheader("location")
    finally:
        connection.close()


def test_a_redirect_is_to_a_path_never_to_the_host_a_request_named(web: WebStack) -> None:
    """Starlette's slash redirect took its host from the Host header, which the client
    writes: ``Host: evil.example`` on ``/api`` answered ``location:
    http://evil.example/api/``. A redirect is to a path of this server's, its query kept."""
    for path, location in (("/api", "/api/"), ("/ladders/", "/ladders"),
                           ("/ladders/?limit=5", "/ladders?limit=5"),
                           ("/matches/?bot=a%40b&status=finished",
                            "/matches?bot=a%40b&status=finished"),
                           ("/ratings/", "/ratings"), ("/static", "/static/"),
                           # The API's addresses too (they were 404: 'no such API').
                           ("/api/matches/?limit=3", "/api/matches?limit=3"),
                           ("/api/ladders/", "/api/ladders")):
        for host in ("evil.example", "evil.example:8080", None):
            assert _redirect(web.http, path, host) == (307, location), (path, host)
    assert web.http.request("GET", "/ladders?limit=5")[0] == 200  # where it leads
    # No redirect where neither address has a route.
    assert _redirect(web.http, "/nothing/", "evil.example") == (404, None)
    assert _redirect(web.http, "/api/nothing/", None) == (404, None)
    assert _redirect(web.http, "//evil.example/ladders/", "evil.example") == (404, None)


def test_a_redirect_keeps_the_root_path_the_server_gives() -> None:
    """No gateway setting mounts the app under a prefix; an ASGI server that does (a root
    path) has its redirects kept under it, as Starlette's own were. The app is called as
    such a server would call it."""
    from arena.services.web.app import create_app
    from arena.services.web.settings import WebSettings

    app = create_app(WebSettings())

    async def get(path: str, query: bytes) -> tuple[int, str | None]:
        sent: list[Any] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await app({"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                   "method": "GET", "scheme": "http", "path": path, "root_path": "/arena",
                   "query_string": query, "headers": [(b"host", b"evil.example")],
                   "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 5000)},
                  receive, send)
        headers = dict(sent[0]["headers"])
        location = headers.get(b"location")
        return sent[0]["status"], location.decode() if location else None

    assert asyncio.run(get("/arena/api", b"")) == (307, "/arena/api/")
    assert asyncio.run(get("/arena/ladders/", b"x=1")) == (307, "/arena/ladders?x=1")
    assert asyncio.run(get("/arena", b"")) == (307, "/arena/")


def test_reads_return_json_and_unknown_things_say_not_found(web: WebStack) -> None:
    ladders = web.http.json("/api/ladders")["ladders"]
    assert web.ladder_id in [ladder["id"] for ladder in ladders]
    standings = web.http.json(f"/api/ladders/{web.ladder_id}")
    assert standings["ladder"]["status"] == "finished" and len(standings["rows"]) == 4
    for path in ("/api/ladders/L-nope", "/api/matches/nope", "/api/bots/nobody-at-all",
                 "/api/avatars/web-beginner", "/api/matches/nope/trees/3"):
        status, _, body = web.http.request("GET", path)
        assert status == 404, path
        assert error_of(body)["status"] == "not-found"


def test_the_bot_list_says_which_bots_have_a_picture(web: WebStack) -> None:
    """The registry leaves pictures out of lists, and the list read ``has_avatar`` from
    the picture: false for every bot, so /bots showed none. The list still carries no
    picture; ``/api/avatars/NAME`` serves it."""
    picture = png_bytes()
    with contextlib.suppress(AlreadyExistsError):  # a rerun on the same stack
        web.client.register_bot(bots_pb2.BotSpec(
            name="web-pictured", preset="lab-beginner", avatar_png=picture,
            builtin=bots_pb2.BuiltinEngine()), from_preset="lab-beginner")
    assert web.http.json("/api/bots/web-pictured")["has_avatar"] is True
    # (a prefix each: other tests of the session's stack list many more web- bots than
    # a page holds, and which of them come first depends on the order the tests ran in)
    for name, pictured in (("web-pictured", True), ("web-beginner", False)):
        status, _, body = web.http.request("GET", f"/api/bots?prefix={name}")
        assert status == 200
        listed = {bot["name"]: bot for bot in json.loads(body)["bots"]}
        assert listed[name]["has_avatar"] is pictured
        assert b"avatar_png" not in body and b"iVBOR" not in body  # no picture in the list
    status, headers, served = web.http.request("GET", "/api/avatars/web-pictured")
    assert status == 200 and headers["content-type"] == "image/png" and served == picture


def test_a_method_an_address_does_not_take_is_405_with_the_ones_it_does(web: WebStack) -> None:
    """``PUT /api/matches/ID`` said 404 'no such API' (the catch-all under /api came before
    Starlette's own 405), as if the match or the address did not exist; and a page's 405
    lost its ``allow`` header on the way through the error handler."""
    match_id = web.http.json(f"/api/matches?ladder={web.ladder_id}&limit=1")["matches"][0]["id"]
    for method, path, allowed in (
            ("PUT", f"/api/matches/{match_id}", "DELETE, GET, HEAD"),
            ("PATCH", "/api/matches", "GET, HEAD, POST"),
            ("GET", f"/api/matches/{match_id}/cancel", "POST"),
            ("POST", "/api/config", "GET, HEAD"),
            ("DELETE", "/api/bots/web-beginner", "GET, HEAD"),
            # A live stream takes no HEAD (below): its 405s offered it all the same.
            ("POST", f"/api/ladders/{web.ladder_id}/events", "GET"),
            ("PUT", f"/api/matches/{match_id}/events", "GET")):
        status, headers, body = web.http.request(method, path, {}, token=USER_TOKEN)
        assert status == 405, (method, path, status, body)
        assert headers["allow"] == allowed, (method, path, headers)
        error = error_of(body)
        assert error["status"] == "method-not-allowed" and allowed in error["message"]
    # Nothing was done: the match is there, finished as before.
    assert web.http.json(f"/api/matches/{match_id}")["status"] == "finished"
    for method, path in (("PUT", "/api/nothing"), ("GET", f"/api/matches/{match_id}/x/y")):
        status, _, body = web.http.request(method, path)
        assert status == 404 and error_of(body)["status"] == "not-found", (method, path)
    status, headers, _ = web.http.request("POST", "/ladders", {})
    assert status == 405 and set(headers["allow"].split(", ")) == {"GET", "HEAD"}


def test_bad_queries_are_400_with_the_field(web: WebStack) -> None:
    for path, field in (("/api/matches?limit=0", "limit"), ("/api/matches?limit=abc", "limit"),
                        ("/api/ladders?limit=100000", "limit"), ("/api/bots/x?version=-1",
                                                                 "version"),
                        ("/api/ladders?running=maybe", "running")):
        status, _, body = web.http.request("GET", path)
        assert status == 400, path
        assert error_of(body)["fields"][0]["field"] == field
    for path in ("/api/matches/x/trees/99999999999", "/api/matches/x/trees/-1",
                 "/api/matches/x/trees/two"):
        status, _, body = web.http.request("GET", path)
        assert status == 400, path
        assert error_of(body)["fields"][0]["field"] == "ply"
        assert error_of(body)["message"].startswith("bad address"), body  # not a query
    # A service's refusal names what the address or the body named (it named the
    # services' own fields: 'bot_name'; 'game' for a variant or a size).
    for method, path, body, field in (
            ("GET", "/api/matches?bot=web-beginner@x", None, "bot"),
            ("GET", "/api/ratings?variant=zzz", None, "variant"),
            ("GET", "/api/ratings?game=othello&size=10", None, "size"),
            ("POST", "/api/matches", {"black": "web-beginner", "white": "web-beginner",
                                      "variant": "international", "size": 10}, "size"),
            ("POST", "/api/matches", {"black": "web-beginner", "white": "web-beginner",
                                      "variant": "zzz"}, "variant")):
        status, _, reply = web.http.request(method, path, body, token=USER_TOKEN)
        assert status == 400 and [f["field"] for f in error_of(reply)["fields"]] == [field], (
            path, body, reply)
    for path in ("/api/matches?status=exploded", "/api/matches?result=win",
                 "/api/matches?game=chess", "/api/bots?game=chess", "/api/ratings?game=chess",
                 "/api/ratings?game=othello&size=10", "/api/ratings?game=gomoku&variant=renju",
                 "/api/ratings?size=-8", "/api/ratings?size=eight", "/api/ratings?game=",
                 "/api/ratings?move_time_ms=-1", "/api/ratings?game_time_ms=x",
                 "/api/ratings?increment_ms=5", "/api/ratings?move_time_ms=1e3",
                 "/api/matches?bot=%00", "/api/matches?bot=" + "b" * 5000,
                 "/api/matches?page_token=zzz", "/api/bots/%20"):
        status, _, body = web.http.request("GET", path)
        assert status == 400, path
        # each names what was wrong, as the form fields are (a status, a game, a result,
        # a page token and a bot's name were told in a message alone, or as the services'
        # 'page.page_token' and 'bot.name')
        named = [f["field"] for f in error_of(body).get("fields", [])]
        assert error_of(body)["message"] and named and "." not in named[0], (path, body)


def test_the_rating_list_pools_the_finished_ladders(web: WebStack) -> None:
    rated = web.http.json("/api/ratings")
    assert rated["game"] == {"kind": "othello", "variant": "standard", "size": 8}
    standings = web.http.json(f"/api/ladders/{web.ladder_id}")
    ours = {row["bot"] for row in standings["rows"]}
    rows = [row for row in rated["rows"] if row["bot"] in ours]
    assert len(rows) == 4 and {row["pool"] for row in rows} == {1}
    assert all(row["ladders"] >= 1 and row["opponents"] >= 3 for row in rows)
    assert rated["games"] >= standings["ladder"]["games_done"] - standings["ladder"]["games_void"]
    assert web.http.json("/api/ratings?game=gomoku&size=9")["rows"] == []
    rated = web.http.json("/api/ratings")  # again: the bot page's read comes after it
    lines = web.http.json("/api/bots/web-kreversi")["ratings"]
    row = next(r for r in rated["rows"] if r["name"] == "web-kreversi")
    pooled = [line for line in lines if line["clock"] is None]  # every clock's list
    assert [line["game"] for line in pooled] == [rated["game"]]  # not the international list
    assert pooled[0]["elo"] == row["elo"] and pooled[0]["rank"] == row["rank"]
    assert pooled[0]["of"] == sum(1 for r in rated["rows"] if r["pool"] == row["pool"])


def test_a_bot_page_lists_each_clock_its_ladders_had(web: WebStack) -> None:
    register(web.client, {"web-clock-a": ("lab-beginner", {}),
                          "web-clock-b": ("lab-beginner", {})})
    for move_time_ms in (150, 250):
        ladder = web.client.create_ladder(ladder_pb2.LadderConfig(
            game=common_pb2.GameSpec(kind=common_pb2.GAME_KIND_OTHELLO),
            bots=[common_pb2.BotRef(name="web-clock-a"), common_pb2.BotRef(name="web-clock-b")],
            games_per_pairing=2, seed=3,
            time_control=common_pb2.TimeControl(move_time_ms=move_time_ms)))
        wait_for_ladder(web.client, ladder.id)
    lines = web.http.json("/api/bots/web-clock-a")["ratings"]
    assert lines[0]["clock"] is None  # the list of every clock first
    at = {line["clock"]["move_time_ms"]: line for line in lines if line["clock"]}
    assert sorted(at) == [150, 250]  # the clocks it played at, not the others of the list
    for move_time_ms, line in at.items():
        listed = web.http.json(f"/api/ratings?move_time_ms={move_time_ms}")
        row = next(r for r in listed["rows"] if r["name"] == "web-clock-a")
        assert (line["rank"], line["elo"], line["games"]) == (row["rank"], row["elo"], 2)
        assert line["clock"] == listed["clock"]
    assert lines[0]["games"] == 4


def test_the_rating_list_of_one_clock(web: WebStack) -> None:
    for _ in range(5):  # other tests' ladders of this stack may count a game in between
        pooled = web.http.json("/api/ratings")
        assert pooled["clock"] is None and pooled["clocks"]
        parts = ("move_time_ms", "game_time_ms", "increment_ms")
        lists = [web.http.json("/api/ratings?" + "&".join(f"{p}={c[p]}" for p in parts))
                 for c in pooled["clocks"]]
        time.sleep(FRESH_S + 0.1)  # past the gateway's shared answer
        if web.http.json("/api/ratings") == pooled:
            break
    else:
        raise AssertionError("the rating list kept changing")
    assert sum(c["games"] for c in pooled["clocks"]) == pooled["games"]
    for clock, one in zip(pooled["clocks"], lists, strict=True):
        assert one["clock"] == {p: clock[p] for p in parts}
        assert one["clocks"] == pooled["clocks"]
        assert (one["games"], one["ladders"]) == (clock["games"], clock["ladders"])
        assert {row["bot"] for row in one["rows"]} <= {row["bot"] for row in pooled["rows"]}
    # a clock no ladder was played at: an empty list, not an error
    empty = web.http.json("/api/ratings?move_time_ms=7&game_time_ms=7")
    assert (empty["games"], empty["rows"], empty["clock"]["move_time_ms"]) == (0, [], 7)


def test_a_query_parameter_an_address_does_not_take_is_a_bad_query(web: WebStack) -> None:
    """A misspelt filter was a silent no-op (all bots listed, as if unfiltered), and each
    made-up parameter a new question past the shared answers."""
    for path, field, says in (
            ("/api/bots?gmae=gomoku", "gmae", "this address takes game, limit, page_token, "
                                              "prefix, retired"),
            ("/api/ladders?game=othello", "game", "this address takes limit, page_token"),
            ("/api/matches/x?limit=3", "limit", "this address takes none"),
            ("/api/matches?limit=5&limit=7", "limit", "given more than once"),
            ("/api/bots?retired=maybe", "retired", "expected 1, true, 0 or false"),
            ("/api/matches?" + "&".join(f"x{n}=1" for n in range(2000)), "x0",
             "unknown parameter")):
        status, _, body = web.http.request("GET", path)
        assert status == 400, path
        fields = error_of(body)["fields"]
        assert fields[0]["field"] == field and says in fields[0]["description"], body
        assert len(fields) <= 5
    status, _, body = web.http.request("POST", "/api/ladders/x/cancel?now=1", body=b"{}")
    assert status == 400 and error_of(body)["fields"][0]["field"] == "now"
    assert web.http.json("/api/bots?retired=true&limit=200")["bots"]


def test_one_question_asked_in_another_order_is_answered_once(web: WebStack) -> None:
    def asked() -> float:  # the referee's ListMatches calls
        address = web.stack.manifest()["metrics"]["referee"]
        return total({"referee": scrape(address)}, "grpc_server_handled_total",
                     grpc_method="ListMatches")

    before = asked()
    one = web.http.json("/api/matches?bot=web-intermediate&limit=9&game=othello")
    other = web.http.json("/api/matches?game=othello&limit=9&bot=web-intermediate")
    assert one == other and asked() - before == 1


def test_match_filters(web: WebStack) -> None:
    ladder = web.http.json(f"/api/matches?ladder={web.ladder_id}&limit=200")["matches"]
    assert len(ladder) == 12
    # each names its ladder, as the ladder list does (one read of the ladder for them all)
    assert {m["ladder_name"] for m in ladder} == {"web test ladder"}
    assert web.http.json(f"/api/matches/{ladder[0]['id']}")["ladder_name"] == "web test ladder"
    wins = web.http.json(f"/api/matches?ladder={web.ladder_id}&bot=web-intermediate"
                         "&result=win&limit=200")["matches"]
    losses = web.http.json(f"/api/matches?ladder={web.ladder_id}&bot=web-intermediate"
                           "&result=loss&limit=200")["matches"]
    played = [m for m in ladder if "web-intermediate@1" in (m["black"], m["white"])]
    draws = [m for m in played if m["result"]["winner"] is None]
    assert len(wins) + len(losses) + len(draws) == len(played) == 6
    for match in wins:
        side = "black" if match["black"] == "web-intermediate@1" else "white"
        assert match["result"]["winner"] == side
    # a version as the matches name it: 'web-intermediate@1' listed nothing
    assert web.http.json(f"/api/matches?ladder={web.ladder_id}&bot=web-intermediate@1"
                         "&result=win&limit=200")["matches"] == wins
    assert web.http.json("/api/matches?bot=web-intermediate@1&limit=200")["matches"]
    assert not web.http.json("/api/matches?bot=web-intermediate@99&limit=200")["matches"]
    black = web.http.json(f"/api/matches?ladder={web.ladder_id}&result=black&limit=200")
    assert all(m["result"]["winner"] == "black" for m in black["matches"])
    # A result filter keeps to the limit: one a page, every one of them once, in order
    # (all of a referee's page came back, the limit ignored: 59 for limit=3). The side
    # that won more of the 12 games won at least 2 of them, or 10 were drawn.
    white = web.http.json(f"/api/matches?ladder={web.ladder_id}&result=white&limit=200")
    side, won = max(("black", black["matches"]), ("white", white["matches"]),
                    key=lambda pair: len(pair[1]))
    assert len(won) >= 2, "the fixture's ladder is mostly draws: nothing to page"
    paged, token = [], ""
    while True:
        reply = web.http.json(f"/api/matches?ladder={web.ladder_id}&result={side}&limit=1"
                              + (f"&page_token={token}" if token else ""))
        assert len(reply["matches"]) <= 1, reply
        paged += reply["matches"]
        token = reply["next_page_token"]
        if not token:
            break
    assert [m["id"] for m in paged] == [m["id"] for m in won]


def test_a_match_has_every_ply_and_its_search(web: WebStack) -> None:
    summary = web.http.json(f"/api/matches?ladder={web.ladder_id}&limit=1")["matches"][0]
    match = web.http.json(f"/api/matches/{summary['id']}")
    recorded = web.client.get_match(summary["id"])
    plies = match["plies"]
    assert len(plies) == 1 + match["opening_plies"] + len(recorded.moves)
    for view, record in zip(plies[1 + match["opening_plies"]:], recorded.moves, strict=True):
        assert view["position"] == record.position_after
        assert view["record_ply"] == record.ply
        if record.search.depth:
            assert view["search"]["depth"] == record.search.depth
    assert match["formats"] == ["native", "ggf", "transcript"]
    status, headers, body = web.http.request("GET", f"/api/matches/{summary['id']}/export/ggf")
    assert status == 200 and "attachment" in headers["content-disposition"]
    assert body.decode().startswith("(;")
    assert web.http.request("GET", f"/api/matches/{summary['id']}/export/pdf")[0] == 404


def test_actions_need_the_person_s_own_token(web: WebStack) -> None:
    body = {"black": "web-beginner", "white": "web-intermediate", "move_time_ms": 2000}
    status, headers, reply = web.http.request("POST", "/api/matches", body)
    assert status == 401 and headers["www-authenticate"] == "Bearer"
    assert error_of(reply)["status"] == "unauthenticated"
    status, _, reply = web.http.request("POST", "/api/matches", body, token="made-up")
    assert status == 401  # the services judged the token: the gateway's own is never used
    # A bad body does not come first: no token, or a made-up one, is the 401 still (both
    # were a 400: the form was read before any service judged the token). Each action.
    bad = {"black": "web-beginner", "move_time_ms": -5, "nonesuch": 1}
    for path in ("/api/matches", "/api/ladders", "/api/analysis", "/api/matches/x/analysis"):
        for token in (None, "made-up"):
            status, _, reply = web.http.request("POST", path, bad, token=token)
            assert status == 401 and error_of(reply)["status"] == "unauthenticated", (
                path, token, reply)
        status, _, reply = web.http.request("POST", path, bad, token=USER_TOKEN)
        assert status == 400, (path, reply)
    status, _, reply = web.http.request("POST", "/api/matches", body, token=USER_TOKEN)
    assert status == 201, reply
    created = json.loads(reply)
    assert created["owner"] == "webuser" and created["black"] == "web-beginner@1"
    shown = web.http.json(f"/api/matches/{created['id']}")
    assert shown["ladder_id"] is None and shown["ladder_name"] is None  # in no ladder
    # A token in the address is not a token: no address takes one.
    status, _, reply = web.http.request("POST", f"/api/matches?token={USER_TOKEN}", body)
    assert status == 400 and error_of(reply)["fields"][0]["field"] == "token"


def test_a_token_no_grpc_header_can_carry_is_unauthenticated(web: WebStack) -> None:
    """HTTP carries bytes a gRPC header cannot: such a token was a 502, 'referee failed
    (INTERNAL): Invalid metadata', where any other unknown token is a 401."""
    body = {"black": "web-beginner", "white": "web-intermediate", "move_time_ms": 2000}
    for token in (f"{USER_TOKEN}\xe9", f"{USER_TOKEN}\x7f"):
        status, _, reply = web.http.request("POST", "/api/matches", body, token=token)
        assert status == 401, reply
        assert error_of(reply)["status"] == "unauthenticated"


def test_asking_a_bot_about_a_match_position_checks_the_request(web: WebStack) -> None:
    """POST /api/matches/{id}/analysis: as the person, a bot's move and search at a ply;
    bad fields all at once, a ply past the end or after the game ended, a time over the
    person's quota and a match that does not exist each a clear 4xx."""
    match = _finished_match(web)
    path, plies = f"/api/matches/{match.id}/analysis", len(match.config.opening) + len(match.moves)
    good = {"ply": 4, "bot": "web-beginner", "time_ms": 500}
    assert web.http.request("POST", path, good)[0] == 401
    status, _, reply = web.http.request("POST", path, good, token=USER_TOKEN)
    assert status == 200, reply
    answer = json.loads(reply)
    assert answer["ply"] == 4 and answer["search"]["depth"] >= 1, answer
    assert answer["move"] and answer["search"]["pv"][0] == answer["move"], answer

    status, _, reply = web.http.request("POST", path, {"bot": " ", "time_ms": 0, "plies": 3},
                                        token=USER_TOKEN)
    assert status == 400
    assert {f["field"] for f in error_of(reply)["fields"]} == {"ply", "bot", "time_ms", "plies"}
    for ply, words in ((plies + 1, f"has {plies} moves: ply takes 0..{plies}"),
                       (plies, "the game is over")):
        status, _, reply = web.http.request("POST", path, {**good, "ply": ply},
                                            token=USER_TOKEN)
        assert status == 400 and words in error_of(reply)["message"], reply
    status, _, reply = web.http.request("POST", path, {**good, "time_ms": 60_000},
                                        token=USER_TOKEN)
    assert status == 429 and "analyze_time_ms" in error_of(reply)["message"], reply
    status, _, reply = web.http.request("POST", "/api/matches/no-such-match/analysis", good,
                                        token=USER_TOKEN)
    assert status == 404, reply
    # A bot of the other game: the engine's refusal names the form's field (it named its
    # own request's, bot_ref).
    register(web.client, {"web-gomoku-asked": ("sharpmoku-normal", {})})
    status, _, reply = web.http.request("POST", path, {**good, "bot": "web-gomoku-asked"},
                                        token=USER_TOKEN)
    assert status == 400 and "bot_ref" not in reply.decode(), reply
    assert [f["field"] for f in error_of(reply)["fields"]] == ["bot"], reply


def _finished_match(web: WebStack) -> match_pb2.Match:
    return next(m for m in web.client.iter_matches(ladder_id=web.ladder_id)
                if m.status == match_pb2.MATCH_STATUS_FINISHED
                and m.result.termination == match_pb2.TERMINATION_NORMAL)


def test_the_gateway_runs_at_most_its_analyses_at_once(web: WebStack, tmp_path: Path) -> None:
    """An analysis holds a gateway thread for the bot's whole time, and readers' requests
    run on the same threads; each person's quota bounded one person, not forty at once.
    With ARENA_WEB_ANALYSES=1, another person's analysis while one runs is refused at once
    (503, naming the setting), reading goes on meanwhile, and once it ends the next is
    answered."""
    register(web.client, {"web-slow": ("arena-fast", {"depth": 60, "time_ms": 6000})})
    path = f"/api/matches/{_finished_match(web).id}/analysis"
    long = {"ply": 4, "bot": "web-slow", "time_ms": 6000}  # seconds of iterative deepening
    short = {"ply": 4, "bot": "web-beginner", "time_ms": 200}
    with another_gateway(web, tmp_path, ARENA_WEB_ANALYSES="1",
                         ARENA_ENGINE=web.stack.target("analyst")) as (_, gateway):
        for _attempt in range(3):
            first: list[tuple[int, dict[str, str], bytes]] = []
            thread = threading.Thread(target=lambda answers=first: answers.append(
                gateway.request("POST", path, long, token=USER_TOKEN)))
            thread.start()
            time.sleep(0.5)  # the long one's request first
            refused = b""
            while thread.is_alive() and not refused:
                status, _, reply = gateway.request("POST", path, short,
                                                   token=web.stack.admin_token)
                if status == 503:
                    refused = reply
                else:  # the long one had not reached the gateway yet
                    assert status == 200, reply
            if refused and thread.is_alive():
                break
            thread.join(30)  # the probe came first and the long one was refused: again
        # Refused at once while the long one runs, not queued behind it.
        assert refused and thread.is_alive(), f"no analysis was refused while one ran: {first}"
        assert "at most 1 analysis at once" in error_of(refused)["message"]
        assert "ARENA_WEB_ANALYSES" in error_of(refused)["message"]
        assert gateway.request("GET", "/api/matches?limit=1")[0] == 200
        thread.join(30)
        assert first and first[0][0] == 200, first
        status, _, reply = gateway.request("POST", path, short, token=web.stack.admin_token)
        assert status == 200, reply


def test_bad_action_bodies_list_every_bad_field(web: WebStack) -> None:
    status, _, reply = web.http.request(
        "POST", "/api/ladders", {"bots": ["only-one"], "games_per_pairing": True,
                                 "format": "swiss", "move_time_ms": -5, "game": "chess",
                                 "size": 10**30, "seed": 2**70},
        token=USER_TOKEN)
    assert status == 400
    fields = {f["field"] for f in error_of(reply)["fields"]}
    assert fields == {"bots", "games_per_pairing", "format", "move_time_ms", "game", "size",
                      "seed"}
    # The ladder service's own limit of bots, told as the gateway's (40 passed the
    # gateway's 64 and came back as config.bots, 70 did not: two limits, two messages).
    status, _, reply = web.http.request(
        "POST", "/api/ladders", {"bots": [f"b{i}" for i in range(40)]}, token=USER_TOKEN)
    assert status == 400 and [f["field"] for f in error_of(reply)["fields"]] == ["bots"]
    assert "a ladder needs 2..32 bots, got 40" in reply.decode()
    # and its games as the service does: 3,000 a pairing is a ladder (the CLI's too), which
    # the gateway's 1..1000 refused
    status, _, reply = web.http.request(
        "POST", "/api/ladders", {"bots": ["web-beginner", "web-intermediate"],
                                 "games_per_pairing": 3000, "move_time_ms": 30_000},
        token=USER_TOKEN)
    assert status == 201, reply
    web.http.request("POST", f"/api/ladders/{json.loads(reply)['id']}/cancel", {},
                     token=USER_TOKEN)
    assert json.loads(reply)["games_total"] == 3000
    for raw, content_type in ((b"{not json", "application/json"), (b"{}", "text/plain"),
                              (b"[1, 2]", "application/json"),
                              # Within the size limit, nested past Python's stack: was a 500.
                              (b"[" * 30_000 + b"]" * 30_000, "application/json"),
                              # Python reads these; JSON has no such numbers.
                              (b'{"black": "a", "white": "b", "seed": NaN}', "application/json"),
                              (b'{"black": "a", "white": "b", "seed": -Infinity}',
                               "application/json")):
        status, _, reply = web.http.request("POST", "/api/matches", raw, token=USER_TOKEN,
                                            headers={"content-type": content_type})
        assert status == 400, raw[:100]
        assert error_of(reply)["status"] == "invalid-argument", reply
        assert "body" in _fields(reply), reply  # named as the field, as a list's body is
    # A number past the digits Python reads: was refused in Python's words, advising
    # sys.set_int_max_str_digits().
    long_number = b'{"black": "a", "white": "b", "seed": ' + b"9" * 5000 + b"}"
    status, _, reply = web.http.request("POST", "/api/matches", long_number, token=USER_TOKEN,
                                        headers={"content-type": "application/json"})
    assert status == 400 and _fields(reply)["body"] == (
        "body is not JSON: a number of 5,000 digits (at most 4,300 are read)"), reply
    status, _, reply = web.http.request("POST", "/api/matches",
                                        {"black": "web-beginner", "white": "ghost-bot"},
                                        token=USER_TOKEN)
    # The referee judges the bots: an unknown one is a bad field of the request.
    assert status == 400 and "ghost-bot" in reply.decode(), reply
    status, _, reply = web.http.request("POST", "/api/matches", b"x" * 200_000,
                                        token=USER_TOKEN)
    # Refused before it is read in full, in the API's error shape.
    assert status == 413, reply
    assert json.loads(reply)["error"] == {"status": "too-large",
                                          "message": "body larger than 65536 bytes"}, reply


def test_a_json_media_type_is_read_in_any_case(web: WebStack) -> None:
    """Media types are case-insensitive: ``Application/JSON`` was refused with 'send the
    body as application/json'."""
    body = {"black": "web-beginner", "white": "web-intermediate", "move_time_ms": 2000}
    for content_type in ("Application/JSON", "APPLICATION/JSON; charset=UTF-8",
                         "application/Json ;charset=utf-8"):
        status, _, reply = web.http.request(  # read: the misspelt field is named
            "POST", "/api/matches", body | {"colour": "black"}, token=USER_TOKEN,
            headers={"content-type": content_type})
        assert status == 400, (content_type, reply)
        fields = [f["field"] for f in error_of(reply).get("fields", [])]
        assert fields == ["colour"], (content_type, reply)
    status, _, reply = web.http.request("POST", "/api/matches", body, token=USER_TOKEN,
                                        headers={"content-type": "Application/JSON"})
    assert status == 201, reply
    web.http.request("POST", f"/api/matches/{json.loads(reply)['id']}/cancel", {},
                     token=USER_TOKEN)
    for content_type in ("text/plain", "application/jsonx", "application/json-seq"):
        status, _, reply = web.http.request("POST", "/api/matches", body, token=USER_TOKEN,
                                            headers={"content-type": content_type})
        assert status == 400, (content_type, reply)
        assert _fields(reply) == {"body": "send the body as application/json"}, reply


def test_half_a_surrogate_pair_is_a_bad_body_not_a_500(web: WebStack) -> None:
    """JSON's ``\\ud800`` (and CESU-8's bytes for it) reads in Python as half a UTF-16
    surrogate pair, which no protobuf string and no UTF-8 reply can hold: a bot's name, a
    ladder's name or a field's name of one was a 500."""
    match_id = web.http.json(f"/api/matches?ladder={web.ladder_id}&limit=1")["matches"][0]["id"]
    for path, raw in (
            ("/api/matches", rb'{"black": "\ud800", "white": "web-beginner"}'),
            ("/api/matches", rb'{"black": "web-beginner", "white": "web-beginner", "\udfff": 1}'),
            ("/api/matches", b'{"black": "web-beginner", "white": "web-beginner", '
                             b'"variant": "\xed\xa0\x80"}'),
            ("/api/ladders", rb'{"bots": ["web-beginner", "web-intermediate"], "name": "x\udbff"}'),
            (f"/api/matches/{match_id}/analysis", rb'{"ply": 0, "bot": ["\ud800"]}'),
            (f"/api/matches/{match_id}/analysis", rb'{"ply": 0, "bot": "a\udc00b"}')):
        status, _, reply = web.http.request("POST", path, raw, token=USER_TOKEN)
        assert status == 400, (raw, reply)
        error = error_of(reply)
        assert error["status"] == "invalid-argument", error
        assert "half of a UTF-16 surrogate pair" in error["message"], error
    # A whole pair is one character, and a name like any other.
    status, _, reply = web.http.request(
        "POST", "/api/matches", rb'{"black": "\ud83d\ude00", "white": "web-beginner"}',
        token=USER_TOKEN)
    assert status == 400 and "\U0001f600" in reply.decode(), reply


def test_a_body_sent_in_chunks_is_read_up_to_the_limit(web: WebStack) -> None:
    """Without a Content-Length the body is still read no further than the limit."""
    host, port = web.http.base.removeprefix("http://").rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        chunks = (b"[" + b"1," * 10_000 for _ in range(20))  # 400 KB, never a whole JSON
        connection.request("POST", "/api/matches", body=chunks, encode_chunked=True,
                           headers={"content-type": "application/json",
                                    "authorization": f"Bearer {USER_TOKEN}"})
        reply = connection.getresponse()
        assert reply.status == 413
        assert error_of(reply.read())["status"] == "too-large"
    finally:
        connection.close()


def test_a_misspelt_field_is_a_bad_field_not_a_default(web: WebStack) -> None:
    """An unknown field used to be dropped: 'move_tim_ms' played at the default 1000 ms."""
    for path, body in (("/api/matches", {"black": "web-beginner", "white": "web-beginner",
                                         "move_tim_ms": 5}),
                       ("/api/ladders", {"bots": ["web-beginner", "web-beginner"],
                                         "move_tim_ms": 5, "request_id": "r-1"})):
        status, _, reply = web.http.request("POST", path, body, token=USER_TOKEN)
        assert status == 400, reply
        fields = error_of(reply)["fields"]
        assert [f["field"] for f in fields] == ["move_tim_ms"], fields
        assert "unknown field; known: " in fields[0]["description"]
        assert "move_time_ms" in fields[0]["description"]


def _legal_othello_moves(count: int) -> str:
    board, names = new_position("othello"), []
    while len(names) < count:
        move = board.legal_moves()[0]
        names.append(board.move_to_str(move))
        board.push(move)
    return " ".join(names)


def test_a_ladder_of_its_own_openings_is_made_and_shown_and_bad_ones_named(
        web: WebStack) -> None:
    body = {"bots": ["web-beginner", "web-intermediate"], "openings": ["f5 d6 c3", "c4,c3"],
            "games_per_pairing": 4, "move_time_ms": 30_000}
    status, _, reply = web.http.request("POST", "/api/ladders", body, token=USER_TOKEN)
    assert status == 201, reply
    made = json.loads(reply)
    try:
        shown = web.http.json(f"/api/ladders/{made['id']}")["ladder"]
        assert shown["opening_suite"] == "custom" and shown["openings_count"] == 2
        assert shown["openings"] == ["f5 d6 c3", "c4 c3"]
        # A list of ladders carries the count only (256 openings of 40 moves each, times
        # a page of ladders, made the list megabytes).
        listed = web.http.json("/api/ladders?limit=200")["ladders"]
        (summary,) = [ladder for ladder in listed if ladder["id"] == made["id"]]
        assert summary["openings_count"] == 2 and "openings" not in summary
    finally:
        web.http.request("POST", f"/api/ladders/{made['id']}/cancel", {}, token=USER_TOKEN)
    for openings, fields, first_says in (
            (["f5 f5", 7, "d3 c5 f6"], {"openings[0]", "openings[1]"}, "move 2: "),
            (["f5"] * 257, {"openings"}, ""),
            # the service's limit, named as the form's field (was config.openings[0])
            ([_legal_othello_moves(41)], {"openings[0]"}, "41 moves; at most 40"),
    ):
        status, _, reply = web.http.request(
            "POST", "/api/ladders", {**body, "openings": openings}, token=USER_TOKEN)
        assert status == 400, reply
        assert {f["field"] for f in error_of(reply)["fields"]} == fields, reply
        assert "config." not in reply.decode(), reply  # in the message neither
        if first_says:  # the form's lines: which move of one is wrong, or what is
            (first,) = [f for f in error_of(reply)["fields"] if f["field"] == "openings[0]"]
            assert first["description"].startswith(first_says), first
    status, _, reply = web.http.request(
        "POST", "/api/ladders", {**body, "opening_suite": "othello-balanced"}, token=USER_TOKEN)
    assert status == 400 and "not both" in reply.decode(), reply
    # 0 games per pairing: every opening twice, colours swapped (the form's "every opening")
    status, _, reply = web.http.request(
        "POST", "/api/ladders", {**body, "games_per_pairing": 0}, token=USER_TOKEN)
    assert status == 201, reply
    every = json.loads(reply)
    web.http.request("POST", f"/api/ladders/{every['id']}/cancel", {}, token=USER_TOKEN)
    assert every["games_per_pairing"] == 4 and every["games_total"] == 4


def test_a_ladder_left_without_a_suite_plays_the_games_own_as_from_the_cli(
        web: WebStack) -> None:
    """The web chose 'none' for a Gomoku ladder left without a suite, where the CLI and the
    SDK play the game's own (gomoku-balanced15 on 15x15); and what a suite implies, the
    gateway decided first."""
    register(web.client, {"web-gomoku-a": ("sharpmoku-normal", {}),
                          "web-gomoku-b": ("sharpmoku-normal", {})})
    status, _, reply = web.http.request(
        "POST", "/api/ladders", {"bots": ["web-gomoku-a", "web-gomoku-b"], "game": "gomoku",
                                 "move_time_ms": 30_000}, token=USER_TOKEN)
    assert status == 201, reply
    made = json.loads(reply)
    web.http.request("POST", f"/api/ladders/{made['id']}/cancel", {}, token=USER_TOKEN)
    assert made["opening_suite"] == "gomoku-balanced15"
    assert made["game"] == {"kind": "gomoku", "variant": "freestyle", "size": 15}
    # A suite implies its variant: the gateway filled in 'standard' itself, and the form's
    # 'international' was refused as contradicting it.
    status, _, reply = web.http.request(
        "POST", "/api/ladders", {"bots": ["web-beginner", "web-intermediate"],
                                 "opening_suite": "international", "move_time_ms": 30_000},
        token=USER_TOKEN)
    assert status == 201, reply
    made = json.loads(reply)
    web.http.request("POST", f"/api/ladders/{made['id']}/cancel", {}, token=USER_TOKEN)
    assert made["game"] == {"kind": "othello", "variant": "international", "size": 8}


def test_a_game_left_out_is_the_one_the_bots_play_as_from_the_cli(web: WebStack) -> None:
    """A match or a ladder of two Gomoku bots, no ``game`` said: the gateway read it as
    Othello ('Othello is played on 8x8...; bot ... plays gomoku, not othello'), and an
    opening ``h8`` as an Othello move. The CLI takes the game of the first bot."""
    register(web.client, {"web-gomoku-c": ("sharpmoku-normal", {}),
                          "web-gomoku-d": ("sharpmoku-normal", {})})
    status, _, reply = web.http.request(
        "POST", "/api/matches", {"black": "web-gomoku-c", "white": "web-gomoku-d",
                                 "size": 9, "opening": "e5", "move_time_ms": 30_000},
        token=USER_TOKEN)
    assert status == 201, reply
    made = json.loads(reply)
    web.http.request("POST", f"/api/matches/{made['id']}/cancel", {}, token=USER_TOKEN)
    assert web.http.json(f"/api/matches/{made['id']}")["game"]["kind"] == "gomoku"
    status, _, reply = web.http.request(
        "POST", "/api/ladders", {"bots": ["web-gomoku-c", "web-gomoku-d"],
                                 "openings": ["h8 i9"], "move_time_ms": 30_000},
        token=USER_TOKEN)
    assert status == 201, reply
    made = json.loads(reply)
    web.http.request("POST", f"/api/ladders/{made['id']}/cancel", {}, token=USER_TOKEN)
    assert made["game"] == {"kind": "gomoku", "variant": "freestyle", "size": 15}
    # A bot nobody has is still named as the trouble, in the game the body says (Othello).
    status, _, reply = web.http.request(
        "POST", "/api/matches", {"black": "web-nobody", "white": "web-gomoku-d"},
        token=USER_TOKEN)
    assert status in (400, 404) and "web-nobody" in reply.decode(), reply


def test_a_refusal_is_as_bounded_on_the_web_as_on_the_grpc_api(web: WebStack) -> None:
    """Ten unknown fields of 60 characters, each answered with the known names, made a
    3,000-character message on the web (the gRPC API bounds it to 1,000)."""
    body: dict[str, object] = {"black": "web-beginner", "white": "web-beginner",
                               **{f"{i}{'z' * 59}": 1 for i in range(10)}}
    status, _, reply = web.http.request("POST", "/api/matches", body, token=USER_TOKEN)
    assert status == 400, reply
    error = error_of(reply)
    assert len(error["fields"]) == 10, error
    assert error["message"].startswith("invalid request: 0zzz"), error
    assert len(error["message"]) == MAX_MESSAGE_CHARS and error["message"].endswith("…")


def test_a_quota_refusal_is_too_many_requests(web: WebStack) -> None:
    """A user's request over a quota is the user's to change (429), not a failing service
    (it was a 502 'upstream-error')."""
    status, _, reply = web.http.request(
        "POST", "/api/matches",
        {"black": "web-beginner", "white": "web-beginner", "move_time_ms": 600_000},
        token=USER_TOKEN)
    assert status == 429, reply
    error = error_of(reply)
    assert error["status"] == "resource-exhausted", error
    assert "quota move_time_ms" in error["message"], error


def _open_stream(web: WebStack, path: str, token: str | None = None, source: str = "",
                 ) -> tuple[http.client.HTTPConnection, int, bytes]:
    """A live stream held open: (the connection, the status, the first bytes); from the
    loopback address ``source`` if given (another client)."""
    host, port = web.http.base.removeprefix("http://").rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=30,
                                            source_address=(source, 0) if source else None)
    connection.request("GET", path, headers={"authorization": f"Bearer {token}"} if token
                       else {})
    reply = connection.getresponse()
    return connection, reply.status, reply.read(200) if reply.status == 200 else reply.read()


def _connect(to: Http, source: str, timeout_s: float = 30) -> http.client.HTTPConnection:
    host, port = to.base.removeprefix("http://").rsplit(":", 1)
    return http.client.HTTPConnection(host, int(port), timeout=timeout_s,
                                      source_address=(source, 0))


QUESTIONS = itertools.count()  # a bot no one registered: a new question, no shared answer


def _hold(to: Http, source: str, count: int, forwarded: str = "",
          header: str = "x-forwarded-for") -> list[http.client.HTTPConnection]:
    """``count`` actions from ``source`` whose bodies have not arrived: each holds its
    turn (or its place in the line) while the gateway reads it, as a slow client would."""
    held = []
    for _ in range(count):
        connection = _connect(to, source)
        connection.putrequest("POST", "/api/matches")
        headers = [("content-type", "application/json"), ("content-length", "40"),
                   ("authorization", f"Bearer {USER_TOKEN}")]
        for name, value in headers + ([(header, forwarded)] if forwarded else []):
            connection.putheader(name, value)
        connection.endheaders()
        held.append(connection)
    return held


def _refused(to: Http, source: str, forwarded: str = "", header: str = "x-forwarded-for",
             ) -> tuple[bytes, list[http.client.HTTPConnection]]:
    """Reads from ``source`` until one is refused at once: (its body, the reads that
    joined the line instead, still open). A read that comes while the gateway is still
    reading the held actions joins the line: kept, and answered once they are. Each asks
    its own question, so that no answer shared with another viewer stands in for it."""
    queued: list[http.client.HTTPConnection] = []
    deadline = time.monotonic() + 60
    while True:
        probe = _connect(to, source, timeout_s=3)
        probe.request("GET", f"/api/matches?limit=1&bot=probe-{next(QUESTIONS)}",
                      headers={header: forwarded} if forwarded else {})
        try:
            reply = probe.getresponse()
        except TimeoutError:
            queued.append(probe)
            assert time.monotonic() < deadline, "the line never filled"
            continue
        body = reply.read()
        probe.close()
        assert reply.status == 429, body
        return body, queued


def test_one_viewer_waits_for_its_own_requests_not_everyone_else(web: WebStack) -> None:
    """The gateway reads for every anonymous viewer with one token, so the services'
    calls_at_once cannot tell them apart: one client's eight loops of 200-match lists
    slowed every other viewer. Now a viewer has ARENA_WEB_CALLS_PER_VIEWER (4) requests
    answered at once and four times as many waiting; the next is refused at once."""
    flood = "127.0.0.3"
    held = _hold(web.http, flood, 4 + 16)
    queued: list[http.client.HTTPConnection] = []
    try:
        body, queued = _refused(web.http, flood)
        error = error_of(body)
        assert error["status"] == "resource-exhausted"
        assert "4 requests from here are being answered and 16 more wait" in error["message"]
        # Another viewer is answered meanwhile.
        status, _, reply_body = web.http.request("GET", "/api/matches?limit=1")
        assert status == 200, reply_body
        # The held requests end (their bodies are no form: 400) and the waiting ones
        # are answered in turn.
        for connection in held:
            connection.send(json.dumps({"black": "x" * 27}).encode())
        for connection in held:
            assert connection.getresponse().status == 400
        for probe in queued:
            probe.sock.settimeout(30)
            assert probe.getresponse().status == 200
    finally:
        for connection in held + queued:
            connection.close()


def test_behind_a_trusted_proxy_each_client_is_its_own_viewer(
        web: WebStack, tmp_path: Path) -> None:
    """Behind a reverse proxy every request comes from the proxy, so all anonymous
    viewers were one: a client that filled its line had every other viewer refused.
    Named in ARENA_WEB_TRUSTED_PROXIES, a proxy's X-Forwarded-For names the client (read
    from the right, so what a client wrote there itself changes nothing); from anywhere
    else the header is ignored, so nobody buys more turns by making up addresses."""
    proxy, direct = "127.0.0.5", "127.0.0.6"
    client = "203.0.113.7"
    held: list[http.client.HTTPConnection] = []
    with another_gateway(web, tmp_path, ARENA_WEB_TRUSTED_PROXIES="127.0.0.5, 10.0.0.0/8",
                         ARENA_WEB_CALLS_PER_VIEWER="1") as (_, gateway):
        def status(source: str, forwarded: str = "") -> int:
            connection = _connect(gateway, source, timeout_s=10)
            connection.request("GET", f"/api/matches?limit=1&bot=probe-{next(QUESTIONS)}",
                               headers={"x-forwarded-for": forwarded} if forwarded else {})
            reply = connection.getresponse()
            reply.read()
            connection.close()
            return reply.status

        try:
            # One client behind the proxy fills its line (one answered, four waiting).
            held += _hold(gateway, proxy, 1 + 4, forwarded=client)
            body, queued = _refused(gateway, proxy, forwarded=client)
            held += queued
            assert "1 requests from here" in error_of(body)["message"]
            assert status(proxy, f"198.51.100.9, {client}") == 429  # its own first entry
            assert status(proxy, f"{client}, 10.1.2.3") == 429  # through two proxies
            assert status(proxy, f"{client}, [::ffff:127.0.0.5]:443") == 429
            # Other clients of the same proxy, and the proxy itself, are served.
            assert status(proxy, "203.0.113.8") == 200
            assert status(proxy, "203.0.113.8, 10.1.2.3") == 200
            assert status(proxy) == 200
            # A client that is no proxy names itself in vain: its line fills all the same.
            held += [connection for number in range(1 + 4)
                     for connection in _hold(gateway, direct, 1, f"198.51.100.{number}")]
            _, queued = _refused(gateway, direct, forwarded="198.51.100.77")
            held += queued
            assert status(direct, client) == 429
            assert status(proxy, "203.0.113.9") == 200
        finally:
            for connection in held:
                connection.close()


def test_behind_a_proxy_that_writes_forwarded_the_client_is_read_from_it(
        web: WebStack, tmp_path: Path) -> None:
    """With ARENA_WEB_FORWARDED_HEADER=forwarded the client is the RFC 7239 header's
    ``for=``, and X-Forwarded-For (which such a proxy passes on as the client wrote it)
    names no one."""
    proxy, client = "127.0.0.5", "203.0.113.7"
    held: list[http.client.HTTPConnection] = []
    with another_gateway(web, tmp_path, ARENA_WEB_TRUSTED_PROXIES="127.0.0.5",
                         ARENA_WEB_FORWARDED_HEADER="forwarded",
                         ARENA_WEB_CALLS_PER_VIEWER="1") as (_, gateway):
        def status(headers: dict[str, str]) -> int:
            connection = _connect(gateway, proxy, timeout_s=10)
            connection.request("GET", f"/api/matches?limit=1&bot=probe-{next(QUESTIONS)}",
                               headers=headers)
            reply = connection.getresponse()
            reply.read()
            connection.close()
            return reply.status

        try:
            held += _hold(gateway, proxy, 1 + 4, forwarded=f"for={client}", header="forwarded")
            body, queued = _refused(gateway, proxy, forwarded=f'for="{client}:4711"',
                                    header="forwarded")
            held += queued
            assert "1 requests from here" in error_of(body)["message"]
            assert status({"forwarded": f"for=198.51.100.9, for={client};proto=http"}) == 429
            assert status({"forwarded": "for=203.0.113.8"}) == 200  # another client
            # The other header is not the proxy's: the request is the proxy's own.
            assert status({"x-forwarded-for": client}) == 200
        finally:
            for connection in held:
                connection.close()


def test_viewers_asking_the_same_question_share_one_answer(web: WebStack) -> None:
    """Every viewer of a running ladder's page reloads the same standings and games after
    each game; thirty of them made the referee play 2.4 times fewer games. Now the
    services answer a read once a second, whoever asks."""
    path = "/api/matches?bot=web-beginner&limit=7"
    before = _listings(web)
    answers: list[tuple[int, bytes]] = []

    def read(viewer: int) -> None:
        connection = _connect(web.http, f"127.0.2.{viewer + 1}")
        connection.request("GET", path)
        reply = connection.getresponse()
        answers.append((reply.status, reply.read()))
        connection.close()

    viewers = [threading.Thread(target=read, args=(n,)) for n in range(20)]
    for viewer in viewers:
        viewer.start()
    for viewer in viewers:
        viewer.join(60)
    assert len(answers) == 20 and {status for status, _ in answers} == {200}
    assert len({body for _, body in answers}) == 1
    calls = _listings(web) - before
    assert 1 <= calls <= 3, calls  # one a second at most (each viewer alone: 20)


def _listings(web: WebStack) -> float:
    """The referee's ListMatches calls so far."""
    address = web.stack.manifest()["metrics"]["referee"]
    return total({"referee": scrape(address)}, "grpc_server_handled_total",
                 grpc_method="ListMatches")


def test_a_refused_action_keeps_the_shared_answers(web: WebStack) -> None:
    """Any POST, even one refused for want of a token, forgot every shared answer: anyone
    could keep every viewer's reads from being shared (a loop of refused cancels took a
    match's reads by the referee from 10 to 93 in 10 s). A refused action changed nothing
    and forgets nothing; one that goes through still does (the test above)."""
    path = "/api/matches?bot=web-beginner&limit=6"
    before, began = _listings(web), time.monotonic()
    for _ in range(10):
        assert web.http.request("GET", path)[0] == 200
        assert web.http.request("POST", "/api/matches/nonesuch/cancel", {})[0] == 401
        assert web.http.request("POST", "/api/matches/nonesuch/cancel", {},
                                token=USER_TOKEN)[0] == 404
    calls, took = _listings(web) - before, time.monotonic() - began
    assert 1 <= calls <= 1 + took / FRESH_S, (calls, took)  # the old code: 10


def test_an_action_is_seen_at_once_by_its_author(web: WebStack) -> None:
    """Shared answers are forgotten when an action goes through the gateway: the page
    that cancels a match reads it cancelled, not the answer of a moment before."""
    status, _, reply = web.http.request(
        "POST", "/api/matches", {"black": "web-beginner", "white": "web-beginner",
                                 "move_time_ms": 20_000}, token=USER_TOKEN)
    assert status == 201, reply
    match_id = json.loads(reply)["id"]
    assert web.http.json(f"/api/matches/{match_id}")["status"] in ("pending", "running")
    status, _, reply = web.http.request("POST", f"/api/matches/{match_id}/cancel", {},
                                        token=USER_TOKEN)
    assert status == 200, reply
    assert web.http.json(f"/api/matches/{match_id}")["status"] == "cancelled"


class Page:
    """A live page's stream, read as it comes."""

    def __init__(self, web: WebStack, path: str, source: str) -> None:
        self.connection = _connect(web.http, source)
        self.connection.request("GET", path)
        self.reply = self.connection.getresponse()
        assert self.reply.status == 200
        self.text = ""

    def until(self, done: Callable[[str], bool], timeout_s: float = 60) -> str:
        deadline = time.monotonic() + timeout_s
        while not done(self.text):
            assert time.monotonic() < deadline, self.text[-500:]
            self.text += self.reply.read1(65536).decode()
        return self.text


def test_pages_of_one_match_share_one_stream(web: WebStack) -> None:
    """Each live page had a gRPC stream of its own: sixty pages of a running ladder took
    the ladder service's CPU and the ladder played half its games. Now the pages of one
    match share one stream, and a page that comes late is sent what came before."""
    status, _, reply = web.http.request(
        "POST", "/api/matches", {"black": "web-live-a", "white": "web-live-b",
                                 "move_time_ms": 20_000}, token=USER_TOKEN)
    assert status == 201, reply
    match_id = json.loads(reply)["id"]
    path = f"/api/matches/{match_id}/events"

    def watches() -> float:  # the referee's WatchMatch calls that have ended
        address = web.stack.manifest()["metrics"]["referee"]
        return total({"referee": scrape(address)}, "grpc_server_handled_total",
                     grpc_method="WatchMatch")

    before = watches()
    while True:  # streams of earlier tests may still be ending
        time.sleep(1)
        if watches() == before:
            break
        before = watches()
    pages = [Page(web, path, f"127.0.3.{n + 1}") for n in range(8)]
    try:
        for page in pages:
            page.until(lambda text: "event: match" in text)
        seen = pages[0].until(lambda text: text.count("event: ply") >= 3)
        late = Page(web, path, "127.0.3.100")
        pages.append(late)
        # The late page is sent the header and every ply the first saw, at once.
        late.until(lambda text: text.count("event: ply") >= seen.count("event: ply"),
                   timeout_s=10)
        assert late.text.index("event: match") < late.text.index("event: ply")
    finally:
        for page in pages:
            page.connection.close()
        web.http.request("POST", f"/api/matches/{match_id}/cancel", {}, token=USER_TOKEN)
    # Nine pages, one stream: it ends (cancelled) once the last page is gone.
    deadline = time.monotonic() + 30
    while watches() - before < 1:
        assert time.monotonic() < deadline, "the shared stream never ended"
        time.sleep(0.2)
    time.sleep(2)  # streams of their own would all have ended by now
    assert watches() - before == 1


def test_a_live_stream_is_not_opened_by_head(web: WebStack) -> None:
    """Starlette answers HEAD wherever a route takes GET: a HEAD of a live stream opened
    it (a gRPC stream, one of the viewer's slots held while the connection stayed open)
    to answer 200 with no body."""
    match_id = web.http.json(f"/api/matches?ladder={web.ladder_id}&limit=1")["matches"][0]["id"]
    for path in (f"/api/matches/{match_id}/events", f"/api/ladders/{web.ladder_id}/events"):
        status, headers, body = web.http.request("HEAD", path)
        assert status == 405 and headers["allow"] == "GET", (path, status, headers)
        assert body == b""
        events = sse_events(web.http, path)  # GET still streams
        assert events[-1][0] == "end", events


def _web_counts(web: WebStack, name: str, **labels: str) -> float:
    return total({"web": scrape(web.stack.manifest()["metrics"]["web"])}, name, **labels)


def test_the_gateway_counts_what_it_answers(web: WebStack) -> None:
    """The gateway's /metrics held nothing about the web: no request, status or latency,
    and its own refusals (a viewer's requests or live pages past their share) counted
    nowhere. Now each API answer is counted by route template, method and status, and
    timed; an address no route takes is 'unrouted'."""
    def count(route: str, method: str, code: str) -> float:
        return _web_counts(web, "arena_web_requests_total", route=route, method=method,
                           code=code)

    asked = (("/api/matches", "GET", "200"), ("/api/matches/{id}", "GET", "404"),
             ("/api/matches/{id}/cancel", "POST", "401"), ("unrouted", "GET", "404"),
             ("unrouted", "other", "404"), ("/api/matches", "PATCH", "405"))
    before = [count(*labels) for labels in asked]
    timed = _web_counts(web, "arena_web_request_seconds_count", route="/api/matches")
    assert web.http.request("GET", "/api/matches?limit=1")[0] == 200
    assert web.http.request("GET", "/api/matches/nonesuch")[0] == 404
    assert web.http.request("POST", "/api/matches/nonesuch/cancel", {})[0] == 401
    assert web.http.request("GET", "/api/nothing")[0] == 404
    assert web.http.request("BREW", "/api/nothing")[0] == 404  # no label of its own
    # a method an address does not take is its route's (it was 'unrouted')
    assert web.http.request("PATCH", "/api/matches", {})[0] == 405
    assert [count(*labels) - was for labels, was in zip(asked, before, strict=True)] == [1] * 6
    assert _web_counts(web, "arena_web_request_seconds_count", route="/api/matches") == (
        timed + 2)  # the GET and the PATCH


def test_one_viewer_cannot_take_every_live_stream(web: WebStack) -> None:
    """One client opening live pages by the hundred used to fill the gateway's 200 streams,
    and every other viewer got 503 until it let go. Now one viewer (while reading is open:
    an address) holds at most ARENA_WEB_MAX_STREAMS_PER_VIEWER (20) and is told so (429).
    A made-up token on each page bought a share of its own, and so the 200 again."""
    register(web.client, {"web-gomoku": ("arena-gomoku", {})})
    status, _, reply = web.http.request(
        "POST", "/api/matches", {"black": "web-gomoku", "white": "web-gomoku",
                                 "game": "gomoku", "size": 15, "move_time_ms": 20_000},
        token=USER_TOKEN)
    assert status == 201, reply
    match_id = json.loads(reply)["id"]
    path = f"/api/matches/{match_id}/events"
    held: list[http.client.HTTPConnection] = []
    try:
        for number in range(20):
            connection, status, first = _open_stream(web, path, token=f"made-up-{number}")
            held.append(connection)
            assert status == 200 and b"event: match" in first, (status, first)
        refused = _web_counts(web, "arena_limit_refusals_total", limit="web_live_pages_share")
        for token in (None, "made-up-20", USER_TOKEN):
            connection, status, reply = _open_stream(web, path, token=token)
            connection.close()
            assert status == 429, reply
            assert error_of(reply)["status"] == "resource-exhausted"
            assert "the most one viewer may have" in error_of(reply)["message"]
        # each counted where an operator looks (they were counted nowhere)
        assert _web_counts(web, "arena_limit_refusals_total",
                           limit="web_live_pages_share") == refused + 3
        # Another viewer (another address) is still served.
        connection, status, first = _open_stream(web, path, source="127.0.0.2")
        held.append(connection)
        assert status == 200 and b"event: match" in first, (status, first)
        # A closed page gives its stream back.
        held.pop(0).close()
        deadline = time.monotonic() + 20
        while True:
            connection, status, _ = _open_stream(web, path)
            held.append(connection)
            if status == 200 or time.monotonic() > deadline:
                break
            held.pop().close()
            time.sleep(0.2)
        assert status == 200
    finally:
        for connection in held:
            connection.close()
        web.http.request("POST", f"/api/matches/{match_id}/cancel", {}, token=USER_TOKEN)


def test_numbers_int_would_misread_are_bad_queries(web: WebStack) -> None:
    """'²' passes str.isdigit and fails int(), and so does a number of 5,000 digits: both
    were 500 'internal error' (and a logged traceback)."""
    for path, field in (("/api/matches?limit=%C2%B2", "limit"),
                        ("/api/matches?limit=" + "9" * 5000, "limit"),
                        ("/api/bots/web-beginner?version=%C2%B2", "version")):
        status, _, reply = web.http.request("GET", path)
        assert status == 400, (path, reply[:300])
        assert [f["field"] for f in error_of(reply)["fields"]] == [field], reply[:300]
    # Every number the message offers is taken: 19 digits were refused, 'expected an
    # integer 0..9223372036854775807'; one past it is refused.
    for value, status in (("1000000000000000000", 200), ("0009223372036854775807", 200),
                          ("9223372036854775808", 400)):
        got = web.http.request("GET", f"/api/ratings?game_time_ms={value}")
        assert got[0] == status, (value, got[2][:300])
    status, _, reply = web.http.request(
        "POST", "/api/matches", {"black": "web-beginner@\u00b2", "white": "web-beginner"},
        token=USER_TOKEN)
    assert status == 400 and "web-beginner@\u00b2" in error_of(reply)["message"], reply
    assert [f["field"] for f in error_of(reply)["fields"]] == ["black"], reply


def test_a_user_cannot_cancel_someone_else_s_ladder(web: WebStack) -> None:
    status, _, reply = web.http.request("POST", f"/api/ladders/{web.ladder_id}/cancel", {},
                                        token=USER_TOKEN)
    assert status in (403, 409), reply  # not theirs (or already over): never done


def test_live_streams_replay_a_finished_match_and_ladder(web: WebStack) -> None:
    match_id = web.http.json(f"/api/matches?ladder={web.ladder_id}&limit=1")["matches"][0]["id"]
    events = sse_events(web.http, f"/api/matches/{match_id}/events")
    names = [name for name, _ in events]
    assert names[0] == "match" and names[-2:] == ["ended", "end"]
    full = web.http.json(f"/api/matches/{match_id}")
    streamed = events[0][1]["plies"] + [data for name, data in events if name == "ply"]
    assert [p["position"] for p in streamed] == [p["position"] for p in full["plies"]]
    assert events[-2][1]["result"] == full["result"]
    progress = sse_events(web.http, f"/api/ladders/{web.ladder_id}/events")
    assert progress[-1][0] == "end"
    assert progress[-2][1]["ladder"]["games_done"] == 12
    status, _, body = web.http.request("GET", "/api/matches/nope/events")
    assert status == 200  # a stream starts before the referee answers: the error is an event
    assert b"event: error" in body and b'"status":"not-found"' in body


@contextlib.contextmanager
def another_gateway(web: WebStack, tmp_path: Path, **settings: str,
                    ) -> Iterator[tuple[subprocess.Popen[bytes], Http]]:
    """A second web gateway process on the same services, with ``settings`` (ARENA_*)."""
    stack = web.stack
    env = dict(os.environ, ARENA_ADMIN_TOKEN=stack.admin_token,
               ARENA_REGISTRY=stack.target("registry"), ARENA_REFEREE=stack.target("referee"),
               ARENA_LADDER=stack.target("ladder"), **settings)
    ready = tmp_path / "web.port"
    process = subprocess.Popen(
        [sys.executable, "-m", "arena.services.web", "--listen", "127.0.0.1:0",
         "--ready-file", str(ready)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_for_file(ready, process, 30,
                      lambda: process.stdout.read() if process.stdout else "")
        yield process, Http(f"http://127.0.0.1:{ready.read_text()}")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_restricted_reading_needs_a_token(web: WebStack, tmp_path: Path) -> None:
    with another_gateway(web, tmp_path, ARENA_WEB_READ="token",
                         ARENA_WEB_DRAIN_S="0.5") as (process, http):
        assert http.json("/api/config")["read_access"] == "token"
        assert http.request("GET", "/ladders")[0] == 200  # the page itself: no data in it
        status, _, body = http.request("GET", "/api/ladders")
        assert status == 401 and error_of(body)["status"] == "unauthenticated"
        assert http.request("GET", "/api/ladders", token="made-up")[0] == 401
        assert web.ladder_id in str(http.json("/api/ladders", token=USER_TOKEN))
        match_id = next(iter(web.client.iter_matches(ladder_id=web.ladder_id))).id
        assert http.request("GET", f"/api/matches/{match_id}/events")[0] == 401
        # A made-up token is a viewer of its own here, and it holds nothing: it is
        # refused before its stream starts, a 401 as on any other read (it was a 200
        # and then an error event), so a hundred of them leave room.
        for number in range(30):
            for path in (f"/api/matches/{match_id}/events",
                         f"/api/ladders/{web.ladder_id}/events"):
                status, headers, body = http.request("GET", path, token=f"made-up-{number}")
                assert status == 401, (path, status, body[:200])
                assert error_of(body)["status"] == "unauthenticated", body[:200]
                assert headers["www-authenticate"] == "Bearer"
        status, _, body = http.request("GET", f"/api/matches/{match_id}/events",
                                        token=USER_TOKEN)
        assert status == 200 and b"event: match" in body, body[:200]
        status, _, body = http.request("GET", f"/api/ladders/{web.ladder_id}/events",
                                        token=USER_TOKEN)
        assert status == 200 and b"event: progress" in body, body[:200]
        # A known token's stream still tells what else went wrong, as while reading is open.
        status, _, body = http.request("GET", "/api/matches/nope/events", token=USER_TOKEN)
        assert status == 200 and b'"status":"not-found"' in body, body[:200]
        # SIGTERM: /healthz turns 503 while draining, then a clean exit.
        target = http.base.removeprefix("http://")
        assert check_http_health(target)
        process.send_signal(signal.SIGTERM)
        time.sleep(0.2)
        assert not check_http_health(target)
        assert process.wait(timeout=15) == 0


def _created_and_finished(web: WebStack, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A match created on the web as the user, and its JSON once it has finished."""
    status, _, reply = web.http.request("POST", "/api/matches", body, token=USER_TOKEN)
    assert status == 201, reply
    match_id = json.loads(reply)["id"]
    deadline = time.monotonic() + 120
    while (match := web.http.json(f"/api/matches/{match_id}"))["status"] != "finished":
        assert time.monotonic() < deadline, match["status"]
        time.sleep(0.5)
    return match_id, match


def test_a_deleted_match_s_search_trees_are_not_found(web: WebStack) -> None:
    """The gateway keeps a search tree it loaded for five minutes (a viewer opens it a
    slice at a time); a deleted match's kept trees were still served, while the match
    itself was not found."""
    body = {"black": "web-kreversi", "white": "web-beginner", "move_time_ms": 3000,
            "capture_trees": True}
    match_id, match = _created_and_finished(web, body)
    plies = [view["record_ply"] for view in match["plies"] if view.get("has_tree")]
    assert plies, "the KReversi bot stored no search tree"
    tree = f"/api/matches/{match_id}/trees/{plies[0]}"
    root = web.http.json(tree)["root"]
    assert web.http.json(f"{tree}?node={root}&levels=2")["node"]["id"] == root
    status, _, reply = web.http.request("DELETE", f"/api/matches/{match_id}", token=USER_TOKEN)
    assert status == 204, reply
    for path in (f"/api/matches/{match_id}", tree, f"{tree}?node={root}&levels=3"):
        status, _, reply = web.http.request("GET", path)
        assert status == 404, (path, reply[:200])
        assert error_of(reply)["status"] == "not-found"


def test_creates_are_idempotent_and_a_running_match_can_be_cancelled(web: WebStack) -> None:
    body = {"black": "web-live-a", "white": "web-live-b", "move_time_ms": 2000,
            "request_id": "page-form-1"}
    first = web.http.request("POST", "/api/matches", body, token=USER_TOKEN)
    again = web.http.request("POST", "/api/matches", body, token=USER_TOKEN)
    assert first[0] == again[0] == 201
    match_id = json.loads(first[2])["id"]
    assert json.loads(again[2])["id"] == match_id  # the form sent twice made one match
    assert web.http.request("POST", f"/api/matches/{match_id}/cancel", {})[0] == 401
    status, _, reply = web.http.request("POST", f"/api/matches/{match_id}/cancel", {},
                                        token=USER_TOKEN)
    assert status == 200, reply
    match = web.http.json(f"/api/matches/{match_id}")
    assert match["status"] == "cancelled" and match["result"]["void"] is True
    # A void game is no result: it has no score (it said a draw's, '1/2-1/2') and is in
    # no result filter.
    assert match["result"]["score"] is None and match["result"]["winner"] is None
    for result in ("black", "white", "draw", "forfeit"):
        listed = web.http.json(f"/api/matches?bot=web-live-a&result={result}&limit=200")
        assert match_id not in [m["id"] for m in listed["matches"]]


def test_a_form_key_sent_again_with_other_settings_is_a_409_naming_the_match(
        web: WebStack) -> None:
    """A form's request_id sent again with other bots was answered 201 with the first
    match, as if the one asked for had been created."""
    body = {"black": "web-live-a", "white": "web-live-b", "move_time_ms": 2000,
            "request_id": "page-form-2"}
    status, _, reply = web.http.request("POST", "/api/matches", body, token=USER_TOKEN)
    assert status == 201, reply
    match_id = json.loads(reply)["id"]
    other = {**body, "white": "web-beginner"}
    status, _, reply = web.http.request("POST", "/api/matches", other, token=USER_TOKEN)
    assert status == 409, reply
    error = error_of(reply)
    assert error["status"] == "already-exists"
    assert error["message"] == (f"request_id 'page-form-2' already made match {match_id} "
                                "with different settings; use a new request_id")
    web.http.request("POST", f"/api/matches/{match_id}/cancel", {}, token=USER_TOKEN)


def test_a_match_created_on_the_web_may_be_adjudicated(web: WebStack) -> None:
    """`adjudicate_empties` in the body reaches the referee: the game ends at 18 empty
    squares with perfect play's result; the services' limit is a bad field, not a 500."""
    body = {"black": "web-beginner", "white": "web-beginner", "move_time_ms": 2000,
            "adjudicate_empties": 18}
    _, match = _created_and_finished(web, body)
    assert match["adjudicate_empties"] == 18
    assert match["result"]["termination"] == "adjudicated"
    assert match["result"]["detail"].startswith("exact solve at ")
    for bad in (19, -1):  # the referee's rule and message, whatever the number
        status, _, reply = web.http.request("POST", "/api/matches",
                                            {**body, "adjudicate_empties": bad}, token=USER_TOKEN)
        assert status == 400, reply
        assert f"adjudicate_empties: must be in 0..18, got {bad}" in reply.decode()
    status, _, reply = web.http.request("POST", "/api/matches",
                                        {**body, "adjudicate_empties": 2**31}, token=USER_TOKEN)
    assert status == 400 and "adjudicate_empties" in reply.decode(), reply  # not an int32


# -- the board editor's positions ------------------------------------------------------------


def _fields(reply: bytes) -> dict[str, str]:
    return {f["field"]: f["description"] for f in error_of(reply)["fields"]}


def test_the_rules_check_a_position_drawn_in_the_editor(web: WebStack) -> None:
    """POST /api/positions: a game's start, a board drawn stone by stone, or a text form
    pasted, each answered by the rules (its text form, its game, its legal moves); what
    no game reaches is a bad field in the rules' words. No token: nothing is acted on."""
    start = new_position("othello")
    status, _, reply = web.http.request("POST", "/api/positions", {"game": "othello"})
    assert status == 200, reply
    answer = json.loads(reply)
    assert answer["position"] == start.to_text()
    assert answer["game"] == {"kind": "othello", "variant": "standard", "size": 8}
    assert sorted(answer["view"]["legal"]) == sorted(start.legal_moves())
    assert answer["view"]["turn"] == "black" and not answer["view"]["over"]
    # The international start is another position.
    status, _, reply = web.http.request("POST", "/api/positions",
                                        {"game": "othello", "variant": "international"})
    assert status == 200 and json.loads(reply)["position"] == (
        new_position("othello", "international").to_text())
    # A board drawn: the start with a disc more, white to move.
    cells = answer["view"]["board"]
    drawn = cells[:19] + "X" + cells[20:]
    status, _, reply = web.http.request("POST", "/api/positions", {
        "game": "othello", "board": drawn, "turn": "white"})
    assert status == 200, reply
    made = json.loads(reply)
    assert made["position"] == f"{drawn} O" and made["view"]["turn"] == "white"
    # The same, pasted as its text form
    status, _, reply = web.http.request("POST", "/api/positions", {
        "game": "othello", "position": made["position"]})
    assert status == 200 and json.loads(reply)["view"] == made["view"], reply
    # Gomoku: three black stones and no white one is no game's position.
    size = 15
    gomoku = ["-"] * size * size
    for square in (112, 113, 114):
        gomoku[square] = "X"
    for body, fields in (
            ({"game": "gomoku", "board": "".join(gomoku), "turn": "white"}, {"board"}),
            ({"game": "othello", "board": "XO"}, {"board"}),
            ({"game": "othello", "board": drawn, "turn": "red"}, {"turn"}),
            ({"game": "gomoku", "size": 13}, {"size"}),
            ({"game": "gomoku", "variant": "renju"}, {"variant"}),
            ({"game": "othello", "position": "not a position"}, {"position"}),
            ({"game": "othello", "position": made["position"], "board": drawn}, {"position"}),
            ({"game": "othello", "position": made["position"], "colour": "x"}, {"colour"}),
    ):
        status, _, reply = web.http.request("POST", "/api/positions", body)
        assert status == 400 and set(_fields(reply)) == fields, (body, reply)
    status, _, reply = web.http.request("POST", "/api/positions", {
        "game": "gomoku", "board": "".join(gomoku), "turn": "white"})
    assert "stone" in _fields(reply)["board"].lower(), reply  # the rules' own words
    # A text form pasted with no game named is the game its shape says (Gomoku's begins
    # with its size; it was read as Othello's and refused).
    played = new_position("gomoku", "exact-five", 9)
    played.push(40)
    for text, kind in ((played.to_text(), "gomoku"), (made["position"], "othello")):
        status, _, reply = web.http.request("POST", "/api/positions", {"position": text})
        assert status == 200 and json.loads(reply)["game"]["kind"] == kind, reply
        assert json.loads(reply)["position"] == text
    status, _, reply = web.http.request("POST", "/api/positions", {"position": "15 x"})
    assert status == 400 and "Gomoku text form" in _fields(reply)["position"], reply


def test_a_bot_is_asked_about_any_position_and_a_match_starts_from_one(
        web: WebStack) -> None:
    """POST /api/analysis: a bot's move in a position given as text (as the person);
    POST /api/matches with ``start``: a match from that position, its game the
    position's, its opening played from there."""
    position = new_position("othello")
    for move in ("f5", "d6", "c3", "d3"):
        position.push(position.parse_move(move))
    text = position.to_text()
    asked = {"game": "othello", "position": text, "bot": "web-beginner", "time_ms": 300}
    assert web.http.request("POST", "/api/analysis", asked)[0] == 401
    status, _, reply = web.http.request("POST", "/api/analysis", asked, token=USER_TOKEN)
    assert status == 200, reply
    answer = json.loads(reply)
    assert answer["square"] in position.legal_moves(), answer
    assert answer["move"] == position.move_to_str(answer["square"])
    # No position is the game's start, as /api/positions reads it (it was refused).
    start = new_position("othello")
    status, _, reply = web.http.request("POST", "/api/analysis", {**asked, "position": ""},
                                        token=USER_TOKEN)
    assert status == 200 and json.loads(reply)["square"] in start.legal_moves(), reply
    status, _, reply = web.http.request("POST", "/api/analysis", {
        **asked, "position": "", "size": 7}, token=USER_TOKEN)
    assert status == 400 and "size" in _fields(reply), reply
    over = "X" * 64 + " O"
    for body, field in (({**asked, "position": over}, "position"),
                        ({**asked, "position": "XO"}, "position"),
                        ({**asked, "bot": ""}, "bot")):
        status, _, reply = web.http.request("POST", "/api/analysis", body, token=USER_TOKEN)
        assert status == 400 and field in _fields(reply), reply
    register(web.client, {"web-gomoku-asked": ("sharpmoku-normal", {})})
    status, _, reply = web.http.request("POST", "/api/analysis",
                                        {**asked, "bot": "web-gomoku-asked"}, token=USER_TOKEN)
    assert status == 400 and list(_fields(reply)) == ["bot"], reply

    game = {"black": "web-beginner", "white": "web-intermediate", "move_time_ms": 30_000}
    status, _, reply = web.http.request("POST", "/api/matches", {
        **game, "game": "othello", "start": text, "opening": "e3"}, token=USER_TOKEN)
    assert status == 201, reply
    made = json.loads(reply)
    try:
        shown = web.http.json(f"/api/matches/{made['id']}")
        assert shown["plies"][0]["position"] == text  # ply 0 is the start drawn
        position.push(position.parse_move("e3"))
        assert shown["plies"][1]["position"] == position.to_text()
    finally:
        web.http.request("POST", f"/api/matches/{made['id']}/cancel", {}, token=USER_TOKEN)
    gomoku = new_position("gomoku", "freestyle", 9).to_text()
    for body, field in (({"start": "XO"}, "start"),
                        ({"start": "X" * 64 + " O"}, "start"),  # a finished game
                        ({"start": gomoku, "game": "gomoku", "size": 15}, "size"),
                        ({"start": text, "opening": "a1"}, "opening")):
        status, _, reply = web.http.request("POST", "/api/matches", {**game, **body},
                                            token=USER_TOKEN)
        assert status == 400 and field in _fields(reply), (body, reply)
