"""A few recent values by key: the least recently used goes first when full."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LruCache(Generic[K, V]):
    """At most ``size`` values by key, each kept at most ``ttl_s`` (None: until pushed
    out); thread-safe."""

    def __init__(self, size: int, ttl_s: float | None = None) -> None:
        self.size, self.ttl_s = size, ttl_s
        self._items: OrderedDict[K, tuple[float, V]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            entry = self._items.get(key)
            if entry is None or (self.ttl_s is not None
                                 and time.monotonic() - entry[0] > self.ttl_s):
                self._items.pop(key, None)
                return None
            self._items.move_to_end(key)
            return entry[1]

    def put(self, key: K, value: V) -> V:
        with self._lock:
            self._items[key] = (time.monotonic(), value)
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value

    def __iter__(self) -> Iterator[K]:
        """The keys kept, the least recently used first."""
        with self._lock:
            return iter(list(self._items))
