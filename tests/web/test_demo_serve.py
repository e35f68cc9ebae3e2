"""`arena demo --serve`: the demo prints its ladder page, and keeps the stack (and the
page) up after the ladder until Ctrl-C, then stops everything cleanly."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from tests.web.conftest import REPO, open_page


def test_demo_serve_keeps_the_ladder_page_up_until_ctrl_c(tmp_path: Path, page: Any) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env |= {"ARENA_HOME": str(tmp_path), "PYTHONPATH": str(REPO),
            "ARENA_WARM_GAMES": "othello"}
    process = subprocess.Popen(
        [sys.executable, "-m", "arena.clients", "demo", "--serve", "--workers", "1",
         "--bots", "lab-beginner,lab-intermediate", "--games-per-pairing", "2"],
        env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 300
        for line in process.stdout:
            lines.append(line)
            if "Serving until Ctrl-C" in line:
                break
            assert time.monotonic() < deadline, "".join(lines)
        out = "".join(lines)
        watch = re.search(r"Watch it in a browser: (http://127\.0\.0\.1:\d+/ladders/(\S+))", out)
        assert watch, out
        url, ladder_id = watch.groups()
        assert f"The ladder's page: {url}" in out
        with urllib.request.urlopen(url, timeout=10) as shell:
            assert shell.status == 200 and b"/static/js/app.js" in shell.read()
        base = url.split("/ladders/")[0]
        with urllib.request.urlopen(f"{base}/api/ladders/{ladder_id}", timeout=10) as reply:
            standings = json.loads(reply.read())
        assert standings["ladder"]["status"] == "finished"
        assert standings["ladder"]["games_done"] == standings["ladder"]["games_total"] == 2
        # The demo's stack has no other ladder: the list's running-only view is empty.
        open_page(page, f"{base}/ladders?running=1")
        page.wait_for_selector("h2:text-is('Running ladders')")
        assert page.is_visible("text=No ladder is running.")
        assert page.eval_on_selector_all("tr[data-ladder]", "rs => rs.length") == 0
        page.uncheck("input[name=running]")
        page.wait_for_selector(f"tr[data-ladder='{ladder_id}']")
        assert page.is_visible("h2:text-is('All ladders')")
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, rest
    assert "Stopping everything" in rest and "Done in" in rest
    assert not (tmp_path / "demo" / "stack.json").exists()
