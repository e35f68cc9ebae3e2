"""What one ladder may ask for, whoever asks: the ladder service refuses more, and the web
gateway refuses it alike before calling it."""

from __future__ import annotations

MAX_BOTS = 32  # bots in one ladder
MAX_GAMES = 20_000  # games in one ladder (an SPRT's maximum too)
