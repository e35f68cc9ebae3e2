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
from arena.services.common.logs import bind, log_context, move_fields, setup_logging

from arena.v1 import bots_pb2, engine_pb2

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
    assert "ValueError: boom" in failed["exc"]


def test_text_lines_show_the_same_ids_after_the_message(root: None) -> None:
    log = logging.getLogger("arena.test")
    (line,) = _lines("text", lambda: log.info("answered", extra=move_fields(JOB)))
    assert " worker INFO arena.test: answered match_id=m1 ply=7 job_id=m1/7/abcd bot=lucy@3" \
        in line


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
