"""A match record (the ``Match`` protobuf) in the formats people use, as a replay, and back.

The referee serves these (GetReplay); the CLI and the web pages build their replay
navigators from the ``Match`` itself (``native_replay``), with no text round trip. The
other way, ``read_record`` reads a record of any of these formats into a replay (``arena
match replay FILE``) and ``imported_match`` makes it a finished match (ImportMatch).

* native: Arena's JSON replay (``arena.formats.replay``), with the opening moves, every move's
  search info and worker, the outcome and the forfeit reason, the match's times
  (``created_at``, ``finished_at``: RFC 3339) and the full ``Match`` protobuf (base64) in
  the metadata, so nothing recorded is lost.
* GGF and transcript (Othello), PSQ (Gomoku).
"""

from __future__ import annotations

import base64
import itertools
from collections.abc import Iterator
from datetime import UTC, datetime

from google.protobuf import timestamp_pb2

from arena.documents import BOM
from arena.errors import FailedPreconditionError, InvalidArgumentError
from arena.formats import (
    PSQ_HEADER,
    FormatError,
    GgfGame,
    Replay,
    ReplayMove,
    ggf_from_moves,
    parse_ggf,
    parse_psq,
    parse_replay,
    parse_transcript,
    psq_from_moves,
    psq_lookalike,
    write_ggf,
    write_psq,
    write_replay,
    write_transcript,
)
from arena.games import (
    Color,
    GameError,
    GomokuBoard,
    OthelloBoard,
    Outcome,
    Position,
    Termination,
    UnknownGameError,
    game,
)
from arena.games.gomoku import moves_from_empty
from arena.text import bounded, engine_notes, printable, shown
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
    match_pb2.TERMINATION_RESIGNATION: Termination.RESIGNATION,
    match_pb2.TERMINATION_ADJUDICATED: Termination.ADJUDICATION,
}
_EXTENSIONS = {
    referee_pb2.REPLAY_FORMAT_NATIVE: "json",
    referee_pb2.REPLAY_FORMAT_GGF: "ggf",
    referee_pb2.REPLAY_FORMAT_TRANSCRIPT: "txt",
    referee_pb2.REPLAY_FORMAT_PSQ: "psq",
}


def configured_start(config: match_pb2.MatchConfig) -> Position:
    """The position before the opening moves: the custom start or the variant's."""
    played = game(config.game.kind)
    if config.start_position:
        return played.position_from_text(config.start_position)
    return played.new_position(config.game.variant, config.game.board_size)


def all_moves(match: match_pb2.Match) -> list[int]:
    return [*match.config.opening, *(record.move.square for record in match.moves)]


def _player(ref: common_pb2.BotRef) -> str:
    """``terra v3``; an imported record's player (version 0, no bot) by name alone."""
    return f"{ref.name} v{ref.version}" if ref.version else ref.name


def _color(color: common_pb2.Color.ValueType) -> Color | None:
    if color == common_pb2.COLOR_BLACK:
        return Color.BLACK
    if color == common_pb2.COLOR_WHITE:
        return Color.WHITE
    return None


def match_outcome(match: match_pb2.Match, final: Position) -> Outcome | None:
    """The outcome in the rules library's terms (None while the match runs)."""
    if match.status not in FINISHED_STATES or \
            match.result.termination == match_pb2.TERMINATION_UNFINISHED:
        return None
    result = match.result
    if result.termination in (match_pb2.TERMINATION_NORMAL, match_pb2.TERMINATION_BOARD_FULL):
        return final.outcome()
    termination = (Termination.ABORTED if result.void  # no result: a void game
                   else _TERMINATIONS.get(result.termination, Termination.ADJUDICATION))
    empties = 0  # an adjudicated game's counts are perfect play's, the board full
    if game(final.game).counts_discs:
        empties = final.size * final.size - result.black_count - result.white_count
    return Outcome(_color(result.winner), termination, result.black_count, result.white_count,
                   empties)


def match_position(match: match_pb2.Match, ply: int | None, ply_name: str = "ply"
                   ) -> tuple[common_pb2.GameSpec, Position, list[int]]:
    """The position after the first ``ply`` moves of ``match`` (openings and passes
    counted; None: the last one with a move to play), its game and those moves.
    ``InvalidArgumentError`` (naming ``ply_name``) for a ply out of range or a position
    where the game is over: there is no move to ask for."""
    replay = native_replay(match)
    moves = [record.move for record in replay.moves]
    if ply is None:
        ply = len(moves) - 1 if replay.final_position().is_game_over() else len(moves)
    if not 0 <= ply <= len(moves):
        raise InvalidArgumentError(f"match {match.id} has {len(moves)} moves: {ply_name} "
                                   f"takes 0..{len(moves)}")
    position = replay.start_position()
    for move in moves[:ply]:
        position.push(move)
    if position.is_game_over():
        raise InvalidArgumentError(f"the game is over after move {ply}: choose an earlier "
                                   f"{ply_name}")
    return game(replay.game).spec(replay.variant, replay.size), position, moves[:ply]


def native_replay(match: match_pb2.Match) -> Replay:
    start = configured_start(match.config)
    replay = Replay.new(start, _player(match.black), _player(match.white))
    replay.moves = [ReplayMove(move=move, time_ms=0, worker="opening")
                    for move in match.config.opening]
    for record in match.moves:
        search = record.search if record.HasField("search") else None
        replay.moves.append(ReplayMove(
            move=record.move.square, time_ms=record.time_ms,
            score=search.score if search and search.HasField("score") else None,
            depth=search.depth if search and search.HasField("depth") else None,
            nodes=search.nodes if search else None, pv=list(search.pv) if search else [],
            worker=record.worker_id or None, exact=search.exact if search else False,
            notes=list(search.notes) if search else []))
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
    origin = (("date", match.origin.date), ("place", match.origin.place))
    replay.metadata.update((key, value) for key, value in origin if value)
    times = (("created_at", match.created_at), ("finished_at", match.finished_at))
    replay.metadata.update((key, stamp.ToJsonString()) for key, stamp in times
                           if stamp.ToNanoseconds())
    return replay


FORMAT_NAMES = {
    referee_pb2.REPLAY_FORMAT_NATIVE: "native",
    referee_pb2.REPLAY_FORMAT_GGF: "ggf",
    referee_pb2.REPLAY_FORMAT_TRANSCRIPT: "transcript",
    referee_pb2.REPLAY_FORMAT_PSQ: "psq",
}


def export_formats(match: match_pb2.Match) -> list[str]:
    """The formats ``match`` can be written in, native first: its game's, less the
    transcript for a game from a custom start (a transcript is moves alone, read from the
    variant's start: it would be another game, or none)."""
    formats = ["native", *game(match.config.game.kind).record_formats]
    return [name for name in formats if name != "transcript" or not custom_start(match)]


def custom_start(match: match_pb2.Match) -> bool:
    spec = match.config.game
    return bool(match.config.start_position) and configured_start(match.config).to_text() != game(
        spec.kind).new_position(spec.variant, spec.board_size).to_text()


def export(match: match_pb2.Match, fmt: referee_pb2.ReplayFormat.ValueType) -> referee_pb2.Replay:
    """The match record as text in ``fmt`` (native when unspecified)."""
    fmt = fmt or referee_pb2.REPLAY_FORMAT_NATIVE
    name = FORMAT_NAMES.get(fmt)
    if name is None:
        raise ValueError(f"unknown replay format {fmt}")
    played = game(match.config.game.kind)
    formats = export_formats(match)
    known = ", ".join(formats)
    if name not in ("native", *played.record_formats):
        raise FailedPreconditionError(f"{name} records do not hold {played.title} games; "
                                      f"{played.title} exports as {known}")
    if name not in formats:
        raise FailedPreconditionError(f"a {name} holds moves from the standard start only and "
                                      f"match {match.id} starts from another position; it "
                                      f"exports as {known}")
    content = _WRITERS[name](match)
    return referee_pb2.Replay(format=fmt, content=content,
                              filename=f"{match.id}.{_EXTENSIONS[fmt]}")


def _native(match: match_pb2.Match) -> str:
    return write_replay(native_replay(match))


def _transcript(match: match_pb2.Match) -> str:
    return write_transcript(all_moves(match), passes="pass") + "\n"


def _ggf(match: match_pb2.Match) -> str:
    start = configured_start(match.config)
    assert isinstance(start, OthelloBoard)
    times = [None] * len(match.config.opening) + [r.time_ms / 1000 for r in match.moves]
    record = ggf_from_moves(
        start, all_moves(match), black=_player(match.black), white=_player(match.white),
        outcome=match_outcome(match, replay_final(match)), times=times,
        date=match.origin.date or datetime.fromtimestamp(match.created_at.seconds, UTC).strftime(
            "%Y.%m.%d_%H:%M:%S.UTC"), place=match.origin.place or "Arena")
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
    position = configured_start(match.config)
    for move in all_moves(match):
        position.push(move)
    return position


# --- reading: any record Arena exports, back into a replay and a match ----------------------

RECORD_FORMATS = ("native", "ggf", "transcript", "psq")
_GGF_FORFEITS = {":t": Termination.TIMEOUT, ":r": Termination.RESIGNATION}
_IMPORTED_TERMINATIONS = {
    Termination.NORMAL: match_pb2.TERMINATION_NORMAL,
    Termination.FULL_BOARD: match_pb2.TERMINATION_BOARD_FULL,
    Termination.TIMEOUT: match_pb2.TERMINATION_TIME_FORFEIT,
    Termination.ILLEGAL_MOVE: match_pb2.TERMINATION_ILLEGAL_MOVE,
    Termination.CRASH: match_pb2.TERMINATION_BOT_CRASHED,
    Termination.RESIGNATION: match_pb2.TERMINATION_RESIGNATION,
    Termination.ADJUDICATION: match_pb2.TERMINATION_ADJUDICATED,
    Termination.ABORTED: match_pb2.TERMINATION_CANCELLED,
}
_RULES_DECIDED = (Termination.NORMAL, Termination.FULL_BOARD)


def record_format(text: str) -> str:
    """The format of a record, from its first characters (see ``read_record``)."""
    head = text.lstrip()
    if head.startswith("{"):
        return "native"
    if head.startswith("(;"):
        return "ggf"
    if head.startswith("Piskvorky"):
        return "psq"
    return "transcript"


def read_record(text: str, fmt: str = "", variant: str = "") -> tuple[str, Replay]:
    """A game record of any format Arena exports, as a replay; returns the format too.

    ``fmt`` empty: recognised from the text (a JSON object is a native replay, ``(;``
    starts GGF, ``Piskvorky`` starts PSQ, anything else is read as an Othello transcript).
    ``variant`` (the Othello variant or Gomoku rule) is for the records that cannot say
    it (transcripts, PSQ) and must agree with those that do. Every move is replayed
    through the rules; a bad record raises ``FormatError`` naming the line or the move.
    A byte order mark before the record (some editors save one) is left out.
    """
    text = text.removeprefix(BOM)
    if not text.strip():  # read as a transcript, it was a game of no moves
        raise FormatError("the record is empty: no game in it")
    guessed = not fmt
    fmt = fmt or record_format(text)
    if fmt not in RECORD_FORMATS:
        raise FormatError(f"unknown record format {fmt!r}; known: {', '.join(RECORD_FORMATS)}")
    problem = _variant_problem(fmt, variant)
    if problem:
        raise UnknownGameError(problem)
    try:
        replay = _named_by_colour(_READERS[fmt](text, variant))
    except FormatError as exc:
        if guessed and fmt == "transcript" and exc.reason.startswith("expected a square"):
            first = psq_lookalike(text)
            if first is not None:
                raise FormatError(f"not a record Arena reads: it looks like PSQ, whose first "
                                  f"line is '{PSQ_HEADER}' (its first line here: "
                                  f"{shown(first)})") from None
            raise FormatError(f"not a native replay, GGF or PSQ record, nor an Othello "
                              f"transcript ({exc})") from None
        fits = "" if variant else _variant_that_reads(text, fmt)
        if fits:
            raise FormatError(f"{exc}; it reads as a game of the {fits} variant, which the "
                              f"record cannot say: give the variant (--variant {fits})") from None
        raise
    if variant and replay.variant != variant:
        raise FormatError(f"the record is a {replay.variant} game, not {variant}: leave the "
                          "variant out")
    return fmt, replay


def _named_by_colour(replay: Replay) -> Replay:
    """A player the record does not name (a transcript names none) is called by its colour,
    as an imported match's is."""
    replay.black = replay.black if replay.black.split() else "black"
    replay.white = replay.white if replay.white.split() else "white"
    return replay


_UNNAMED_VARIANT = {"transcript": "othello", "psq": "gomoku"}  # records that cannot say it


def _variant_problem(fmt: str, variant: str) -> str | None:
    """What is wrong with reading a record of ``fmt`` as ``variant``, for the formats that
    cannot name theirs (a variant of another game), else None."""
    played = game(_UNNAMED_VARIANT[fmt]) if fmt in _UNNAMED_VARIANT else None
    if not variant or played is None or variant in played.variants:
        return None
    return (f"a {fmt} record holds {played.title} games, which have no variant "
            f"{shown(variant)}; known: {', '.join(played.variants)}")


def _variant_that_reads(text: str, fmt: str) -> str:
    """The first other variant (Othello) or rule (Gomoku) under which a record that cannot
    name its variant reads without error, or ``""``."""
    if fmt not in _UNNAMED_VARIANT:
        return ""
    played = game(_UNNAMED_VARIANT[fmt])
    for other in played.variants[1:]:
        try:
            _READERS[fmt](text, other)
        except (FormatError, GameError):
            continue
        return other
    return ""


def _native_record(text: str, variant: str) -> Replay:
    return parse_replay(text)


def _ggf_record(text: str, variant: str) -> Replay:
    record = parse_ggf(text)
    replay = Replay.new(record.start, record.black, record.white)
    replay.moves = [ReplayMove(move=m.move, time_ms=round((m.time or 0.0) * 1000))
                    for m in record.moves]
    replay.metadata = {key: value for key, value in (("date", record.tag("DT")),
                                                      ("place", record.tag("PC"))) if value}
    final = record.final_board()
    replay.outcome = final.outcome() if final.is_game_over() else _ggf_outcome(record, final)
    if replay.outcome is not None and replay.outcome.termination not in _RULES_DECIDED:
        replay.forfeit = f"the record's result: RE[{record.result}]"
    return replay


def _ggf_outcome(record: GgfGame, final: OthelloBoard) -> Outcome | None:
    """What ``RE`` says of a game its moves do not finish (a forfeit or an adjudication)."""
    margin = record.result_score()
    if margin is None:
        return None
    suffix = (record.result or "").strip()[-2:].lower()
    termination = _GGF_FORFEITS.get(suffix, Termination.ADJUDICATION)
    winner = Color.BLACK if margin > 0 else Color.WHITE if margin < 0 else None
    if termination is Termination.ADJUDICATION:  # perfect play's counts, the board full
        black = (64 + max(-64, min(64, round(margin)))) // 2
        return Outcome(winner, termination, black, 64 - black, 0)
    black, white = final.count(Color.BLACK), final.count(Color.WHITE)
    return Outcome(winner, termination, black, white, 64 - black - white)


def _transcript_record(text: str, variant: str) -> Replay:
    start = OthelloBoard(variant or game("othello").default_variant)
    replay = Replay.new(start, "", "")
    replay.moves = [ReplayMove(move=move, time_ms=0) for move in parse_transcript(text, start)]
    replay.outcome = replay.final_position().outcome()
    return replay


def _psq_record(text: str, variant: str) -> Replay:
    record = parse_psq(text, variant or game("gomoku").default_variant)
    names = [line.strip() for line in record.trailer
             if line.strip() and not line.strip().lstrip("-").isdigit()]
    black, white = names[:2] if len(names) >= 2 else ["", ""]
    replay = Replay.new(GomokuBoard(record.size, record.rule), black, white)
    replay.moves = [ReplayMove(move=m.y * record.size + m.x, time_ms=m.time_ms)
                    for m in record.moves]
    replay.outcome = record.final_board().outcome()
    return replay


_READERS = {"native": _native_record, "ggf": _ggf_record, "transcript": _transcript_record,
            "psq": _psq_record}


# Where a record of each format states its board's size, when it is one place: PSQ's
# header, 'Piskvorky 20x20, ...' (line 1, column 11).
_SIZE_STATED_AT = {"psq": (1, len("Piskvorky ") + 1)}


# A player's name in a stored match (it names index keys), a move's worker, or the record's
# date or place; a record's longer one is refused, never cut.
MAX_PLAYER_NAME = 100
# Where a record of each format gives the players' names, its date and its place, for an
# error (a transcript gives none, PSQ no date or place).
_KEPT_AT = {"native": ("black", "white", "metadata.date", "metadata.place"),
            "ggf": ("PB", "PW", "DT", "PC"),
            "psq": ("black's name in the trailer", "white's name in the trailer", "", "")}
_KEPT_AS = ("a player's name", "a player's name", "a date", "a place")
# A native replay's times (its metadata, as ``native_replay`` writes them), kept as the
# match's; how far past the import one may be, since the arena that wrote it may keep
# another clock (or another time zone, written as UTC).
_KEPT_TIMES = ("created_at", "finished_at")
CLOCK_SLACK_S = 24 * 3600


def check_storable(fmt: str, replay: Replay, at: timestamp_pb2.Timestamp) -> None:
    """A record read (``read_record``, which reads any board and names its format can hold:
    a replay shows them) must be of a board its game is played on here, name its players
    and its moves' workers in at most ``MAX_PLAYER_NAME`` characters, and give times a
    match imported at ``at`` can keep (``_kept_times``), to be stored as a match;
    ``FormatError`` naming the record's size, where it states it, and the sizes the game
    takes, or the field of the name too long or the time refused."""
    for text, field, kept_as in _kept_texts(fmt, replay):
        length = len(_one_line(text))
        if length > MAX_PLAYER_NAME:
            raise FormatError(f"{field} is {length:,} characters; {kept_as} is at most "
                              f"{MAX_PLAYER_NAME}")
    _kept_times(replay, at)
    played = game(replay.game)
    size = replay.start_position().size
    if size not in played.sizes:
        line, column = _SIZE_STATED_AT.get(fmt, (None, None))
        raise FormatError(f"a {size}x{size} board: Arena plays {played.title} on "
                          f"{played.sizes_text} only", line, column)


def _kept_texts(fmt: str, replay: Replay) -> Iterator[tuple[str, str, str]]:
    """The texts of a record its match keeps (``_foreign``), each with where the record
    gives it and what it is: the players' names, the date and the place, and each move's
    worker (a native replay's alone names them)."""
    texts = (replay.black, replay.white, *(value for _, value in _record_origin(replay)))
    yield from zip(texts, _KEPT_AT.get(fmt, ("",) * 4), _KEPT_AS, strict=True)
    for index, move in enumerate(replay.moves):
        if move.worker:
            yield move.worker, f"moves[{index}].worker", "a worker's name"


def _kept_times(replay: Replay, at: timestamp_pb2.Timestamp
                 ) -> tuple[timestamp_pb2.Timestamp, timestamp_pb2.Timestamp]:
    """When the match of ``replay``, imported at ``at``, was created and finished: as a
    native replay's metadata says (``created_at``, ``finished_at``, RFC 3339 as
    ``native_replay`` writes them), else at the import (a record that gives its finish
    alone was created then; one that gives its creation alone finished at the import, or
    then if that is later). ``FormatError`` naming the key for a time not so written,
    not after 1970, more than ``CLOCK_SLACK_S`` after the import, or a finish before the
    creation."""
    created, finished = (_record_time(replay, key, at) for key in _KEPT_TIMES)
    if created is not None and finished is not None and \
            finished.ToNanoseconds() < created.ToNanoseconds():
        raise FormatError(f"metadata.finished_at is {finished.ToJsonString()}, before "
                          f"metadata.created_at ({created.ToJsonString()})")
    if created is None:
        created = at if finished is None else finished
    if finished is None:
        finished = max(created, at, key=lambda stamp: stamp.ToNanoseconds())
    return created, finished


def _record_time(replay: Replay, key: str, at: timestamp_pb2.Timestamp
                 ) -> timestamp_pb2.Timestamp | None:
    text = replay.metadata.get(key, "")
    if not text:
        return None
    stamp = timestamp_pb2.Timestamp()
    try:
        stamp.FromJsonString(text)
    except ValueError:
        raise FormatError(f"metadata.{key} must be a time such as 2003-01-02T03:04:05.678Z "
                          f"(RFC 3339), got {shown(text)}") from None
    if not 0 < stamp.ToNanoseconds() <= at.ToNanoseconds() + CLOCK_SLACK_S * 10**9:
        raise FormatError(f"metadata.{key} is {text}: a match's time is after 1970 and at most "
                          f"a day after its import ({at.ToJsonString()})")
    return stamp


def imported_match(replay: Replay, fmt: str, match_id: str, owner: str,
                   at: timestamp_pb2.Timestamp) -> match_pb2.Match:
    """A replay (one ``check_storable`` passed) as a finished match of ``owner``, imported
    at ``at``: every move a record (a native replay's opening moves stay the match's
    opening), the players named as in the record with version 0 (they name no registered
    bot), the result from the record's outcome (none: void, ``TERMINATION_UNFINISHED``),
    created and finished when the record says (``_kept_times``)."""
    played = game(replay.game)
    opening = [m.move for m in itertools.takewhile(lambda m: m.worker == "opening",
                                                   replay.moves)]
    start = replay.start_position()
    spec = played.spec(start.variant, start.size)
    fresh = played.new_position(start.variant, start.size).to_text()
    config = match_pb2.MatchConfig(game=spec, black=_imported(replay.black, "black"),
                                   white=_imported(replay.white, "white"), opening=opening,
                                   start_position="" if replay.start == fresh else replay.start)
    position = start
    for square in opening:
        position.push(square)
    created, finished = _kept_times(replay, at)
    match = match_pb2.Match(
        id=match_id, config=config, black=config.black, white=config.white,
        status=match_pb2.MATCH_STATUS_FINISHED, owner=owner, created_at=created,
        finished_at=finished, start_position=position.to_text(), imported_from=fmt)
    origin = {key: _foreign(value) for key, value in _record_origin(replay)}
    if any(origin.values()):
        match.origin.CopyFrom(match_pb2.RecordOrigin(**origin))
    for ply, played_move in enumerate(replay.moves[len(opening):]):
        match.moves.append(_imported_record(position, ply, played_move))
    match.result.CopyFrom(_imported_result(replay, position))
    return match


def _record_origin(replay: Replay) -> tuple[tuple[str, str], ...]:
    """The record's date and place (empty when it gives none), as ``RecordOrigin``'s keys."""
    return tuple((key, replay.metadata.get(key, "")) for key in ("date", "place"))


def _imported(name: str, side: str) -> common_pb2.BotRef:
    return common_pb2.BotRef(name=_foreign(name) or side, version=0)


def _foreign(text: str) -> str:
    """A record's text as stored and shown to every user: one line of printable
    characters (``check_storable`` refused it over ``MAX_PLAYER_NAME``)."""
    return printable(_one_line(text))


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _imported_record(position: Position, ply: int, move: ReplayMove) -> match_pb2.MoveRecord:
    """The record of ``move`` (played on ``position``, which it advances)."""
    color = common_pb2.COLOR_BLACK if position.turn is Color.BLACK else common_pb2.COLOR_WHITE
    text = position.move_to_str(move.move)
    position.push(move.move)
    record = match_pb2.MoveRecord(ply=ply, color=color,
                                  move=common_pb2.Move(square=move.move, text=text),
                                  time_ms=move.time_ms, worker_id=_foreign(move.worker or ""),
                                  position_after=position.to_text())
    if move.depth is not None or move.score is not None or move.pv or move.notes:
        record.search.CopyFrom(common_pb2.SearchInfo(
            score=move.score, depth=move.depth, nodes=move.nodes or 0, pv=move.pv,
            exact=move.exact, notes=engine_notes(move.notes)))
    return record


def _imported_result(replay: Replay, final: Position) -> match_pb2.MatchResult:
    outcome = replay.outcome
    count = getattr(final, "count")  # noqa: B009 - both games count their pieces
    result = match_pb2.MatchResult(black_count=count(Color.BLACK),
                                   white_count=count(Color.WHITE))
    if outcome is None:
        result.termination = match_pb2.TERMINATION_UNFINISHED
        result.void = True
        result.detail = "the record ends before the game does and states no result"
        return result
    result.termination = _IMPORTED_TERMINATIONS[outcome.termination]
    result.winner = _proto_color(outcome.winner)
    result.detail = printable(bounded(replay.forfeit or "", 500))
    result.void = outcome.termination is Termination.ABORTED
    decided_by_discs = game(final.game).counts_discs
    if outcome.termination in _RULES_DECIDED:
        result.score = outcome.wof_diff if decided_by_discs else 0
    elif outcome.termination is Termination.ADJUDICATION:  # no one forfeited
        if decided_by_discs:
            # The moves stop before the end: the counts and the margin are the record's
            # (perfect play's, as the referee stores an adjudication), not the last board's.
            result.black_count, result.white_count = outcome.black_score, outcome.white_score
            result.score = outcome.wof_diff
        result.detail = result.detail or (
            f"the record's result: adjudicated, {outcome.black_score}-{outcome.white_score}")
    elif outcome.winner is not None:
        result.forfeited = _proto_color(outcome.winner.other)
        if decided_by_discs:  # the whole board to the winner, as GGF records a forfeit
            squares = final.size * final.size
            result.score = squares if outcome.winner is Color.BLACK else -squares
    return result


def _proto_color(color: Color | None) -> common_pb2.Color.ValueType:
    if color is None:
        return common_pb2.COLOR_UNSPECIFIED
    return common_pb2.COLOR_BLACK if color is Color.BLACK else common_pb2.COLOR_WHITE
