"""Protocol engines on a worker: programs that speak NBoard or GTP (Othello) or Gomocup
(Gomoku) on stdin/stdout, run in a sandbox and kept warm between moves.

- ``catalog``: the operator's list of engines (``engines.toml``), validated and checksummed.
- ``sandbox`` (+ ``cgroups``): starting a process under the protections the machine allows.
- ``process``: line I/O with deadlines; how a process ended, as a typed failure.
- ``client`` (+ ``nboard``, ``gtp``, ``gomocup``): ``play(position, history, limits)
  -> EngineAnswer``.
- ``pool``: one warm process per engine spec, least recently used stopped past a cap.
- ``failures``: ``EngineFailure`` and its ``FailureReason``; ``results``: both as a
  worker's ``MoveResult``.
- ``trial`` and ``__main__``: ``python -m arena.services.worker.engines check|smoke|match``
  for operators and engine authors.
"""

from arena.services.worker.engines.catalog import (
    Catalog,
    CatalogError,
    EngineLimits,
    EngineSpec,
    load_catalog,
)
from arena.services.worker.engines.client import EngineAnswer, PlayLimits
from arena.services.worker.engines.failures import EngineFailure, FailureReason
from arena.services.worker.engines.pool import EnginePool, PoolStats
from arena.services.worker.engines.sandbox import (
    Protections,
    Sandbox,
    SandboxLimits,
    probe_protections,
)

__all__ = [
    "Catalog",
    "CatalogError",
    "EngineAnswer",
    "EngineFailure",
    "EngineLimits",
    "EnginePool",
    "EngineSpec",
    "FailureReason",
    "PlayLimits",
    "PoolStats",
    "Protections",
    "Sandbox",
    "SandboxLimits",
    "load_catalog",
    "probe_protections",
]
