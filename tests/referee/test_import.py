"""Referee.ImportMatch over real gRPC: every export format comes back as a finished match
that lists, watches, exports (and imports again) and deletes like a played one; bad
records are refused with the line or move named."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

import pytest
import redis
from arena.clients.sdk import ArenaClient
from arena.services.common.config import Config
from arena.services.common.embedded_redis import EmbeddedRedis
from arena.services.common.protocol import keys
from arena.services.common.protocol.matches import MatchStore, new_match_id

from arena.errors import (
    AlreadyExistsError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
    ResourceExhaustedError,
)
from arena.formats import (
    Replay,
    ReplayMove,
    ggf_from_moves,
    ggf_result,
    parse_replay,
    psq_from_moves,
    write_ggf,
    write_psq,
    write_replay,
    write_transcript,
)
from arena.games import (
    Color,
    GomokuBoard,
    OthelloBoard,
    Outcome,
    Position,
    Termination,
    game,
    new_position,
)
from arena.v1 import common_pb2, match_pb2, referee_pb2
from tests.support.servers import Server, client, serve

NATIVE, GGF = referee_pb2.REPLAY_FORMAT_NATIVE, referee_pb2.REPLAY_FORMAT_GGF
TRANSCRIPT, PSQ = referee_pb2.REPLAY_FORMAT_TRANSCRIPT, referee_pb2.REPLAY_FORMAT_PSQ


@pytest.fixture
def referee(redis_server: EmbeddedRedis, cache_server: EmbeddedRedis, redis_client: redis.Redis,
            registry_server: Server) -> Iterator[Server]:
    """A referee that runs no matches (imports need none)."""
    server = serve("referee", Config(redis_url=redis_server.url, cache_url=cache_server.url,
                                     registry=registry_server.target, max_matches=0,
                                     service_token="admin-token"))
    yield server
    server.stop()


@pytest.fixture
def alice(referee: Server) -> Iterator[ArenaClient]:
    with client("alice-token", referee=referee.target) as sdk:
        yield sdk


@pytest.fixture
def bob(referee: Server) -> Iterator[ArenaClient]:
    with client("bob-token", referee=referee.target) as sdk:
        yield sdk


def _random_game(position: Position, seed: int, plies: int = 10_000) -> list[int]:
    rng = random.Random(seed)
    moves = []
    while not position.is_game_over() and len(moves) < plies:
        move = rng.choice(position.legal_moves())
        position.push(move)
        moves.append(move)
    return moves


def _othello_game(seed: int = 3) -> tuple[OthelloBoard, list[int]]:
    board = OthelloBoard()
    return board, _random_game(board, seed)


def test_a_ggf_record_becomes_a_finished_match(alice: ArenaClient) -> None:
    final, moves = _othello_game()
    outcome = final.outcome()
    times = [0.25] * len(moves)
    text = write_ggf(ggf_from_moves(OthelloBoard(), moves, black="Edax (lvl 3)",
                                    white="ntest", outcome=outcome, times=times))
    match = alice.import_match(text)
    assert match.status == match_pb2.MATCH_STATUS_FINISHED and match.owner == "alice"
    assert match.imported_from == "ggf"
    assert (match.black.name, match.black.version) == ("Edax (lvl 3)", 0)
    assert (match.white.name, match.white.version) == ("ntest", 0)
    assert [r.move.square for r in match.moves] == moves
    assert all(r.time_ms == 250 for r in match.moves if r.move.square != 64)
    assert match.result.termination == match_pb2.TERMINATION_NORMAL
    assert outcome is not None and match.result.score == outcome.wof_diff
    stored = alice.get_match(match.id)
    assert stored == match
    # Exported again in every format it has, and each export imports to the same game.
    for fmt in (NATIVE, GGF, TRANSCRIPT):
        again = alice.import_match(alice.get_replay(match.id, fmt).content)
        assert [r.move.square for r in again.moves] == moves
        assert again.result.winner == match.result.winner
    assert alice.get_replay(match.id, GGF).content.count("PB[Edax (lvl 3)]") == 1


def test_a_record_s_date_and_place_are_kept_and_exported(alice: ArenaClient) -> None:
    """A GGF's DT and PC were dropped: its export said the import's date and PC[Arena]."""
    _final, moves = _othello_game()
    said = "DT[2003.01.02_03:04:05.UTC]PC[NIOS]"
    text = write_ggf(ggf_from_moves(OthelloBoard(), moves[:20])).replace("PC[Arena]", said)
    match = alice.import_match(text)
    assert (match.origin.date, match.origin.place) == ("2003.01.02_03:04:05.UTC", "NIOS")
    exported = alice.get_replay(match.id, GGF).content
    assert exported.startswith("(;GM[Othello]PC[NIOS]DT[2003.01.02_03:04:05.UTC]PB[black]")
    assert exported.count("DT[") == exported.count("PC[") == 1
    for fmt in (GGF, NATIVE):  # and so through either record
        again = alice.import_match(alice.get_replay(match.id, fmt).content)
        assert again.origin == match.origin and len(again.moves) == 20
    # A record that gives neither is exported as made here, when it was imported.
    plain = alice.import_match("(;GM[Othello]B[F5];)")
    assert not plain.HasField("origin")
    assert "(;GM[Othello]PC[Arena]DT[" in alice.get_replay(plain.id, GGF).content
    with pytest.raises(InvalidArgumentError, match="content: DT is 101 characters; a date is "
                                                   "at most 100"):
        alice.import_match(text.replace("2003.01.02_03:04:05.UTC", "9" * 101))


def test_listing_watching_and_deleting_an_imported_match(alice: ArenaClient,
                                                         bob: ArenaClient) -> None:
    _final, moves = _othello_game(seed=5)
    match = alice.import_match(write_transcript(moves, passes="pass"))
    assert (match.black.name, match.white.name) == ("black", "white")
    # Its players name no bot: it is in no bot's history, whatever names a record gives.
    assert match.id not in [m.id for m in alice.iter_matches(bot_name="black")]
    listed = {m.id: m for m in alice.iter_matches()}  # a full listing: with the moves
    assert [r.move.square for r in listed[match.id].moves] == moves
    assert listed[match.id].result == match.result
    assert match.id in [m.id for m in alice.iter_matches(status=match_pb2.MATCH_STATUS_FINISHED)]
    events = list(alice.watch_match(match.id, timeout_s=30))
    assert events[0].WhichOneof("event") == "started"
    assert events[-1].WhichOneof("event") == "ended"
    assert sum(e.WhichOneof("event") in ("move", "pass") for e in events) == len(moves)
    with pytest.raises(NotFoundError):
        alice.get_search_tree(match.id, 0)
    with pytest.raises(PermissionDeniedError):  # not a bot lookup of player "black"
        bob.cancel_match(match.id)
    with pytest.raises(FailedPreconditionError):
        alice.cancel_match(match.id)
    with pytest.raises(PermissionDeniedError):
        bob.delete_match(match.id)
    alice.delete_match(match.id)
    # Header and moves go together: a listing that read the header just before the delete
    # skips the match (the read of its moves fails the same way) instead of listing it
    # finished with no moves.
    with pytest.raises(NotFoundError):
        alice.get_match(match.id)
    assert match.id not in [m.id for m in alice.iter_matches(bot_name="black")]


def test_psq_and_native_gomoku_records(alice: ArenaClient) -> None:
    board = GomokuBoard(15)
    moves = _random_game(board, seed=11, plies=40)
    psq = write_psq(psq_from_moves(15, moves, times_ms=[7] * len(moves),
                                   names=("pbrain-a", "pbrain-b")))
    match = alice.import_match(psq, PSQ)
    assert (match.black.name, match.white.name) == ("pbrain-a", "pbrain-b")
    assert [r.move.square for r in match.moves] == moves
    assert match.result.void and match.result.termination == match_pb2.TERMINATION_UNFINISHED
    exact = alice.import_match(psq, variant="exact-five")
    assert exact.config.game.variant == "exact-five"
    native = Replay.new(new_position("gomoku", size=9), "me", "you")
    native.moves = [ReplayMove(move=m, time_ms=3, score=i, depth=2, pv=[m])
                    for i, m in enumerate([40, 41, 31, 50, 22, 59, 13, 68, 4])]
    native.outcome = native.final_position().outcome()
    match = alice.import_match(write_replay(native))
    assert match.config.game.board_size == 9 and match.imported_from == "native"
    assert match.result.winner == common_pb2.COLOR_BLACK
    assert [r.search.score for r in match.moves] == list(range(9))
    assert alice.get_replay(match.id, PSQ).content.startswith("Piskvorky 9x9")
    # A Gomoku game ended by the arena, not by a player (a record of a dead-lettered
    # match says 'adjudication'): no one forfeited it, and its counts are the board's.
    native.moves = native.moves[:5]
    native.outcome = Outcome(Color.BLACK, Termination.ADJUDICATION, 1, 0)
    judged = alice.import_match(write_replay(native)).result
    assert judged.termination == match_pb2.TERMINATION_ADJUDICATED
    assert judged.forfeited == common_pb2.COLOR_UNSPECIFIED and judged.score == 0
    assert (judged.black_count, judged.white_count) == (3, 2)


def test_forfeits_resignations_and_openings_survive(alice: ArenaClient) -> None:
    board = OthelloBoard()
    for move in ("f5", "d6", "c3"):
        board.push(board.parse_move(move))
    resigned = Replay.new(OthelloBoard(), "human", "lab-beginner")
    resigned.moves = [ReplayMove(move=m, time_ms=0, worker="opening") for m in (37, 43)]
    resigned.moves.append(ReplayMove(move=18, time_ms=5))
    resigned.outcome = game("othello").forfeit_outcome(board, Termination.RESIGNATION)
    resigned.forfeit = "white resigned"
    match = alice.import_match(write_replay(resigned))
    assert list(match.config.opening) == [37, 43] and len(match.moves) == 1
    assert match.result.termination == match_pb2.TERMINATION_RESIGNATION
    assert match.result.forfeited == common_pb2.COLOR_WHITE and match.result.score == 64
    back = alice.get_replay(match.id, GGF).content
    assert "RE[+64.000:r]" in back
    ggf_again = alice.import_match(back)
    assert ggf_again.result.termination == match_pb2.TERMINATION_RESIGNATION
    timed_out = alice.import_match(back.replace("+64.000:r", "-64.000:t"))
    assert timed_out.result.termination == match_pb2.TERMINATION_TIME_FORFEIT
    assert timed_out.result.winner == common_pb2.COLOR_WHITE


def test_a_ggf_result_its_moves_contradict_is_refused(alice: ArenaClient) -> None:
    """A finished game whose RE said another winner was stored with the RE dropped; a native
    replay's contradicting outcome is refused. A forfeit's RE, the game not over, is kept."""
    final, moves = _othello_game()
    outcome = final.outcome()
    assert outcome is not None and outcome.winner is Color.BLACK
    text = write_ggf(ggf_from_moves(OthelloBoard(), moves, outcome=outcome))
    wrong = text.replace(f"RE[{ggf_result(outcome)}]", "RE[-10.000]")
    with pytest.raises(InvalidArgumentError) as refused:
        alice.import_match(wrong)
    assert (f"content: line 1, column {wrong.index('RE[') + 1}: RE[-10.000]: the record says "
            f"white wins by 10; its {len(moves)} moves give black wins {outcome.black_score}-"
            f"{outcome.white_score} (normal end)") in str(refused.value)
    resigned = write_ggf(ggf_from_moves(OthelloBoard(), moves[:-1])).replace(";)",
                                                                            "RE[-64.000:r];)")
    assert alice.import_match(resigned).result.termination == match_pb2.TERMINATION_RESIGNATION


@pytest.mark.parametrize(("content", "fmt", "needles"), [
    ("f5d6c3f5", 0, ["content", "line 1, column 7", "illegal move 'f5'"]),
    ("(;GM[Othello]BO[8 -------- -------- -------- ---O*--- ---*O--- -------- -------- "
     "-------- *]B[F5]W[A1];)", GGF, ["content", "column", "illegal move W[A1]"]),
    # A time too long for a match's field was refused as 'Value out of range: 1e+15'.
    ("(;GM[Othello]BO[8 -------- -------- -------- ---O*--- ---*O--- -------- -------- "
     "-------- *]B[F5//1e12];)", GGF,
     ["content: line 1, column", "time '1e12' of 'F5//1e12' must be 0..2,147,483 seconds"]),
    # Komi was read as plain Othello (Arena reads no komi).
    ("(;GM[Othello]TY[8k]B[F5];)", GGF,
     ["content: line 1, column 14: TY[8k]: only plain 8x8 Othello (TY[8]) is supported"]),
    # RE[+1e400] was stored as black winning by 1 (32-32), and exported as RE[+0.000].
    ("(;GM[Othello]RE[+1e400]B[F5];)", GGF,
     ["content: line 1, column 14: RE[+1e400]: number '+1e400' is not finite"]),
    ("Piskvorky 15x15, 0:0, 0\n8,8,1\n8,8,1\n", PSQ, ["content", "line 3", "illegal move"]),
    # Recognised as PSQ; an off-board move is refused, not taken as the end of the moves.
    ("Piskvorky 15x15, 0:0, 0\n8,8,1\n-1,8,1\n9,9,1\n", 0,
     ["content", "line 3", "move '-1,8,1' is not 'x,y,time'"]),
    ('{"format": "arena-replay", "version": 1, "game": "othello"', NATIVE,
     ["content", "not JSON"]),
    ("hello world", 0, ["content", "nor an Othello transcript"]),
    # PSQ without its header, or under another first word: said so, not read as Othello.
    ("Piskvork 15x15, 0:0, 0\n8,8,1\n9,9,1\n", 0,
     ["content", "it looks like PSQ, whose first line is 'Piskvorky <w>x<h>, <a>:<b>, "
      "<flag>' (its first line here: 'Piskvork 15x15, 0:0, 0')"]),
    ("\n8,8,1\n9,9,1\n", 0, ["content", "it looks like PSQ", "here: '8,8,1'"]),
    # Was refused in Python's words (sys.set_int_max_str_digits), naming no field.
    ('{"format": "arena-replay", "version": ' + "9" * 5000 + "}", 0,
     ["content: not JSON we read: a number of 5,000 digits (at most 4,300 are read)"]),
    ("   ", 0, ["content", "is empty"]),
])
def test_bad_records_are_refused_with_the_place_named(
    alice: ArenaClient, content: str, fmt: referee_pb2.ReplayFormat.ValueType, needles: list[str]
) -> None:
    with pytest.raises(InvalidArgumentError) as refused:
        alice.import_match(content, fmt)
    for needle in needles:
        assert needle in str(refused.value)
    with pytest.raises(InvalidArgumentError, match="variant: a transcript record holds Othello "
                       "games, which have no variant 'giant'; known: standard, international"):
        alice.import_match("f5d6", variant="giant")


@pytest.mark.parametrize(("key", "value", "said"), [
    ("time_ms", 10**12, "moves[1].time_ms must be in 0..2147483647, got 1000000000000"),
    ("time_ms", -5, "moves[1].time_ms must be in 0..2147483647, got -5"),
    ("depth", 10**12, "moves[1].depth must be in 0..2147483647, got 1000000000000"),
    ("nodes", -1, "moves[1].nodes must be in 0..9223372036854775807, got -1"),
    ("score", 10**30, "moves[1].score must be in -9223372036854775808..9223372036854775807"),
    ("pv", [10**12], "moves[1].pv must hold moves in 0..2147483647"),
])
def test_a_native_replay_s_numbers_fit_where_they_are_stored(
        alice: ArenaClient, key: str, value: object, said: str) -> None:
    """A number too wide for the match's field was refused in protobuf's words, naming
    nothing ('Value out of range: 1000000000000'); a negative time or node count was
    stored."""
    replay = json.loads(write_replay(Replay.new(OthelloBoard(), "a", "b")))
    replay["moves"] = [{"move": 37, "time_ms": 1}, {"move": 29, "time_ms": 1, key: value}]
    with pytest.raises(InvalidArgumentError) as refused:
        alice.import_match(json.dumps(replay))
    assert str(refused.value).startswith(f"invalid request: content: {said}"), refused.value


def _named(fmt: str, black: str, white: str) -> str:
    """A short record of ``fmt`` whose players are ``black`` and ``white``."""
    if fmt == "psq":
        return write_psq(psq_from_moves(15, [112, 113], names=(black, white)))
    if fmt == "ggf":
        return write_ggf(ggf_from_moves(OthelloBoard(), [37], black=black, white=white))
    replay = Replay.new(OthelloBoard(), black, white)
    replay.moves = [ReplayMove(move=37, time_ms=1)]
    return write_replay(replay)


@pytest.mark.parametrize(("fmt", "field"), [
    ("native", "white"), ("ggf", "PW"), ("psq", "white's name in the trailer")])
def test_a_player_name_over_the_limit_is_refused_not_cut(alice: ArenaClient, fmt: str,
                                                          field: str) -> None:
    """A name of 5,000 characters was stored cut to 100 without a word."""
    with pytest.raises(InvalidArgumentError) as refused:
        alice.import_match(_named(fmt, "alpha", "w" * 5000))
    assert (f"content: {field} is 5,000 characters; a player's name is at most 100"
            in str(refused.value))
    longest = "b" * 99 + "\u00e9"
    match = alice.import_match(_named(fmt, longest, "beta  gamma"))
    assert (match.black.name, match.white.name) == (longest, "beta gamma")
    assert alice.get_match(match.id).black.name == longest


def test_a_worker_name_over_the_limit_is_refused_not_cut(alice: ArenaClient) -> None:
    """A native replay's worker of 5,000 characters was stored cut to 100 without a word,
    as a player's name was; it is refused as a name is, by its place in the record (the
    opening's moves counted, as the record lists them)."""
    replay = Replay.new(OthelloBoard(), "a", "b")
    replay.moves = [ReplayMove(move=37, time_ms=0, worker="opening"),
                    ReplayMove(move=43, time_ms=5, worker="w1"),
                    ReplayMove(move=18, time_ms=5, worker="w" * 5000)]
    with pytest.raises(InvalidArgumentError) as refused:
        alice.import_match(write_replay(replay))
    assert ("content: moves[2].worker is 5,000 characters; a worker's name is at most 100"
            in str(refused.value))
    longest = "w" * 99 + "\u00e9"
    replay.moves[2] = ReplayMove(move=18, time_ms=5, worker=longest)
    match = alice.import_match(write_replay(replay))
    assert [r.worker_id for r in alice.get_match(match.id).moves] == ["w1", longest]


def _timed(**times: str) -> str:
    """A short native replay whose metadata gives ``times`` (created_at, finished_at)."""
    replay = Replay.new(OthelloBoard(), "a", "b")
    replay.moves = [ReplayMove(move=37, time_ms=1), ReplayMove(move=43, time_ms=1)]
    replay.metadata = dict(times)
    return write_replay(replay)


def test_a_native_replay_keeps_its_match_s_times(alice: ArenaClient) -> None:
    """A native import was created and finished at the import, whatever the record said:
    the times its export writes (metadata created_at, finished_at) are the match's, so
    export, import and export again write the same times."""
    said = {"created_at": "2003-01-02T03:04:05.678Z", "finished_at": "2003-01-02T03:14:05Z"}
    match = alice.import_match(_timed(**said))
    kept = (match.created_at.ToJsonString(), match.finished_at.ToJsonString())
    assert kept == (said["created_at"], said["finished_at"])
    assert alice.get_match(match.id) == match
    exported = alice.get_replay(match.id, NATIVE).content
    assert {key: parse_replay(exported).metadata[key] for key in said} == said
    again = alice.import_match(exported)
    assert (again.created_at, again.finished_at) == (match.created_at, match.finished_at)
    assert {key: parse_replay(alice.get_replay(again.id, NATIVE).content).metadata[key]
            for key in said} == said
    # A record of a match not over (created, not finished) finished when it was imported.
    started = alice.import_match(_timed(created_at=said["created_at"]))
    assert started.created_at == match.created_at
    assert started.finished_at.ToNanoseconds() > started.created_at.ToNanoseconds()
    # One that gives neither time, or another format, was created and finished then.
    for plain in (alice.import_match(_timed()), alice.import_match("f5d6")):
        assert plain.created_at == plain.finished_at
        assert plain.created_at.ToNanoseconds() > match.created_at.ToNanoseconds()


@pytest.mark.parametrize(("times", "said"), [
    ({"created_at": "yesterday"},
     "metadata.created_at must be a time such as 2003-01-02T03:04:05.678Z (RFC 3339), got "
     "'yesterday'"),
    ({"finished_at": "2003-02-30T00:00:00Z"},
     "metadata.finished_at must be a time such as 2003-01-02T03:04:05.678Z (RFC 3339), got "
     "'2003-02-30T00:00:00Z'"),
    ({"created_at": "2003-01-02 03:04:05"},
     "metadata.created_at must be a time such as"),
    ({"created_at": "1969-12-31T23:59:59Z"},
     "metadata.created_at is 1969-12-31T23:59:59Z: a match's time is after 1970 and at most "
     "a day after its import ("),
    ({"finished_at": "9999-12-31T23:59:59Z"},
     "metadata.finished_at is 9999-12-31T23:59:59Z: a match's time is after 1970 and at most "
     "a day after its import ("),
    ({"created_at": "2003-01-02T04:00:00Z", "finished_at": "2003-01-02T03:04:05Z"},
     "metadata.finished_at is 2003-01-02T03:04:05Z, before metadata.created_at "
     "(2003-01-02T04:00:00Z)"),
])
def test_a_native_replay_s_times_are_checked(alice: ArenaClient, times: dict[str, str],
                                             said: str) -> None:
    with pytest.raises(InvalidArgumentError) as refused:
        alice.import_match(_timed(**times))
    assert f"invalid request: content: {said}" in str(refused.value), refused.value


def test_a_native_replay_with_an_illegal_move_names_it(alice: ArenaClient) -> None:
    text = write_replay(Replay.new(OthelloBoard(), "a", "b"))
    text = text.replace('"moves": []', '"moves": [{"move": 37, "time_ms": 1}, '
                                       '{"move": 37, "time_ms": 1}]')
    with pytest.raises(InvalidArgumentError, match=r"moves\[1\]"):
        alice.import_match(text)


def test_an_oversized_record_and_a_contradicting_variant(alice: ArenaClient) -> None:
    with pytest.raises(InvalidArgumentError, match="the limit is"):
        alice.import_match("f5" * 600_000)
    ggf = write_ggf(ggf_from_moves(OthelloBoard(), [37]))
    with pytest.raises(InvalidArgumentError, match="leave the variant out"):
        alice.import_match(ggf, variant="international")


def test_an_international_transcript_needs_its_variant_said(alice: ArenaClient) -> None:
    board = OthelloBoard("international")
    moves = _random_game(board, seed=2, plies=12)
    match = alice.import_match(write_transcript(moves), variant="international")
    assert match.config.game.variant == "international" and len(match.moves) == 12
    with pytest.raises(InvalidArgumentError):
        alice.import_match(write_transcript(moves))  # read as standard Othello: illegal


def test_a_retried_import_returns_the_first_match(alice: ArenaClient, bob: ArenaClient) -> None:
    text = write_transcript(_othello_game(seed=9)[1], passes="pass")
    first = alice.import_match(text, request_id="import-1")
    assert alice.import_match(text, request_id="import-1").id == first.id
    assert alice.import_match(text, request_id="import-2").id != first.id
    assert bob.import_match(text, request_id="import-1").id != first.id  # keys are per owner


def test_a_key_used_again_for_another_record_is_refused_and_stores_nothing(
        alice: ArenaClient) -> None:
    """A request_id used again with another record answered with the first match, as if
    the record had been stored; now ALREADY_EXISTS names the match the key stored."""
    text = write_transcript(_othello_game(seed=9)[1], passes="pass")
    first = alice.import_match(text, request_id="import-1")
    other = write_transcript(_othello_game(seed=10)[1], passes="pass")
    for content, variant in ((other, ""), (text, "standard")):
        with pytest.raises(AlreadyExistsError) as refused:
            alice.import_match(content, variant=variant, request_id="import-1")
        assert str(refused.value) == (f"request_id 'import-1' already imported match "
                                      f"{first.id} with different settings; use a new "
                                      "request_id")
    assert [m.id for m in alice.iter_matches()] == [first.id]


def _stored_bytes(match: match_pb2.Match) -> int:
    header = match_pb2.Match()
    header.CopyFrom(match)
    del header.moves[:]
    return header.ByteSize() + sum(record.ByteSize() for record in match.moves)


def test_a_users_imports_are_bounded_in_bytes(
    redis_server: EmbeddedRedis, cache_server: EmbeddedRedis, redis_client: redis.Redis,
    registry_server: Server
) -> None:
    """ImportMatch was bounded only by creates_per_minute (600): 100 imports of a 19x19
    record with long worker names added 89 MB to the durable Redis in 4 s. A user's
    imported matches now count against match_bytes, checked in the store's script before
    anything is written; deleting one gives its bytes back."""
    config = Config(redis_url=redis_server.url, cache_url=cache_server.url,
                    registry=registry_server.target, max_matches=0,
                    service_token="admin-token",
                    quotas=json.dumps({"user": {"match_bytes": 60_000}}))
    server = serve("referee", config)
    try:
        with client("alice-token", referee=server.target) as alice, \
                client("bob-token", referee=server.target) as bob:
            counter = keys.owner_match_bytes("alice")
            redis_client.delete(counter)  # alice starts with nothing counted
            finished = match_pb2.MATCH_STATUS_FINISHED
            before = {m.id for m in alice.iter_matches(status=finished)}
            text = write_transcript(_othello_game(seed=9)[1], passes="pass")
            kept = [alice.import_match(text, request_id="quota-0")]
            with pytest.raises(ResourceExhaustedError) as refused:
                while len(kept) < 100:
                    kept.append(alice.import_match(text, request_id=f"quota-{len(kept)}"))
            assert "quota match_bytes is 60,000" in str(refused.value)
            assert 2 <= len(kept) < 100
            sizes = [_stored_bytes(alice.get_match(match.id)) for match in kept]
            assert int(redis_client.get(counter) or 0) == sum(sizes) <= 60_000
            mine = {m.id for m in alice.iter_matches(status=finished)} - before
            assert mine == {match.id for match in kept}  # nothing of the refused one
            # A retry of a stored import is served, full or not; another user is not held.
            assert alice.import_match(text, request_id="quota-0").id == kept[0].id
            assert bob.import_match(text).owner == "bob"
            # Deleting gives the bytes back, once; the refused request is judged again.
            alice.delete_match(kept[0].id)
            with pytest.raises(NotFoundError):
                alice.delete_match(kept[0].id)
            assert int(redis_client.get(counter) or 0) == sum(sizes[1:])
            again = alice.import_match(text, request_id=f"quota-{len(kept)}")
            assert again.id not in mine
            assert int(redis_client.get(counter) or 0) == sum(sizes[1:]) + _stored_bytes(
                alice.get_match(again.id))  # ids and times differ a little in size
    finally:
        server.stop()


def test_counters_of_imported_bytes_from_before_match_bytes_carry_over(
        alice: ArenaClient, redis_client: redis.Redis) -> None:
    """Before ``match_bytes`` only imports were counted, in a counter of their own and
    without a counter per match. The first create, import or delete of the owner adds that
    counter into the new one; deleting such an import gives its header and moves back, and
    deleting a played match of that time (counted nowhere) gives nothing."""
    store = MatchStore(redis_client)
    text = write_transcript(_othello_game(seed=9)[1], passes="pass")
    old = alice.import_match(text)
    size = _stored_bytes(alice.get_match(old.id))
    # As an earlier version left it: no counter of its own, its bytes in the old counter.
    redis_client.delete(keys.match(old.id, "bytes"), keys.owner_match_bytes("alice"))
    redis_client.set(keys.owner_import_bytes("alice"), size + 500)
    alice.delete_match(old.id)
    assert not redis_client.exists(keys.owner_import_bytes("alice"))
    assert store.stored_bytes("alice") == 500
    # A finished played match of that time gives nothing back.
    played = match_pb2.Match(id=new_match_id(), owner="alice",
                             status=match_pb2.MATCH_STATUS_FINISHED)
    redis_client.set(keys.match(played.id), played.SerializeToString())
    redis_client.set(keys.match(played.id, "final"), "1")
    alice.delete_match(played.id)
    assert store.stored_bytes("alice") == 500
    # An import carries the old counter over before it counts.
    redis_client.set(keys.owner_import_bytes("alice"), 70)
    again = alice.import_match(text)
    assert not redis_client.exists(keys.owner_import_bytes("alice"))
    assert store.stored_bytes("alice") == 570 + _stored_bytes(alice.get_match(again.id))
    alice.delete_match(again.id)
    assert store.stored_bytes("alice") == 570
    redis_client.delete(keys.owner_match_bytes("alice"))
