"""Every forfeit reason, with its detail, while other matches run on unaffected."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from typing import Any

import redis
from arena.clients.sdk import ArenaClient
from arena.services.common.embedded_redis import free_port
from arena.services.worker.bots import EXTERNAL_REPLY_BYTES

from arena.formats import parse_replay
from arena.records import export
from arena.v1 import bot_service_pb2, common_pb2, match_pb2, referee_pb2
from tests.conftest import NewMatch
from tests.support.bots import (
    bot_server,
    crash,
    external_bot,
    first_legal,
    illegal_after,
    late,
    match_config,
    no_move,
    replay_moves,
    wait_finished,
)

EXPECTED = {
    "illegal": match_pb2.TERMINATION_ILLEGAL_MOVE,
    "garbage": match_pb2.TERMINATION_MALFORMED_ANSWER,
    "empty": match_pb2.TERMINATION_MALFORMED_ANSWER,
    "late": match_pb2.TERMINATION_TIME_FORFEIT,
    "crash": match_pb2.TERMINATION_BOT_CRASHED,
    "gone": match_pb2.TERMINATION_BOT_UNREACHABLE,
    # A gRPC server without the BotService reads as nothing there: told apart, it let an
    # owner map which ports of an allowed network run gRPC services.
    "elsewhere": match_pb2.TERMINATION_BOT_UNREACHABLE,
}


def test_each_bad_bot_forfeits_with_its_reason_and_good_matches_finish(
    redis_client: redis.Redis, loops: Callable[..., Any], peers: ArenaClient, new_match: NewMatch
) -> None:
    loops(referees=2, workers=3)
    behaviours: dict[str, Any] = {"illegal": illegal_after(4), "garbage": "garbage",
                                  "empty": no_move, "late": late, "crash": crash,
                                  "elsewhere": "no service"}
    with ExitStack() as stack:
        good = stack.enter_context(bot_server(first_legal))
        external_bot(peers, "good", good)
        for name, behaviour in behaviours.items():
            external_bot(peers, name, stack.enter_context(bot_server(behaviour)))
        external_bot(peers, "gone", f"127.0.0.1:{free_port()}")
        bad = {name: new_match(match_config("good", name, move_time_ms=300),
                                  "me").id for name in EXPECTED}
        fine = [new_match(match_config("good", "good"), "me").id
                for _ in range(2)]
        results = {name: wait_finished(redis_client, match_id) for name, match_id in bad.items()}
        normal = [wait_finished(redis_client, match_id) for match_id in fine]
    for name, match in results.items():
        assert match.result.termination == EXPECTED[name], (name, match.result)
        assert match.result.forfeited == common_pb2.COLOR_WHITE
        assert match.result.winner == common_pb2.COLOR_BLACK
        assert match.result.detail
        replay_moves(match)
        replay = parse_replay(export(match, referee_pb2.REPLAY_FORMAT_NATIVE).content)
        assert replay.forfeit is not None and "white forfeited" in replay.forfeit
        assert replay.metadata["termination"] == match_pb2.Termination.Name(EXPECTED[name])
    assert "illegal" in results["illegal"].result.detail
    assert results["elsewhere"].result.detail == results["gone"].result.detail
    assert len(results["illegal"].moves) == 5  # white plays legally at plies 1 and 3, not at 5
    for match in normal:
        assert match.result.termination == match_pb2.TERMINATION_NORMAL
        replay_moves(match)


def _chatty(request: bot_service_pb2.GetMoveRequest) -> bot_service_pb2.GetMoveResponse:
    """A legal move wrapped in all a reply may hold, short of the size limit: a long move
    text, PV, tied moves (squares off the board among them) and notes, a negative depth,
    and bytes of a field no message has."""
    reply = first_legal(request)
    reply.move.text = "x" * 8_000
    reply.search.pv.extend([reply.move.square] + [-5, 2**31 - 1, 999, -1] * 500)
    reply.search.tied_moves.extend([-1, 1000, reply.move.square] * 500)
    reply.search.depth = -7
    reply.search.notes.extend(f"line {i} " + "\x1b[31m" * 10 for i in range(300))
    unknown = b"\xfa\x06" + _varint(10_000) + b"u" * 10_000  # field 111, length-delimited
    reply.search.MergeFromString(unknown)  # kept by a copy of the message, as it was
    assert reply.ByteSize() < EXTERNAL_REPLY_BYTES
    return reply


def _bloated(request: bot_service_pb2.GetMoveRequest) -> bot_service_pb2.GetMoveResponse:
    """A legal move with a PV of 200,000 plies: over the size limit."""
    reply = first_legal(request)
    reply.search.pv.extend([reply.move.square] * 200_000)
    return reply


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    return bytes([*out, value])


def test_an_external_bot_cannot_fill_the_arena_with_its_answers(
    redis_client: redis.Redis, loops: Callable[..., Any], peers: ArenaClient, new_match: NewMatch
) -> None:
    """What an external bot answers goes into the match's record, in the durable Redis, and
    to every viewer: the worker keeps a move and a bounded report, and an answer over the
    size limit costs the bot its game instead of filling the store."""
    loops(referees=1, workers=2)
    with (bot_server(first_legal) as good, bot_server(_chatty) as chatty,
          bot_server(_bloated) as bloated):
        for name, address in (("good", good), ("chatty", chatty), ("bloated", bloated)):
            external_bot(peers, name, address)
        talked = new_match(match_config("good", "chatty", move_time_ms=2000), "me").id
        flooded = new_match(match_config("good", "bloated", move_time_ms=2000), "me").id
        talked_match = wait_finished(redis_client, talked, timeout_s=120)
        flooded_match = wait_finished(redis_client, flooded, timeout_s=120)

    assert talked_match.result.termination == match_pb2.TERMINATION_NORMAL
    replay_moves(talked_match)
    theirs = [r for r in talked_match.moves if r.color == common_pb2.COLOR_WHITE]
    assert theirs
    for record in theirs:
        # Of the PV, its legal start; of the tied moves, the legal ones once each.
        assert list(record.search.pv) == list(record.search.tied_moves) == [
            record.move.square]
        assert not record.search.HasField("depth")
        assert len(record.search.notes) == 4 and all("\x1b" not in n for n in record.search.notes)
        assert record.move.text == record.move.text.strip() and len(record.move.text) <= 4
        assert record.ByteSize() < 3_000, record.ByteSize()  # 18,447 bytes a move before
    assert talked_match.ByteSize() < 200_000, talked_match.ByteSize()
    # Its native record reads back (a square off the board in a PV made the arena's own
    # reader refuse every export of the match).
    read = parse_replay(export(talked_match, referee_pb2.REPLAY_FORMAT_NATIVE).content)
    assert [move.move for move in read.moves] == [r.move.square for r in talked_match.moves]

    assert flooded_match.result.termination == match_pb2.TERMINATION_MALFORMED_ANSWER
    assert flooded_match.result.forfeited == common_pb2.COLOR_WHITE
    assert "an answer over 64 KiB" in flooded_match.result.detail, flooded_match.result.detail
