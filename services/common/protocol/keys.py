"""Every Redis key, stream and consumer group Arena uses, each named once, by owner.

The owner is the only service that writes a key (``docs/architecture.md`` has the map);
the delivery streams are the contract between referees and workers and say who writes
and who reads them. Keys live in the durable Redis unless marked *cache*.
"""

from __future__ import annotations

# --- registry: bot versions (immutable once written) --------------------------------------

BOT_NAMES = "arena:bots"  # sorted set of every bot name, all scores 0 (sorts by name)


def bot_version(name: str, version: int) -> str:
    """A ``BotVersion``, written once."""
    return f"arena:bot:{name}:v:{version}"


def bot_latest(name: str) -> str:
    """The latest version number of a bot."""
    return f"arena:bot:{name}:latest"


def bot_retired(name: str) -> str:
    """``"1"`` once the bot is retired."""
    return f"arena:bot:{name}:retired"


# --- referee: match state (the referee is the only writer of game state) -------------------

ALL_MATCHES = "arena:matches"  # sorted set of match ids (scores 0: ids sort by time)


def match(match_id: str) -> str:
    """The ``Match`` without its moves (config, bots, status, result)."""
    return f"arena:match:{match_id}"


def match_moves(match_id: str) -> str:
    """List of ``MoveRecord`` bytes, index = ply (Othello passes included)."""
    return f"arena:match:{match_id}:moves"


def match_events(match_id: str) -> str:
    """Stream of ``MatchEvent`` bytes (what WatchMatch replays and follows)."""
    return f"arena:match:{match_id}:events"


def match_final(match_id: str) -> str:
    """Set once, when the result is written: nothing about the game changes after it."""
    return f"arena:match:{match_id}:final"


def match_index(field: str, value: object) -> str:
    """Sorted set of the ids of matches by ``bot``, ``ladder``, ``game`` or ``owner``."""
    return f"arena:matches:{field}:{value}"


def match_request(owner: str, request_id: str) -> str:
    """The match id a create request with this idempotency key made (expires)."""
    return f"arena:match-request:{owner}:{request_id}"


# --- delivery: the streams between referees and workers ------------------------------------

MATCH_STREAM = "arena:stream:matches"  # MatchJob under ``pb``; written by CreateMatch
REFEREE_GROUP = "referees"
MOVE_STREAM = "arena:stream:moves"  # MoveJob under ``pb`` (+ match, ply, job); referees write
WORKER_GROUP = "workers"
DEAD_STREAM = "arena:stream:moves:dead"  # dead-lettered move jobs, for operators
FINISHED_STREAM = "arena:stream:finished"  # MatchFinished under ``pb``; the ledger writes


def match_results(match_id: str) -> str:
    """A match's ``result`` and ``dead`` entries (workers write, its referee reads)."""
    return f"arena:match:{match_id}:results"


def match_started(match_id: str) -> str:
    """A match's ``started`` entries, one per delivery of a move job (workers write)."""
    return f"arena:match:{match_id}:started"


# --- ladder ---------------------------------------------------------------------------------

ALL_LADDERS = "arena:ladders"  # sorted set of ladder ids scored by creation time (ms)
LADDER_GROUP = "ladders"  # the ladder services' group on FINISHED_STREAM


def ladder(ladder_id: str) -> str:
    """Hash: ``info`` (LadderInfo as created), ``status``, counters."""
    return f"arena:ladder:{ladder_id}"


def ladder_games(ladder_id: str) -> str:
    """Hash: game index -> match id, written once per index (the ladder's schedule)."""
    return f"arena:ladder:{ladder_id}:games"


def ladder_members(ladder_id: str) -> str:
    """Hash: match id -> game index (which matches are the ladder's)."""
    return f"arena:ladder:{ladder_id}:members"


def ladder_results(ladder_id: str) -> str:
    """Hash: match id -> ``black,white,score`` (counted once)."""
    return f"arena:ladder:{ladder_id}:results"


def ladder_progress(ladder_id: str) -> str:
    """Stream: one entry per counted result and one when the ladder ends."""
    return f"arena:ladder:{ladder_id}:progress"


def ladder_request(owner: str, request_id: str) -> str:
    """The ladder id a create request with this idempotency key made (expires)."""
    return f"arena:ladder-request:{owner}:{request_id}"


# --- worker (cache Redis) -------------------------------------------------------------------


def tree(match_id: str, ply: int) -> str:
    """*cache*: a ply's search tree, zlib-compressed ``SearchTree`` bytes."""
    return f"arena:tree:{match_id}:{ply}"


TT_STATS = "arena:tt:stats"  # *cache*: hits, misses, stores, spent_ms, saved_ms


def tt_entry(game: str, evaluator_hash: str, digest: str) -> str:
    """*cache*: one whole-search result of the shared transposition cache."""
    return f"arena:tt:{game}:{evaluator_hash[:16]}:{digest}"
