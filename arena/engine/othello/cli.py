"""Engine tools on the command line, in-process (no services): perft, solve, analyze, train
(Othello and Gomoku), probcut.

Mounted by the main CLI as ``arena engine ...`` through ``add_engine_commands``; also runs
alone: ``python -m arena.engine.othello.cli perft --depth 6``. Every command takes --json.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.engine.api import Limits, SearchResult
from arena.engine.interrupt import stops_at_once
from arena.engine.othello import PRESETS, START_TEXT, choose_move, perft, solve, warm_up
from arena.engine.othello.bitboard import parse_position, square_name
from arena.errors import InvalidArgumentError
from arena.formats.errors import FormatError
from arena.formats.obf import parse_obf_file


def _emit(args: argparse.Namespace, payload: dict[str, Any], text: str) -> None:
    print(json.dumps(payload) if args.json else text)


def _cmd_perft(args: argparse.Namespace) -> int:
    position = START_TEXT if args.position == "start" else args.position
    perft(position, 1)  # load the compiled kernel before the clock starts
    started = time.perf_counter()
    leaves = perft(position, args.depth)
    seconds = time.perf_counter() - started
    rate = leaves / seconds if seconds > 0 else 0.0
    payload = {"depth": args.depth, "leaves": leaves, "seconds": seconds, "leaves_per_s": rate}
    _emit(
        args,
        payload,
        f"perft {args.depth}: {leaves} leaves in {seconds:.3f} s ({rate / 1e6:.1f} M leaves/s)",
    )
    return 0


def _read_obf(path: Path) -> list[tuple[str, int | None]]:
    """Each position of an OBF file and the best score it lists (``None``: none listed)."""
    try:
        positions = parse_obf_file(path.read_text())
    except FormatError as exc:
        raise InvalidArgumentError(f"{path}: {exc}") from None
    if not positions:
        raise InvalidArgumentError(f"{path}: no positions (OBF: one position a line)")
    return [(position.board.to_text(), position.best_score) for position in positions]


def _cmd_solve(args: argparse.Namespace) -> int:
    rows: list[dict[str, Any]] = []
    limits = Limits(time_ms=args.time_ms)
    warm_up()  # the kernels loaded before the first position's clock starts
    for index, (text, expected) in enumerate(_read_obf(Path(args.file)), start=1):
        result = solve(text, wld=args.wld, limits=limits)
        if expected is None:
            matches = None
        elif args.wld:
            matches = (result.score > 0) - (result.score < 0) == (expected > 0) - (expected < 0)
        else:
            matches = result.score == expected
        rows.append(
            {
                "index": index,
                "empties": parse_position(text).empties(),
                "score": result.score,
                "move": square_name(result.move),
                "expected": expected,
                "matches": matches,
                "nodes": result.nodes,
                "ms": round(result.elapsed_ms, 2),
                "pv": [square_name(m) for m in result.pv],
            }
        )
    total_ms = sum(r["ms"] for r in rows)
    total_nodes = sum(r["nodes"] for r in rows)
    all_match = all(r["matches"] is not False for r in rows)
    if args.json:
        print(
            json.dumps(
                {
                    "positions": rows,
                    "total_ms": total_ms,
                    "total_nodes": total_nodes,
                    "all_match": all_match,
                }
            )
        )
    else:
        print(
            f"{'#':>3} {'empt':>4} {'score':>5} {'move':>4} {'want':>5} {'ok':>3} "
            f"{'nodes':>12} {'ms':>10}"
        )
        for r in rows:
            ok = "-" if r["matches"] is None else "yes" if r["matches"] else "NO"
            want = "" if r["expected"] is None else f"{r['expected']:+d}"
            print(
                f"{r['index']:>3} {r['empties']:>4} {r['score']:>+5d} {r['move']:>4} "
                f"{want:>5} {ok:>3} {r['nodes']:>12} {r['ms']:>10.1f}"
            )
        print(
            f"total: {total_nodes} nodes, {total_ms / 1000:.2f} s, "
            f"{'all scores match' if all_match else 'SOME SCORES DIFFER'}"
        )
    return 0 if all_match else 1


def _bot_config(args: argparse.Namespace) -> dict[str, object]:
    if args.config:
        loaded = json.loads(
            Path(args.config[1:]).read_text() if args.config.startswith("@") else args.config
        )
        if not isinstance(loaded, dict):
            raise ValueError("--config must be a JSON object")
        return loaded
    if args.preset not in PRESETS:
        raise ValueError(f"unknown preset {args.preset!r}; one of {', '.join(PRESETS)}")
    return PRESETS[args.preset]


def _result_payload(result: SearchResult) -> dict[str, Any]:
    return {
        "move": square_name(result.move),
        "score": result.score,
        "depth": result.depth,
        "nodes": result.nodes,
        "nps": result.nps,
        "ms": round(result.elapsed_ms, 2),
        "exact": result.exact,
        "pv": [square_name(m) for m in result.pv],
    }


def _cmd_analyze(args: argparse.Namespace) -> int:
    position = START_TEXT if args.position == "start" else args.position
    limits = Limits(depth=args.depth, nodes=args.nodes, time_ms=args.time_ms)
    config = _bot_config(args)
    warm_up()  # loading the kernels took a 100 ms search's time: it answered at depth 0
    result = choose_move(position, config, limits, seed=args.seed)
    payload = _result_payload(result)
    kind = "exact" if result.exact else f"depth {result.depth}"
    _emit(
        args,
        payload,
        f"move {payload['move']} score {result.score:+d} ({kind}), "
        f"{result.nodes} nodes in {payload['ms']} ms ({result.nps} nodes/s)\n"
        f"pv {' '.join(payload['pv'])}",
    )
    return 0


_OTHELLO_TRAIN = {"solve_empties": 14, "stages": 6, "ridge": 5.0, "window": 3,
                  "iterations": 200}
_GOMOKU_TRAIN = {"l2"}
MAX_TRAINING_GAMES = 100_000
# Othello's ranges: (lowest, highest) of each integer option.
_OTHELLO_RANGES = {"depth": (1, 10), "solve_empties": (0, 24), "stages": (1, 61),
                   "window": (0, 60), "iterations": (1, 10_000)}


def _check_training(args: argparse.Namespace) -> None:
    """Refuse the other game's options and every value the training cannot use before a
    game is played: a bad ``--output`` found after an hour of self-play loses the hour.
    Fills in Othello's defaults."""
    foreign = _GOMOKU_TRAIN if args.game == "othello" else set(_OTHELLO_TRAIN)
    for name in sorted(foreign):
        if getattr(args, name) is not None:
            raise ValueError(f"--{name.replace('_', '-')} does not apply to {args.game}")
    if not 2 <= args.games <= MAX_TRAINING_GAMES:
        raise ValueError(f"--games must be in 2..{MAX_TRAINING_GAMES} (some are held out), "
                         f"got {args.games}")
    if not 0 < args.holdout < 1:
        raise ValueError(f"--holdout must be between 0 and 1, got {args.holdout:g}")
    cores = os.cpu_count() or 1
    if not 1 <= args.jobs <= cores:
        raise ValueError(f"--jobs must be in 1..{cores} (this machine's cores), got {args.jobs}")
    _check_output(args.output, ".npz" if args.game == "othello" else ".json")
    if args.game == "gomoku":
        return
    for name, default in _OTHELLO_TRAIN.items():
        if getattr(args, name) is None:
            setattr(args, name, default)
    for name, (low, high) in _OTHELLO_RANGES.items():
        if not low <= getattr(args, name) <= high:
            raise ValueError(f"--{name.replace('_', '-')} must be in {low}..{high} for othello, "
                             f"got {getattr(args, name)}")
    from arena.engine.othello.train import most_random_moves

    most = most_random_moves()
    if not 0 <= args.random_moves <= most:
        raise ValueError(f"--random-moves must be in 0..{most} for othello, "
                         f"got {args.random_moves}")
    if not (math.isfinite(args.ridge) and args.ridge >= 0):
        raise ValueError(f"--ridge must be a number of 0 or more, got {args.ridge:g}")


def _check_output(name: str, suffix: str) -> None:
    """The weights go to ``name`` with ``suffix``: its folder must exist and take files."""
    output = Path(name)
    if output.is_dir() or name.endswith(("/", os.sep)):
        raise ValueError(f"--output {name!r} is a folder; name a file in it")
    if output.suffix not in ("", suffix):
        raise ValueError(f"--output is a {suffix} file here, got {output.name!r}")
    folder = output.parent
    if not folder.is_dir():
        raise ValueError(f"--output's folder {str(folder)!r} does not exist")
    if output.with_suffix(suffix).is_dir():
        raise ValueError(f"--output {str(output.with_suffix(suffix))!r} is a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"--output's folder {str(folder)!r} is not writable")


def _cmd_train(args: argparse.Namespace) -> int:
    _check_training(args)
    if args.game == "gomoku":
        from arena.engine.gomoku.cli import train_command

        payload, text = train_command(args)
        _emit(args, payload, text)
        return 0
    from arena.engine.othello.train import GameSettings, save, train

    settings = GameSettings(args.depth, args.random_moves, args.solve_empties)

    def say(line: str) -> None:
        print(line, flush=True)

    result = train(
        args.games, args.seed, settings, args.stages, args.ridge, args.holdout, args.jobs,
        args.window, args.iterations, progress=None if args.json else say,
    )
    command = (
        f"arena engine train othello --games {args.games} --seed {args.seed} "
        f"--depth {args.depth} --random-moves {args.random_moves} "
        f"--solve-empties {args.solve_empties} --stages {args.stages} --ridge {args.ridge:g} "
        f"--window {args.window} --iterations {args.iterations} --holdout {args.holdout:g} "
        f"--output {Path(args.output).name}"
    )
    path = save(Path(args.output), result, {"command": command, "seed": args.seed})
    metrics = result.metrics
    lines = [f"wrote {path} and {path.with_suffix('.json')}", f"command: {command}"]
    for part in ("train", "heldout"):
        m = metrics[part]
        assert isinstance(m, dict)
        lines.append(
            f"{part:>8}: trained mse {m['trained']['mse']:.2f} mae {m['trained']['mae']:.2f}"
            f" | untrained mse {m['untrained']['mse']:.2f} mae {m['untrained']['mae']:.2f}"
        )
    _emit(args, {"output": str(path), "command": command, "metrics": metrics}, "\n".join(lines))
    return 0


def _cmd_probcut(args: argparse.Namespace) -> int:
    from arena.engine.othello.probcut import fit, save, table_path

    if args.output not in (None, "ship"):
        _check_output(args.output, ".json")
    table = fit(args.positions, args.seed, args.max_depth, args.weights)
    rows = table["rows"]
    assert isinstance(rows, list)
    lines = [f"command: {table['command']}", f"seconds: {table['seconds']}",
             "bucket depth shallow      a        b    sigma samples"]
    lines += [f"{r['bucket']:>6} {r['depth']:>5} {r['shallow']:>7} {r['a']:>6.3f} {r['b']:>8.1f}"
              f" {r['sigma']:>8.1f} {r['samples']:>7}{' pooled' if r['pooled'] else ''}"
              for r in rows]
    if args.output is not None:
        path = Path(args.output) if args.output != "ship" else table_path(args.weights)
        lines.append(f"wrote {save(table, path)}")
    _emit(args, table, "\n".join(lines))
    return 0


def add_tool_commands(sub: Any) -> None:
    perft_p = sub.add_parser("perft", help="count leaves N plies ahead (passes are moves)")
    perft_p.add_argument("--depth", type=int, required=True, help="plies")
    perft_p.add_argument("--position", default="start", help="position text or 'start'")
    perft_p.add_argument("--json", action="store_true", help="print JSON")
    perft_p.set_defaults(func=stops_at_once(_cmd_perft))

    solve_p = sub.add_parser("solve", help="exactly solve every position of an OBF file")
    solve_p.add_argument("file", help="OBF file: position, then MOVE:score; pairs")
    solve_p.add_argument("--wld", action="store_true", help="only win/loss/draw")
    solve_p.add_argument("--time-ms", type=int, default=None, help="limit per position")
    solve_p.add_argument("--json", action="store_true", help="print JSON")
    solve_p.set_defaults(func=stops_at_once(_cmd_solve))

    analyze_p = sub.add_parser("analyze", help="search a position with a bot and limits")
    analyze_p.add_argument("position", help="position text (quote it) or 'start'")
    analyze_p.add_argument("--preset", default="arena-strong", help="bot preset name")
    analyze_p.add_argument("--config", default=None, help="bot config JSON, or @file.json")
    analyze_p.add_argument("--depth", type=int, default=None, help="plies")
    analyze_p.add_argument("--time-ms", type=int, default=None)
    analyze_p.add_argument("--nodes", type=int, default=None)
    analyze_p.add_argument("--seed", type=int, default=0)
    analyze_p.add_argument("--json", action="store_true", help="print JSON")
    analyze_p.set_defaults(func=stops_at_once(_cmd_analyze))
    train_p = sub.add_parser(
        "train", help="train the pattern evaluator on self-play games (bounded, seeded)"
    )
    train_p.add_argument("game", choices=["othello", "gomoku"], help="the engine to train")
    train_p.add_argument("--games", type=int, default=200, help="self-play games")
    train_p.add_argument("--seed", type=int, default=1, help="seed of the games")
    train_p.add_argument(
        "--output", required=True, help="weights file (othello: .npz, .json beside; gomoku: .json)"
    )
    train_p.add_argument("--depth", type=int, default=4, help="self-play search depth (plies)")
    train_p.add_argument("--random-moves", type=int, default=2, help="random moves per game")
    train_p.add_argument(
        "--solve-empties", type=int, default=None,
        help="othello: self-play solves exactly from here (14)",
    )
    train_p.add_argument("--stages", type=int, default=None,
                         help="othello: weight sets by disc count (6)")
    train_p.add_argument("--ridge", type=float, default=None,
                         help="othello: L2 penalty of pattern weights (5)")
    train_p.add_argument("--window", type=int, default=None,
                         help="othello: discs a stage borrows each side (3)")
    train_p.add_argument("--iterations", type=int, default=None,
                         help="othello: conjugate-gradient steps (200)")
    train_p.add_argument("--l2", type=float, default=None,
                         help="gomoku: L2 penalty of the logistic regression (1e-4)")
    train_p.add_argument("--holdout", type=float, default=0.1, help="share of games held out")
    train_p.add_argument("--jobs", type=int, default=1, help="processes playing the games")
    train_p.add_argument("--json", action="store_true", help="print the metrics as JSON")
    train_p.set_defaults(func=_cmd_train)
    probcut_p = sub.add_parser(
        "probcut", help="fit ProbCut's table for a pattern weight set (bounded, seeded)"
    )
    probcut_p.add_argument("game", choices=["othello"], help="the engine to fit")
    probcut_p.add_argument("--positions", type=int, default=200, help="positions searched")
    probcut_p.add_argument("--seed", type=int, default=1, help="seed of the positions")
    probcut_p.add_argument("--max-depth", type=int, default=10, help="deepest search (plies)")
    probcut_p.add_argument("--weights", default="arena-pattern", help="pattern weight set")
    probcut_p.add_argument(
        "--output", default=None,
        help="table file (JSON), or 'ship' for the weight set's own (weights/NAME.probcut.json)",
    )
    probcut_p.add_argument("--json", action="store_true", help="print the table as JSON")
    probcut_p.set_defaults(func=_cmd_probcut)
    from arena.protocols.cli import add_protocol_commands  # engine nboard|gtp|gomocup

    add_protocol_commands(sub)


def add_engine_commands(subparsers: Any) -> None:
    """Mount ``engine perft|solve|analyze`` on a parent CLI's subparsers."""
    engine = subparsers.add_parser(
        "engine", help="Othello engine tools (in-process)", description=__doc__
    )
    add_tool_commands(engine.add_subparsers(dest="engine_command", required=True))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="arena engine", description=__doc__)
    add_tool_commands(parser.add_subparsers(dest="engine_command", required=True))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except (ValueError, OSError, TimeoutError) as exc:
        print(f"arena engine: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
