"""Indexes of what each owner has unfinished: the running ladders, the unfinished matches.

Such an index is a sorted set of ids kept beside each owner's set of the same ids
(``keys.user(owner, part)``, the quotas' count), by the scripts that keep that set, with
each id scored as in the index of them all (creation time). A version before the index
kept only the owners' sets, so the first read of the index in a process fills it from
every owner's set (``OwnersIndex.key``): one SCAN of the keys, then one script per owner,
which reads the set and writes the index at once (no ending comes between; the endings
take an id out of both). It adds nothing already there, so every process may do it.
"""

from __future__ import annotations

import threading

import redis
from arena.services.common.protocol import keys

# KEYS: an owner's set, the index of them all, the index. Indexes the set's ids with their
# scores in the index of them all (an id no longer there is left out).
_FILL = """
if redis.call('TYPE', KEYS[1]).ok ~= 'set' then return 0 end
local ids = redis.call('SMEMBERS', KEYS[1])
for _, id in ipairs(ids) do
  local score = redis.call('ZSCORE', KEYS[2], id)
  if score then redis.call('ZADD', KEYS[3], score, id) end
end
return #ids
"""


class OwnersIndex:
    """The sorted set ``index`` of the ids in every owner's ``part`` set, scored as in
    ``every``; filled from those sets on the first ``key`` call of the process."""

    def __init__(self, client: redis.Redis, index: str, part: keys.UserPart,
                 every: str) -> None:
        self.client, self.index, self.part, self.every = client, index, part, every
        self._fill = client.register_script(_FILL)
        self._filled = False
        self._lock = threading.Lock()

    def key(self) -> str:
        """The index's key, once it holds the ids of every owner's set."""
        with self._lock:
            if not self._filled:
                for owned in self.client.scan_iter(match=keys.user("*", self.part),
                                                   count=1000):
                    self._fill(keys=[owned, self.every, self.index])
                self._filled = True
        return self.index
