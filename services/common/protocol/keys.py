"""Every Redis key, stream and consumer group Arena uses, each named once, by owner.

The owner is the only service that writes a key (``docs/architecture.md`` has the map);
the delivery streams are the contract between referees and workers and say who writes
and who reads them. Keys live in the durable Redis unless marked *cache*.
"""

from __future__ import annotations

from typing import Literal

# --- registry: bot versions (immutable once written) --------------------------------------

BOT_NAMES = "arena:bots"  # sorted set of every bot name, all scores 0 (sorts by name)
# Hash: every bot name's folded form (``bots.folded_name``) -> the name, so that no name
# is registered that reads as another ('Lucy' beside 'lucy', a full-width 'ｌｕｃｙ').
BOT_NAME_FOLDS = "arena:bot-folds"
BotPart = Literal["latest", "retired"]


def bot(name: str, part: BotPart) -> str:
    """``latest``: the bot's latest version number; ``retired``: "1" once retired."""
    return f"arena:bot:{name}:{part}"


def bot_version(name: str, version: int) -> str:
    """A ``BotVersion``, written once."""
    return f"arena:bot:{name}:v:{version}"


def owner_bot_bytes(owner: str) -> str:
    """The bytes of every bot version ``owner`` has stored (their ``bot_bytes`` quota)."""
    return f"arena:owner:{owner}:bot-bytes"


def owner_match_bytes(owner: str) -> str:
    """The bytes of every match ``owner`` owns, played or imported (their ``match_bytes``
    quota): the sum of their matches' ``bytes`` counters."""
    return f"arena:owner:{owner}:match-bytes"


def owner_import_bytes(owner: str) -> str:
    """Before ``match_bytes``: the bytes of the matches ``owner`` imported. The match
    store's scripts add it into ``owner_match_bytes`` when they first meet it."""
    return f"arena:owner:{owner}:import-bytes"


# --- referee: matches (the referee is the only writer of game state) -----------------------

ALL_MATCHES = "arena:matches"  # sorted set of match ids (scores 0: ids sort by time)
# The same, of the matches not yet finished (pending, parked or running): what a listing
# of the pending or running matches reads. Kept with the owners' ``active`` sets.
UNFINISHED_MATCHES = "arena:matches:unfinished"
MatchPart = Literal["", "moves", "events", "final", "results", "started", "bytes"]


def match(match_id: str, part: MatchPart = "") -> str:
    """A match's keys, by ``part``:

    - ``""``: the ``Match`` without its moves (config, bots, status, result);
    - ``moves``: list of ``MoveRecord`` bytes, index = ply (Othello passes included);
    - ``events``: stream of ``MatchEvent`` bytes (what WatchMatch replays and follows);
    - ``final``: set once, with the result: nothing about the game changes after it;
    - ``results``: stream of answers, ``result``/``dead``/``cancelled`` entries (workers
      and cancellations write, the match's referee reads; see ``delivery``);
    - ``started``: stream of ``started`` entries, one per delivery of a move job;
    - ``bytes``: what the match's header, moves and events take, as counted in its owner's
      ``owner_match_bytes`` (and given back from it when the match is deleted).
    """
    return f"arena:match:{match_id}:{part}" if part else f"arena:match:{match_id}"


UserPart = Literal["active", "running", "parked", "ladders"]


def user(owner: str, part: UserPart) -> str:
    """A user's matches and ladders, for the quotas: ``active`` (set of unfinished match
    ids), ``running`` (set of the ids a referee admitted), ``parked`` (sorted set of
    ``MatchJob`` bytes waiting for one of the user's running matches to end, oldest match
    first), ``ladders`` (set of the ids of the user's running ladders; the ladder store's
    scripts keep it)."""
    return f"arena:user:{owner}:{part}"


def match_index(field: str, value: object) -> str:
    """Sorted set of the ids of matches by ``bot``, ``ladder``, ``game`` or ``owner``."""
    return f"arena:matches:{field}:{value}"


# --- delivery: the streams between referees and workers ------------------------------------

MATCH_STREAM = "arena:stream:matches"  # MatchJob under ``pb``; written by CreateMatch
REFEREE_GROUP = "referees"
MOVE_STREAM = "arena:stream:moves"  # MoveJob under ``pb`` (+ match, ply, job); referees write
WORKER_GROUP = "workers"
DEAD_STREAM = "arena:stream:moves:dead"  # dead-lettered move jobs, for operators


ENGINE_STREAM_PREFIX = "arena:stream:moves:engine:"


def engine_stream(engine: str, checksum: str) -> str:
    """The move jobs of bots of one protocol engine (name and pinned checksum): only the
    workers that offer exactly that engine read it (group ``WORKER_GROUP``)."""
    return f"{ENGINE_STREAM_PREFIX}{engine}:{checksum[:16]}"


def engine_of_stream(stream: str) -> tuple[str, str]:
    """The engine name and checksum start an ``engine_stream`` was made of (("", "") for
    any other stream)."""
    if not stream.startswith(ENGINE_STREAM_PREFIX):
        return "", ""
    engine, _, checksum = stream.removeprefix(ENGINE_STREAM_PREFIX).rpartition(":")
    return engine, checksum


# Set of every engine stream a worker has consumed (each worker adds its own at start), so
# that the queue exporter finds them all, even those no live worker reads any more.
ENGINE_STREAMS = "arena:streams:engines"

# Finished Match under ``pb`` (with ``match_id``, ``ladder_id``), written by the ledger; and
# ``owner`` + ``deleted`` (no ``match_id``) when the referee deletes matches of that owner.
FINISHED_STREAM = "arena:stream:finished"

# --- ladder ---------------------------------------------------------------------------------

ALL_LADDERS = "arena:ladders"  # sorted set of ladder ids scored by creation time (ms)
# The same, of the running ladders only (kept with the owners' ``ladders`` sets).
RUNNING_LADDERS = "arena:ladders:running"
# Counter raised whenever any ladder counts a game or a ladder is deleted: a reader of every
# ladder's results (the rating list) knows with one GET that nothing changed.
LADDER_RESULTS_VERSION = "arena:ladders:results-version"
LADDER_GROUP = "ladders"  # the ladder services' group on FINISHED_STREAM
# Hash: running ladder id -> its owner, while the ladder waits (its ``waiting`` is set): the
# ladder service tries such a ladder again as soon as any match of its owner finishes or is
# deleted.
WAITING_LADDERS = "arena:ladders:waiting"
LadderPart = Literal["", "games", "members", "results", "progress", "replays"]


def ladder(ladder_id: str, part: LadderPart = "") -> str:
    """A ladder's keys, by ``part``:

    - ``""``: hash: ``info`` (the LadderInfo as created), ``status``, counters;
    - ``games``: hash: game index -> match id, written once per index (its schedule);
    - ``members``: hash: match id -> game index (which matches are the ladder's);
    - ``results``: hash: match id -> ``black,white,score`` (counted once);
    - ``progress``: stream: one entry per counted result and one when the ladder ends;
    - ``replays``: list of the game indices played again (the game index ``planned + k``
      replays the k-th entry).
    """
    return f"arena:ladder:{ladder_id}:{part}" if part else f"arena:ladder:{ladder_id}"


# --- idempotency keys of create calls (written by the service that creates) ----------------


RequestKind = Literal["match", "match-import", "ladder", "bot"]


def request(kind: RequestKind, owner: str, request_id: str) -> str:
    """The id of what a create request with this key made and a digest of that request,
    per owner (expires; see ``requests``)."""
    return f"arena:{kind}-request:{owner}:{request_id}"


def rate(service: str, user: str, limit: str, window: int) -> str:
    """A user's calls to a service counted against a per-minute limit (expires)."""
    return f"arena:rate:{service}:{user}:{limit}:{window}"


# --- worker presence (durable Redis) ---------------------------------------------------------

WORKERS = "arena:workers"  # sorted set: worker id scored by when its heartbeat expires (ms)


def worker(worker_id: str) -> str:
    """A live worker's ``WorkerInfo``, refreshed every second; expires when it stops."""
    return f"arena:worker:{worker_id}"


# Sorted set: owner -> when a worker's engine last answered a move of theirs (ms, in the
# answer's transaction): an owner whose next move is a moment away (the referee records the
# last one) still counts as wanting a worker.
MOVE_OWNERS = "arena:workers:owners"

# --- referee presence (durable Redis) --------------------------------------------------------

REFEREES = "arena:referees"  # sorted set: referee name scored by when its presence ends (ms)


def referee(name: str) -> str:
    """String: when the running incarnation of the referee ``name`` started (the Redis
    clock, ms), expiring with its presence. ``arena up`` restarts a referee under its name,
    and what the run before held is not the new run's."""
    return f"arena:referee:{name}"

# --- operations (durable Redis) ----------------------------------------------------------------

# The referee that exports the queue figures to Prometheus holds this lease (its instance name).
QUEUE_EXPORTER_LEASE = "arena:lease:queue-exporter"

# --- worker (cache Redis) -------------------------------------------------------------------

TT_STATS = "arena:tt:stats"  # *cache*: hits, misses, stores, spent_ms, saved_ms


def tree(match_id: str, ply: int) -> str:
    """*cache*: a ply's search tree, zlib-compressed ``SearchTree`` bytes."""
    return f"arena:tree:{match_id}:{ply}"


def tt_entry(game: str, evaluator_hash: str, digest: str) -> str:
    """*cache*: one whole-search result of the shared transposition cache."""
    return f"arena:tt:{game}:{evaluator_hash[:16]}:{digest}"
