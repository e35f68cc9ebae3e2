"""The web gateway's stop has a deadline, as the gRPC services' has."""

from __future__ import annotations

from pathlib import Path

from arena.services.common.server import STUCK_EXIT_CODE

from tests.support.processes import signal_when_ready

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
    code, err = signal_when_ready(GATEWAY_THAT_HANGS_IN_ITS_STOP, tmp_path / "port")
    assert code == STUCK_EXIT_CODE, err[-3000:]
    assert "still stopping after 1 s" in err and "in never_returns" in err
