"""Gomoku engine speed and tactics, paired against a baseline revision in the same run.

    python bench/gomoku_speed.py [--baseline REV] [--rounds 5] [--bot PRESET]
                                 [--vct-games FILE [--vct-every N]]

Each round runs the same workload once with this tree's engine and once with the
baseline's (``git archive REV``, unpacked into the temporary folder), each in a fresh
process, alternating which goes first: the machine's speed drifts between minutes, and
pairing cancels it. Prints per engine the medians over the rounds, and the median of
the per-round ratios (this tree / baseline):

- ``nodes/s``: arena-gomoku (``--bot``: another of its presets, such as
  ``arena-gomoku-board``) at fixed depth on the twelve balanced openings (CPU time of
  the searching thread, the nodes each engine counts);
- ``1 s depth``: the depth reached in 1 s of CPU time on a quiet middlegame;
- the tactics positions (``tests/engine/gomoku/positions.py``): solved (a proven win)
  within 1 s of CPU time, and how long it took;
- with ``--vct-games`` (games as ``bench/engine_strength.py --keep-games`` writes them,
  such as ``bench/data/gomoku-games-vs-rapfi.jsonl``: 48 games of version 10 against Rapfi
  at 100,000 nodes and 48 of version 11 against the full Rapfi, 4,766 positions): the
  threat search alone, a VCT of ``VCT_PLIES`` for the side to move in every position of
  the games (every ``--vct-every``-th: 4 takes 1,192 of those 4,766), within each of
  ``VCT_BUDGETS`` nodes: how many it finds, the nodes it searches in all and its CPU
  time. Counts and nodes do not depend on the machine.

Without ``--baseline`` it measures this tree only.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIXED_DEPTH = 7
VCT_PLIES = 15  # the presets' root VCT
VCT_BUDGETS = (20_000, 300_000)  # the presets' root VCT budget, and fifteen times it
# Balanced opening 2 of the shared list: a quiet position where the search runs 1 s.
MIDGAME = [192, 159, 158, 143, 160, 178, 148, 190, 174]


def workload(vct_games: list[str], vct_every: int = 1) -> dict[str, Any]:
    from bench.gomoku_match import load_openings
    from tests.engine.gomoku.positions import TACTICS

    return {
        "openings": load_openings(),
        "tactics": [{"name": t.name, "moves": t.moves, "rule": t.rule}
                    for t in TACTICS],
        "vct_positions": [p for path in vct_games
                          for p in game_positions(Path(path))][::vct_every],
    }


def game_positions(path: Path) -> list[list[int]]:
    """Every position of the kept games in ``path`` (``engine_strength.py --keep-games``,
    read and checked by ``gomoku_losses.read_games``) after their openings: the moves
    before the side to move's turn."""
    from bench.gomoku_losses import read_games

    positions = []
    for game in read_games(path):
        played = game["opening"] + game["moves"]
        positions += [played[:k] for k in range(len(game["opening"]), len(played))]
    return positions


def vct_figures(positions: list[list[int]]) -> dict[str, float]:
    """The threat search alone on each position, at each budget (see the docstring)."""
    import time

    from arena.engine.api import StopFlag
    from arena.engine.gomoku.board import FREESTYLE
    from arena.engine.gomoku.bots import thread_tables
    from arena.engine.gomoku.control import CTX_NODES, new_context
    from arena.engine.gomoku.patterns import setup
    from arena.engine.gomoku.root import search_threats

    figures: dict[str, float] = {}
    tables = thread_tables(20)
    stop = StopFlag()
    for budget in VCT_BUDGETS:
        found = nodes = 0
        started = time.thread_time()
        for moves in positions:
            cells, pat, st, table = setup(15, FREESTYLE, moves)
            ctx = new_context(0, 0, 0, salt=tables.next_salt())
            found += search_threats(cells, pat, st, table, 1 + len(moves) % 2, VCT_PLIES,
                                    budget, False, tables.memo, tables.work, ctx,
                                    stop.array) > 0
            nodes += int(ctx[CTX_NODES])
        name = f"VCT {budget // 1000}k"
        figures[f"{name} found"] = found
        figures[f"{name} Mnodes"] = nodes / 1e6
        figures[f"{name} s"] = time.thread_time() - started
    return figures


def probe(work: dict[str, Any]) -> dict[str, float]:
    """Run the workload with whichever ``arena`` is first on the path; figures by name."""
    import time

    from arena.engine.api import Limits
    from arena.engine.gomoku import PRESETS, choose_move, warm_up

    warm_up()
    arena = PRESETS[work.get("bot", "arena-gomoku")]
    figures: dict[str, float] = {}
    nodes = cpu = 0.0
    for moves in work["openings"]:
        started = time.thread_time()
        result = choose_move(15, "freestyle", moves, arena, Limits(depth=FIXED_DEPTH))
        cpu += time.thread_time() - started
        nodes += result.nodes
    figures["nodes/s"] = nodes / cpu
    figures[f"depth {FIXED_DEPTH} total s"] = cpu
    result = choose_move(15, "freestyle", MIDGAME, arena, Limits(time_ms=1000, clock="cpu"))
    figures["1 s depth"] = result.depth
    for case in work["tactics"]:
        started = time.thread_time()
        result = choose_move(15, case["rule"], case["moves"], arena,
                             Limits(time_ms=1000, clock="cpu"))
        spent = time.thread_time() - started
        solved = result.exact and result.score > 0
        figures[f"{case['name']} solved"] = float(solved)
        figures[f"{case['name']} ms"] = spent * 1000
    if work["vct_positions"]:
        figures.update(vct_figures(work["vct_positions"]))
    return figures


def run_probe(tree: Path, work: dict[str, Any]) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.setdefault("ARENA_SHARED_DATA", str(ROOT.parent / "shared" / "data"))
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--probe"], input=json.dumps(work),
        env=env, cwd=tree, capture_output=True, text=True, check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"probe in {tree} failed:\n{done.stderr}")
    figures: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return figures


def report(runs: dict[str, list[dict[str, float]]]) -> None:
    names = list(runs)
    keys = list(runs[names[0]][0])
    print(f"{'':28}" + "".join(f"{name:>14}" for name in names)
          + ("   ratio (median of rounds)" if len(names) == 2 else ""))
    for key in keys:
        medians = [statistics.median(run.get(key, float("nan")) for run in runs[name])
                   for name in names]
        line = f"{key:28}" + "".join(f"{value:14,.2f}" for value in medians)
        if len(names) == 2:
            ratios = [a[key] / b[key] for a, b in zip(*runs.values(), strict=True)
                      if b.get(key) and key in a]
            line += f"   {statistics.median(ratios):.3f}" if ratios else ""
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", help="git revision to compare with")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--bot", default="arena-gomoku", help="the arena-gomoku preset to measure")
    parser.add_argument("--vct-games", action="append", default=[], metavar="FILE",
                        help="kept games whose positions the VCT search is run on")
    parser.add_argument("--vct-every", type=int, default=1, metavar="N",
                        help="run the VCT search on every N-th of those positions only")
    parser.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        print(json.dumps(probe(json.loads(sys.stdin.read()))))
        return
    sys.path.insert(0, str(ROOT))  # this tree (the probes: the tree each measures)
    from arena.engine.gomoku.config import ARENA_GOMOKU, PRESETS
    from bench.gomoku_match import export_revision

    presets = [name for name, config in PRESETS.items() if config["evaluator"] == ARENA_GOMOKU]
    if args.bot not in presets:
        parser.error(f"--bot: {args.bot!r} is not an arena-gomoku preset ({', '.join(presets)})")

    for path in args.vct_games:
        if not Path(path).is_file():
            parser.error(f"--vct-games: no file {path}")
    if args.vct_every < 1:
        parser.error(f"--vct-every: {args.vct_every} is not a positive count")
    work = {**workload(args.vct_games, args.vct_every), "bot": args.bot}
    trees = {"this tree": ROOT}
    if args.baseline:
        trees[args.baseline[:12]] = export_revision(args.baseline)
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for round_ in range(args.rounds):
        order = list(trees) if round_ % 2 == 0 else list(reversed(trees))
        for name in order:
            runs[name].append(run_probe(trees[name], work))
        print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    report(runs)


if __name__ == "__main__":
    main()
