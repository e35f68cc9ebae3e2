"""A match record (the ``Match`` protobuf) in the formats people use, and as a replay.

The referee serves these (GetReplay); the CLI and the web pages build their replay
navigators from the ``Match`` itself (``native_replay``), with no text round trip.

* native: Arena's JSON replay (``arena.formats.replay``), with the opening moves, every move's
  search info and worker, the outcome and the forfeit reason, and the full ``Match``
  protobuf (base64) in the metadata, so nothing recorded is lost.
* GGF and transcript (Othello), PSQ (Gomoku).
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime

from arena.errors import FailedPreconditionError
from arena.formats import (
    Replay,
    ReplayMove,
    ggf_from_moves,
    psq_from_moves,
    write_ggf,
    write_psq,
    write_replay,
    write_transcript,
)
from arena.games import Color, GomokuBoard, OthelloBoard, Outcome, Position, Termination, game
from arena.games.gomoku import moves_from_empty
from arena.v1 import common_pb2, match_pb2, referee_pb2

FINISHED_STATES = (match_pb2.MATCH_STATUS_FINISHED, match_pb2.MATCH_STATUS_CANCELLED)

_TERMINATIONS = {
    match_pb2.TERMINATION_NORMAL: Termination.NORMAL,
    match_pb2.TERMINATION_BOARD_FULL: Termination.FULL_BOARD,
    match_pb2.TERMINATION_ILLEGAL_MOVE: Termination.ILLEGAL_MOVE,
    match_pb2.TERMINATION_MALFORMED_ANSWER: Termination.CRASH,
    match_pb2.TERMINATION_TIME_FORFEIT: Termination.TIMEOUT,
    match_pb2.TERMINATION_BOT_CRASHED: Termination.CRASH,
    match_pb2.TERMINATION_BOT_UNREACHABLE: Termination.CRASH,
    match_pb2.TERMINATION_DEAD_LETTERED: Termination.ADJUDICATION,
    match_pb2.TERMINATION_CANCELLED: Termination.ABORTED,
}
_EXTENSIONS = {
    referee_pb2.REPLAY_FORMAT_NATIVE: "json",
    referee_pb2.REPLAY_FORMAT_GGF: "ggf",
    referee_pb2.REPLAY_FORMAT_TRANSCRIPT: "txt",
    referee_pb2.REPLAY_FORMAT_PSQ: "psq",
}


def configured_start(match: match_pb2.Match) -> Position:
    """The position before the opening moves."""
    played = game(match.config.game.kind)
    if match.config.start_position:
        return played.position_from_text(match.config.start_position)
    spec = match.config.game
    return played.new_position(spec.variant, spec.board_size)


def all_moves(match: match_pb2.Match) -> list[int]:
    return [*match.config.opening, *(record.move.square for record in match.moves)]


def _player(ref: common_pb2.BotRef) -> str:
    return f"{ref.name} v{ref.version}"


def _color(color: common_pb2.Color.ValueType) -> Color | None:
    if color == common_pb2.COLOR_BLACK:
        return Color.BLACK
    if color == common_pb2.COLOR_WHITE:
        return Color.WHITE
    return None


def match_outcome(match: match_pb2.Match, final: Position) -> Outcome | None:
    """The outcome in the rules library's terms (None while the match runs)."""
    if match.status not in FINISHED_STATES:
        return None
    result = match.result
    if result.termination in (match_pb2.TERMINATION_NORMAL, match_pb2.TERMINATION_BOARD_FULL):
        return final.outcome()
    empties = 0
    if game(final.game).counts_discs:
        empties = final.size * final.size - result.black_count - result.white_count
    return Outcome(_color(result.winner), _TERMINATIONS.get(result.termination,
                                                           Termination.ADJUDICATION),
                   result.black_count, result.white_count, empties)


def native_replay(match: match_pb2.Match) -> Replay:
    start = configured_start(match)
    replay = Replay.new(start, _player(match.black), _player(match.white))
    replay.moves = [ReplayMove(move=move, time_ms=0, worker="opening")
                    for move in match.config.opening]
    for record in match.moves:
        search = record.search if record.HasField("search") else None
        replay.moves.append(ReplayMove(
            move=record.move.square, time_ms=record.time_ms,
            score=search.score if search else None, depth=search.depth if search else None,
            nodes=search.nodes if search else None, pv=list(search.pv) if search else [],
            worker=record.worker_id or None, exact=search.exact if search else False))
    replay.outcome = match_outcome(match, replay.final_position())
    if match.result.forfeited != common_pb2.COLOR_UNSPECIFIED:
        loser = "black" if match.result.forfeited == common_pb2.COLOR_BLACK else "white"
        reason = match_pb2.Termination.Name(match.result.termination)
        replay.forfeit = f"{loser} forfeited ({reason}): {match.result.detail}"
    replay.metadata = {
        "match_id": match.id,
        "status": match_pb2.MatchStatus.Name(match.status),
        "termination": match_pb2.Termination.Name(match.result.termination),
        "detail": match.result.detail,
        "opening_plies": str(len(match.config.opening)),
        "seed": str(match.config.seed),
        "ladder_id": match.config.ladder_id,
        "match_pb": base64.b64encode(match.SerializeToString()).decode(),
    }
    return replay


FORMAT_NAMES = {
    referee_pb2.REPLAY_FORMAT_NATIVE: "native",
    referee_pb2.REPLAY_FORMAT_GGF: "ggf",
    referee_pb2.REPLAY_FORMAT_TRANSCRIPT: "transcript",
    referee_pb2.REPLAY_FORMAT_PSQ: "psq",
}


def export(match: match_pb2.Match, fmt: referee_pb2.ReplayFormat.ValueType) -> referee_pb2.Replay:
    """The match record as text in ``fmt`` (native when unspecified)."""
    fmt = fmt or referee_pb2.REPLAY_FORMAT_NATIVE
    name = FORMAT_NAMES.get(fmt)
    if name is None:
        raise ValueError(f"unknown replay format {fmt}")
    played = game(match.config.game.kind)
    if name != "native" and name not in played.record_formats:
        known = ", ".join(("native", *played.record_formats))
        raise FailedPreconditionError(f"{name} records do not hold {played.title} games; "
                                      f"{played.title} exports as {known}")
    content = _WRITERS[name](match)
    return referee_pb2.Replay(format=fmt, content=content,
                              filename=f"{match.id}.{_EXTENSIONS[fmt]}")


def _native(match: match_pb2.Match) -> str:
    return write_replay(native_replay(match))


def _transcript(match: match_pb2.Match) -> str:
    return write_transcript(all_moves(match), passes="pass") + "\n"


def _ggf(match: match_pb2.Match) -> str:
    start = configured_start(match)
    assert isinstance(start, OthelloBoard)
    times = [None] * len(match.config.opening) + [r.time_ms / 1000 for r in match.moves]
    record = ggf_from_moves(
        start, all_moves(match), black=_player(match.black), white=_player(match.white),
        outcome=match_outcome(match, replay_final(match)), times=times,
        date=datetime.fromtimestamp(match.created_at.seconds, UTC).strftime(
            "%Y.%m.%d_%H:%M:%S.UTC"))
    return write_ggf(record) + "\n"


def _psq(match: match_pb2.Match) -> str:
    spec = match.config.game
    final = replay_final(match)
    assert isinstance(final, GomokuBoard)
    # PSQ starts from the empty board: a custom start's stones come first.
    moves = moves_from_empty(final, all_moves(match))
    bot_times = [r.time_ms for r in match.moves]
    psq_times = [0] * (len(moves) - len(bot_times)) + bot_times
    return write_psq(psq_from_moves(
        spec.board_size, moves, rule=spec.variant, times_ms=psq_times,
        names=(_player(match.black), _player(match.white))))


_WRITERS = {"native": _native, "transcript": _transcript, "ggf": _ggf, "psq": _psq}


def replay_final(match: match_pb2.Match) -> Position:
    position = configured_start(match)
    for move in all_moves(match):
        position.push(move)
    return position
