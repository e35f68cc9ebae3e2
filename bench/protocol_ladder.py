"""Protocol engines in a ladder: what the protocol path adds to a move as the referee times
it, and how often a warm engine process answers.

A stack (``arena up``'s launcher, two match workers offering Arena's own bots as NBoard and
Gomocup executables) plays one round-robin ladder per game between the same bot twice: as
a protocol bot (``arena-nboard`` / ``pbrain-arena`` in their sandbox) and as a built-in bot
with the very same configuration and fixed depth, so both play the same searches. The
referee's time of every move (its ``started`` entry to the answer, both on the Redis
clock) is compared: the difference of the medians is what the protocol path adds in a
ladder. The reuse rate comes from the workers' own counters
(``arena_protocol_engine_moves_total{warm}``), scraped at the end. The shared cache is off,
so the built-in bot searches every move as the protocol bot does.

.venv/bin/python bench/protocol_ladder.py [--games 8] [--depth 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import urllib.request
from pathlib import Path
from tempfile import TemporaryDirectory

from arena.clients.sdk import ArenaClient
from arena.services.common.launcher import Launcher
from prometheus_client.parser import text_string_to_metric_families

from arena.bots.spec import config_to_struct
from arena.engine.othello import PRESETS
from arena.v1 import bots_pb2, common_pb2, ladder_pb2, match_pb2

MOVE_TIME_MS = 60_000  # never binding: every search stops at its depth
OTHELLO = common_pb2.GAME_KIND_OTHELLO
GOMOKU = common_pb2.GAME_KIND_GOMOKU


def catalog(folder: Path, depth: int) -> tuple[Path, dict[str, object]]:
    """The engines' catalog, and the Othello configuration both Othello bots play."""
    othello = {**PRESETS["arena-fast"], "depth": depth, "time_ms": MOVE_TIME_MS,
               "endgame_empties": 8}
    (folder / "nboard.json").write_text(json.dumps(othello))
    path = folder / "engines.toml"
    path.write_text(
        '[engines.nboard-arena]\ngames = ["othello"]\nprotocol = "nboard"\n'
        f'command = ["arena-nboard", "--config", "@{folder / "nboard.json"}"]\n'
        f"options = {{ depth = {depth} }}\n"
        '[engines.pbrain-arena]\ngames = ["gomoku"]\nprotocol = "gomocup"\n'
        f'command = ["pbrain-arena", "--preset", "arena-gomoku", "--depth", "{depth}"]\n')
    return path, othello


def register(sdk: ArenaClient, depth: int, othello: dict[str, object]) -> None:
    gomoku = {"evaluator": "arena-gomoku", "max_depth": depth}
    for name, kind, engine, config in [("proto-othello", OTHELLO, "nboard-arena", othello),
                                       ("proto-gomoku", GOMOKU, "pbrain-arena", gomoku)]:
        sdk.register_bot(bots_pb2.BotSpec(name=name, game=kind, protocol=bots_pb2.ProtocolEngine(
            engine=engine, options=config_to_struct({"depth": depth} if kind == OTHELLO
                                                    else {}))))
        sdk.register_bot(bots_pb2.BotSpec(
            name=name.replace("proto", "builtin"), game=kind,
            builtin=bots_pb2.BuiltinEngine(config=config_to_struct(config))))


def play_ladder(sdk: ArenaClient, kind: int, games: int, suite: str) -> list[match_pb2.Match]:
    prefix = "othello" if kind == OTHELLO else "gomoku"
    config = ladder_pb2.LadderConfig(
        name=f"protocol-{prefix}", game=common_pb2.GameSpec(kind=kind),
        bots=[common_pb2.BotRef(name=f"proto-{prefix}"),
              common_pb2.BotRef(name=f"builtin-{prefix}")],
        format=ladder_pb2.LADDER_FORMAT_ROUND_ROBIN, games_per_pairing=games, seed=7,
        opening_suite=suite, time_control=common_pb2.TimeControl(move_time_ms=MOVE_TIME_MS))
    ladder_id = sdk.create_ladder(config).id
    while sdk.get_standings(ladder_id).ladder.status != ladder_pb2.LADDER_STATUS_FINISHED:
        time.sleep(1.0)
    return [sdk.get_match(m) for m in sdk.get_standings(ladder_id).ladder.match_ids]


def move_times(matches: list[match_pb2.Match], bot: str) -> list[int]:
    return [r.time_ms for m in matches for r in m.moves if r.move.text != "pass"
            and (m.black if r.color == common_pb2.COLOR_BLACK else m.white).name == bot]


def engine_counts(running: Launcher) -> dict[str, float]:
    counts: dict[str, float] = {}
    addresses = running.manifest().get("metrics", {})
    assert isinstance(addresses, dict)
    for name, address in addresses.items():
        if not name.startswith("worker"):
            continue
        with urllib.request.urlopen(f"http://{address}/metrics", timeout=10) as reply:
            text = reply.read().decode()
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == "arena_protocol_engine_moves_total":
                    key = f"moves warm={sample.labels['warm']}"
                elif sample.name == "arena_protocol_engine_starts_total":
                    key = "starts"
                else:
                    continue
                counts[key] = counts.get(key, 0.0) + sample.value
    return counts


def report(matches: list[match_pb2.Match], prefix: str) -> None:
    unfinished = [m.id for m in matches if m.result.forfeited or
                  m.status != match_pb2.MATCH_STATUS_FINISHED]
    proto = move_times(matches, f"proto-{prefix}")
    builtin = move_times(matches, f"builtin-{prefix}")
    added = statistics.median(proto) - statistics.median(builtin)
    print(f"{prefix}: {len(matches)} games ({len(unfinished)} forfeited or unfinished), "
          f"{len(proto)} protocol moves, {len(builtin)} built-in moves")
    print(f"  move time as the referee measures it, median (mean): protocol "
          f"{statistics.median(proto):.1f} ms ({statistics.fmean(proto):.2f}), built-in "
          f"{statistics.median(builtin):.1f} ms ({statistics.fmean(builtin):.2f}); "
          f"added {added:+.1f} ms median, "
          f"{statistics.fmean(proto) - statistics.fmean(builtin):+.2f} ms mean")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=8, help="games per ladder (even)")
    parser.add_argument("--depth", type=int, default=3)
    args = parser.parse_args()
    with TemporaryDirectory(prefix="arena-bench-") as home:
        engines, othello = catalog(Path(home), args.depth)
        running = Launcher(home=Path(home) / "stack", workers=2, analysts=0, metrics=True,
                           engines=engines, env={"ARENA_SHARED_CACHE": "false"})
        with running, ArenaClient(registry=running.target("registry"),
                                  referee=running.target("referee"),
                                  ladder=running.target("ladder"),
                                  token=running.admin_token) as sdk:
            register(sdk, args.depth, othello)
            report(play_ladder(sdk, OTHELLO, args.games, "othello-balanced"), "othello")
            report(play_ladder(sdk, GOMOKU, args.games, "gomoku-balanced15"), "gomoku")
            counts = engine_counts(running)
    moves = counts.get("moves warm=yes", 0.0) + counts.get("moves warm=no", 0.0)
    print(f"engine processes: {moves:.0f} protocol moves, {counts.get('starts', 0):.0f} "
          f"processes started, reuse rate {counts.get('moves warm=yes', 0) / moves:.4f}"
          if moves else "no protocol move was played", file=sys.stdout)


if __name__ == "__main__":
    main()
