"""The web gateway on a real stack, and a real browser.

One embedded stack (two Redis servers, registry, referee, ladder, two workers and the web
gateway, each its own process) serves every test here, with a small finished ladder that
stored its search trees. The browser is Debian's Chromium, driven by Playwright; if it is
missing, ``tools/install-chromium.sh`` installs it, and if that cannot, the tests fail
with the reason (never a skip).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from arena.clients.sdk import ArenaClient
from arena.services.common.launcher import Launcher
from arena.services.worker.engines.catalog import sample_catalog_path

from arena.errors import AlreadyExistsError
from arena.v1 import bots_pb2, common_pb2, ladder_pb2

REPO = Path(__file__).resolve().parents[2]
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]
USER_TOKEN = "web-test-user-token"
HOSTILE_NAME = "<script>alert('name')</script>"
HOSTILE_DESCRIPTION = '<img src=x onerror="alert(\'description\')"> & <b>bold</b>'
# name -> (preset, overrides): fast lab bots, a KReversi bot deep enough for real trees,
# and a bot whose name and description are markup.
LADDER_BOTS: dict[str, tuple[str, dict[str, Any]]] = {
    "web-beginner": ("lab-beginner", {}),
    "web-intermediate": ("lab-intermediate", {}),
    "web-kreversi": ("kreversi-default", {"depth": {"begin": 4, "middle": 4, "end": 4}}),
    HOSTILE_NAME: ("lab-beginner", {}),
}
# Bots for a live match that think for their whole 150 ms (iterative deepening to depth
# 60 stops on the clock), so a game lasts several seconds and moves arrive while a page
# watches.
LIVE_BOTS: dict[str, tuple[str, dict[str, Any]]] = {
    "web-live-a": ("arena-fast", {"depth": 60, "time_ms": 150}),
    "web-live-b": ("arena-fast", {"depth": 60, "time_ms": 150}),
}


@dataclass
class Http:
    """Plain HTTP to the gateway (urllib: an outsider's client, no test helpers)."""

    base: str

    def request(self, method: str, path: str, body: Any = None, token: str | None = None,
                headers: dict[str, str] | None = None,
                ) -> tuple[int, dict[str, str], bytes]:
        data = None if body is None else (body if isinstance(body, bytes)
                                          else json.dumps(body).encode())
        sent = dict(headers or {})
        if body is not None:
            sent.setdefault("content-type", "application/json")
        if token:
            sent["authorization"] = f"Bearer {token}"
        request = urllib.request.Request(self.base + path, data=data, method=method,
                                         headers=sent)
        try:
            with urllib.request.urlopen(request, timeout=30) as reply:
                return reply.status, {k.lower(): v for k, v in reply.headers.items()}, reply.read()
        except urllib.error.HTTPError as error:
            return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()

    def json(self, path: str, token: str | None = None) -> Any:
        status, _, body = self.request("GET", path, token=token)
        assert status == 200, f"GET {path}: {status} {body[:300]!r}"
        return json.loads(body)


@dataclass
class WebStack:
    stack: Launcher
    client: ArenaClient
    http: Http
    ladder_id: str

    @property
    def url(self) -> str:
        return f"http://{self.stack.target('web')}"


def register(client: ArenaClient, bots: dict[str, tuple[str, dict[str, Any]]],
             description: str = "") -> None:
    from google.protobuf import json_format, struct_pb2

    for name, (preset, overrides) in bots.items():
        config = struct_pb2.Struct()
        json_format.ParseDict(overrides, config)
        spec = bots_pb2.BotSpec(name=name, preset=preset,
                                description=description if name == HOSTILE_NAME else "",
                                builtin=bots_pb2.BuiltinEngine(config=config))
        with contextlib.suppress(AlreadyExistsError):  # a rerun on the same stack
            client.register_bot(spec, from_preset=preset)


def wait_for_ladder(client: ArenaClient, ladder_id: str, timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    for progress in client.watch_ladder(ladder_id, timeout_s=timeout_s):
        if progress.ladder.status != ladder_pb2.LADDER_STATUS_RUNNING:
            return
        assert time.monotonic() < deadline, "the test ladder did not finish in time"


@pytest.fixture(scope="session")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebStack]:
    env = {"ARENA_WARM_GAMES": "othello",
           "ARENA_TOKENS": json.dumps({USER_TOKEN: {"name": "webuser", "role": "user"}})}
    # Arena's own engine catalog: its Gomocup brain is there to be registered as a protocol
    # bot (started only if a test plays it).
    with Launcher(home=tmp_path_factory.mktemp("web-stack"), workers=2, env=env,
                  web=True, metrics=True, engines=sample_catalog_path()) as stack:
        client = ArenaClient(registry=stack.target("registry"), referee=stack.target("referee"),
                             ladder=stack.target("ladder"), engine=stack.target("analyst"),
                             token=stack.admin_token, home=stack.home)
        register(client, LADDER_BOTS, HOSTILE_DESCRIPTION)
        register(client, LIVE_BOTS)
        ladder = client.create_ladder(ladder_pb2.LadderConfig(
            name="web test ladder",
            game=common_pb2.GameSpec(kind=common_pb2.GAME_KIND_OTHELLO, variant="standard",
                                     board_size=8),
            bots=[common_pb2.BotRef(name=name) for name in LADDER_BOTS],
            format=ladder_pb2.LADDER_FORMAT_ROUND_ROBIN, games_per_pairing=2,
            opening_suite="othello-balanced", capture_trees=True, seed=7,
            time_control=common_pb2.TimeControl(move_time_ms=3000),
        ))
        wait_for_ladder(client, ladder.id)
        web = f"http://{stack.target('web')}"
        yield WebStack(stack, client, Http(web), ladder.id)
        client.close()


@pytest.fixture(scope="session")
def chromium() -> str:
    """The browser's path, installed by the project's script when missing."""
    result = subprocess.run([str(REPO / "tools" / "install-chromium.sh")], capture_output=True,
                            text=True, timeout=900, check=False)
    if result.returncode != 0:
        pytest.fail("the browser tests need Chromium and it could not be installed:\n"
                    f"{result.stderr.strip()}")
    return result.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def browser(chromium: str) -> Iterator[Any]:
    """Headless Chromium; every launch starts from a fresh temporary profile. One per
    file: Playwright's sync API keeps an event loop running in this thread while it is
    open, and a later file's ``asyncio.run`` (``test_live.py``) fails inside it when both
    run in one test process (``make test`` gives each process files in no fixed order)."""
    from playwright.sync_api import sync_playwright

    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


@dataclass
class PageProblems:
    """Console errors, page errors and dialogs a page raised (all should stay empty)."""

    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900},
                                  color_scheme="light")
    context.set_default_timeout(20_000)
    yield context
    context.close()


@pytest.fixture
def page(context: Any) -> Iterator[Any]:
    page = context.new_page()
    problems = PageProblems()
    page.on("console", lambda m: problems.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.errors.append(str(e)))

    def on_dialog(dialog: Any) -> None:
        problems.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.problems = problems
    yield page
    assert problems.dialogs == [], f"the page opened dialogs: {problems.dialogs}"
    assert problems.errors == [], f"the page logged errors: {problems.errors}"


def open_page(page: Any, url: str) -> None:
    """Load a page and wait until its modules have drawn it."""
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']")
