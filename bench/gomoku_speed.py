"""Gomoku engine speed and tactics, paired against a baseline revision in the same run.

    python bench/gomoku_speed.py [--baseline REV] [--rounds 5] [--bot PRESET]

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
  within 1 s of CPU time, and how long it took.

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
# Balanced opening 2 of the shared list: a quiet position where the search runs 1 s.
MIDGAME = [192, 159, 158, 143, 160, 178, 148, 190, 174]


def workload() -> dict[str, Any]:
    from bench.gomoku_match import load_openings
    from tests.engine.gomoku.positions import TACTICS

    return {
        "openings": load_openings(),
        "tactics": [{"name": t.name, "moves": t.moves, "rule": t.rule}
                    for t in TACTICS],
    }


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

    work = {**workload(), "bot": args.bot}
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
