"""Log lines: JSON with the ids that apply, text with the same ids for people, and bad
settings refused with one line."""

from __future__ import annotations

import io
import json
import logging
import subprocess
import sys
from collections.abc import Iterator

import pytest
import redis
from arena.clients.sdk import ArenaClient
from arena.services.common.egress import EgressPolicy
from arena.services.common.logs import bind, log_context, move_fields, setup_logging
from arena.services.worker import telemetry
from arena.services.worker.bots import BotRunner

from arena.engine.api import StopFlag
from arena.games import new_position
from arena.v1 import bot_service_pb2, bots_pb2, common_pb2, engine_pb2
from tests.conftest import Loops, NewMatch
from tests.support.bots import bot_server, builtin_bot, match_config, wait_finished

JOB = engine_pb2.MoveJob(job_id="m1/7/abcd", match_id="m1", ply=7,
                         bot=bots_pb2.BotVersion(spec=bots_pb2.BotSpec(name="lucy"), version=3))


@pytest.fixture
def root() -> Iterator[None]:
    logger = logging.getLogger()
    handlers, level = list(logger.handlers), logger.level
    yield
    logger.handlers[:] = handlers
    logger.setLevel(level)


def _lines(form: str, emit: object) -> list[str]:
    stream = io.StringIO()
    setup_logging("worker", "worker-3", "INFO", form, stream)
    assert callable(emit)
    emit()
    return stream.getvalue().splitlines()


def test_json_lines_carry_service_instance_and_the_move_ids(root: None) -> None:
    log = logging.getLogger("arena.test")

    def emit() -> None:
        log.info("answered move %d", 19, extra=move_fields(JOB, worker="worker-3"))
        with log_context(ladder_id="L1"):
            log.warning("inside")
        log.debug("not at INFO")
        try:
            raise ValueError("boom")
        except ValueError:
            log.exception("failed")

    first, inside, failed = (json.loads(line) for line in _lines("json", emit))
    assert first["msg"] == "answered move 19" and first["level"] == "INFO"
    assert (first["service"], first["instance"]) == ("worker", "worker-3")
    assert (first["match_id"], first["ply"], first["job_id"], first["bot"]) == (
        "m1", 7, "m1/7/abcd", "lucy@3")
    assert first["ts"].endswith("Z")
    assert inside["ladder_id"] == "L1" and "ladder_id" not in failed
    assert "ladder_id" not in first  # a job of no ladder (or from before jobs carried it)
    assert "ValueError: boom" in failed["exc"]


def test_text_lines_show_the_same_ids_after_the_message(root: None) -> None:
    log = logging.getLogger("arena.test")
    (line,) = _lines("text", lambda: log.info("answered", extra=move_fields(JOB)))
    assert " worker INFO arena.test: answered match_id=m1 ply=7 job_id=m1/7/abcd bot=lucy@3" \
        in line


FORGED = "2026-12-05 10:00:00,000 referee ERROR arena.services.referee.loop: forged"


def _events(lines: list[str]) -> list[str]:
    """The lines that start an event (the others are a message's continuation lines)."""
    return [line for line in lines if line[:1].isdigit()]


def test_text_from_elsewhere_cannot_forge_a_text_line_or_reach_a_terminal(root: None) -> None:
    log = logging.getLogger("arena.test")
    said = f"boom\n{FORGED}\r\x1b[2J\x1b]52;c;Y2xpcA==\x07"

    def emit() -> None:
        log.info("engine failed: %s", said, extra={"match_id": f"m1\n{FORGED}"})
        log.info("configuration:\n  %s", "\n  ".join(["a = 1", "b = 2"]))
        try:
            raise ValueError(said)
        except ValueError:
            log.exception("failed")

    lines = _lines("text", emit)
    assert len(_events(lines)) == 3  # the forged lines are not events
    assert not any(char in "".join(lines) for char in "\r\x1b\x07")
    assert lines[0].endswith("engine failed: boom match_id=m1\\n" + FORGED)
    assert lines[1] == f"  {FORGED}\\r\\x1b[2J\\x1b]52;c;Y2xpcA==\\x07"
    assert lines[3:5] == ["  a = 1", "  b = 2"]  # indented already: as they were


def test_an_external_bots_error_is_one_event_in_the_workers_text_log(root: None) -> None:
    """An external bot is its owner's program: its error's details reach the worker's log
    (the operator's whole reason for the failure), and they are the owner's words."""
    def hostile(request: bot_service_pb2.GetMoveRequest) -> bot_service_pb2.GetMoveResponse:
        raise RuntimeError(f"no\n{FORGED}\x1b[2J")

    stream = io.StringIO()
    setup_logging("worker", "worker-1", "INFO", "text", stream)
    runner = BotRunner(egress=EgressPolicy.parse("127.0.0.0/8"))
    with bot_server(hostile) as address:
        spec = bots_pb2.BotSpec(name="theirs", game=common_pb2.GAME_KIND_OTHELLO,
                                external=bots_pb2.ExternalEngine(address=address))
        job = engine_pb2.MoveJob(
            job_id="m1/0/ab", match_id="m1", game=common_pb2.GAME_KIND_OTHELLO,
            bot=bots_pb2.BotVersion(spec=spec, version=1), time_budget_ms=2000,
            position=common_pb2.Position(text=new_position("othello").to_text()))
        try:
            answer = runner.run(job, StopFlag())
        finally:
            runner.close()
    assert answer.result.error == engine_pb2.MOVE_ERROR_BOT_CRASHED
    lines = stream.getvalue().splitlines()
    at = next(i for i, line in enumerate(lines) if "arena.services.worker.bots" in line)
    assert f"external bot {address} of job m1/0/ab failed: UNKNOWN" in lines[at]
    assert lines[at + 1:] == [f"  {FORGED}\\x1b[2J"]


def test_a_thread_binds_its_match_once(root: None) -> None:
    import threading

    log = logging.getLogger("arena.test")
    stream = io.StringIO()
    setup_logging("referee", "referee-1", "INFO", "json", stream)

    def match_thread() -> None:
        bind(match_id="m9")
        log.info("one")
        log.info("two")

    thread = threading.Thread(target=match_thread)
    thread.start()
    thread.join()
    log.info("outside")
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [line.get("match_id") for line in lines] == ["m9", "m9", None]


@pytest.mark.parametrize(("variable", "value"), [("ARENA_LOG_LEVEL", "LOUD"),
                                                 ("ARENA_LOG_FORMAT", "xml")])
def test_a_bad_log_setting_stops_the_service_with_one_line(variable: str, value: str) -> None:
    done = subprocess.run([sys.executable, "-m", "arena.services.registry"],
                          env={"PATH": "/usr/bin:/bin", variable: value}, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"arena-registry: configuration error: {variable}={value!r}: expected one of "
        + (", ".join(("DEBUG", "INFO", "WARNING", "ERROR")) if "LEVEL" in variable
           else "auto, json, text")]


def test_json_lines_carry_no_character_a_terminal_acts_on(root: None) -> None:
    """JSON escapes only the controls below U+0020: DEL, the C1 controls (U+009B is a CSI
    on terminals that take 8-bit controls), bidi overrides and a lone surrogate (text
    decoded with surrogateescape, which no UTF-8 stream can write) went out raw."""
    log = logging.getLogger("arena.test")
    said = "a\x7fb\x9b2Jc\u202ed\udc80e\U000e0001f"
    (line,) = _lines("json", lambda: log.info("engine said: %s", said,
                                              extra={"match_id": said}))
    assert line.isprintable()
    event = json.loads(line)
    assert event["msg"] == f"engine said: {said}" and event["match_id"] == said
    for raw in ("\x7f", "\x9b", "\u202e", "\U000e0001"):
        assert raw not in line
    assert "\\u009b" in line and "\\udb40\\udc01" in line
    plain = "ünïcödé ok"
    (line,) = _lines("json", lambda: log.info(plain))
    assert json.loads(line)["msg"] == plain and plain in line  # printable text stays as it is


def test_the_worker_names_a_move_and_its_ladder_as_the_referee_does(
        root: None, loops: Loops, new_match: NewMatch, peers: ArenaClient,
        redis_client: redis.Redis) -> None:
    """One grep finds a move in both logs: the worker's line said ``answered move 18``
    where the referee's said ``recorded move c3``, and carried no ladder id (its job had
    none). A ladder's Othello game and a Gomoku game of no ladder, through a referee loop
    and a worker loop that share only Redis; the lines are the JSON formatter's."""
    stream = io.StringIO()
    setup_logging("arena", "test-1", "INFO", "json", stream)
    builtin_bot(peers, "lab0", {"evaluator": "lab", "look_ahead": 0})
    builtin_bot(peers, "sharp", {"evaluator": "sharpmoku", "depth": 1},
                common_pb2.GAME_KIND_GOMOKU)
    loops(referees=1, workers=1)
    laddered = new_match(match_config("lab0", "lab0", ladder_id="L1796115699688-47d37fbf"))
    gomoku = match_config("sharp", "sharp", kind=common_pb2.GAME_KIND_GOMOKU)
    gomoku.game.board_size = 9
    alone = new_match(gomoku)
    finished = [wait_finished(redis_client, m.id, timeout_s=120) for m in (laddered, alone)]
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    for match in finished:
        recorded = {line["job_id"]: line for line in lines if line.get("match_id") == match.id
                    and line["msg"].startswith("recorded move ")}
        answered = {line["job_id"]: line for line in lines if line.get("match_id") == match.id
                    and line["msg"].startswith("answered move ")}
        asked = [r for r in match.moves if r.move.text != "pass"]
        assert len(recorded) == len(answered) == len(asked) > 0
        for job_id, referee in recorded.items():
            worker = answered[job_id]
            assert referee["msg"].split()[2] == worker["msg"].split()[2], (referee, worker)
            assert worker.get("ladder_id") == referee.get("ladder_id")
        texts = [line["msg"].split()[2] for line in answered.values()]
        assert sorted(texts) == sorted(r.move.text for r in asked)
        assert all(line.get("ladder_id") == (match.config.ladder_id or None)
                   for line in answered.values())


def test_an_answer_that_is_no_square_of_the_board_is_named_by_its_number() -> None:
    job = engine_pb2.MoveJob(game=common_pb2.GAME_KIND_GOMOKU, position=common_pb2.Position(
        text=new_position("gomoku", size=9).to_text()))
    assert [telemetry.move_text(job, square) for square in (40, 81, -2)] == [
        "e5", "square 81", "square -2"]
