"""The record the referee stores for a judged move (``judge.move_record``): what a bot
says about its move is kept within bounds whoever sent it (the worker bounds a protocol
engine's lines; an external bot fills its reply's notes itself)."""

from __future__ import annotations

from arena.services.referee.judge import move_record

from arena.games import new_position
from arena.text import NOTE_CHARS, NOTES_KEPT
from arena.v1 import common_pb2, engine_pb2

START = new_position("othello")
D3 = START.parse_move("d3")


def test_a_bots_notes_are_bounded_and_made_printable() -> None:
    said = [f"line {n} \x1b[2J" + "z" * 5000 for n in range(100)] + ["   ", ""]
    result = engine_pb2.MoveResult(move=common_pb2.Move(square=D3),
                                   search=common_pb2.SearchInfo(depth=4, notes=said))
    record = move_record(START, 0, result, 10, 10)
    notes = list(record.search.notes)
    assert len(notes) == NOTES_KEPT and notes[0].startswith(f"line {100 - NOTES_KEPT} \ufffd[2J")
    assert all(len(note) == NOTE_CHARS and note.isprintable() for note in notes)
    assert record.search.depth == 4 and list(result.search.notes) == said  # its input as sent
    quiet = move_record(START, 0, engine_pb2.MoveResult(move=common_pb2.Move(square=D3)), 1, 1)
    assert not quiet.search.notes
