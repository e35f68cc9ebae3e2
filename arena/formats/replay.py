"""Arena's own replay record: everything needed to re-run and study a game, as JSON.

Version 1 layout (keys in this order when written; one move per line)::

    {
      "format": "arena-replay",
      "version": 1,
      "game": "othello",            # "othello" | "gomoku"
      "variant": "standard",        # Othello variant or Gomoku rule
      "size": 8,
      "start": "<position text form>",
      "black": "<player>",
      "white": "<player>",
      "moves": [
        {"move": 37, "time_ms": 120, "score": 4, "depth": 9, "nodes": 81234,
         "pv": [37, 43], "worker": "w1", "exact": false},
        {"move": 29, "time_ms": 980, ..., "notes": ["MESSAGE depth 12 ev 35"]},
        ...
      ],
      "outcome": {"winner": "black", "termination": "normal", "black_score": 40,
                  "white_score": 24, "empties": 0},      # or null while unfinished
      "forfeit": null,              # or a sentence: why the game was forfeited
      "metadata": {"match_id": "..."}   # free string -> string map
    }

Moves are integers in the game's move numbering (Othello ``PASS`` = 64). ``score``,
``depth``, ``nodes`` and ``worker`` may be null; ``pv`` may be empty; ``notes`` (what
the bot said about the move: a protocol engine's remarks), a list of strings, is written
only when there are some and may be left out. The parser
replays every move through the rules and checks that a rules-decided outcome
(``normal``/``full_board``) is the final position's own. Errors name the line and
column for malformed JSON, and the JSON path (``moves[3].time_ms``) otherwise.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from arena.documents import NumberTooLong, read_json
from arena.formats.errors import FormatError
from arena.games import Color, GameError, Outcome, Position, Termination, new_position
from arena.games import position_from_text as _position_from_text

REPLAY_FORMAT = "arena-replay"
REPLAY_VERSION = 1
_RULES_TERMINATIONS = (Termination.NORMAL, Termination.FULL_BOARD)
_WINNERS = {"black": Color.BLACK, "white": Color.WHITE}


@dataclass(frozen=True)
class ReplayMove:
    """One move and how the engine found it (``time_ms`` is wall time spent)."""

    move: int
    time_ms: int
    score: int | None = None
    depth: int | None = None
    nodes: int | None = None
    pv: list[int] = field(default_factory=list)
    worker: str | None = None
    exact: bool = False
    notes: list[str] = field(default_factory=list)


@dataclass
class Replay:
    game: str
    variant: str
    size: int
    start: str
    black: str
    white: str
    moves: list[ReplayMove] = field(default_factory=list)
    outcome: Outcome | None = None
    forfeit: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    version: int = REPLAY_VERSION

    @classmethod
    def new(cls, start: Position, black: str, white: str) -> Replay:
        """An empty replay of a game starting at ``start``."""
        return cls(start.game, start.variant, start.size, start.to_text(), black, white)

    def start_position(self) -> Position:
        return _position_from_text(self.game, self.start)

    def final_position(self) -> Position:
        """The start position with every move pushed (raises ``IllegalMoveError``)."""
        position = self.start_position()
        for record in self.moves:
            position.push(record.move)
        return position


# --- writing ---------------------------------------------------------------------------


def write_replay(replay: Replay) -> str:
    """JSON text, one move per line so diffs and error line numbers stay readable."""
    head = {
        "format": REPLAY_FORMAT,
        "version": replay.version,
        "game": replay.game,
        "variant": replay.variant,
        "size": replay.size,
        "start": replay.start,
        "black": replay.black,
        "white": replay.white,
    }
    tail = {
        "outcome": None if replay.outcome is None else _outcome_json(replay.outcome),
        "forfeit": replay.forfeit,
        "metadata": replay.metadata,
    }
    lines = ["{"]
    lines += [f"  {json.dumps(key)}: {json.dumps(value)}," for key, value in head.items()]
    moves = [json.dumps(_move_json(move)) for move in replay.moves]
    lines.append(
        '  "moves": [' + ("\n    " + ",\n    ".join(moves) + "\n  " if moves else "") + "],"
    )
    items = [f"  {json.dumps(key)}: {json.dumps(value)}" for key, value in tail.items()]
    lines.append(",\n".join(items))
    lines.append("}")
    return "\n".join(lines) + "\n"


def _move_json(move: ReplayMove) -> dict[str, Any]:
    data: dict[str, Any] = {
        "move": move.move,
        "time_ms": move.time_ms,
        "score": move.score,
        "depth": move.depth,
        "nodes": move.nodes,
        "pv": list(move.pv),
        "worker": move.worker,
        "exact": move.exact,
    }
    if move.notes:
        data["notes"] = list(move.notes)
    return data


def _outcome_json(outcome: Outcome) -> dict[str, Any]:
    winner = None if outcome.winner is None else outcome.winner.name.lower()
    return {
        "winner": winner,
        "termination": outcome.termination.value,
        "black_score": outcome.black_score,
        "white_score": outcome.white_score,
        "empties": outcome.empties,
    }


# --- reading ---------------------------------------------------------------------------


def parse_replay(text: str) -> Replay:
    if not isinstance(text, str):
        raise FormatError(f"replay must be a string, got {type(text).__name__}")
    try:
        data = read_json(text)
    except json.JSONDecodeError as error:
        raise FormatError(f"not JSON: {error.msg}", error.lineno, error.colno) from None
    except NumberTooLong as error:
        raise FormatError(f"not JSON we read: {error}") from None
    except RecursionError:
        raise FormatError("JSON nested too deeply") from None
    root = _Reader(data, "")
    root.get("format", str, allowed=(REPLAY_FORMAT,))
    version = root.get("version", int, allowed=(REPLAY_VERSION,))
    replay = Replay(
        game=root.get("game", str),
        variant=root.get("variant", str),
        size=root.get("size", int),
        start=root.get("start", str),
        black=root.get("black", str),
        white=root.get("white", str),
        moves=[_parse_move(item) for item in root.items("moves")],
        outcome=_parse_outcome(root.child("outcome")),
        forfeit=root.get("forfeit", str, optional=True),
        metadata=_parse_metadata(root.child("metadata")),
        version=version,
    )
    _check_consistent(replay)
    return replay


class _Reader:
    """Typed access to a JSON object; every error names the JSON path."""

    def __init__(self, data: object, path: str) -> None:
        if not isinstance(data, dict):
            raise FormatError(f"{path or 'replay'} must be a JSON object")
        self.data: dict[str, object] = data
        self.path = path

    def where(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def get(
        self, key: str, kind: type[Any], *, optional: bool = False, allowed: tuple[Any, ...] = (),
        within: tuple[int, int] | None = None,
    ) -> Any:
        value = self.data.get(key)
        if value is None and optional:
            return None
        if key not in self.data:
            raise FormatError(f"{self.where(key)} is missing (it must be {kind.__name__})")
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise FormatError(f"{self.where(key)} must be {kind.__name__}, got {value!r}")
        if allowed and value not in allowed:
            raise FormatError(f"{self.where(key)} must be one of {list(allowed)}, got {value!r}")
        if within is not None and not within[0] <= value <= within[1]:
            raise FormatError(f"{self.where(key)} must be in {within[0]}..{within[1]}, "
                              f"got {value}")
        return value

    def child(self, key: str) -> _Reader | None:
        value = self.data.get(key)
        return None if value is None else _Reader(value, self.where(key))

    def items(self, key: str) -> list[_Reader]:
        value = self.data.get(key)
        if not isinstance(value, list):
            raise FormatError(f"{self.where(key)} must be a list")
        return [_Reader(item, f"{self.where(key)}[{i}]") for i, item in enumerate(value)]


# The widths of the fields a replay's numbers are stored in as a match (int32, int64): a
# record is read whole or refused naming the number, never cut short where it is stored.
_COUNT = (0, 2**31 - 1)
_BIG_COUNT = (0, 2**63 - 1)
_SCORE = (-(2**63), 2**63 - 1)


# A search's principal variation as a record keeps it: the worker keeps no more of what an
# engine reports (services/worker/engines/results.py), and no game is longer.
MAX_PV = 128


def _parse_move(item: _Reader) -> ReplayMove:
    pv = item.data.get("pv", [])
    if not isinstance(pv, list) or any(type(m) is not int for m in pv):
        raise FormatError(f"{item.where('pv')} must be a list of integers")
    if len(pv) > MAX_PV:
        raise FormatError(f"{item.where('pv')} holds {len(pv):,} moves; at most {MAX_PV}")
    if any(not _COUNT[0] <= m <= _COUNT[1] for m in pv):
        raise FormatError(f"{item.where('pv')} must hold moves in {_COUNT[0]}..{_COUNT[1]}")
    notes = item.data.get("notes", [])
    if not isinstance(notes, list) or any(type(n) is not str for n in notes):
        raise FormatError(f"{item.where('notes')} must be a list of strings")
    return ReplayMove(
        move=item.get("move", int),
        time_ms=item.get("time_ms", int, within=_COUNT),
        score=item.get("score", int, optional=True, within=_SCORE),
        depth=item.get("depth", int, optional=True, within=_COUNT),
        nodes=item.get("nodes", int, optional=True, within=_BIG_COUNT),
        pv=list(pv),
        worker=item.get("worker", str, optional=True),
        exact=bool(item.get("exact", bool)) if "exact" in item.data else False,
        notes=list(notes),
    )


def _parse_outcome(reader: _Reader | None) -> Outcome | None:
    if reader is None:
        return None
    winner = reader.get("winner", str, optional=True, allowed=tuple(_WINNERS))
    terminations = tuple(t.value for t in Termination)
    return Outcome(
        winner=None if winner is None else _WINNERS[winner],
        termination=Termination(reader.get("termination", str, allowed=terminations)),
        black_score=reader.get("black_score", int, within=_COUNT),
        white_score=reader.get("white_score", int, within=_COUNT),
        empties=reader.get("empties", int, within=_COUNT),
    )


def _parse_metadata(reader: _Reader | None) -> dict[str, str]:
    if reader is None:
        return {}
    for key, value in reader.data.items():
        if not isinstance(value, str):
            raise FormatError(f"{reader.where(key)} must be a string")
    return {key: str(value) for key, value in reader.data.items()}


def outcome_text(outcome: Outcome | None) -> str:
    """``white wins 14-50 (normal end)``, ``a draw 32-32 (...)``, or ``a game not over``."""
    if outcome is None:
        return "a game not over"
    who = "a draw" if outcome.winner is None else f"{outcome.winner.name.lower()} wins"
    empties = f", {outcome.empties} empty" if outcome.empties else ""
    return (f"{who} {outcome.black_score}-{outcome.white_score} "
            f"({outcome.termination.value.replace('_', ' ')} end{empties})")


def _check_consistent(replay: Replay) -> None:
    try:
        start = replay.start_position()
        expected = new_position(replay.game, replay.variant, replay.size)
    except GameError as error:
        raise FormatError(f"start: {error}") from None
    if (start.game, start.variant, start.size) != (expected.game, expected.variant, expected.size):
        raise FormatError(
            f"start position is {start.game}/{start.variant}/{start.size}, but the replay "
            f"says {replay.game}/{replay.variant}/{replay.size}"
        )
    for index, record in enumerate(replay.moves):
        try:
            start.push(record.move)
        except GameError as error:
            raise FormatError(f"moves[{index}]: {error}") from None
    outcome = replay.outcome
    if outcome is not None and outcome.termination in _RULES_TERMINATIONS:
        if outcome != start.outcome():
            raise FormatError(
                f"outcome: the record says {outcome_text(outcome)}; its "
                f"{len(replay.moves)} moves give {outcome_text(start.outcome())}"
            )
        if replay.forfeit is not None:
            raise FormatError("forfeit given for a game that ended by the rules")
