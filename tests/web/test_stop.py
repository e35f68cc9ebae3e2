"""The web gateway's stop has a deadline, as the gRPC services' has."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from arena.services.common.server import STUCK_EXIT_CODE

# A gateway whose application hangs in its shutdown, blocking the event loop itself.
GATEWAY_THAT_HANGS_IN_ITS_STOP = """
import asyncio, sys, threading
from pathlib import Path
import uvicorn
from arena.services.web.app import Lifecycle
from arena.services.web.server import WebServer, bind

def never_returns() -> None:
    threading.Event().wait()

async def app(scope, receive, send):
    assert scope["type"] == "lifespan"
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        else:
            never_returns()

sock = bind("127.0.0.1:0")
server = WebServer(uvicorn.Config(app, log_config=None, lifespan="on"), Lifecycle(),
                   drain_s=0.1, ready_file=Path(sys.argv[1]),
                   port=sock.getsockname()[1], stop_deadline_s=1.0)
asyncio.run(server.serve(sockets=[sock]))
"""


def test_a_gateway_whose_stop_hangs_ends_with_every_threads_stack(tmp_path: Path) -> None:
    ready = tmp_path / "port"
    process = subprocess.Popen([sys.executable, "-c", GATEWAY_THAT_HANGS_IN_ITS_STOP,
                                str(ready)], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == STUCK_EXIT_CODE, err[-3000:]
    assert "still stopping after 1 s" in err and "in never_returns" in err
