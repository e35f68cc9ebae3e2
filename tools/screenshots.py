"""Screenshots of every page, light and dark, laptop and phone width: `make screenshots`.

Starts an embedded stack in a temporary folder, plays a small Othello ladder (with search
trees), a Gomoku game and a live game, then photographs each page with headless Chromium
(installed by tools/install-chromium.sh when missing) into ``screenshots/``:
``<page>-<light|dark>-<laptop|phone>.png``. Takes a few minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import contextlib
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

from arena.clients.sdk import ArenaClient
from arena.services.common.launcher import Launcher
from google.protobuf import json_format, struct_pb2

from arena.errors import AlreadyExistsError
from arena.v1 import bots_pb2, common_pb2, ladder_pb2, match_pb2

REPO = Path(__file__).resolve().parents[1]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
DEVICES = {"laptop": {"width": 1366, "height": 860}, "phone": {"width": 390, "height": 844}}
OTHELLO = common_pb2.GameSpec(kind=common_pb2.GAME_KIND_OTHELLO, variant="standard",
                              board_size=8)


def png(width: int, height: int, pixel: Any) -> bytes:
    """A small RGB PNG; ``pixel(x, y)`` gives (r, g, b)."""
    rows = b"".join(b"\x00" + bytes(c for x in range(width) for c in pixel(x, y))
                    for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows))
            + chunk(b"IEND", b""))


def disc_avatar(x: int, y: int) -> tuple[int, int, int]:
    """A green board square with a half-black, half-white disc: Terra's picture here."""
    inside = (x - 31.5) ** 2 + (y - 31.5) ** 2 < 24**2
    if not inside:
        return (47, 125, 85)
    return (20, 20, 22) if x < 32 else (240, 240, 236)


def register(client: ArenaClient, name: str, preset: str, overrides: dict[str, Any],
             description: str = "", avatar: bytes = b"") -> None:
    config = struct_pb2.Struct()
    json_format.ParseDict(overrides, config)
    spec = bots_pb2.BotSpec(name=name, preset=preset, description=description,
                            avatar_png=avatar, builtin=bots_pb2.BuiltinEngine(config=config))
    with contextlib.suppress(AlreadyExistsError):
        client.register_bot(spec, from_preset=preset)


def wait_match(client: ArenaClient, match_id: str) -> None:
    for _ in client.watch_match(match_id, timeout_s=600):
        pass


def play(client: ArenaClient) -> dict[str, str]:
    """The games the screenshots show; returns the ids the pages need."""
    register(client, "terra", "terra", {"depth": {"begin": 3, "middle": 3, "end": 4}},
             "KReversi's Terra, a little shallower: sharper X squares, stable discs count.",
             png(64, 64, disc_avatar))
    register(client, "ryo", "ryo", {"depth": {"begin": 3, "middle": 3, "end": 4}},
             "KReversi's Ryo with the class tables.")
    register(client, "lab-advanced", "lab-advanced", {}, "The Reversi lab's Advanced level.")
    register(client, "lab-beginner", "lab-beginner", {}, "The Reversi lab's Beginner level.")
    register(client, "arena-fast", "arena-fast", {"depth": 60, "time_ms": 250},
             "Arena's own evaluator, a quarter second per move.")
    register(client, "moku", "sharpmoku-normal", {}, "SharpMoku, Normal level.")
    register(client, "gomoku-pro", "arena-gomoku", {"max_depth": 6},
             "Arena's Gomoku engine, iterative deepening to 6 plies.")
    ladder = client.create_ladder(ladder_pb2.LadderConfig(
        name="KReversi bots and the lab", game=OTHELLO,
        bots=[common_pb2.BotRef(name=n) for n in ("terra", "ryo", "lab-advanced",
                                                   "lab-beginner")],
        format=ladder_pb2.LADDER_FORMAT_ROUND_ROBIN, games_per_pairing=2, seed=3,
        opening_suite="othello-balanced", capture_trees=True,
        time_control=common_pb2.TimeControl(move_time_ms=4000)))
    gomoku = client.create_match(match_pb2.MatchConfig(
        game=common_pb2.GameSpec(kind=common_pb2.GAME_KIND_GOMOKU, variant="freestyle",
                                 board_size=15),
        black=common_pb2.BotRef(name="moku"), white=common_pb2.BotRef(name="gomoku-pro"),
        time_control=common_pb2.TimeControl(move_time_ms=5000), seed=5))
    for _ in client.watch_ladder(ladder.id, timeout_s=900):
        pass
    wait_match(client, gomoku.id)
    matches = list(client.iter_matches(ladder_id=ladder.id))
    with_tree = next(m for m in matches if any(r.has_tree and r.search.depth >= 2
                                               for r in m.moves))
    tree_ply = next(r.ply for r in with_tree.moves if r.has_tree and r.search.depth >= 2)
    return {"ladder": ladder.id, "othello": with_tree.id, "tree": f"{with_tree.id}/tree/"
            f"{tree_ply}", "gomoku": gomoku.id}


def shoot(url: str, ids: dict[str, str], client: ArenaClient, out: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    chromium = subprocess.run([str(REPO / "tools" / "install-chromium.sh")], check=True,
                              capture_output=True, text=True).stdout.split()[-1]
    pages = {
        "ladders": "/ladders", "ladder": f"/ladders/{ids['ladder']}", "ratings": "/ratings",
        "bots": "/bots", "bot": "/bots/terra", "matches": "/matches",
        "match": f"/matches/{ids['othello']}#ply=30",
        "gomoku": f"/matches/{ids['gomoku']}", "tree": f"/matches/{ids['tree']}",
    }
    saved = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=FLAGS)
        for theme in ("light", "dark"):
            for device, viewport in DEVICES.items():
                context = browser.new_context(viewport=viewport, color_scheme=theme,
                                              device_scale_factor=1)
                page = context.new_page()
                for name, path in pages.items():
                    page.goto(url + path)
                    page.wait_for_selector("body[data-ready='1']")
                    if name == "tree":
                        page.click("text=Open the principal variation")
                    page.wait_for_timeout(300)  # avatars and charts settle
                    target = out / f"{name}-{theme}-{device}.png"
                    page.screenshot(path=str(target), full_page=True)
                    saved.append(target)
                saved.append(live(page, url, client, out / f"live-{theme}-{device}.png"))
                context.close()
        browser.close()
    return saved


def live(page: Any, url: str, client: ArenaClient, target: Path) -> Path:
    """A match page while the game is being played."""
    match = client.create_match(match_pb2.MatchConfig(
        game=OTHELLO, black=common_pb2.BotRef(name="arena-fast"),
        white=common_pb2.BotRef(name="terra"),
        time_control=common_pb2.TimeControl(move_time_ms=4000)))
    page.goto(f"{url}/matches/{match.id}")
    page.wait_for_function("() => document.querySelectorAll('.moves button').length >= 14",
                           timeout=120_000)
    page.screenshot(path=str(target), full_page=True)
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "screenshots")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="arena-screens-") as home, \
            Launcher(home=Path(home), workers=2, web=True) as stack:
        url = f"http://{stack.target('web')}"
        print(f"stack up at {url}; playing the games to show...", flush=True)
        with ArenaClient(registry=stack.target("registry"), referee=stack.target("referee"),
                         ladder=stack.target("ladder"), engine=stack.target("worker"),
                         token=stack.admin_token, home=stack.home) as client:
            ids = play(client)
            saved = shoot(url, ids, client, args.out)
    for path in saved:
        print(path.relative_to(REPO) if path.is_relative_to(REPO) else path)
    print(f"{len(saved)} screenshots in {time.monotonic() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
