"""International Reversi through the real stack (issue 15, item 1): a ladder on the
``international`` opening suite, built-in bots of every engine family, played to the end by
real referee, ladder and worker processes. The bots place the four centre discs
themselves; every game must end normally and re-play legally through the rules library.
"""

from __future__ import annotations

import time

import redis
from arena.services.common.launcher import Launcher

from arena.engine.othello import PRESETS
from arena.games import new_position
from arena.v1 import common_pb2, ladder_pb2, match_pb2
from tests.support.bots import builtin_bot, replay_moves, wait_finished
from tests.system.conftest import stack_client

CENTRE = {27, 28, 35, 36}  # d4 e4 d5 e5
# One bot per built-in engine family, each at a small depth: the test is about the
# variant going through the services, not about strength.
BOTS = {
    "intl-kreversi": {**PRESETS["terra"], "depth": {"begin": 2, "middle": 2, "end": 3}},
    "intl-lab": dict(PRESETS["lab-intermediate"]),
    "intl-arena": {**PRESETS["arena-fast"], "depth": 3, "endgame_empties": 8},
}


def _run_ladder(services: Launcher) -> tuple[ladder_pb2.LadderInfo, list[str]]:
    with stack_client(services) as sdk:
        for name, config in BOTS.items():
            builtin_bot(sdk, name, config)
        created = sdk.create_ladder(ladder_pb2.LadderConfig(
            name="international", game=common_pb2.GameSpec(kind=common_pb2.GAME_KIND_OTHELLO),
            bots=[common_pb2.BotRef(name=name) for name in BOTS],
            format=ladder_pb2.LADDER_FORMAT_ROUND_ROBIN, games_per_pairing=2,
            opening_suite="international", seed=7,
            time_control=common_pb2.TimeControl(move_time_ms=1000)))
        deadline = time.monotonic() + 120
        while (ladder := sdk.get_standings(created.id).ladder).status in (
                ladder_pb2.LADDER_STATUS_RUNNING, ladder_pb2.LADDER_STATUS_UNSPECIFIED):
            assert time.monotonic() < deadline, f"ladder stuck at {ladder.games_done} games"
            time.sleep(0.2)
        return ladder, list(ladder.match_ids)


def test_an_international_ladder_of_builtin_bots(redis_client: redis.Redis,
                                                 services: Launcher) -> None:
    services.spawn("referee", "referee-1")
    services.spawn("ladder", "ladder-1")
    for name in ("worker-1", "worker-2"):
        services.spawn("worker", name, timeout_s=300)  # warm-up compiles on a busy machine
    ladder, match_ids = _run_ladder(services)

    assert ladder.status == ladder_pb2.LADDER_STATUS_FINISHED
    assert ladder.config.game.variant == "international"
    assert (ladder.games_total, ladder.games_done, ladder.games_void) == (6, 6, 0)
    empty_board = new_position("othello", "international").to_text()
    for match_id in match_ids:
        match = wait_finished(redis_client, match_id, 30)
        assert match.result.termination == match_pb2.TERMINATION_NORMAL, (match_id, match.result)
        assert match.config.game.variant == "international"
        assert match.start_position == empty_board
        replay_moves(match)  # every move legal, positions as recorded, the game over
        opening = match.moves[:4]
        assert {r.move.square for r in opening} == CENTRE, match_id
        assert [r.color for r in opening] == [common_pb2.COLOR_BLACK, common_pb2.COLOR_WHITE] * 2
    played = {(m.black.name, m.white.name) for m in
              (wait_finished(redis_client, i, 1) for i in match_ids)}
    assert played == {(a, b) for a in BOTS for b in BOTS if a != b}  # colour-swapped pairs
