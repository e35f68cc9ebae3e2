"""The pages in a real browser (headless Chromium) against the real stack: what a person
sees must be what the services and the rules library say."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import subprocess
import sys
import time
from typing import Any
from urllib.parse import quote, unquote, urlencode

import pytest
import redis
from arena.clients.common import sprt_verdict
from arena.clients.navigator import Navigator
from arena.services.common.protocol.ladders import LadderStore
from arena.services.web.views import ply_view
from google.protobuf import json_format

from arena.bots.spec import config_to_struct
from arena.clock import game_time_left_ms
from arena.errors import AlreadyExistsError, FailedPreconditionError
from arena.formats import parse_replay, write_replay
from arena.games import Color, GomokuBoard, OthelloBoard, Position
from arena.records import match_position
from arena.v1 import bots_pb2, common_pb2, ladder_pb2, match_pb2, referee_pb2
from tests.web.conftest import (
    HOSTILE_DESCRIPTION,
    HOSTILE_NAME,
    LADDER_BOTS,
    REPO,
    USER_TOKEN,
    WebStack,
    open_page,
    register,
    wait_for_ladder,
)

pytestmark = pytest.mark.browser
OTHELLO = common_pb2.GameSpec(kind=common_pb2.GAME_KIND_OTHELLO, variant="standard",
                              board_size=8)

# Page scripts are functions: the pages' CSP forbids evaluating strings (no 'unsafe-eval'),
# and these tests run under it.
BOARD_JS = """() => {
  const svg = document.querySelector('.board-holder svg.board');
  const cells = [...svg.querySelectorAll('g[data-square]')]
    .sort((a, b) => a.dataset.square - b.dataset.square).map((g) => g.dataset.stone).join('');
  return {ply: Number(svg.dataset.ply), cells,
          label: document.querySelector('.ply-label').textContent};
}"""


def cells_of(position: Position) -> str:
    piece_at = getattr(position, "piece_at")  # noqa: B009 - both games have it
    symbols = {Color.BLACK: "X", Color.WHITE: "O", None: "-"}
    return "".join(symbols[piece_at(square)] for square in range(position.size ** 2))


def finished_ladder_match(web: WebStack, with_tree: bool = False) -> match_pb2.Match:
    for match in web.client.iter_matches(ladder_id=web.ladder_id):
        if match.status == match_pb2.MATCH_STATUS_FINISHED and len(match.moves) > 20 and (
                not with_tree or any(m.has_tree and m.search.depth >= 2 for m in match.moves)):
            return match
    raise AssertionError("the test ladder has no finished match of the kind asked for")


# -- standings ------------------------------------------------------------------------------


def test_standings_page_shows_the_numbers_of_the_cli(web: WebStack, page: Any) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    result = subprocess.run(
        [sys.executable, "-m", "arena.clients", "--home", str(web.stack.home), "ladder",
         "standings", web.ladder_id, "--json"],
        capture_output=True, text=True, timeout=60, env=env | {"PYTHONPATH": str(REPO)},
        check=True)
    cli = json.loads(result.stdout)
    open_page(page, f"{web.url}/ladders/{web.ladder_id}")
    page.wait_for_selector("table.standings tbody tr")
    shown = page.eval_on_selector_all("table.standings tbody tr", """rows => rows.map(r => ({
        bot: r.dataset.bot, rank: r.cells[0].textContent,
        fields: Object.fromEntries([...r.querySelectorAll('[data-field]')]
            .map(c => [c.dataset.field, c.textContent]))}))""")
    assert len(shown) == len(cli["rows"]) == 4
    for row, line in zip(cli["rows"], shown, strict=True):
        label = f"{row['bot']['name']}@{row['bot']['version']}"
        assert line["bot"] == label
        assert line["rank"] == str(row["rank"])
        fields = line["fields"]
        assert fields["games"] == str(row["games"])
        assert fields["wins"] == str(row.get("wins", 0))
        assert fields["draws"] == str(row.get("draws", 0))
        assert fields["losses"] == str(row.get("losses", 0))
        assert fields["score"] == f"{row.get('score_pct', 0.0):.1f}%"
        assert fields["elo"] == signed(row.get("elo", 0.0))
        assert fields["interval"] == f"[{signed(row['elo_low'])}, {signed(row['elo_high'])}]"
    games = page.text_content("[data-testid='games-done']")
    assert games == f"{cli['ladder']['games_done']}/{cli['ladder']['games_total']}"
    # The head-to-head matrix holds every ordered pair of the standings.
    cells = page.eval_on_selector_all("table.matrix tbody td:not(.self)", "c => c.length")
    assert cells == 4 * 3


def test_a_player_named_as_a_version_links_to_that_version(web: WebStack, page: Any) -> None:
    """Standings, rating lists and matches name each player as the version that played
    (``NAME@N``); their links dropped the version and opened the bot's latest, another
    configuration once the bot was updated. A plain name still links to the latest."""
    register(web.client, {"web-versioned": ("lab-beginner", {})})
    match = web.client.create_match(match_pb2.MatchConfig(
        game=OTHELLO, black=common_pb2.BotRef(name="web-versioned"),
        white=common_pb2.BotRef(name="web-beginner"),
        time_control=common_pb2.TimeControl(move_time_ms=2000)))
    first = web.client.get_bot("web-versioned")
    spec = bots_pb2.BotSpec()
    spec.CopyFrom(first.spec)
    spec.description = "the second version"
    assert web.client.update_bot("web-versioned", spec).version == first.version + 1
    try:
        open_page(page, f"{web.url}/ladders/{web.ladder_id}")
        links = page.eval_on_selector_all("table.standings tbody tr", """rows => rows.map(
            (r) => [r.dataset.bot, r.querySelector('td.name a').getAttribute('href')])""")
        assert len(links) == 4
        for label, href in links:
            name, version = label.rsplit("@", 1)
            path, _, query = href.partition("?")
            assert (unquote(path), query) == (f"/bots/{name}", f"version={version}"), href
        open_page(page, f"{web.url}/matches/{match.id}")
        page.click(".page-head h1 a[href^='/bots/web-versioned']")
        page.wait_for_url(f"{web.url}/bots/web-versioned?version={first.version}")
        page.wait_for_selector("body[data-ready='1'] h1")
        assert page.text_content("h1") == f"web-versioned v{first.version}"
        assert page.text_content("main").count(f"latest is v{first.version + 1}") == 1
        open_page(page, f"{web.url}/bots?prefix=web-versioned")
        assert page.get_attribute("tr[data-bot='web-versioned'] td.name a", "href") == \
            "/bots/web-versioned"
    finally:
        with contextlib.suppress(FailedPreconditionError):  # over already
            web.client.cancel_match(match.id, "seen")


def _cli_json(web: WebStack, *args: str) -> Any:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    result = subprocess.run(
        [sys.executable, "-m", "arena.clients", "--home", str(web.stack.home), *args, "--json"],
        capture_output=True, text=True, timeout=60, env=env | {"PYTHONPATH": str(REPO)},
        check=True)
    return json.loads(result.stdout)


def test_the_ratings_page_shows_the_list_of_the_cli(web: WebStack, page: Any) -> None:
    for _ in range(5):  # other tests' ladders of this stack may count a game in between
        cli = _cli_json(web, "ladder", "ratings", "--game", "othello")
        open_page(page, f"{web.url}/ratings")
        page.wait_for_selector("table.standings tbody tr")
        if page.text_content("[data-testid='rated-games']").startswith(f"{cli['games']} games"):
            break
    else:
        raise AssertionError("the rating list kept changing")
    assert page.get_attribute("nav[aria-label='Game'] a[aria-current='page']", "href") == \
        "/ratings?game=othello&variant=standard&size=8"
    assert page.get_attribute("nav[aria-label='Clock'] a[aria-current='page']", "href") == \
        "/ratings?game=othello&variant=standard&size=8"  # every clock
    picks = page.eval_on_selector_all("[data-testid='clock-pick']",
                                      "links => links.map(a => a.textContent)")
    assert len(picks) == len(cli["clocks"]) >= 1
    for text, clock in zip(picks, cli["clocks"], strict=True):
        assert text.startswith(f"{clock['clock']['move_time_ms']:,} ms per move")
        assert text.endswith(f"({clock['games']:,} games)")
    shown = page.eval_on_selector_all("section[data-pool] table.standings tbody tr", """rows =>
        rows.map(r => ({pool: r.closest('section').dataset.pool, bot: r.dataset.bot,
            rank: r.cells[0].textContent, fields: Object.fromEntries(
                [...r.querySelectorAll('[data-field]')]
                    .map(c => [c.dataset.field, c.textContent]))}))""")
    assert len(shown) == len(cli["rows"]) >= 4  # at least the test ladder's bots
    for rated, line in zip(cli["rows"], shown, strict=True):
        row = rated["standing"]
        assert line["bot"] == f"{row['bot']['name']}@{row['bot']['version']}"
        assert (line["pool"], line["rank"]) == (str(rated["pool"]), str(row["rank"]))
        assert line["fields"]["games"] == str(row["games"])
        assert line["fields"]["elo"] == signed(row.get("elo", 0.0))
        assert line["fields"]["interval"] == \
            f"[{signed(row['elo_low'])}, {signed(row['elo_high'])}]"
    # One clock's list, picked from the page.
    page.click("[data-testid='clock-pick'] >> nth=0")
    page.wait_for_selector("nav[aria-label='Clock'] [data-testid='clock-pick'][aria-current]")
    clock = cli["clocks"][0]["clock"]
    assert f"move_time_ms={clock['move_time_ms']}" in page.url
    assert page.title().startswith(f"Ratings: Othello at {clock['move_time_ms']:,} ms per move")
    assert "at this clock" in page.text_content(".page-head")
    # Another game's list, picked from the page: none of its ladders has played.
    page.click("nav a[href='/ratings?game=gomoku&variant=freestyle&size=19']")
    page.wait_for_selector("body[data-ready='1'] .empty")
    assert "No rated games" in page.text_content(".empty")
    assert page.title().startswith("Ratings: Gomoku 19")


def signed(value: float) -> str:
    text = f"{abs(value):.0f}"
    if text == "0":
        return "0"
    return ("\u2212" if value < 0 else "+") + text


# -- live --------------------------------------------------------------------------------------


def _live_match(web: WebStack, page: Any, move_time_ms: int) -> match_pb2.Match:
    """A match of the two live bots, its page open."""
    match = web.client.create_match(match_pb2.MatchConfig(
        game=common_pb2.GameSpec(kind=common_pb2.GAME_KIND_OTHELLO, variant="standard",
                                 board_size=8),
        black=common_pb2.BotRef(name="web-live-a"), white=common_pb2.BotRef(name="web-live-b"),
        time_control=common_pb2.TimeControl(move_time_ms=move_time_ms)))
    open_page(page, f"{web.url}/matches/{match.id}")
    return match


def test_a_live_match_page_shows_moves_as_they_are_applied(web: WebStack, page: Any) -> None:
    match = _live_match(web, page, 2000)
    page.evaluate("window.__notReloaded = true")  # gone if the page reloads
    first = int(page.get_attribute(".board-holder", "data-ply"))
    assert page.text_content("h1 .badge") in ("pending", "live")
    page.wait_for_function("n => Number(document.querySelector('.board-holder').dataset.ply) >= n",
                           arg=first + 3, timeout=90_000)
    assert page.evaluate("window.__notReloaded === true")
    # The board follows the newest move, and shows what the referee recorded.
    shown = page.evaluate(BOARD_JS)
    recorded = web.client.get_match(match.id)
    assert 3 <= shown["ply"] <= len(recorded.moves)
    applied = OthelloBoard.from_text(recorded.moves[shown["ply"] - 1].position_after)
    assert shown["cells"] == cells_of(applied)
    # The end arrives the same way: the result, and the last position, without a reload.
    page.wait_for_function(
        "() => /wins|Draw/.test(document.querySelector('.result-line').textContent)",
        timeout=120_000)
    final = web.client.get_match(match.id)
    assert page.text_content("h1 .badge") == "finished"
    shown = page.evaluate(BOARD_JS)
    assert shown["ply"] == len(final.moves)
    assert shown["cells"] == cells_of(OthelloBoard.from_text(final.moves[-1].position_after))
    assert page.evaluate("window.__notReloaded === true")


def test_a_live_match_page_follows_again_after_its_referee_restarts(
        web: WebStack, page: Any) -> None:
    """The gateway tells a page in its stream that the referee went away (503); the page
    stopped for good ("Live updates stopped: referee ... hung up"), the game playing on
    unseen until a reload. It follows again once the referee is back. And a following
    page's address names no ply: copied (or reloaded), it opened frozen at that ply."""
    match = _live_match(web, page, 1000)
    ply = "Number(document.querySelector('.board-holder').dataset.ply)"
    page.wait_for_function(f"() => {ply} >= 2", timeout=90_000)
    assert "#ply" not in page.url, page.url
    web.stack.kill("referee")
    # Meanwhile a viewer is told the referee is away, not where it listens or what its
    # operator should check ("referee unreachable at 127.0.0.1:PORT (...); it likely
    # serves TLS ...").
    status, _, body = web.http.request("GET", "/api/matches?limit=1")
    said = json.loads(body)["error"]["message"]
    assert status == 503 and said.startswith("the referee is unavailable right now"), said
    assert web.stack.target("referee") not in said and "TLS" not in said, said
    web.stack.restart("referee")
    seen = int(page.evaluate(f"() => {ply}"))
    page.wait_for_function(f"n => {ply} >= n", arg=seen + 3, timeout=120_000)
    assert "Live updates stopped" not in page.text_content("main")
    page.click("[data-action=first]")  # stepped back: the address names the ply
    assert page.url.endswith("#ply=0"), page.url
    with contextlib.suppress(FailedPreconditionError):  # over already
        web.client.cancel_match(match.id, "seen")


def test_an_address_no_page_takes_is_the_sites_not_found_page(web: WebStack,
                                                               page: Any) -> None:
    """It was a bare '404 Not Found' line of text, with no way back into the site."""
    status, headers, _ = web.http.request("GET", "/nosuch")
    assert status == 404 and headers["content-type"].startswith("text/html")
    page.goto(f"{web.url}/matches/x/tree/abc")
    page.wait_for_selector("h1:text-is('Not found')")
    assert page.locator("a[href='/']").count() >= 1
    page.problems.errors.clear()  # the browser logs the 404 itself


def _submit_as_user(page: Any, button: str, lands_on: str) -> str:
    """Send a form, give the token the dialog asks for, and return the id of the page it
    lands on."""
    page.click(f"text={button}")
    page.fill("#token-input", USER_TOKEN)
    page.click("#token-form button[value=save]")
    page.wait_for_url(lands_on, timeout=30_000)
    return str(page.url.rsplit("/", 1)[1])


def test_a_match_made_with_the_form_keeps_its_clock(web: WebStack, page: Any) -> None:
    """The New match form as a person fills it: two bots, a game budget, an increment and
    an adjudication; the token dialog first; then the match's page, its clock as the
    referee keeps it."""
    open_page(page, f"{web.url}/matches")
    page.click("text=New match")
    page.fill("input[name=black]", "web-beginner")
    page.fill("input[name=white]", "web-intermediate")
    page.fill("input[name=move_time_ms]", "2000")
    page.fill("input[name=game_time_ms]", "120000")
    page.fill("input[name=increment_ms]", "500")
    page.fill("input[name=adjudicate_empties]", "18")
    match = web.client.get_match(_submit_as_user(page, "Start match", f"{web.url}/matches/*"))
    clock = match.config.time_control
    assert (clock.move_time_ms, clock.game_time_ms, clock.increment_ms) == (2000, 120_000, 500)
    assert match.owner == "webuser" and match.config.adjudicate_empties == 18
    page.wait_for_selector("text=2,000 ms per move, 120,000 ms a game + 500 ms a move")
    page.wait_for_selector("text=adjudicated at 18 empty squares")
    # Each side's clock as the referee keeps it (the budget, plus 500 ms a move, less the
    # time charged), after the last move; the game is stopped wherever it is (the worker
    # is the next tests').
    with contextlib.suppress(FailedPreconditionError):  # over already
        web.client.cancel_match(match.id, "seen")
    page.wait_for_function("() => ['finished', 'cancelled'].includes(document.querySelector("
                           "'h1 .badge').textContent)", timeout=30_000)
    final = web.client.get_match(match.id)
    for side, color in (("black", common_pb2.COLOR_BLACK), ("white", common_pb2.COLOR_WHITE)):
        left = game_time_left_ms(clock, final.moves, color)
        made = sum(1 for r in final.moves if r.color == color)
        assert 120_000 - 2000 * made < left <= 120_000 + 500 * made
        tenths = left // 100
        shown = f"{tenths // 600}:{tenths % 600 // 10:02d}.{tenths % 10}"
        assert page.text_content(f"[data-clock={side}]") == shown


def test_the_new_match_form_plays_a_variant_and_a_lost_answer_makes_one_match(
        web: WebStack, page: Any) -> None:
    """The form offered no variant (the international opening, Gomoku's exact five); its
    games and boards are the rules' (/api/config). And its key: the answers to two sends
    are lost (the matches are made), the second after an edit, which gets a new key (the
    services refuse a key sent with another request: the form said so and made nothing);
    the same settings sent again get the match they made, not a third."""
    open_page(page, f"{web.url}/matches")
    page.click("text=New match")
    form = page.locator("form", has=page.locator("h2", has_text="New match"))
    options = "os => os.map(o => o.value)"
    form.locator("select[name=game]").select_option("gomoku")
    assert form.locator("select[name=size] option").evaluate_all(options) == ["9", "15", "19"]
    assert form.locator("select[name=size]").input_value() == "15"
    assert form.locator("select[name=variant] option").evaluate_all(options) == [
        "", "freestyle", "exact-five"]
    form.locator("select[name=game]").select_option("othello")
    assert form.locator("select[name=variant] option").evaluate_all(options) == [
        "", "standard", "international"]
    form.locator("select[name=variant]").select_option("international")
    page.fill("input[name=black]", "web-beginner")
    page.fill("input[name=white]", "web-intermediate")
    page.fill("input[name=move_time_ms]", "30000")
    answers: list[tuple[int, Any]] = []

    def lost(route: Any) -> None:  # the service answers; the answer never reaches the page
        answer = route.fetch()
        answers.append((answer.status, answer.json()))
        route.abort()

    page.evaluate(f"() => sessionStorage.setItem('arena-token', '{USER_TOKEN}')")
    page.route(re.compile(r".*/api/matches$"), lost)
    try:
        page.click("text=Start match")
        page.wait_for_selector("form .notice.error")
        page.fill("input[name=move_time_ms]", "20000")  # edited: another match
        page.click("text=Start match")
        deadline = time.monotonic() + 30
        while len(answers) < 2 and time.monotonic() < deadline:
            page.wait_for_timeout(100)
        page.unroute(re.compile(r".*/api/matches$"))
        assert [status for status, _ in answers] == [201, 201], answers
        first, second = (reply["id"] for _, reply in answers)
        assert first != second
        page.click("text=Start match")  # the same settings again: the same match, no third
        page.wait_for_url(f"{web.url}/matches/*", timeout=30_000)
        assert page.url.rsplit("/", 1)[1] == second
        match = web.client.get_match(second)
        assert match.config.game.variant == "international"
        assert match.config.time_control.move_time_ms == 20_000
        assert match.start_position == OthelloBoard.start("international").to_text()
    finally:
        for _, reply in answers:
            with contextlib.suppress(FailedPreconditionError, KeyError):
                web.client.cancel_match(reply["id"], "seen")
        page.problems.errors.clear()  # the browser logs the lost answers itself


def test_a_page_opened_as_a_quick_game_starts_shows_its_end(web: WebStack, page: Any) -> None:
    """Lab bots play a game in a blink: its end reaches the page within a second of the
    page's first read, whose answer is kept for the next reader (``web/shared.py``). The
    page read that answer again at the end and stayed 'live' on a ply of the middle."""
    for _ in range(4):
        match = web.client.create_match(match_pb2.MatchConfig(
            game=OTHELLO, black=common_pb2.BotRef(name="web-beginner"),
            white=common_pb2.BotRef(name="web-intermediate"),
            time_control=common_pb2.TimeControl(move_time_ms=2000)))
        web.http.json(f"/api/matches/{match.id}")  # another viewer's read, kept a second
        open_page(page, f"{web.url}/matches/{match.id}")
        page.wait_for_function("() => ['finished', 'cancelled'].includes(document."
                               "querySelector('h1 .badge').textContent)", timeout=20_000)
        final = web.client.get_match(match.id)
        assert final.status == match_pb2.MATCH_STATUS_FINISHED
        assert int(page.get_attribute(".board-holder", "data-ply")) == len(final.moves)


def _live_ladder(web: WebStack, name: str, games_per_pairing: int) -> ladder_pb2.LadderInfo:
    """A round robin of the two live bots at 2 s a move: running while a test looks."""
    return web.client.create_ladder(ladder_pb2.LadderConfig(
        name=name, game=OTHELLO, bots=[common_pb2.BotRef(name="web-live-a"),
                                       common_pb2.BotRef(name="web-live-b")],
        format=ladder_pb2.LADDER_FORMAT_ROUND_ROBIN, games_per_pairing=games_per_pairing,
        opening_suite="othello-balanced", time_control=common_pb2.TimeControl(
            move_time_ms=2000)))


def _ladder_games_a_page(page: Any, games: int) -> list[str]:
    """Make a ladder page ask for ``games`` games a page instead of its 50 (its requests
    rewritten in the browser; the server, its pages and tokens are real); returns the
    addresses it asked, as it asked them, filled as it asks."""
    asked: list[str] = []

    def rewrite(route: Any) -> None:
        asked.append(route.request.url)
        route.continue_(url=route.request.url.replace("limit=50", f"limit={games}"))

    page.route(re.compile(r".*/api/matches\?ladder=.*"), rewrite)
    return asked


def test_a_running_ladder_s_page_follows_its_progress(web: WebStack, page: Any) -> None:
    ladder = _live_ladder(web, "live ladder", games_per_pairing=2)
    open_page(page, f"{web.url}/ladders/{ladder.id}")
    page.evaluate("window.__notReloaded = true")
    assert page.text_content("[data-testid='games-done']") in ("0/2", "1/2")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=\"games-done\"]').textContent === '2/2'",
        timeout=120_000)
    # The standings and the games list follow, and the ladder is over: all without a reload.
    page.wait_for_function("() => document.querySelectorAll('table.standings tbody tr')"
                           ".length === 2 && document.querySelector('h1 .badge')"
                           ".textContent === 'finished'", timeout=30_000)
    standings = web.client.get_standings(ladder.id)
    shown = page.eval_on_selector_all("table.standings tbody tr", "rows => rows.map(r => "
                                      "r.querySelector('[data-field=wins]').textContent)")
    assert shown == [str(row.wins) for row in standings.rows]
    assert page.evaluate("window.__notReloaded === true")


RECORD_GAMES_SHOWN = """() => {
  // Every count the page draws, however briefly.
  const read = () => parseInt(
    document.querySelector("[data-testid='games-done']").textContent.split("/")[0], 10);
  window.__gamesShown = [read()];
  new MutationObserver(() => {
    const count = read();
    if (count !== window.__gamesShown.at(-1)) window.__gamesShown.push(count);
  }).observe(document.querySelector("[data-testid='games-done']").closest(".card"),
             { childList: true, subtree: true, characterData: true });
}"""
HOLD_LADDER_READS = r"""(reads) => {
  // The next reads of the ladder come back only once the page shows more games than they
  // count: a game's event came while each was under way.
  // A read takes its place as it comes back, before it waits: two reads under way at
  // once were both held as the last one (4 held of 3).
  const real = window.fetch;
  window.__heldReads = 0;
  let taken = 0;
  const shown = () => parseInt(
    document.querySelector("[data-testid='games-done']").textContent.split("/")[0], 10);
  window.fetch = async (path, init) => {
    const response = await real(path, init);
    if (!/^\/api\/ladders\/[^/?]+$/.test(String(path)) || taken >= reads) {
      return response;
    }
    taken += 1;
    const count = (await response.clone().json()).ladder.games_done;
    const until = Date.now() + 30000;
    while (shown() <= count && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (shown() > count) window.__heldReads += 1;
    else taken -= 1;  // not held after all: another read may be
    return response;
  };
}"""


def test_a_ladder_page_never_shows_fewer_games_than_it_showed(web: WebStack,
                                                              page: Any) -> None:
    """After a game, the page reads the standings again, and two kinds of answer are older
    than what it shows:
    - one the gateway shares from before that game (a read within a second of another);
    - one that comes back after the next game's event was drawn.
    Either answer's count replaced the newer one: the page went back a game or two and
    stayed there until the next game ended (5 to 50 s). Here the first three reads after
    the page is drawn get a count one lower (rewritten in the browser), and the three after
    them are held until an event has come (the server is real)."""
    ladder = web.client.create_ladder(ladder_pb2.LadderConfig(
        game=OTHELLO, bots=[common_pb2.BotRef(name="web-beginner"),
                            common_pb2.BotRef(name="web-intermediate")],
        games_per_pairing=200, time_control=common_pb2.TimeControl(move_time_ms=100)))
    stale = {"left": 3}

    def older(route: Any) -> None:
        answer = route.fetch()
        data = answer.json()
        if stale["left"] and data["ladder"]["games_done"] > 0:
            stale["left"] -= 1
            data["ladder"]["games_done"] -= 1
        route.fulfill(response=answer, json=data)

    try:
        open_page(page, f"{web.url}/ladders/{ladder.id}")
        page.evaluate(RECORD_GAMES_SHOWN)
        page.route(re.compile(rf".*/api/ladders/{ladder.id}$"), older)
        deadline = time.monotonic() + 120
        holding = False

        def held() -> int:
            return int(page.evaluate("() => window.__heldReads ?? 0"))

        def shown() -> list[int]:
            return list(page.evaluate("() => window.__gamesShown"))

        while time.monotonic() < deadline and (stale["left"] or not holding or held() < 3
                                               or shown()[-1] < shown()[0] + 6):
            if not stale["left"] and not holding:
                page.evaluate(HOLD_LADDER_READS, 3)
                holding = True
            page.wait_for_timeout(100)  # lets the routes above answer
        assert not stale["left"], "fewer stale answers than meant: the test tested less"
        assert held() == 3, "fewer held reads than meant: the test tested less"
        counts = shown()  # read once: the page goes on drawing
        assert counts == sorted(counts), counts  # never back
    finally:
        with contextlib.suppress(FailedPreconditionError):
            web.client.cancel_ladder(ladder.id)


WAITS = "Live updates wait"
SET_VISIBILITY = """(state) => {
  Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => state });
  document.dispatchEvent(new Event('visibilitychange'));
}"""


def _waiting_tabs(tabs: list[Any]) -> list[Any]:
    return [tab for tab in tabs if WAITS in tab.inner_text("main")]


def test_many_live_tabs_leave_the_browser_room_to_read(web: WebStack, context: Any) -> None:
    """A browser opens 6 connections to a site at once and a live page holds one: with six
    live tabs a seventh page never loaded, nor did any read of theirs. The tabs of one
    browser now share 4 live slots: two of six wait and say so, a seventh page loads, and a
    waiting tab follows once a live one closes."""
    ladder = _live_ladder(web, "watched by many", games_per_pairing=20)
    try:
        tabs = [context.new_page() for _ in range(6)]
        for tab in tabs:
            open_page(tab, f"{web.url}/ladders/{ladder.id}")
        deadline = time.monotonic() + 20
        while len(_waiting_tabs(tabs)) != 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(_waiting_tabs(tabs)) == 2
        other = context.new_page()
        open_page(other, f"{web.url}/bots")  # it waited for ever
        other.wait_for_selector("tr[data-bot]")
        live = [tab for tab in tabs if tab not in _waiting_tabs(tabs)]
        live[0].close()
        tabs.remove(live[0])
        deadline = time.monotonic() + 20
        while len(_waiting_tabs(tabs)) != 1 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(_waiting_tabs(tabs)) == 1  # one of the two took the slot given back
        # A hidden tab gives its slot to a tab that is seen, and waits for one when shown
        # (headless, every tab is "visible": the page is told it is hidden, as a browser
        # tells it when another tab is in front).
        hidden = next(tab for tab in tabs if tab not in _waiting_tabs(tabs))
        hidden.evaluate(SET_VISIBILITY, "hidden")
        deadline = time.monotonic() + 20
        while _waiting_tabs(tabs) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _waiting_tabs(tabs)
        hidden.evaluate(SET_VISIBILITY, "visible")
        hidden.wait_for_selector(f"text={WAITS}")
    finally:
        web.client.cancel_ladder(ladder.id)


def test_a_ladder_s_page_says_why_it_waits_while_it_does(web: WebStack, page: Any) -> None:
    """The ladder's ``waiting``, written as the ladder service writes it (its store, with its
    progress entry), appears on an open page without a reload, as text, and goes when the
    ladder ends."""
    ladder = _live_ladder(web, "held ladder", games_per_pairing=2)
    open_page(page, f"{web.url}/ladders/{ladder.id}")
    page.evaluate("window.__notReloaded = true")
    assert page.query_selector("[data-testid='ladder-waiting']") is None
    why = "quota queued_matches is 2; the request asks for 3 <b>not markup</b>"
    client = redis.Redis.from_url(web.stack.redis_url)
    try:
        assert LadderStore(client).set_waiting(ladder.id, "webuser", why)
        page.wait_for_selector("[data-testid='ladder-waiting']", timeout=30_000)
        assert page.text_content("[data-testid='ladder-waiting']") == f"Waiting: {why}"
        web.client.cancel_ladder(ladder.id)
        page.wait_for_selector("[data-testid='ladder-waiting']", state="detached",
                               timeout=30_000)
        assert page.evaluate("window.__notReloaded === true")
    finally:
        client.close()


def test_an_sprt_ladder_s_page_shows_its_test_and_verdict(web: WebStack, page: Any) -> None:
    """An `arena test` ladder was shown as 'round robin | 4 games per pairing', with no
    hypotheses, LLR or verdict: the page says what `arena ladder standings` says."""
    ladder = web.client.create_ladder(ladder_pb2.LadderConfig(
        name="web version test", game=OTHELLO,
        bots=[common_pb2.BotRef(name="web-intermediate"), common_pb2.BotRef(name="web-beginner")],
        format=ladder_pb2.LADDER_FORMAT_SPRT, seed=5,
        time_control=common_pb2.TimeControl(move_time_ms=3000),
        sprt=ladder_pb2.SprtConfig(elo0=0, elo1=50, alpha=0.1, beta=0.1, max_games=4)))
    wait_for_ladder(web.client, ladder.id)
    info = web.client.get_standings(ladder.id).ladder
    test = web.http.json(f"/api/ladders/{ladder.id}")["ladder"]["sprt"]
    assert test["text"] == sprt_verdict(info)  # the command line's words
    assert (test["elo1"], test["max_games"], test["pairs"]) == (50, 4, info.sprt.pairs)
    assert test["pentanomial"] == list(info.sprt.pentanomial)
    open_page(page, f"{web.url}/ladders/{ladder.id}")
    meta = page.inner_text(".page-head .meta")
    assert "SPRT version test" in meta and "up to 4 games" in meta, meta
    assert "round robin" not in meta and "per pairing" not in meta, meta
    assert page.text_content("[data-testid='sprt-verdict']") == f"Verdict: {test['text']}"
    assert web.http.json(f"/api/ladders/{web.ladder_id}")["ladder"]["sprt"] is None


def test_match_pages_name_the_ladder_as_the_ladder_list_does(web: WebStack, page: Any) -> None:
    name = web.client.get_standings(web.ladder_id).ladder.config.name
    assert name  # the test ladder has one
    match = finished_ladder_match(web)
    open_page(page, f"{web.url}/matches?ladder={quote(web.ladder_id)}")
    page.wait_for_selector(f"tr[data-match='{match.id}']")
    cell = page.locator(f"tr[data-match='{match.id}'] a[href='/ladders/{web.ladder_id}']")
    assert cell.inner_text() == name
    open_page(page, f"{web.url}/matches/{match.id}")
    link = page.locator(f".page-head .meta a[href='/ladders/{web.ladder_id}']")
    link.wait_for()
    assert link.inner_text() == name


# -- replay ------------------------------------------------------------------------------------


def test_replay_controls_step_through_the_rules_positions(web: WebStack, page: Any) -> None:
    match = finished_ladder_match(web)
    replay = parse_replay(web.client.get_replay(match.id,
                                                referee_pb2.REPLAY_FORMAT_NATIVE).content)
    positions = Navigator.of(replay).positions
    last = len(positions) - 1
    open_page(page, f"{web.url}/matches/{match.id}")

    def expect(ply: int) -> None:
        shown = page.evaluate(BOARD_JS)
        assert shown["ply"] == ply and shown["label"] == f"Ply {ply} / {last}"
        assert shown["cells"] == cells_of(positions[ply]), f"board differs at ply {ply}"

    expect(last)  # a finished game opens at its end
    page.click("[data-action='first']")
    expect(0)
    for ply in range(1, last + 1):  # every position, one arrow key at a time
        page.keyboard.press("ArrowRight")
        expect(ply)
    page.keyboard.press("ArrowRight")  # past the end: stays
    expect(last)
    for ply in (last - 1, last - 2):
        page.keyboard.press("ArrowLeft")
        expect(ply)
    page.click("[data-action='previous']")
    expect(last - 3)
    page.click("[data-action='next']")
    expect(last - 2)
    page.keyboard.press("Home")
    expect(0)
    page.keyboard.press("End")
    expect(last)
    page.click(".moves button[data-ply='7']")
    expect(7)
    # The moves are buttons to a screen reader too (role=listitem hid that they are)
    assert page.eval_on_selector_all(".moves button[role]", "bs => bs.length") == 0
    assert page.locator(".moves[role='group'][aria-label='Moves']").count() == 1
    page.fill("input.slider", "23")
    expect(23)
    page.click("[data-action='last']")
    expect(last)
    # Another ply typed into the address (or a link to one on the page): the board goes
    # there, without a reload; it used to stay where it was.
    page.evaluate("() => { window.__notReloaded = true; location.hash = '#ply=5'; }")
    page.wait_for_function("() => document.querySelector('.board-holder').dataset.ply === '5'")
    expect(5)
    assert page.evaluate("window.__notReloaded === true")
    page.click("[data-action='last']")
    # Legal moves are marked on the board: exactly the rules' (when the game goes on).
    page.click(".moves button[data-ply='10']")
    marked = page.eval_on_selector_all(
        "svg.board g[data-legal='1']", "gs => gs.map(g => Number(g.dataset.square))")
    assert sorted(marked) == sorted(m for m in positions[10].legal_moves() if m < 64)


def test_what_a_bot_said_about_a_move_is_shown_as_text(web: WebStack, page: Any) -> None:
    """A move's notes (a protocol engine's MESSAGE lines, here from an imported replay)
    are shown under the move, as text: markup in them is not obeyed."""
    replay = parse_replay(web.client.get_replay(finished_ladder_match(web).id,
                                                referee_pb2.REPLAY_FORMAT_NATIVE).content)
    notes = ["MESSAGE depth 9 ev 35", "<script>alert('note')</script> & <b>bold</b>"]
    bots = next(i for i, move in enumerate(replay.moves) if move.worker != "opening")
    replay.moves[bots] = dataclasses.replace(replay.moves[bots], notes=notes)
    match = web.client.import_match(write_replay(replay))
    assert list(match.moves[bots - len(match.config.opening)].search.notes) == notes
    open_page(page, f"{web.url}/matches/{match.id}")
    page.click(f".moves button[data-ply='{bots + 1}']")
    assert page.text_content("dd pre.notes") == "\n".join(notes)
    assert page.evaluate("document.scripts.length") == 2  # theme.js and app.js only
    assert page.evaluate("document.querySelectorAll('main b').length") == 0
    page.click(f".moves button[data-ply='{bots + 2}']")  # a move without notes shows none
    assert page.query_selector("dd pre.notes") is None


def test_a_move_shows_only_what_its_bot_reported(web: WebStack, page: Any) -> None:
    """An engine that reports a depth and nodes but no evaluation gets no "Eval" (0 would
    be a score it never gave); a reported score of 0 is shown."""
    replay = parse_replay(web.client.get_replay(finished_ladder_match(web).id,
                                                referee_pb2.REPLAY_FORMAT_NATIVE).content)
    bots = next(i for i, move in enumerate(replay.moves) if move.worker != "opening")
    replay.moves[bots] = dataclasses.replace(replay.moves[bots], score=None, depth=7,
                                             nodes=1234, pv=[])
    replay.moves[bots + 1] = dataclasses.replace(replay.moves[bots + 1], score=0, depth=None,
                                                 nodes=None, pv=[])
    match = web.client.import_match(write_replay(replay))
    unscored = match.moves[bots - len(match.config.opening)].search
    assert not unscored.HasField("score") and unscored.depth == 7
    open_page(page, f"{web.url}/matches/{match.id}")

    def facts(ply: int) -> dict[str, str]:
        page.click(f".moves button[data-ply='{ply}']")
        texts = "es => es.map(e => e.textContent)"
        return dict(zip(page.eval_on_selector_all(".move-info dl.kv dt", texts),
                        page.eval_on_selector_all(".move-info dl.kv dd", texts), strict=True))

    unscored_facts = facts(bots + 1)
    assert "Eval" not in unscored_facts and "PV" not in unscored_facts, unscored_facts
    assert unscored_facts["Depth"] == "7" and unscored_facts["Nodes"] == "1,234"
    scored_facts = facts(bots + 2)
    assert scored_facts.get("Eval") == "0", scored_facts
    assert "Depth" not in scored_facts and "PV" not in scored_facts


def _ask_as_user(page: Any, bot: str, time_ms: int, answer: str) -> None:
    """"Ask a bot" filled and sent, the token given to the dialog that opens, and the
    ``answer`` waited for."""
    page.fill(".ask input[name=bot]", bot)
    page.fill(".ask input[name=time_ms]", str(time_ms))
    page.click(".ask button[type=submit]:has-text('Ask')")
    page.fill("#token-input", USER_TOKEN)
    page.click("#token-form button[value=save]")
    page.wait_for_selector(answer, timeout=30_000)


def test_a_bot_is_asked_for_its_move_from_the_match_page(web: WebStack, page: Any) -> None:
    """"Ask a bot" as a person fills it (the token dialog first): the bot's move in the
    position shown, the one the analysis API gives, marked on that board; a bot that does
    not exist is a clear error on the page."""
    match, ply = finished_ladder_match(web), 10
    spec, position, history = match_position(match, ply)
    expected = web.client.analyze(common_pb2.Position(game=spec, text=position.to_text()),
                                  bot=common_pb2.BotRef(name="web-beginner"),
                                  limits=common_pb2.SearchLimits(time_ms=2000), history=history)
    open_page(page, f"{web.url}/matches/{match.id}#ply={ply}")
    _ask_as_user(page, "web-beginner", 2000, ".answer .headline")
    move = position.move_to_str(expected.move.square)
    assert page.text_content(".answer .headline") == f"web-beginner at ply {ply}: {move}"
    facts = page.eval_on_selector_all(".answer dl.kv dt", "es => es.map(e => e.textContent)")
    assert "Eval" in facts and "Depth" in facts, facts
    marks = page.eval_on_selector_all(  # on the square of the bot's move
        ".board-holder .score-text", "es => es.map(e => [e.parentNode.dataset.square, "
                                     "e.textContent])")
    assert marks == [[str(expected.move.square), "!"]], marks
    page.click(f".moves button[data-ply='{ply + 1}']")  # another position: no mark
    assert page.query_selector(".board-holder .score-text") is None
    page.click(f".moves button[data-ply='{ply}']")  # back: the answer's mark again
    assert page.query_selector(".board-holder .score-text") is not None

    page.fill(".ask input[name=bot]", "no-such-bot")
    page.click(".ask button")
    page.wait_for_selector(".answer .notice.error", timeout=30_000)
    assert "no-such-bot" in page.text_content(".answer .notice.error")
    assert page.query_selector(".answer .headline") is None
    # the first bot's mark went with its answer (it stayed beside the second's error)
    assert page.query_selector(".board-holder .score-text") is None
    # The browser logs the refused call itself; that one line is expected, nothing else.
    assert page.problems.errors == ["Failed to load resource: the server responded with a "
                                    "status of 404 (Not Found)"]
    page.problems.errors.clear()


CELLS_JS = """() => [...document.querySelectorAll('.board-holder svg.board g[data-square]')]
  .sort((a, b) => a.dataset.square - b.dataset.square).map((g) => g.dataset.stone).join('')"""


def test_the_board_editor_opens_a_played_position_asks_a_bot_and_starts_a_match(
        web: WebStack, page: Any) -> None:
    """KReversi's board editor, for both games: a match page's position opened in it, a
    stone set by a click (the rules check the position at once), a bot asked about it,
    and a match started from it; a Gomoku board drawn stone by stone, whose stones say
    whose turn it is."""
    match, ply = finished_ladder_match(web), 10
    _, position, _ = match_position(match, ply)
    open_page(page, f"{web.url}/matches/{match.id}#ply={ply}")
    page.click("[data-testid='edit-position']")
    page.wait_for_selector("body[data-ready='1']")
    page.wait_for_function("t => document.querySelector('input[name=position]').value === t",
                           arg=position.to_text())
    assert page.evaluate(CELLS_JS) == ply_view(position, ply)["board"]
    side = "Black" if position.turn == Color.BLACK else "White"
    assert page.text_content("[data-testid='editor-status']").startswith(
        f"{side} to move \u00b7 {len(position.legal_moves())} legal moves")
    # A white disc on an empty square, by a click: the rules' text form follows.
    empty = next(square for square in range(64) if ply_view(position, ply)["board"][square] == "-")
    page.check("input[name=stone][value=O]")
    page.click(f".editor-board g[data-square='{empty}']")
    cells = list(ply_view(position, ply)["board"])
    cells[empty] = "O"
    edited = OthelloBoard.from_text(f"{''.join(cells)} {'X' if side == 'Black' else 'O'}")
    page.wait_for_function("t => document.querySelector('input[name=position]').value === t",
                           arg=edited.to_text())
    # A bot asked about the position drawn: its move, marked on the board.
    expected = {*edited.legal_moves()}
    _ask_as_user(page, "web-beginner", 300, "[data-testid='editor-answer']")
    marks = page.eval_on_selector_all(".board-holder .score-text",
                                      "es => es.map(e => Number(e.parentNode.dataset.square))")
    assert len(marks) == 1 and marks[0] in expected, marks
    assert page.text_content("[data-testid='editor-answer']") == (
        f"web-beginner: {edited.move_to_str(marks[0])}")
    # A match from here: its first position is the one drawn.
    page.fill("input[name=black]", "web-beginner")
    page.fill("input[name=white]", "web-intermediate")
    page.fill("input[name=move_time_ms]", "200")
    page.click("text=Start a match from here")
    page.wait_for_url(re.compile(r".*/matches/[^/]+$"))
    made = page.url.rsplit("/", 1)[1]
    with contextlib.suppress(FailedPreconditionError):
        web.client.cancel_match(made)
    assert web.client.get_match(made).start_position == edited.to_text()

    # Gomoku: the empty 15x15 board; a stone at the centre, and white is to move.
    open_page(page, f"{web.url}/editor")
    page.select_option("select[name=game]", "gomoku")
    page.wait_for_function("() => document.querySelector('input[name=position]').value"
                           ".startsWith('15 freestyle')")
    assert page.evaluate(CELLS_JS) == "-" * 225
    page.click(".editor-board g[data-square='112']")
    page.wait_for_function("() => document.querySelector('input[name=position]').value"
                           ".endsWith(' O')")
    assert page.evaluate(CELLS_JS)[112] == "X"
    assert page.text_content("[data-testid='editor-status']").startswith("White to move")
    page.click(".editor-board g[data-square='112']")  # again: taken away
    page.wait_for_function("() => document.querySelector('input[name=position]').value"
                           ".endsWith(' X')")
    assert page.evaluate(CELLS_JS) == "-" * 225
    # A Gomoku position opened by its address (a Gomoku match's plies link so), and one
    # pasted while the editor shows Othello: each opens (both were read as Othello).
    stones = GomokuBoard(15)
    for square in (112, 113, 97):
        stones.push(square)
    open_page(page, f"{web.url}/editor?" + urlencode({"game": "gomoku",
                                                      "position": stones.to_text()}))
    page.wait_for_function("t => document.querySelector('input[name=position]').value === t",
                           arg=stones.to_text())
    assert [i for i, c in enumerate(page.evaluate(CELLS_JS)) if c != "-"] == [97, 112, 113]
    assert page.text_content("[data-testid='editor-status']").startswith("White to move")
    open_page(page, f"{web.url}/editor")
    page.fill("input[name=position]", stones.to_text())
    page.click("form.ask button[type=submit]")
    page.wait_for_function("() => document.querySelector('select[name=game]').value === 'gomoku'")
    assert page.evaluate(CELLS_JS).count("X") == 2


def test_the_board_editor_says_why_a_drawn_position_is_no_game(web: WebStack,
                                                               page: Any) -> None:
    """Stones no game reaches (a white Gomoku stone and no black one: black moves first):
    the rules' refusal is shown, and no bot is asked about it."""
    open_page(page, f"{web.url}/editor?game=gomoku")
    page.wait_for_function("() => document.querySelector('input[name=position]').value"
                           ".startsWith('15 freestyle')")
    page.check("input[name=stone][value=O]")
    page.click(".editor-board g[data-square='112']")
    page.wait_for_selector("[data-testid='editor-status'] .notice.error")
    said = page.text_content("[data-testid='editor-status']")
    assert said.startswith("board: ") and "stone" in said.lower(), said
    page.fill(".ask input[name=bot]", "web-beginner")
    page.click(".ask button[type=submit]:has-text('Ask')")
    assert "not one the rules accept" in page.text_content(".answer")
    # A text the address gives is read as the game it names: it was read as Othello's
    # beside the Gomoku board ("Othello text form must be ..."); and a long one, shown
    # in the refusal, stays inside the page (it made the page 4,903 px wide).
    open_page(page, f"{web.url}/editor?game=gomoku&position={'A' * 5000}")
    page.wait_for_selector("[data-testid='editor-status'] .notice.error")
    said = page.text_content("[data-testid='editor-status']")
    assert "Gomoku text form" in said and "Othello" not in said, said
    assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth")
    page.problems.errors.clear()  # the browser logs the refused checks (400) itself


POSITION_TEXT = "() => document.querySelector('input[name=position]').value"


def _tab_to(page: Any, selector: str, key: str = "Tab") -> None:
    """Press Tab (or Shift+Tab) until the focus is on ``selector``: it is reached so."""
    for _ in range(40):
        page.keyboard.press(key)
        if page.evaluate("s => document.activeElement.matches(s)", selector):
            return
    raise AssertionError(f"{key} never reached {selector}")


def _focus_the_editor_board(page: Any) -> None:
    """The keyboard's way in: the skip link to the page's own content, then Tab."""
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    _tab_to(page, ".editor-board")


def _wait_for_position(page: Any, text: str) -> None:
    page.wait_for_function(f"t => ({POSITION_TEXT})() === t", arg=text)


def test_the_board_editor_draws_a_position_from_the_keyboard_alone(web: WebStack,
                                                                   page: Any) -> None:
    """The editor's squares took clicks only: no one without a mouse could draw a position
    (and the side to move, by keys or a click, threw an error and checked nothing). The
    board is one Tab stop whose arrow keys move a cursor and whose Enter or Space does
    what a click does there; the stone and the side to move are reached by Tab. The keys
    draw the position the same clicks draw."""
    cells = list(cells_of(OthelloBoard()))
    cells[3], cells[5], cells[13] = "O", "X", "O"  # d1 (black, then white), f1, f2
    expected = OthelloBoard.from_text(f"{''.join(cells)} O").to_text()

    open_page(page, f"{web.url}/editor")
    _wait_for_position(page, OthelloBoard().to_text())
    _focus_the_editor_board(page)  # its cursor starts on d4
    for key in ("ArrowUp", "ArrowUp", "ArrowUp", "Enter", "ArrowRight", "ArrowRight", " "):
        page.keyboard.press(key)
    _tab_to(page, "input[name=stone]")
    page.keyboard.press("ArrowRight")  # white stones
    _tab_to(page, "input[name=turn]")
    page.keyboard.press("ArrowRight")  # white to move
    _tab_to(page, ".editor-board", "Shift+Tab")  # the cursor is where it was: f1
    for key in ("ArrowDown", "Enter", "ArrowLeft", "ArrowLeft", "ArrowUp", "Enter"):
        page.keyboard.press(key)
    _wait_for_position(page, expected)
    assert page.text_content("[data-testid='editor-status']").startswith("White to move")
    by_keys = page.evaluate(CELLS_JS), page.url

    open_page(page, f"{web.url}/editor")
    _wait_for_position(page, OthelloBoard().to_text())
    page.click(".editor-board g[data-square='3']")
    page.click(".editor-board g[data-square='5']")
    page.check("input[name=stone][value=O]")
    page.check("input[name=turn][value=white]")
    page.click(".editor-board g[data-square='13']")
    page.click(".editor-board g[data-square='3']")
    _wait_for_position(page, expected)
    assert (page.evaluate(CELLS_JS), page.url) == by_keys


# The cursor's ring and the square under it: the colours and boxes a person sees, and
# what the page gives a screen reader.
CURSOR_JS = """() => {
  const board = document.querySelector('.editor-board'), svg = board.querySelector('svg');
  const ring = svg.querySelector('.cursor');
  const said = document.querySelector('[data-testid=editor-cursor]');
  const box = (e) => {
    const r = e.getBoundingClientRect();
    return [r.left, r.top, r.right, r.bottom];
  };
  return {
    shown: ring ? getComputedStyle(ring).display !== 'none' : false,
    ring: ring && getComputedStyle(ring).stroke,
    width: ring && parseFloat(getComputedStyle(ring).strokeWidth),
    board: getComputedStyle(svg.querySelector('.frame')).fill,
    box: ring && box(ring),
    squares: [...svg.querySelectorAll('g[data-square]')].map((g) => box(g.firstChild)),
    svg: box(svg), said: said?.textContent, live: said?.getAttribute('aria-live'),
    describedBy: board.getAttribute('aria-describedby') === said?.id,
    page: document.documentElement.scrollWidth,
  };
}"""


def _contrast(one: str, other: str) -> float:
    """WCAG's ratio of two computed colours ('rgb(r, g, b)')."""
    def luminance(css: str) -> float:
        channels = [int(v) / 255 for v in re.findall(r"\d+", css)[:3]]
        r, g, b = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    high, low = sorted((luminance(one), luminance(other)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _focused_as_read_out(page: Any) -> dict[str, str]:
    """The focused element as Chromium gives it to a screen reader: role, name and
    description (its accessibility tree)."""
    cdp = page.context.new_cdp_session(page)
    try:
        focused = cdp.send("Runtime.evaluate", {"expression": "document.activeElement"})
        (node,) = cdp.send("Accessibility.getPartialAXTree", {
            "objectId": focused["result"]["objectId"], "fetchRelatives": False})["nodes"]
    finally:
        cdp.detach()
    return {key: node.get(key, {}).get("value", "") for key in ("role", "name", "description")}


def _cursor_on(shown: dict[str, Any], square: int) -> bool:
    return all(abs(a - b) < 1 for a, b in zip(shown["box"], shown["squares"][square], strict=True))


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_editor_s_cursor_is_seen_and_said(web: WebStack, page: Any, theme: str) -> None:
    """The keyboard's square on the editor's board has a ring that reads at 3:1 at least
    on the board, Othello's and Gomoku's, in either theme, and the square is read out
    ('d4, white stone') on a live line that describes the board."""
    page.emulate_media(color_scheme=theme)
    for game, start, keys, square, said in (
            ("othello", OthelloBoard().to_text(), (), 27, "d4, white stone"),
            ("gomoku", GomokuBoard(19).to_text(), ("End", "PageDown", "Enter"), 360,
             "s19, black stone")):
        open_page(page, f"{web.url}/editor?" + urlencode({"game": game, "position": start}))
        _wait_for_position(page, start)
        assert not page.evaluate(CURSOR_JS)["shown"]  # not before the keyboard's focus
        _focus_the_editor_board(page)
        for key in keys:
            page.keyboard.press(key)
        page.wait_for_function("t => document.querySelector('[data-testid=editor-cursor]')"
                               "?.textContent === t", arg=said)
        shown = page.evaluate(CURSOR_JS)
        assert shown["shown"] and _cursor_on(shown, square), (game, shown)
        assert _contrast(shown["ring"], shown["board"]) >= 3, (game, shown["ring"], shown["board"])
        assert shown["width"] >= 2
        assert shown["live"] == "polite" and shown["describedBy"]
        focused = _focused_as_read_out(page)
        assert focused["role"] == "application" and focused["description"] == said, focused


def test_the_editor_s_board_fits_a_phone(web: WebStack, browser: Any) -> None:
    """On a 375 px wide screen every board of the editor stays inside the page, Othello's
    squares are 24 px at least, and the keyboard's cursor reaches the far corner."""
    context = browser.new_context(viewport={"width": 375, "height": 800})
    try:
        page = context.new_page()
        squares = {}
        for game, size, start in (("othello", 8, OthelloBoard().to_text()),
                                  *(("gomoku", n, GomokuBoard(n).to_text()) for n in (9, 15, 19))):
            open_page(page, f"{web.url}/editor?" + urlencode({"game": game, "position": start}))
            _wait_for_position(page, start)
            shown = page.evaluate(CURSOR_JS)
            squares[f"{game} {size}"] = round(shown["squares"][0][2] - shown["squares"][0][0], 1)
            assert shown["page"] <= 375 and shown["svg"][2] <= 375, (game, size, shown)
            _focus_the_editor_board(page)
            page.keyboard.press("End")
            page.keyboard.press("PageDown")
            shown = page.evaluate(CURSOR_JS)
            assert shown["shown"] and _cursor_on(shown, size * size - 1), (game, size, shown)
        assert squares["othello 8"] >= 24, squares
    finally:
        context.close()


def _new_ladder_form(web: WebStack, page: Any, move_time_ms: int) -> None:
    """The New ladder form open, the two Othello bots picked, the move time typed."""
    open_page(page, f"{web.url}/ladders")
    page.click("text=New ladder")
    for name in ("web-beginner", "web-intermediate"):
        page.check(f".bot-picks input[value='{name}']")
    page.fill("input[name=move_time_ms]", str(move_time_ms))


def test_a_ladder_made_with_the_form_keeps_its_settings(web: WebStack, page: Any) -> None:
    """The New ladder form: two bots picked, a move time and an adjudication reach the
    ladder service as typed."""
    _new_ladder_form(web, page, move_time_ms=1500)
    page.fill("input[name=adjudicate_empties]", "14")
    # The suite starts at the game's own, left to the ladder service as the CLI leaves it.
    assert page.eval_on_selector("select[name=opening_suite]", "s => s.value") == ""
    assert "gomoku-wide15" in page.eval_on_selector_all(
        "select[name=opening_suite] option", "os => os.map((o) => o.value)")
    ladder_id = _submit_as_user(page, "Create ladder", f"{web.url}/ladders/*")
    ladder = web.client.get_standings(ladder_id).ladder
    assert ladder.config.adjudicate_empties == 14 and ladder.owner == "webuser"
    assert ladder.config.time_control.move_time_ms == 1500
    assert ladder.config.opening_suite == "othello-balanced"
    with contextlib.suppress(FailedPreconditionError):  # over already (two quick games)
        web.client.cancel_ladder(ladder_id)  # the worker is the next tests'


def test_the_ladder_list_pages_on_past_its_first_page(web: WebStack, page: Any) -> None:
    """The list showed the newest 100 ladders and no way to the others. Three new ones,
    listed two a page: "Load more" brings the rest, the fixture's ladder among them."""
    made = [web.client.create_ladder(ladder_pb2.LadderConfig(
        game=OTHELLO, bots=[common_pb2.BotRef(name=name) for name in LADDER_BOTS],
        time_control=common_pb2.TimeControl(move_time_ms=30_000))).id for _ in range(3)]
    for ladder_id in made:
        web.client.cancel_ladder(ladder_id)
    open_page(page, f"{web.url}/ladders?limit=2")
    page.wait_for_selector("tr[data-ladder]")
    shown = page.eval_on_selector_all("tr[data-ladder]", "rs => rs.map(r => r.dataset.ladder)")
    assert shown == made[::-1][:2]
    while page.locator(".more-button button").count():
        page.focus(".more-button button")  # by keyboard
        page.keyboard.press("Enter")
        page.wait_for_function("(n) => document.querySelectorAll('tr[data-ladder]').length > n",
                               arg=len(shown))
        # the focus goes to the first ladder loaded (it fell back to the page's top)
        focused = page.evaluate("() => document.activeElement.closest('tr')?.dataset.ladder")
        now = page.eval_on_selector_all("tr[data-ladder]", "rs => rs.map(r => r.dataset.ladder)")
        assert focused == now[len(shown)], (focused, now, shown)
        shown = now
    listed = [ladder["id"] for ladder in web.http.json("/api/ladders?limit=200")["ladders"]]
    assert shown == listed and web.ladder_id in shown


def test_the_ladder_list_shows_the_running_ladders_alone_when_asked(web: WebStack,
                                                                    page: Any) -> None:
    """The list showed every ladder, newest first: a long ladder sank below every one that
    ended after it. "Running only" lists the running ones (the API's ``running=1``), and
    the address keeps it."""
    def make() -> str:
        return web.client.create_ladder(ladder_pb2.LadderConfig(
            game=OTHELLO, bots=[common_pb2.BotRef(name=name) for name in LADDER_BOTS],
            time_control=common_pb2.TimeControl(move_time_ms=30_000))).id

    running = make()
    ended = [make() for _ in range(2)]
    try:
        for ladder_id in ended:
            web.client.cancel_ladder(ladder_id)
        listed = web.http.json("/api/ladders?running=1&limit=200")["ladders"]
        assert running in [ladder["id"] for ladder in listed]
        assert {ladder["status"] for ladder in listed} == {"running"}
        open_page(page, f"{web.url}/ladders?limit=3")  # an address no other test reads
        page.wait_for_selector(f"tr[data-ladder='{ended[1]}']")
        page.check("input[name=running]")
        page.wait_for_selector(f"tr[data-ladder='{ended[1]}']", state="detached")
        page.wait_for_selector(f"tr[data-ladder='{running}']")
        assert page.url.endswith("/ladders?limit=3&running=1")
        page.wait_for_selector("h2:text-is('Running ladders')")
        page.reload()
        page.wait_for_selector(f"tr[data-ladder='{running}']")
        assert page.is_checked("input[name=running]")
        shown = page.eval_on_selector_all("tr[data-ladder]", "rs => rs.map(r => r.dataset.ladder)")
        assert not set(shown) & set(ended)
    finally:
        web.client.cancel_ladder(running)
    # Cancelled over gRPC, not through this gateway: the list's poll (every 5 s while a
    # running ladder shows) drops it once the gateway's shared answer is stale (1 s).
    page.wait_for_selector(f"tr[data-ladder='{running}']", state="detached", timeout=20_000)
    page.wait_for_selector("h2:text-is('Running ladders')")


def test_a_ladder_of_its_own_openings_says_so_and_lists_them(web: WebStack,
                                                              page: Any) -> None:
    """Made with the form's openings of its own (written as the CLI's files take them),
    the ladder's page says so and lists them; "every opening" plays each of them twice (the
    games per pairing typed would have played only the first)."""
    # A bot that thinks seconds a move: the games are still on when the ladder is
    # cancelled (two lab bots finished all four in a blink on a quiet machine).
    register(web.client, {"web-thinker": ("arena-fast", {"depth": 60, "time_ms": 5000})})
    _new_ladder_form(web, page, move_time_ms=30_000)
    page.uncheck(".bot-picks input[value='web-intermediate']")
    page.check(".bot-picks input[value='web-thinker']")
    page.fill("textarea[name=openings]", "f5d6c3   # compact\n\nc4, c3 | a note\n")
    page.check("input[name=every_opening]")
    assert page.is_disabled("input[name=games_per_pairing]")
    ladder_id = _submit_as_user(page, "Create ladder", f"{web.url}/ladders/*")
    try:
        ladder = web.client.get_standings(ladder_id).ladder
        config = ladder.config
        assert config.opening_suite == "custom" and len(config.openings) == 2
        assert config.games_per_pairing == 4 and ladder.games_total == 4
        shown = page.wait_for_selector("[data-testid='own-openings']")
        assert shown.text_content() == "openings: its own (2 openings)"
        # Each by its moves, in sight (they were only a tooltip of that line).
        listed = page.locator("[data-testid='own-openings-list'] > li")
        assert listed.all_inner_texts() == ["f5 d6 c3", "c4 c3"]
        assert all(listed.nth(i).is_visible() for i in range(listed.count()))
    finally:
        web.http.request("POST", f"/api/ladders/{ladder_id}/cancel", {}, token=USER_TOKEN)
    # Cancelled, its games are over without a result, not 'played'.
    open_page(page, f"{web.url}/ladders/{ladder_id}")
    text = page.inner_text("main")
    assert "4/4" in text and "games over (" in text and "void: no result)" in text, text
    assert "played" not in text, text


def test_a_ladder_before_its_first_result_shows_no_ranked_table(web: WebStack,
                                                                 page: Any) -> None:
    """Before a game is over every bot had a row of nothing (ranked, Elo 0, 0.0 %). Bots
    that think a few seconds a move: no game ends while the page is read (the lab bots of
    the form above finished theirs in a blink, whatever the clock)."""
    register(web.client, {"web-thinker": ("arena-fast", {"depth": 60, "time_ms": 5000})})
    ladder = web.client.create_ladder(ladder_pb2.LadderConfig(
        game=OTHELLO, bots=[common_pb2.BotRef(name="web-thinker"),
                            common_pb2.BotRef(name="web-beginner")],
        games_per_pairing=2, time_control=common_pb2.TimeControl(move_time_ms=5000)))
    try:
        open_page(page, f"{web.url}/ladders/{ladder.id}")
        assert "No finished games yet." in page.inner_text("main")
        assert page.locator("table.standings").count() == 0
        assert web.client.get_standings(ladder.id).ladder.games_done == 0  # still true
    finally:
        with contextlib.suppress(FailedPreconditionError):
            web.client.cancel_ladder(ladder.id)


def test_downloads_offer_every_export_format(web: WebStack, page: Any) -> None:
    match = finished_ladder_match(web)
    open_page(page, f"{web.url}/matches/{match.id}")
    formats = page.eval_on_selector_all(".downloads button", "bs => bs.map(b => b.dataset.format)")
    assert formats == ["native", "ggf", "transcript"]
    for name, kind in (("ggf", referee_pb2.REPLAY_FORMAT_GGF),
                       ("transcript", referee_pb2.REPLAY_FORMAT_TRANSCRIPT)):
        with page.expect_download() as caught:
            page.click(f".downloads button[data-format='{name}']")
        download = caught.value
        with open(download.path()) as saved:
            assert saved.read() == web.client.get_replay(match.id, kind).content


# -- search tree -----------------------------------------------------------------------------


def test_the_tree_view_expands_lazily_and_marks_the_pv(web: WebStack, page: Any) -> None:
    match = finished_ladder_match(web, with_tree=True)
    record = next(m for m in match.moves if m.has_tree and m.search.depth >= 2)
    tree = web.client.get_search_tree(match.id, record.ply)
    open_page(page, f"{web.url}/matches/{match.id}/tree/{record.ply}")
    count = page.text_content("[data-testid='node-count']")
    assert count == f"{len(tree.nodes):,} nodes"
    root = next(n for n in tree.nodes if n.parent < 0)
    children = [n for n in tree.nodes if n.parent == root.id]
    assert page.eval_on_selector_all("ul.tree.root > li > ul > li", "l => l.length") == len(
        children)
    assert page.locator(".node.pv").count() >= 2  # the root and its PV child
    # Open a child that has children of its own: they are fetched now, not before.
    parent = next(n for n in children if any(k.parent == n.id for k in tree.nodes))
    kids = [n for n in tree.nodes if n.parent == parent.id]
    item = page.locator(f"li[data-node='{parent.id}']")
    with page.expect_request(lambda r: f"node={parent.id}" in r.url):
        item.locator(":scope > .node > .toggle").click()
    page.wait_for_selector(f"li[data-node='{parent.id}'] > ul > li")
    assert item.locator(":scope > ul > li").count() == len(kids)
    shown = item.locator(":scope > ul > li .score").all_text_contents()
    assert shown == [str(k.score) for k in kids]
    # Selecting a node shows its board with the children's scores on their squares.
    item.locator(":scope > .node > .label").click()
    page.wait_for_selector(f".board-side[data-node='{parent.id}'] .score-text")
    scores = page.eval_on_selector_all(".board-side .score-text",
                                       "t => t.map(x => x.dataset.score)")
    # One score per square (a pass has none): a move searched twice (a re-search after a
    # failed null window) shows its last, final score.
    final = {k.move: k.score for k in kids if 0 <= k.move < 64}
    assert sorted(scores) == sorted(str(score) for score in final.values())
    # The PV opens in one click, down to its leaf.
    page.click("text=Open the principal variation")
    pv_nodes = [n for n in tree.nodes if n.pv]
    page.wait_for_function("n => document.querySelectorAll('.node.pv').length >= n",
                           arg=len(pv_nodes))


def _played_with_trees(web: WebStack, game: common_pb2.GameSpec, bot: str, start: str,
                       tree_node_budget: int) -> match_pb2.Match:
    """A match of ``bot`` against itself from ``start``, played to its end, its search
    trees stored."""
    match = web.client.create_match(match_pb2.MatchConfig(
        game=game, black=common_pb2.BotRef(name=bot), white=common_pb2.BotRef(name=bot),
        start_position=start, capture_trees=True, tree_node_budget=tree_node_budget,
        time_control=common_pb2.TimeControl(move_time_ms=5000)))
    deadline = time.monotonic() + 180
    while (match := web.client.get_match(match.id)).status != match_pb2.MATCH_STATUS_FINISHED:
        assert time.monotonic() < deadline, f"the match ended {match.status}, or not in time"
        time.sleep(0.2)
    return match


def test_a_tree_the_node_budget_cut_short_says_so(web: WebStack, page: Any) -> None:
    """A tree cut at its node budget looked complete: the page said '49,992 nodes' where the
    search reported 7,001,192, and a node's score could disagree with the children shown.
    The engines keep rows of the budget for the root's children, so a full tree holds
    fewer rows than its budget, and the worker (which counted rows) stored it as whole."""
    match = _played_with_trees(web, OTHELLO, "web-kreversi", "", tree_node_budget=60)
    record = next(m for m in match.moves if m.has_tree and m.search.nodes > 200)
    tree = web.client.get_search_tree(match.id, record.ply)
    assert tree.truncated and len(tree.nodes) <= 60
    open_page(page, f"{web.url}/matches/{match.id}/tree/{record.ply}")
    said = page.text_content("[data-testid='tree-truncated']")
    assert said.startswith("This recording was cut short at its node budget: the search "
                           f"visited {record.search.nodes:,} nodes, and {len(tree.nodes):,} "
                           "were recorded."), said
    # A whole tree says nothing of the kind (one of the fixture's, budget 2,000).
    small = finished_ladder_match(web, with_tree=True)
    whole = next(m for m in small.moves if m.has_tree and 0 < m.search.nodes < 1000)
    assert not web.client.get_search_tree(small.id, whole.ply).truncated
    open_page(page, f"{web.url}/matches/{small.id}/tree/{whole.ply}")
    assert page.locator("[data-testid='tree-truncated']").count() == 0


# Each score drawn on the board: its full figure, its label, and whether the label lies
# inside its square.
SCORE_LABELS_JS = """() => [...document.querySelectorAll('.board-side svg.board .score-text')]
  .map((text) => {
    const square = text.parentNode.querySelector('rect').getBoundingClientRect();
    const box = text.getBoundingClientRect();
    return {score: text.dataset.score, label: text.textContent,
            inside: box.left >= square.left && box.right <= square.right
                    && box.top >= square.top && box.bottom <= square.bottom};
  })"""
# The end of an Othello game three moves away (white to move): won or lost in every line,
# its scores KReversi's 1,000,000 and -1,000,000.
OTHELLO_END = "-XOOOOXXXXXXXOXXXXXXXOXXX-XXOXOOXX-OXXOOXXOOXXOXXXXXXOXXOOXXXXXX O"


@pytest.mark.parametrize("size", [8, 19])
def test_scores_on_the_tree_s_board_fit_their_squares(web: WebStack, page: Any,
                                                     size: int) -> None:
    """'-1000000' ran over a7 and b7, and 4-digit scores on a 19x19 Gomoku board ran
    together: a score is drawn short ('loss', '-1.5k') in a size its square takes, its full
    figure in the square's tooltip."""
    if size == 8:
        game, bot, start = OTHELLO, "web-kreversi", OTHELLO_END
    else:
        register(web.client, {"web-gomoku-tree": ("arena-gomoku", {"max_depth": 3})})
        position = GomokuBoard(19)
        for square in (180, 181, 161, 199, 142):  # black's three, white to move
            position.push(square)
        game, bot, start = (common_pb2.GameSpec(kind=common_pb2.GAME_KIND_GOMOKU,
                                                variant="freestyle", board_size=19),
                            "web-gomoku-tree", position.to_text())
    match = _played_with_trees(web, game, bot, start, tree_node_budget=2000)
    assert match.moves, match.result
    record = match.moves[0]
    tree = web.client.get_search_tree(match.id, record.ply)
    root = next(n for n in tree.nodes if n.parent < 0)
    final = {n.move: n.score for n in tree.nodes if n.parent == root.id}
    assert min(final.values()) <= -1000, final  # large and negative
    open_page(page, f"{web.url}/matches/{match.id}/tree/{record.ply}")
    page.wait_for_selector(".board-side .score-text")
    labels = page.evaluate(SCORE_LABELS_JS)
    assert len(labels) == len(final)
    assert [x["label"] for x in labels if not x["inside"]] == []
    assert sorted(int(x["score"]) for x in labels) == sorted(final.values())
    titles = page.eval_on_selector_all(".board-side g[data-square] > title",
                                       "ts => ts.map(t => t.textContent)")
    assert sorted(titles) == sorted(x["score"] for x in labels)
    if size == 8:
        assert {x["label"] for x in labels} <= {"win", "loss"}


FOCUSED_NODE = "() => Number(document.activeElement.closest('li')?.dataset.node ?? -1)"


def test_the_tree_view_goes_by_the_arrow_keys(web: WebStack, page: Any) -> None:
    """The tree could be read with the mouse only (or a Tab through two buttons a line):
    now with a tree's keys, and the board follows the line the focus is on."""
    match = finished_ladder_match(web, with_tree=True)
    record = next(m for m in match.moves if m.has_tree and m.search.depth >= 2)
    tree = web.client.get_search_tree(match.id, record.ply)
    kids_of: dict[int, list[int]] = {}
    for node in tree.nodes:
        kids_of.setdefault(node.parent, []).append(node.id)
    (root,) = kids_of[-1]
    first, second = kids_of[root][:2]
    open_page(page, f"{web.url}/matches/{match.id}/tree/{record.ply}")

    def at(node: int) -> None:
        assert page.evaluate(FOCUSED_NODE) == node
        page.wait_for_selector(f".board-side[data-node='{node}']")

    page.focus(f"li[data-node='{root}'] > .node > .label")
    page.keyboard.press("ArrowRight")  # the root is open: to its first child
    at(first)
    page.keyboard.press("ArrowDown")
    at(second)
    page.keyboard.press("ArrowUp")
    at(first)
    parent = next(n for n in kids_of[root] if n in kids_of)  # a child with children
    page.focus(f"li[data-node='{parent}'] > .node > .label")
    item = page.locator(f"li[data-node='{parent}']")
    page.keyboard.press("ArrowRight")  # closed: opens, the focus stays
    page.wait_for_selector(f"li[data-node='{parent}'][aria-expanded='true'] > ul > li")
    assert page.evaluate(FOCUSED_NODE) == parent
    page.keyboard.press("ArrowRight")
    at(kids_of[parent][0])
    page.keyboard.press("ArrowLeft")  # a leaf or closed: to its parent
    at(parent)
    page.keyboard.press("ArrowLeft")  # open: closes
    assert item.get_attribute("aria-expanded") == "false"
    page.keyboard.press("End")
    at(kids_of[root][-1])
    page.keyboard.press("Home")
    at(root)
    assert page.evaluate("() => window.scrollY") == 0


# Every element of the page's main part with text of its own (the boards' drawings
# aside), with its colour's contrast against what it stands on: the backgrounds behind
# it, see-through ones blended over the first opaque one (WCAG's ratio).
CONTRAST_JS = r"""() => {
  const rgba = (css) => {
    const [r, g, b, a = 1] = css.match(/[\d.]+/g).map(Number);
    return [r, g, b, a];
  };
  const channel = (v) => {
    v /= 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  };
  const luminance = ([r, g, b]) => 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
  const backdrop = (element) => {
    const layers = [];
    for (let at = element; at; at = at.parentElement) {
      const colour = rgba(getComputedStyle(at).backgroundColor);
      if (colour[3] > 0) layers.push(colour);
      if (colour[3] === 1) break;
    }
    return layers.reverse().reduce((under, [r, g, b, a]) =>
      [r, g, b].map((c, i) => c * a + under[i] * (1 - a)), [255, 255, 255]);
  };
  const ownText = (element) =>
    [...element.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
  return [...document.querySelectorAll('main *')]
    .filter((e) => ownText(e) && !e.closest('svg') && e.getClientRects().length
                   && getComputedStyle(e).visibility === 'visible')
    .map((e) => {
      const [fg, bg] = [luminance(rgba(getComputedStyle(e).color)), luminance(backdrop(e))];
      return {text: e.textContent.trim().slice(0, 24), within: e.parentElement.className,
              ratio: (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05)};
    });
}"""


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_text_of_the_tree_view_reads_at_4_5_to_1(web: WebStack, page: Any,
                                                       theme: str) -> None:
    """The PV tag read at 2.0:1 in dark mode (white on light orange); in light mode a PV
    line's text read at 3.8:1 selected (on its blue) and 4.2:1 hovered, 'Min', 'Max' and
    'cut' at 4.4:1, the links of the head at 4.3:1. Every text of the view, on a selected
    line and a hovered one too, now reads at WCAG's 4.5:1 at least."""
    match = finished_ladder_match(web, with_tree=True)
    record = next(m for m in match.moves if m.has_tree and m.search.depth >= 2)
    tree = web.client.get_search_tree(match.id, record.ply)
    page.emulate_media(color_scheme=theme)
    open_page(page, f"{web.url}/matches/{match.id}/tree/{record.ply}")
    page.click("text=Open the principal variation")
    pv = [n.id for n in tree.nodes if n.pv]
    page.wait_for_selector(f"li[data-node='{pv[-1]}']")
    page.click(f"li[data-node='{pv[1]}'] > .node > .label")  # a PV line, selected
    page.hover(f"li[data-node='{pv[2]}'] > .node")  # and one under the pointer
    shown = page.evaluate(CONTRAST_JS)
    assert {"PV", "Max", "Min"} <= {x["text"] for x in shown}
    low = [x for x in shown if x["ratio"] < 4.5]
    assert low == [], "\n".join(map(str, low))


# -- theme ---------------------------------------------------------------------------------------


BACKGROUND = "getComputedStyle(document.body).backgroundColor"


def test_dark_mode_toggles_and_is_remembered(web: WebStack, page: Any, browser: Any) -> None:
    open_page(page, f"{web.url}/ladders")
    light = page.evaluate(BACKGROUND)
    page.click("#theme-toggle")
    dark = page.evaluate(BACKGROUND)
    assert dark != light and page.get_attribute("html", "data-theme") == "dark"
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    assert page.evaluate(BACKGROUND) == dark  # remembered across loads
    open_page(page, f"{web.url}/bots")
    assert page.evaluate(BACKGROUND) == dark  # and across pages
    page.click("#theme-toggle")
    assert page.evaluate(BACKGROUND) == light
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    assert page.evaluate(BACKGROUND) == light
    # A fresh browser profile whose system prefers dark gets dark without asking.
    context = browser.new_context(color_scheme="dark")
    try:
        other = context.new_page()
        open_page(other, f"{web.url}/ladders")
        assert other.evaluate(BACKGROUND) == dark
        assert other.get_attribute("html", "data-theme") is None
    finally:
        context.close()


def test_the_first_tab_offers_to_skip_the_top_bar(web: WebStack, page: Any) -> None:
    """A keyboard user went through the brand, four links and two buttons on every page
    before its content; the first Tab now shows a link past them, and Enter puts the focus
    at the top of the page's own content."""
    open_page(page, f"{web.url}/ladders")
    hidden = page.locator(".skip-link").bounding_box()
    assert hidden is not None and hidden["y"] + hidden["height"] <= 0  # out of sight
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.className") == "skip-link"
    shown = page.locator(".skip-link").bounding_box()
    assert shown is not None and shown["y"] >= 0 and page.locator(".skip-link").is_visible()
    page.keyboard.press("Enter")
    assert page.evaluate("() => document.activeElement.id") == "main"
    page.keyboard.press("Tab")  # on into the content, not back to the bar
    assert page.evaluate("() => document.querySelector('#main').contains("
                         "document.activeElement)")


# -- hostile input ---------------------------------------------------------------------------------


def test_an_imported_record_s_players_are_names_not_bots(web: WebStack, page: Any) -> None:
    """Anyone may import a record naming any bot: one naming web-beginner and
    web-intermediate was shown as 'web-beginner vs web-intermediate' with links to those
    bots' pages and '0 ms per move', as if they had played it. Its players are plain
    names, and the page says who imported it from what."""
    played = finished_ladder_match(web)
    ggf = web.client.get_replay(played.id, referee_pb2.REPLAY_FORMAT_GGF).content
    forged = re.sub(r"P([BW])\[([^\]]*) v\d+\]", r"P\1[\2]", ggf)  # 'web-beginner v1' -> name
    match = web.client.import_match(forged, referee_pb2.REPLAY_FORMAT_GGF)
    assert {match.black.name, match.white.name} == {played.black.name, played.white.name}
    assert web.http.json(f"/api/matches/{match.id}")["imported_from"] == "ggf"
    open_page(page, f"{web.url}/matches/{match.id}")
    assert page.eval_on_selector_all(".page-head h1 a, .player a", "as => as.length") == 0
    assert page.text_content("[data-testid='imported']") == (
        f"imported from a ggf record by {match.owner}: its players are names, no bots")
    assert "ms per move" not in page.inner_text(".page-head .meta")
    open_page(page, f"{web.url}/matches?limit=50")
    cells = page.eval_on_selector_all(f"tr[data-match='{match.id}'] td.name",
                                      "ts => ts.map(t => t.querySelectorAll('a').length)")
    assert cells == [0, 0]
    web.client.delete_match(match.id)


def test_an_imported_record_s_date_and_place_are_shown(web: WebStack, page: Any) -> None:
    """A GGF's DT and PC are kept (Match.origin) and exported again, but neither the
    match's JSON nor its page said them."""
    record = "(;GM[Othello]PC[NIOS]DT[2003.01.02_03:04:05.UTC]B[F5];)"
    match = web.client.import_match(record, referee_pb2.REPLAY_FORMAT_GGF)
    plain = web.client.import_match("(;GM[Othello]PC[NIOS]B[F5];)")
    try:
        said = web.http.json(f"/api/matches/{match.id}")["origin"]
        assert said == {"date": "2003.01.02_03:04:05.UTC", "place": "NIOS"}
        assert web.http.json(f"/api/matches/{plain.id}")["origin"] == {"date": None,
                                                                       "place": "NIOS"}
        newest = web.http.json("/api/matches?status=finished&limit=5")["matches"]
        assert {m["id"]: m["origin"] for m in newest}[match.id] == said  # a listing's too
        played = finished_ladder_match(web)
        assert web.http.json(f"/api/matches/{played.id}")["origin"] is None
        open_page(page, f"{web.url}/matches/{match.id}")
        assert page.text_content(".page-head [data-testid='origin']") == (
            "played on 2003.01.02_03:04:05.UTC at NIOS")
        open_page(page, f"{web.url}/matches/{plain.id}")
        assert page.text_content(".page-head [data-testid='origin']") == "played at NIOS"
        open_page(page, f"{web.url}/matches/{played.id}")
        assert page.query_selector("[data-testid='origin']") is None
    finally:
        web.client.delete_match(match.id)
        web.client.delete_match(plain.id)


def test_a_bot_named_like_markup_is_shown_as_text(web: WebStack, page: Any) -> None:
    pages = [f"{web.url}/bots", f"{web.url}/bots/{quote(HOSTILE_NAME, safe='')}",
             f"{web.url}/ladders/{web.ladder_id}"]
    for url in pages:
        open_page(page, url)
        page.wait_for_selector("main .card")
        assert HOSTILE_NAME in page.inner_text("main"), f"{url} does not show the name as text"
        assert page.evaluate("document.scripts.length") == 2  # theme.js and app.js only
        assert page.evaluate("document.querySelectorAll('img[src=\"x\"], b').length") == 0
    open_page(page, f"{web.url}/bots/{quote(HOSTILE_NAME, safe='')}")
    assert page.text_content("h1").startswith(HOSTILE_NAME)
    assert page.text_content("p.description") == HOSTILE_DESCRIPTION


def test_a_bad_version_in_a_bot_address_is_said_as_such(web: WebStack, page: Any) -> None:
    """`/bots/NAME?version=abc` showed a bare notice under no heading, titled 'Arena', and
    logged the refused answer as the page's own error."""
    open_page(page, f"{web.url}/bots/web-beginner?version=abc")
    assert page.text_content("main h1") == "Bad address"
    assert "version" in page.text_content("main .notice.error")
    assert page.title().startswith("Bad address")
    # The browser logs the refused call itself; that one line is expected, nothing else.
    assert page.problems.errors == ["Failed to load resource: the server responded with a "
                                    "status of 400 (Bad Request)"]
    page.problems.errors.clear()


def test_the_bot_list_reads_only_its_own_filters_from_the_address(web: WebStack,
                                                                  page: Any) -> None:
    """A link with a parameter that is not the list's (a share button's `fbclid`, a
    campaign's `utm_source`) showed an error instead of the bots: the page sent its whole
    query to the API, which refuses a parameter it does not take."""
    open_page(page, f"{web.url}/bots?prefix=web-&utm_source=mail&fbclid=x1")
    page.wait_for_selector("tr[data-bot='web-beginner']")
    names = page.eval_on_selector_all("tr[data-bot]", "rows => rows.map(r => r.dataset.bot)")
    assert names and all(name.startswith("web-") for name in names), names  # still filtered
    assert page.locator(".notice.error").count() == 0


def test_a_token_no_header_can_carry_is_refused_in_the_dialog(web: WebStack,
                                                               page: Any) -> None:
    """A token pasted with an invisible character (a zero-width space) was kept, and
    every request of the tab then failed in the browser before it was sent: every page,
    reads included, said 'the Arena gateway cannot be reached'."""
    open_page(page, f"{web.url}/ladders")
    page.click("#token-button")
    page.fill("#token-input", f"{USER_TOKEN}\u200b")
    page.click("#token-dialog button[value='save']")
    assert page.evaluate("document.getElementById('token-dialog').open")  # not saved
    assert page.evaluate("sessionStorage.getItem('arena-token')") is None
    page.click("#token-dialog button[value='cancel']")  # leaving needs no valid token
    assert not page.evaluate("document.getElementById('token-dialog').open")
    open_page(page, f"{web.url}/ladders")
    page.wait_for_selector(f"a[href='/ladders/{web.ladder_id}']")
    # Spaces around a token are trimmed as before.
    page.click("#token-button")
    page.fill("#token-input", f"  {USER_TOKEN} ")
    page.click("#token-dialog button[value='save']")
    # The dialog's close event, which saves the token, is a task of its own after the click.
    # (A predicate given as a function: an expression is polled through eval, which the
    # page's Content-Security-Policy refuses.)
    page.wait_for_function("() => !document.getElementById('token-dialog').open"
                           " && sessionStorage.getItem('arena-token') !== null")
    assert page.evaluate("sessionStorage.getItem('arena-token')") == USER_TOKEN


def test_an_address_that_is_no_percent_encoded_text_is_not_found(web: WebStack,
                                                                  page: Any) -> None:
    """``/bots/%E0%A4%A`` cannot be decoded: the page said nothing, stuck at 'Loading...',
    and threw 'URI malformed'. Such an address is no page."""
    for path in ("/bots/%E0%A4%A", "/matches/%FF", "/ladders/%C3", "/matches/%FF/tree/3"):
        open_page(page, web.url + path)
        assert page.text_content("main h1") == "Not found", path
        assert "No page here" in page.inner_text("main"), path


def test_a_protocol_bot_page_names_its_engine(web: WebStack, page: Any) -> None:
    """A bot of a catalog engine was shown as 'builtin' with 'The engine's defaults.': the
    list and its page name the engine, its pinned checksum and the bot's options."""
    deadline = time.monotonic() + 60
    while not any(o.name == "pbrain-arena" and o.workers for o in web.client.list_engines()):
        assert time.monotonic() < deadline, "the workers never offered pbrain-arena"
        time.sleep(0.2)
    with contextlib.suppress(AlreadyExistsError):  # a rerun on the same stack
        web.client.register_bot(bots_pb2.BotSpec(
            name="web-brain", game=common_pb2.GAME_KIND_GOMOKU,
            protocol=bots_pb2.ProtocolEngine(engine="pbrain-arena",
                                             options=config_to_struct({"hash_size": 64}))))
    bot = web.client.get_bot("web-brain")
    checksum = bot.spec.protocol.checksum
    assert web.http.json("/api/bots/web-brain")["protocol"] == {
        "engine": "pbrain-arena", "checksum": checksum, "options": {"hash_size": 64}}
    open_page(page, f"{web.url}/bots?prefix=web-brain")
    assert page.text_content("tr[data-bot='web-brain'] td:nth-child(4)") == (
        "protocol engine pbrain-arena")
    open_page(page, f"{web.url}/bots/web-brain")
    assert "protocol engine pbrain-arena" in page.inner_text(".bot-head .meta")
    facts = page.eval_on_selector_all(
        "dl.kv dt", "ts => ts.map(t => [t.textContent, t.nextElementSibling.textContent])")
    assert facts == [["Engine", "pbrain-arena from the workers' engine catalog "
                                "(arena engine list)"],
                     ["Checksum", checksum[:12]], ["Options", "hash_size = 64"]]


def test_a_bot_page_shows_kreversi_phase_tables_as_heat_maps(web: WebStack, page: Any) -> None:
    bot = web.client.get_bot("web-kreversi")
    config = json_format.MessageToDict(bot.spec.builtin.config)
    open_page(page, f"{web.url}/bots/web-kreversi")
    for phase in ("begin", "middle", "end"):
        values = page.eval_on_selector_all(f"figure[data-phase='{phase}'] rect[data-value]",
                                           "rs => rs.map(r => Number(r.dataset.value))")
        table = config["position_tables"][phase]
        assert values == [int(v) for row in table for v in row]
    depths = page.eval_on_selector_all("table.phases tbody tr:first-child td",
                                       "t => t.map(c => c.textContent)")
    assert depths == ["4", "4", "4"]


def test_a_bot_page_shows_its_place_in_the_rating_list(web: WebStack, page: Any) -> None:
    for _ in range(5):  # other tests' ladders of this stack may count a game in between
        rated = web.http.json("/api/ratings?game=othello")
        row = next(r for r in rated["rows"] if r["name"] == "web-kreversi")
        pool = sum(1 for r in rated["rows"] if r["pool"] == row["pool"])
        open_page(page, f"{web.url}/bots/web-kreversi")
        shown = page.eval_on_selector_all("tr[data-bot='web-kreversi@1'] td",
                                          "cs => cs.map(c => c.textContent)")
        if shown[2:4] == [f"{row['rank']} of {pool}", signed(row["elo"])]:
            break
    else:
        raise AssertionError(f"the bot page showed {shown}, the list {row} in a pool of {pool}")
    assert shown[0] == "Othello" and shown[5] == str(row["games"])
    page.click("tr[data-bot='web-kreversi@1'] a")
    page.wait_for_selector("body[data-ready='1'] section[data-pool] tr[data-bot='web-kreversi@1']")
    register(web.client, {"web-unrated": ("lab-beginner", {})})  # in no ladder
    open_page(page, f"{web.url}/bots/web-unrated")
    assert "Not rated yet" in page.text_content("main")


def test_gomoku_boards_mark_the_last_move_and_the_winning_five(web: WebStack, page: Any) -> None:
    """The board module draws what the gateway's views say, on every Gomoku size."""
    from arena.games import new_position

    open_page(page, f"{web.url}/ladders")
    for size in (9, 15, 19):
        position = new_position("gomoku", "freestyle", size)
        before = None
        line = [size * 2 + x for x in range(2, 7)]  # row 3, c..g
        for black, white in zip(line, [size * 5 + x for x in range(2, 7)], strict=True):
            before = position.copy()
            position.push(black)
            if position.is_game_over():
                break
            position.push(white)
        assert before is not None
        view = ply_view(position, position.ply, before, line[-1])
        assert view["five"] == line
        drawn = page.evaluate("""async ([view, size]) => {
            const { renderBoard } = await import('/static/js/board.js');
            const svg = renderBoard(view, {kind: 'gomoku', size});
            document.body.append(svg);
            const squaresOf = (selector) => [...svg.querySelectorAll(selector)]
              .map(c => Number(c.parentNode.dataset.square));
            const result = {
              squares: svg.querySelectorAll('g[data-square]').length,
              five: squaresOf('circle.five'), last: squaresOf('circle.last'),
              stones: [...svg.querySelectorAll('g[data-square]')]
                .map(g => g.dataset.stone).join(''),
              line: svg.querySelectorAll('line.five-line').length};
            svg.remove();
            return result;
        }""", [view, size])
        assert drawn["squares"] == size * size
        assert drawn["five"] == line and drawn["last"] == [line[-1]] and drawn["line"] == 1
        assert drawn["stones"] == cells_of(position)


# -- layout -----------------------------------------------------------------------------------

CARD_GAPS_JS = """() => {
  // Every pair of cards one above the other (their columns overlap): the gap between them.
  const boxes = [...document.querySelectorAll('.card')].map((c) => c.getBoundingClientRect());
  const gaps = [];
  boxes.forEach((a, i) => boxes.forEach((b, j) => {
    if (i !== j && a.bottom <= b.top + 1 && a.left < b.right && b.left < a.right) {
      gaps.push(b.top - a.bottom);
    }
  }));
  return {gaps, width: document.documentElement.scrollWidth, cards: boxes.length};
}"""


@pytest.mark.parametrize("width", [1280, 390])
def test_cards_never_touch_and_nothing_runs_off_a_narrow_screen(
        web: WebStack, browser: Any, width: int) -> None:
    """The cards of a two-column row touched the card below them (the row had no margin:
    the bot and ladder pages); and a phone-wide screen must not scroll sideways."""
    match = finished_ladder_match(web, with_tree=True)
    bot = match.config.black.name
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        page = context.new_page()
        for path in (f"/ladders/{web.ladder_id}", f"/bots/{quote(bot)}", f"/matches/{match.id}",
                     "/ratings", "/matches", "/bots", "/"):
            open_page(page, web.url + path)
            page.wait_for_timeout(300)  # the cards drawn after the first answers
            shown = page.evaluate(CARD_GAPS_JS)
            assert shown["cards"] >= 1, path
            assert shown["width"] <= width, (path, shown["width"])
            assert min(shown["gaps"], default=16) >= 8, (path, sorted(shown["gaps"])[:3])
    finally:
        context.close()


def test_the_match_list_pages_with_load_more(web: WebStack, page: Any) -> None:
    """The match list shows 50 matches a page, newest first; 'Load more' adds the next
    page after them (with how many matches that page read) until none is left, every match
    listed once, in the API's order. With a multiple of 50 matches the last page used to
    come with a token whose page was empty: a last click that added nothing."""
    record = web.client.get_replay(finished_ladder_match(web).id,
                                   referee_pb2.REPLAY_FORMAT_NATIVE).content

    # Counted through gRPC: the gateway shares an answer for a second, so the count asked of
    # it here could come back as the list after the imports.
    before = sum(1 for _ in web.client.iter_matches(game=common_pb2.GAME_KIND_OTHELLO,
                                                    summary_only=True))
    count = 51 + (-(before + 51)) % 50  # two pages or more, the last one full
    imported = [web.client.import_match(record, referee_pb2.REPLAY_FORMAT_NATIVE).id
                for _ in range(count)]
    try:
        expected, token = [], ""
        while True:
            answer = web.http.json("/api/matches?game=othello&limit=50"
                                   + (f"&page_token={token}" if token else ""))
            expected += [m["id"] for m in answer["matches"]]
            token = answer["next_page_token"]
            if not token:
                break
        assert len(expected) % 50 == 0 and len(expected) > 50
        open_page(page, f"{web.url}/matches?game=othello")
        assert page.eval_on_selector_all("tr[data-match]", "rs => rs.length") == 50
        assert "matches read for this page" in page.inner_text(".more-button")
        while button := page.query_selector(".more-button"):
            shown = page.eval_on_selector_all("tr[data-match]", "rs => rs.length")
            page.click(".more-button button")
            button.wait_for_element_state("hidden")  # the page drawn: its rows, then a button
            assert page.eval_on_selector_all("tr[data-match]", "rs => rs.length") > shown
        listed = page.eval_on_selector_all("tr[data-match]", "rs => rs.map(r => r.dataset.match)")
        assert listed == expected and set(imported) <= set(listed)
    finally:
        for match_id in imported:
            web.client.delete_match(match_id)


def test_a_ladder_page_lists_every_game_a_page_at_a_time(web: WebStack, page: Any) -> None:
    """A ladder page showed its newest 200 games and no way to the rest (a ladder may have
    20,000). It now pages with 'Load more' as the match list does. The page asks for 50
    games a page; the test ladder has 12, so the browser's requests are rewritten to ask
    for 5 (the server, its pages and tokens are real), and every game must be listed once,
    in the API's order."""
    ladder_games = list(web.client.get_standings(web.ladder_id).ladder.match_ids)
    expected, token = [], ""
    while True:
        answer = web.http.json(f"/api/matches?ladder={web.ladder_id}&limit=5"
                               + (f"&page_token={token}" if token else ""))
        expected += [m["id"] for m in answer["matches"]]
        token = answer["next_page_token"]
        if not token:
            break
    asked = _ladder_games_a_page(page, 5)
    open_page(page, f"{web.url}/ladders/{web.ladder_id}")
    page.wait_for_selector("tr[data-match]")
    assert page.eval_on_selector_all("tr[data-match]", "rs => rs.length") == 5
    while page.query_selector(".more-button"):
        shown = page.eval_on_selector_all("tr[data-match]", "rs => rs.length")
        page.click(".more-button button")
        page.wait_for_selector(f"tbody tr[data-match]:nth-child({shown + 1})")
    listed = page.eval_on_selector_all("tr[data-match]", "rs => rs.map(r => r.dataset.match)")
    assert listed == expected and sorted(listed) == sorted(ladder_games)
    assert len(ladder_games) == 12 and all("limit=50" in url for url in asked)


def test_a_running_ladder_s_page_keeps_the_games_a_viewer_loaded(web: WebStack,
                                                                   page: Any) -> None:
    """Each finished game redraws a running ladder's page; the games list went back to its
    first page, dropping the pages a viewer had loaded. Now it keeps them and offers the
    newest instead. Pages of 1 game here (the browser's asks rewritten, as above), so
    that the four games of a small running ladder take four."""
    ladder = _live_ladder(web, "paged live ladder", games_per_pairing=4)
    _ladder_games_a_page(page, 1)
    open_page(page, f"{web.url}/ladders/{ladder.id}")
    page.wait_for_selector("tr[data-match]")
    assert page.text_content("[data-testid='games-done']") == "0/4", "a game ended too soon"
    page.click(".more-button button")
    page.wait_for_selector("tbody tr[data-match]:nth-child(2)")
    loaded = page.eval_on_selector_all("tr[data-match]", "rs => rs.map(r => r.dataset.match)")
    page.wait_for_selector("[data-testid='newest-games']", timeout=120_000)  # a game ended
    assert page.text_content("[data-testid='games-done']") != "0/4"
    assert page.eval_on_selector_all("tr[data-match]",
                                     "rs => rs.map(r => r.dataset.match)") == loaded
    page.click("[data-testid='newest-games']")
    page.wait_for_selector("[data-testid='newest-games']", state="detached")
    assert page.eval_on_selector_all("tr[data-match]", "rs => rs.length") == 1
    with contextlib.suppress(FailedPreconditionError):  # its other games may be over too
        web.client.cancel_ladder(ladder.id)


def test_every_bot_can_be_listed_and_picked_past_the_first_page(web: WebStack,
                                                                 page: Any) -> None:
    """/bots showed the first 200 bots and left the rest out without a word, and the New
    ladder form offered only those 200 to pick: a page of bots ends with 'Load more', and
    the form lists every bot of the game."""
    many = {f"web-many-{n:03d}": ("lab-beginner", {}) for n in range(201)}
    register(web.client, many)
    open_page(page, f"{web.url}/bots?prefix=web-many-")
    assert page.eval_on_selector_all("tr[data-bot]", "rs => rs.length") == 200
    page.click(".more-button button")
    page.wait_for_selector("tr[data-bot='web-many-200']")
    listed = page.eval_on_selector_all("tr[data-bot]", "rs => rs.map(r => r.dataset.bot)")
    assert listed == sorted(many) and page.query_selector(".more-button") is None
    open_page(page, f"{web.url}/ladders")
    page.click("text=New ladder")
    page.wait_for_selector(".bot-picks input[value='web-many-200']")
    for bot in web.client.iter_bots():
        if bot.spec.game == common_pb2.GAME_KIND_OTHELLO:
            assert page.query_selector(f".bot-picks input[value={json.dumps(bot.spec.name)}]")
