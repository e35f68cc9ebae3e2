"""The ``deepen`` kernel: all iterations in one call equal one call per iteration; why it
stops (last depth, game end, node limit, soft deadline, abort, step)."""

from __future__ import annotations

import time

import numpy as np

from arena.engine.othello import PRESETS
from arena.engine.othello.bitboard import Position, legal_moves, parse_position
from arena.engine.othello.budget import TimeBudget
from arena.engine.othello.config import compile_config
from arena.engine.othello.engine import search_template
from arena.engine.othello.search import (
    DEEPEN_ABORTED,
    DEEPEN_GAME_END,
    DEEPEN_MAX_DEPTH,
    DEEPEN_OUT_OF_NODES,
    DEEPEN_OUT_OF_TIME,
    DEEPEN_STEP,
    DP_ABORT_MOVE,
    DP_ABORT_PV,
    DP_ABORT_PV_LEN,
    DP_DEPTH,
    DP_MOVE,
    DP_NODES,
    DP_PV,
    DP_PV_LEN,
    DP_SCORE,
    SearchBuffers,
)
from tests.engine.othello.conftest import random_boards

SPEC = compile_config({**PRESETS["arena-fast"], "endgame_empties": 0})
MIDGAME = [parse_position(b.to_text()) for b in random_boards(200, seed=23)
           if 30 <= b.empties <= 46 and len(b.legal_moves()) >= 4][:4]
_BUFFERS = SearchBuffers(tt_bits=16)


def _deepen(pos: Position, depths: tuple[int, int], first: int = -1, node_limit: int = 0,
            soft_deadline: int = 0, step: bool = False,
            stop: int = 0, fresh: bool = True) -> tuple[int, dict[str, object]]:
    if fresh:  # a new search: the history heuristic starts empty (as thread_buffers does)
        _BUFFERS.hist.fill(0)
    status = _BUFFERS.deepen(
        pos.player, pos.opponent, pos.turn, depths, pos.empties(), first, node_limit,
        soft_deadline, step, SPEC.params, search_template(SPEC, pos, TimeBudget("wall", 0)),
        np.full(1, stop, dtype=np.int64))
    out = _BUFFERS.out
    report = {"depth": int(out[DP_DEPTH]), "score": int(out[DP_SCORE]),
              "move": int(out[DP_MOVE]), "nodes": int(out[DP_NODES]),
              "pv": out[DP_PV : DP_PV + int(out[DP_PV_LEN])].tolist(),
              "abort_move": int(out[DP_ABORT_MOVE]),
              "abort_pv": out[DP_ABORT_PV : DP_ABORT_PV + int(out[DP_ABORT_PV_LEN])].tolist()}
    return status, report


def test_one_call_equals_one_call_per_iteration() -> None:
    for pos in MIDGAME:
        status, whole = _deepen(pos, (1, 6))
        assert status == DEEPEN_MAX_DEPTH and whole["depth"] == 6
        nodes, first, depth, calls = 0, -1, 0, 0
        while True:
            calls += 1
            status, part = _deepen(pos, (depth + 1, 6), first=first, step=True,
                                   fresh=depth == 0)
            nodes += part["nodes"]  # type: ignore[operator]
            depth, first = part["depth"], part["move"]  # type: ignore[assignment]
            if status != DEEPEN_STEP:
                break
            assert depth < 6
        assert status == DEEPEN_MAX_DEPTH and calls == 6  # one iteration per call
        assert {**part, "nodes": nodes} == whole


def test_stops_at_the_end_of_the_game() -> None:
    pos = parse_position(
        "XXXXXXXXOOOOOOOOXXXXXXXXOOOOOOOOXXXXXXXXOOOOOOOOXXXXXXXXOOOOO--- X")
    status, report = _deepen(pos, (1, 20))
    assert status == DEEPEN_GAME_END and report["depth"] == 3


def test_node_limit_and_soft_deadline_stop_between_iterations() -> None:
    pos = MIDGAME[0]
    _, two = _deepen(pos, (1, 2))
    status, report = _deepen(pos, (1, 8), node_limit=two["nodes"])  # type: ignore[arg-type]
    assert status == DEEPEN_OUT_OF_NODES and report["depth"] == 2
    status, report = _deepen(pos, (1, 8), soft_deadline=time.monotonic_ns() - 1)
    assert status == DEEPEN_OUT_OF_TIME and report["depth"] == 1


def test_a_raised_stop_flag_aborts_the_first_iteration() -> None:
    status, report = _deepen(MIDGAME[1], (1, 8), stop=1)
    assert status == DEEPEN_ABORTED
    assert report["depth"] == 0 and report["abort_move"] == -1


def test_an_aborted_iteration_reports_the_line_of_the_better_move_it_proved() -> None:
    """An iteration stopped after a move other than the first became its best reports that
    move's line at the new depth, as a finished iteration would have (it reported the move
    alone). The same search stopped one node before its end has done the same work."""
    checked = 0
    for pos in MIDGAME:
        _, best = _deepen(pos, (6, 6))
        other = next(sq for sq in legal_moves(pos) if sq != best["move"])
        _, whole = _deepen(pos, (6, 6), first=other)  # the other move searched first
        if whole["move"] == other:
            continue
        status, cut = _deepen(pos, (6, 6), first=other,
                              node_limit=whole["nodes"] - 1)  # type: ignore[operator]
        assert status == DEEPEN_ABORTED and cut["depth"] == 0
        if cut["abort_move"] != whole["move"]:
            continue  # the best move was the last searched: nothing proved it before the end
        assert cut["abort_pv"] == whole["pv"] and len(whole["pv"]) > 1  # type: ignore[arg-type]
        checked += 1
    assert checked >= 2
