"""The text protocols other programs use to talk to game engines, and Arena's engines
speaking them.

- ``gomocup``: the Gomocup (piskvork) protocol of every ``pbrain-*`` Gomoku engine.
- ``nboard``: the NBoard protocol of Othello engines (Edax, NTest, ...).
- ``gtp``: the Go Text Protocol as Othello engines speak it (Edax ``-gtp``, Quarry).
- ``report``: the search information an engine gives with its move, in Arena's terms.
- ``gomocup_brain``, ``nboard_engine`` and ``gtp_engine``: Arena's own bots behind those
  protocols on stdin/stdout (``pbrain-arena``, ``arena-nboard``, ``arena-gtp``, ``arena
  engine gomocup|nboard|gtp``).

The codecs only parse and format lines; they do no I/O. The manager side (running an
engine process, deadlines, the sandbox) lives in the worker: ``arena.services.worker.engines``.
"""

from arena.protocols.errors import ProtocolError
from arena.protocols.report import SearchReport

__all__ = ["ProtocolError", "SearchReport"]
