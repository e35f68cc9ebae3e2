"""Every service-backed command, run for real against the embedded stack."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from arena.services.common.launcher import Launcher
from arena.services.common.server import check_health

from arena.formats import parse_replay
from tests.clients.conftest import REPO, RunArena, assert_one_line_error
from tests.support.processes import wait_for_file
from tests.support.stacks import launcher

TINY = {"tiny-a": "lab-beginner", "tiny-b": "lab-intermediate", "tiny-c": "lab-advanced"}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launcher]:
    with launcher(home=tmp_path_factory.mktemp("stack"), workers=1) as running:
        yield running


@pytest.fixture
def arena(run_arena: RunArena, stack: Launcher) -> RunArena:
    """`arena` pointed at the module's stack (through its stack.json)."""

    def run(*args: str, stdin: str = "", env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return run_arena(*args, stdin=stdin, timeout=timeout,
                         env={"ARENA_HOME": str(stack.home), **(env or {})})

    return run


def _ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr + result.stdout
    assert "Traceback" not in result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def bots(stack: Launcher) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env |= {"ARENA_HOME": str(stack.home), "PYTHONPATH": str(REPO)}
    for name, preset in TINY.items():
        subprocess.run([sys.executable, "-m", "arena.clients", "bot", "register", "--name",
                        name, "--from-preset", preset], check=True, env=env,
                       capture_output=True)
    return list(TINY)


@pytest.fixture(scope="module")
def finished_match(stack: Launcher, bots: list[str]) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env |= {"ARENA_HOME": str(stack.home), "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-m", "arena.clients", "match", "create", "--black", "tiny-a",
         "--white", "tiny-b", "--move-time-ms", "500", "--trees", "--json"],
        check=True, env=env, capture_output=True, text=True).stdout
    match_id = str(json.loads(out)["id"])
    subprocess.run([sys.executable, "-m", "arena.clients", "match", "watch", match_id,
                    "--no-board"], check=True, env=env, capture_output=True, timeout=120)
    return match_id


def test_match_create_and_watch(arena: RunArena, bots: list[str]) -> None:
    out = _ok(arena("match", "create", "--black", "tiny-b", "--white", "tiny-a",
                    "--opening", "f5 d6", "--move-time-ms", "500", "--watch"))
    assert "tiny-b@1 (black) vs tiny-a@1 (white)" in out
    assert "  3. black" in out  # the bots start after the two opening moves
    assert "result: " in out
    assert "(" in out and ")" in out  # boards with the last move marked
    # The same deterministic game again: its moves now come from the shared cache.
    again = _ok(arena("match", "create", "--black", "tiny-b", "--white", "tiny-a",
                      "--opening", "f5 d6", "--move-time-ms", "500", "--watch"))
    assert re.search(r"depth 2, nodes \d+, pv [a-h1-8 ]+, from the shared cache\)", again)


def test_match_watch_json_lines(arena: RunArena, finished_match: str) -> None:
    lines = _ok(arena("match", "watch", finished_match, "--json")).splitlines()
    events = [json.loads(line) for line in lines]
    assert "started" in events[0] and "ended" in events[-1]
    assert sum("move" in e for e in events) >= 10


def test_match_show_list_and_json(arena: RunArena, finished_match: str) -> None:
    shown = _ok(arena("match", "show", finished_match))
    assert "tiny-a@1" in shown and "(normal" in shown
    data = json.loads(_ok(arena("match", "show", finished_match, "--json")))
    assert data["id"] == finished_match and data["status"] == "MATCH_STATUS_FINISHED"
    listed = _ok(arena("match", "list", "--bot", "tiny-a", "--status", "finished"))
    assert finished_match in listed
    ids = [m["id"] for m in json.loads(_ok(arena("match", "list", "--json", "--limit", "0")))]
    assert finished_match in ids


def test_match_export_and_replay(arena: RunArena, finished_match: str, tmp_path: Path) -> None:
    _ok(arena("match", "export", finished_match, "-o", str(tmp_path / "m.json")))
    replay = parse_replay((tmp_path / "m.json").read_text())
    assert replay.outcome is not None
    transcript = _ok(arena("match", "export", finished_match, "--format", "transcript"))
    assert transcript.strip()[:2] in {"d3", "c4", "f5", "e6"}
    assert _ok(arena("match", "export", finished_match, "--format", "ggf")).startswith("(;")
    plies = len(replay.moves)
    from_server = _ok(arena("match", "replay", finished_match, "--ply", str(plies)))
    from_file = _ok(arena("match", "replay", str(tmp_path / "m.json"), "--ply", str(plies)))
    assert from_server == from_file
    steps = _ok(arena("match", "replay", finished_match, stdin="n\nl\nq\n"))
    assert f"ply {plies}/{plies}" in steps
    data = json.loads(_ok(arena("match", "replay", finished_match, "--json")))
    assert len(data["plies"]) == plies + 1


def test_match_tree(arena: RunArena, finished_match: str) -> None:
    out = _ok(arena("match", "tree", finished_match, "--ply", "2"))
    assert "[root] Max" in out and "<= PV" in out and "Leaf" in out and "Min" in out
    shallow = _ok(arena("match", "tree", finished_match, "--ply", "2", "--depth", "1"))
    assert "more below" in shallow and "Leaf" not in shallow
    tree = json.loads(_ok(arena("match", "tree", finished_match, "--ply", "2", "--json")))
    assert tree["nodes"][0]["parent"] == -1
    # --depth with --json: the nodes the text shows (it printed every node, --depth unread).
    _assert_two_levels(tree, json.loads(_ok(arena("match", "tree", finished_match, "--ply",
                                                  "2", "--json", "--depth", "1"))))
    assert_one_line_error(arena("match", "tree", finished_match, "--ply", "0"), "from 1")


def _assert_two_levels(whole: dict[str, Any], within: dict[str, Any]) -> None:
    """``within`` is ``whole`` with its root and the root's children alone (JSON leaves out
    a field at 0: the root's id, its children's parent)."""
    root = whole["nodes"][0].get("id", 0)
    kept = [node for node in whole["nodes"] if node.get("parent", 0) in (-1, root)]
    assert 1 < len(kept) < len(whole["nodes"])  # the test shows something
    assert within == {**whole, "nodes": kept}


def test_match_delete(arena: RunArena, bots: list[str]) -> None:
    created = json.loads(_ok(arena("match", "create", "--black", "tiny-a", "--white",
                                   "tiny-a", "--move-time-ms", "300", "--json")))
    _ok(arena("match", "watch", created["id"], "--no-board"))
    assert "deleted" in _ok(arena("match", "delete", created["id"]))
    assert_one_line_error(arena("match", "show", created["id"]))


def test_unknown_bot_and_unknown_ids(arena: RunArena, bots: list[str]) -> None:
    assert_one_line_error(arena("match", "create", "--black", "nobody", "--white", "tiny-a"),
                          "nobody")
    assert_one_line_error(arena("ladder", "create", "tiny-a", "nobody"), "nobody")
    assert_one_line_error(arena("match", "show", "no-such-match"))
    assert_one_line_error(arena("ladder", "standings", "no-such-ladder"))
    assert_one_line_error(arena("analyze", "--bot", "nobody"), "nobody")


def test_wrong_token(arena: RunArena) -> None:
    assert_one_line_error(arena("match", "list", env={"ARENA_TOKEN": "wrong"}), "token")


def test_ladder_lifecycle(arena: RunArena, bots: list[str]) -> None:
    out = _ok(arena("ladder", "create", *bots, "--games-per-pairing", "2",
                    "--move-time-ms", "300", "--name", "cli", "--watch"))
    assert "/6 100%" in out  # the progress bar reached the end
    for name in bots:
        assert f"{name}@1" in out
    ladder_id = out.split()[1].rstrip(":")
    standings = json.loads(_ok(arena("ladder", "standings", ladder_id, "--json")))
    assert sum(row["games"] for row in standings["rows"]) == 12
    table = _ok(arena("ladder", "standings", ladder_id))
    assert "Elo" in table
    # The crosstable: row bot's wins-draws-losses against each column, as the JSON says.
    names = [f"{row['bot']['name']}@{row['bot']['version']}" for row in standings["rows"]]
    records = {(f"{p['bot_ref']['name']}@{p['bot_ref']['version']}",
                f"{p['opponent_ref']['name']}@{p['opponent_ref']['version']}"):
               f"{p.get('wins', 0)}-{p.get('draws', 0)}-{p.get('losses', 0)}"
               for p in standings["head_to_head"]}
    matrix = table.split("head to head (wins-draws-losses of the row's bot)\n")[1].splitlines()
    assert matrix[0].split() == ["#1", "#2", "#3"]
    for i, bot in enumerate(names):
        cells = matrix[i + 1].split()
        assert cells[:2] == [f"#{i + 1}", bot]
        assert cells[2:] == [records[bot, other] if other != bot else "-" for other in names]
    assert "/6 100%" in _ok(arena("ladder", "watch", ladder_id))
    events = [json.loads(line)
              for line in _ok(arena("ladder", "watch", ladder_id, "--json")).splitlines()]
    assert events[-1]["ladder"]["id"] == ladder_id and "rows" in events[-1]
    assert ladder_id in _ok(arena("ladder", "list"))
    listed = json.loads(_ok(arena("ladder", "list", "--json")))
    assert ladder_id in [ladder["id"] for ladder in listed]
    matches = json.loads(_ok(arena("match", "list", "--ladder", ladder_id, "--json")))
    assert len(matches) == 6


def test_ladder_cancel(arena: RunArena, bots: list[str]) -> None:
    created = json.loads(_ok(arena("ladder", "create", *bots, "--games-per-pairing", "40",
                                   "--move-time-ms", "300", "--json")))
    out = _ok(arena("ladder", "cancel", created["id"]))
    assert "cancelled" in out


def test_analyze(arena: RunArena, bots: list[str]) -> None:
    out = _ok(arena("analyze", "--bot", "tiny-b", "--moves", "f5 d6", "--tree", "100"))
    assert "best move" in out and "pv " in out and "[root] Max" in out
    # --tree-depth with --json, as match tree's --depth: the nodes the text shows.
    # (Two searches may differ: the second's tree is checked on its own.)
    tree = json.loads(_ok(arena("analyze", "--bot", "tiny-b", "--moves", "f5 d6", "--tree",
                                "100", "--json", "--tree-depth", "1")))["tree"]
    root = tree["nodes"][0].get("id", 0)
    assert all(node.get("parent", 0) in (-1, root) for node in tree["nodes"]), tree
    assert len(tree["nodes"]) > 1
    # Moves written together, as match create's --opening takes them (it was refused:
    # "invalid Othello move 'f5d6'").
    together = json.loads(_ok(arena("analyze", "--bot", "tiny-b", "--moves", "f5d6", "--json")))
    spaced = json.loads(_ok(arena("analyze", "--bot", "tiny-b", "--moves", "f5 d6", "--json")))
    assert together["move"] == spaced["move"]
    data = json.loads(_ok(arena("analyze", "--preset", "lab-beginner", "--json")))
    assert data["move"]["square"] in (19, 26, 37, 44)
    start = "---------------------------OX------XO--------------------------- X"
    assert "best move" in _ok(arena("analyze", "--bot", "tiny-a", "--position", start))
    # KReversi's random tie rule: the four opening moves tie, the seed draws one.
    out = _ok(arena("analyze", "--preset", "kreversi-default", "--seed", "3"))
    assert "drawn at random (seed 3) among the tied moves d3 c4 f5 e6" in out
    # A tree asked for where the engine does not search (Gomoku's first move, the centre):
    # the command said nothing of it.
    out = _ok(arena("analyze", "--preset", "arena-gomoku", "--game", "gomoku", "--tree", "50"))
    assert out.rstrip().endswith("no search tree: the move was chosen without a search (an "
                                 "opening or forced move)"), out


def test_worker_command(stack: Launcher, tmp_path: Path) -> None:
    ready = tmp_path / "worker.port"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env |= {"PYTHONPATH": str(REPO), "ARENA_ADMIN_TOKEN": stack.admin_token,
            "PYTHONFAULTHANDLER": "1"}  # a worker that hangs is killed with its stacks shown
    # Its log goes to a file: a pipe nobody reads while it runs fills up (64 KiB) when the
    # session's stack keeps it busy, and then the worker blocks on its next log line.
    log = tmp_path / "worker.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "arena.clients", "worker", "--listen", "127.0.0.1:0",
             "--ready-file", str(ready), "--redis-url", stack.redis_url,
             "--cache-url", stack.cache_url, "--worker-id", "cli-test"],
            env=env, stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        wait_for_file(ready, process, 90, log.read_text)
        assert check_health(f"127.0.0.1:{ready.read_text()}")
        process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGABRT)  # faulthandler prints every thread's stack
            process.wait(timeout=30)
            message = f"the worker did not stop on SIGTERM:\n{log.read_text()[-20_000:]}"
            raise AssertionError(message) from None
        assert code == 0, log.read_text()[-5_000:]
    finally:
        if process.poll() is None:
            process.kill()
