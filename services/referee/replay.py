"""Match records in the formats people use, all written by the rules library's writers.

* native: Arena's JSON replay (``arena.formats.replay``), with the opening moves, every move's
  search info and worker, the outcome and the forfeit reason, and the full ``Match``
  protobuf (base64) in the metadata, so nothing recorded is lost.
* GGF and transcript (Othello), PSQ (Gomoku).
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime

from arena.services.referee.matches import FINISHED_STATES, game_name

from arena.engine.dispatch import gomoku_moves
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
from arena.games import Color, OthelloBoard, Outcome, Position, Termination, new_position
from arena.games import position_from_text as parse_position
from arena.v1 import common_pb2, match_pb2, referee_pb2

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
    game = game_name(match.config.game.kind)
    if match.config.start_position:
        return parse_position(game, match.config.start_position)
    spec = match.config.game
    return new_position(game, spec.variant, spec.board_size)


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
    empties = 64 - result.black_count - result.white_count if final.game == "othello" else 0
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


def export(match: match_pb2.Match, fmt: referee_pb2.ReplayFormat.ValueType) -> referee_pb2.Replay:
    """The match record as text in ``fmt`` (native when unspecified)."""
    fmt = fmt or referee_pb2.REPLAY_FORMAT_NATIVE
    game = game_name(match.config.game.kind)
    moves = all_moves(match)
    if fmt == referee_pb2.REPLAY_FORMAT_NATIVE:
        content = write_replay(native_replay(match))
    elif fmt in (referee_pb2.REPLAY_FORMAT_GGF, referee_pb2.REPLAY_FORMAT_TRANSCRIPT):
        if game != "othello":
            raise FailedPreconditionError("GGF and transcripts record Othello games only")
        if fmt == referee_pb2.REPLAY_FORMAT_TRANSCRIPT:
            content = write_transcript(moves, passes="pass") + "\n"
        else:
            start = configured_start(match)
            assert isinstance(start, OthelloBoard)
            times = [None] * len(match.config.opening) + [r.time_ms / 1000 for r in match.moves]
            record = ggf_from_moves(
                start, moves, black=_player(match.black), white=_player(match.white),
                outcome=match_outcome(match, replay_final(match)), times=times,
                date=datetime.fromtimestamp(match.created_at.seconds, UTC).strftime(
                    "%Y.%m.%d_%H:%M:%S.UTC"))
            content = write_ggf(record) + "\n"
    elif fmt == referee_pb2.REPLAY_FORMAT_PSQ:
        if game != "gomoku":
            raise FailedPreconditionError("PSQ records Gomoku games only")
        spec = match.config.game
        # PSQ starts from the empty board: a custom start's stones come first.
        moves = gomoku_moves(replay_final(match).to_text(), moves)
        bot_times = [r.time_ms for r in match.moves]
        psq_times = [0] * (len(moves) - len(bot_times)) + bot_times
        content = write_psq(psq_from_moves(
            spec.board_size, moves, rule=spec.variant, times_ms=psq_times,
            names=(_player(match.black), _player(match.white))))
    else:
        raise ValueError(f"unknown replay format {fmt}")
    return referee_pb2.Replay(format=fmt, content=content,
                              filename=f"{match.id}.{_EXTENSIONS[fmt]}")


def replay_final(match: match_pb2.Match) -> Position:
    position = configured_start(match)
    for move in all_moves(match):
        position.push(move)
    return position
