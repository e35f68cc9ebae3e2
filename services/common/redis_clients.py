"""How the services connect to Redis: every reply within a bounded wait.

A service that waits for a stalled Redis without end hangs its callers; one that waits
longer than its callers' deadlines shows them a silent service instead of the cause. So
every client names its timeouts here rather than relying on the library's default
(redis-py before 8.0, which pyproject allows, waited forever; 8.0 waits 5 s). A timeout
or a lost connection reaches a caller as ``UNAVAILABLE`` naming Redis (``errors.py``).

- ``REDIS_TIMEOUT_S``: the services' loops and requests. Longer than any blocking read
  they make (at most 2 s), well under the callers' 10 s deadline.
- ``LOOK_TIMEOUT_S``: the reads behind ``arena status`` (the referee's status, the
  ladder service's list), within the status command's 3 s a part, so that a stalled
  Redis is named there.
"""

from __future__ import annotations

import redis

REDIS_TIMEOUT_S = 5.0
LOOK_TIMEOUT_S = 1.5


def connect(url: str, timeout_s: float = REDIS_TIMEOUT_S) -> redis.Redis:
    """A client of the Redis at ``url`` that waits at most ``timeout_s`` to connect and
    for each reply."""
    return redis.Redis.from_url(url, socket_timeout=timeout_s,
                                socket_connect_timeout=timeout_s)
