"""The worker's GTP client against a real (fake) engine process that writes down every line
it reads: a warm process is sent only the moves since the position it last saw, anything
else starts again from ``clear_board``, passes are replayed, and positions GTP cannot
express are refused before the engine is disturbed."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest
from arena.services.worker.engines.client import PlayLimits
from arena.services.worker.engines.failures import EngineFailure, FailureReason
from arena.services.worker.engines.pool import EnginePool
from arena.services.worker.engines.sandbox import Sandbox

from arena.games import PASS, OthelloBoard
from tests.protocol_engines.conftest import FakeSpec

pytestmark = pytest.mark.usefixtures("no_orphans")
LIMITS = PlayLimits(5000)


@pytest.fixture
def sandbox(sandbox: Sandbox) -> Sandbox:
    """The shared sandbox without the engines' views of their own: the fake engine writes
    what it reads into a file of the test's, which its view would show read-only."""
    return Sandbox(replace(sandbox.protections, view=False), sandbox.root)


def commands_read(log: Path) -> list[str]:
    return [line.split()[0] for line in log.read_text().splitlines()]


def play_game(pool: EnginePool, spec_maker: FakeSpec, log: Path, seed: int
              ) -> tuple[OthelloBoard, list[int]]:
    """A whole game: the engine Black, random moves for White. Returns the board and the
    plies at which the engine was asked (not its forced passes)."""
    rng = random.Random(seed)
    board, asked = OthelloBoard(), []
    spec = spec_maker("gtp", "log", str(log))
    while not board.is_game_over():
        if board.turn.name == "BLACK":
            if board.legal_moves() != [PASS]:
                asked.append(board.ply)
            move = pool.play(spec, board.to_text(), board.move_stack, LIMITS).move
        else:
            move = rng.choice(board.legal_moves())
        board.push(move)
    return board, asked


def test_a_warm_engine_is_sent_only_the_moves_since_its_last_answer(
        sandbox: Sandbox, fake_spec: FakeSpec, tmp_path: Path) -> None:
    log = tmp_path / "read.log"
    pool = EnginePool(sandbox)
    try:
        for seed in range(200):  # a game with a pass before the engine's last move
            log.write_text("")
            board, asked = play_game(pool, fake_spec, log, seed)
            if PASS in board.move_stack[:asked[-1]]:
                break
        else:
            raise AssertionError("no game with a pass in 200 seeds")
        assert pool.stats.starts == 1
    finally:
        pool.close()
    read = log.read_text().splitlines()
    # Once: the handshake's (first game) or the switch from the previous game.
    assert [line for line in read if line == "clear_board"] == ["clear_board"]
    assert sum(line.startswith("genmove") for line in read) == len(asked)
    # Each request sends the moves since the engine's last answer, its own move excepted:
    # every move before the last request, once, the engine's answers never.
    played = [line for line in read if line.startswith("play")]
    assert len(played) == asked[-1] - (len(asked) - 1)
    assert any(line.endswith(" pass") for line in played)


def test_another_game_starts_again_from_clear_board(sandbox: Sandbox, fake_spec: FakeSpec,
                                                    tmp_path: Path) -> None:
    log = tmp_path / "read.log"
    spec = fake_spec("gtp", "log", str(log))
    first = OthelloBoard()
    for move in ("f5", "f6", "e6", "f4"):
        first.push_str(move)
    other = OthelloBoard()
    other.push_str("d3")
    pool = EnginePool(sandbox)
    try:
        pool.play(spec, first.to_text(), first.move_stack, LIMITS)
        log.write_text("")
        pool.play(spec, other.to_text(), other.move_stack, LIMITS)  # an unrelated game
        log_other = log.read_text().splitlines()
        log.write_text("")
        pool.play(spec, first.to_text(), first.move_stack, LIMITS)  # back to the first
        log_first = log.read_text().splitlines()
        assert pool.stats.starts == 1
    finally:
        pool.close()
    assert log_other == ["clear_board", "play b d3", "genmove w"]
    assert log_first == ["clear_board", "play b f5", "play w f6", "play b e6", "play w f4",
                         "genmove b"]


def test_positions_gtp_cannot_express_are_refused_before_the_engine(
        sandbox: Sandbox, fake_spec: FakeSpec, tmp_path: Path) -> None:
    log = tmp_path / "read.log"
    spec = fake_spec("gtp", "log", str(log))
    after_f5 = OthelloBoard()
    after_f5.push_str("f5")
    international = OthelloBoard("international")
    pool = EnginePool(sandbox)
    try:
        pool.play(spec, after_f5.to_text(), after_f5.move_stack, LIMITS)
        before = log.read_text()
        for text, history in ((after_f5.to_text(), []),  # no moves: a custom start
                              (international.to_text(), []),
                              (after_f5.to_text(), [37, 37]),
                              ("not a board", [])):
            with pytest.raises(ValueError):
                pool.play(spec, text, history, LIMITS)
        assert log.read_text() == before  # the engine heard nothing
        pool.play(spec, OthelloBoard().to_text(), [], LIMITS)
        assert pool.stats.starts == 1
    finally:
        pool.close()


def test_the_clock_option_tells_each_moves_time_in_whole_seconds(
        sandbox: Sandbox, fake_spec: FakeSpec, tmp_path: Path) -> None:
    log = tmp_path / "read.log"
    spec = fake_spec("gtp", "log", str(log)).with_options({"clock": True})
    board = OthelloBoard()
    pool = EnginePool(sandbox)
    try:
        for limit_ms in (2500, 2999, 700):
            board.push(pool.play(spec, board.to_text(), board.move_stack,
                                 PlayLimits(limit_ms)).move)
            board.push(board.legal_moves()[0])
    finally:
        pool.close()
    told = [line for line in log.read_text().splitlines() if line.startswith("time")]
    assert told == ["time_settings 0 2 1", "time_left b 2 1", "time_left b 2 1",
                    "time_settings 0 0 1", "time_left b 0 1"]


def test_a_refused_play_leaves_the_engine_in_step(sandbox: Sandbox, fake_spec: FakeSpec
                                                  ) -> None:
    """The refusal is read with every other response of that move, so the next move
    finds no late answer: it starts again from clear_board and gets a legal move."""
    spec = fake_spec("gtp", "refuseplay")
    board = OthelloBoard()
    board.push_str("f5")
    pool = EnginePool(sandbox)
    try:
        with pytest.raises(EngineFailure) as caught:
            pool.play(spec, board.to_text(), board.move_stack, LIMITS)
        assert caught.value.reason is FailureReason.REFUSED
        assert "'play b f5' with ? I do not like that move" in caught.value.detail
        for _ in range(3):
            answer = pool.play(spec, board.to_text(), board.move_stack, LIMITS)
            assert board.is_legal(answer.move)
        assert pool.stats.starts == 1
    finally:
        pool.close()
