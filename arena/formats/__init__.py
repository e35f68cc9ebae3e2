"""Game record formats: each has a parser (strings in, no I/O) and a writer.

- ``transcript``: Othello move lists ``f5d6c3...``
- ``ggf``: Generic Game Server / Edax game records
- ``obf``: Othello positions with scored moves, one per line
- ``psq``: Piskvork Gomoku records
- ``replay``: Arena's own lossless, versioned JSON replay

Every parser raises ``FormatError`` (a ``ValueError``) on malformed input.
"""

from __future__ import annotations

from arena.formats.errors import FormatError
from arena.formats.ggf import (
    GgfGame,
    GgfMove,
    ggf_from_moves,
    ggf_result,
    parse_ggf,
    parse_ggf_games,
    write_ggf,
)
from arena.formats.obf import ObfPosition, parse_obf, parse_obf_file, write_obf, write_obf_file
from arena.formats.psq import (
    PSQ_HEADER,
    PsqGame,
    PsqMove,
    parse_psq,
    psq_from_moves,
    psq_lookalike,
    write_psq,
)
from arena.formats.replay import (
    REPLAY_VERSION,
    Replay,
    ReplayMove,
    parse_replay,
    write_replay,
)
from arena.formats.transcript import parse_transcript, replay_transcript, write_transcript

__all__ = [
    "PSQ_HEADER",
    "REPLAY_VERSION",
    "FormatError",
    "GgfGame",
    "GgfMove",
    "ObfPosition",
    "PsqGame",
    "PsqMove",
    "Replay",
    "ReplayMove",
    "ggf_from_moves",
    "ggf_result",
    "parse_ggf",
    "parse_ggf_games",
    "parse_obf",
    "parse_obf_file",
    "parse_psq",
    "parse_replay",
    "parse_transcript",
    "psq_from_moves",
    "psq_lookalike",
    "replay_transcript",
    "write_ggf",
    "write_obf",
    "write_obf_file",
    "write_psq",
    "write_replay",
    "write_transcript",
]
