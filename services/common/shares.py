"""Shares of a bounded resource: what each holder has open, against a total and a
per-holder share. The gRPC servers count live streams with it (``server.StreamGate``),
the web gateway its viewers' live pages (``web.live``)."""

from __future__ import annotations

import threading
from enum import Enum


class Refusal(Enum):
    SHARE = "the holder has its share open"
    TOTAL = "everything is taken"


class Shares:
    def __init__(self, total: int) -> None:
        self.total = total
        self._lock = threading.Lock()
        self._held: dict[str, int] = {}

    def take(self, holder: str, share: int) -> Refusal | None:
        """Count one more for ``holder`` (at most ``share`` at once); None when taken."""
        with self._lock:
            held = self._held.get(holder, 0)
            if held >= share:
                return Refusal.SHARE
            if sum(self._held.values()) >= self.total:
                return Refusal.TOTAL
            self._held[holder] = held + 1
            return None

    def give_back(self, holder: str) -> None:
        with self._lock:
            held = self._held.pop(holder) - 1
            if held:
                self._held[holder] = held
