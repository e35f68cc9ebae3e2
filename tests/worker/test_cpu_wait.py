"""The worker tells the referee how long a built-in bot's search waited for a CPU that other
processes held (``MoveResult.queued_ms``, the kernel's run-queue delay of its thread), so
that a busy machine does not make a move timed on CPU late on the wall clock."""

from __future__ import annotations

import os
import time

from arena.services.common.protocol.tcache import SharedSearchCache
from arena.services.worker.bots import BotRunner

from arena.bots.spec import config_to_struct
from arena.engine.api import StopFlag
from arena.engine.othello import PRESETS
from arena.games import new_position
from arena.v1 import bots_pb2, common_pb2, engine_pb2
from tests.support.load import cpu_hog


def _job() -> engine_pb2.MoveJob:
    spec = bots_pb2.BotSpec(name="strong", game=common_pb2.GAME_KIND_OTHELLO,
                            builtin=bots_pb2.BuiltinEngine(
                                config=config_to_struct(PRESETS["arena-strong"])))
    return engine_pb2.MoveJob(
        job_id="j", match_id="m", game=common_pb2.GAME_KIND_OTHELLO,
        bot=bots_pb2.BotVersion(spec=spec, version=1),
        position=common_pb2.Position(text=new_position("othello").to_text()),
        time_budget_ms=300, cpu_clock=True)


def test_a_search_reports_the_time_it_waited_for_a_cpu() -> None:
    runner = BotRunner(cache=SharedSearchCache(None), grace_ms=200)
    core = min(os.sched_getaffinity(0))
    mask = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {core})  # this thread only, beside three busy loops
    try:
        with cpu_hog(per_core=3, seconds=30, cores={core}):
            began = time.monotonic()
            busy = runner.run(_job(), StopFlag()).result
            wall_ms = (time.monotonic() - began) * 1000
    finally:
        os.sched_setaffinity(0, mask)
    assert busy.HasField("move")
    # The thread had about a quarter of its core: it waited about three times what it ran.
    assert busy.queued_ms > busy.cpu_ms > 0, busy
    assert busy.cpu_ms + busy.queued_ms <= wall_ms + 5
