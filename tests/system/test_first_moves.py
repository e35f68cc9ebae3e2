"""A new worker's first moves are searched as well as its later ones.

A worker's searching thread allocated its search tables (32 MiB for Othello) on its first
search, and faulted them in inside that move's time: at 100 ms a move, ``arena-strong``'s
first move on each of three new workers reached depth 1 (5 to 11 nodes) where its later
moves reached 9 to 12. Real processes: `arena up`'s launcher with two new match workers,
and a match that keeps its search trees (its search returns between iterations, so the
lost time showed at once); and the analysis pool's first search."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from arena.engine.othello import PRESETS, START_TEXT
from arena.v1 import common_pb2, match_pb2
from tests.support.bots import builtin_bot, match_config
from tests.support.stacks import launcher, stack_client

pytestmark = pytest.mark.slow


def test_the_first_moves_on_new_workers_have_their_whole_time(tmp_path: Path) -> None:
    with launcher(home=tmp_path / "arena", workers=2,
                  env={"ARENA_WARM_GAMES": "othello"}) as stack:
        sdk = stack_client(stack, stack.admin_token)
        builtin_bot(sdk, "strong-black", PRESETS["arena-strong"])
        builtin_bot(sdk, "strong-white", PRESETS["arena-strong"])
        created = sdk.create_match(match_config("strong-black", "strong-white",
                                                move_time_ms=100, capture_trees=True))
        # The analysis pool's server threads too: its first search, 100 ms with its tree.
        analysis = stack_client(stack, stack.admin_token, engine=stack.target("analyst"))
        analysed = analysis.analyze(
            common_pb2.Position(game=common_pb2.GameSpec(kind=common_pb2.GAME_KIND_OTHELLO),
                                text=START_TEXT),
            engine_config=PRESETS["arena-strong"], tree_node_budget=2000,
            limits=common_pb2.SearchLimits(time_ms=100)).search
        deadline = time.monotonic() + 180
        while (match := sdk.get_match(created.id)).status != match_pb2.MATCH_STATUS_FINISHED:
            assert time.monotonic() < deadline, "the match did not finish in 180 s"
            time.sleep(0.2)
    searched = [record for record in match.moves if record.move.text != "pass"]
    firsts: dict[str, list[match_pb2.MoveRecord]] = {}
    for record in searched:
        firsts.setdefault(record.worker_id, []).append(record)
    shown = {worker: [r.search.depth for r in records[:3]] for worker, records in firsts.items()}
    print(f"depths of each worker's first three moves: {shown}; the first analysis: "
          f"depth {analysed.depth}, {analysed.nodes} nodes")
    assert analysed.depth >= 6 and analysed.nodes >= 10_000, analysed
    assert firsts, shown  # every worker that played (in practice both) is checked
    for worker, records in firsts.items():
        for record in records[:3]:  # the midgame: a 100 ms search reaches depth 9 to 12
            assert record.search.depth >= 6 and record.search.nodes >= 10_000, (worker, shown)
