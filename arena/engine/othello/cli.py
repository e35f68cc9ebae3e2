"""What the engine tools do (perft, solve, train, probcut): the commands behind
``arena engine ...``, whose parser is ``arena.engine.tools`` (it imports this module, and
with it numba, only when a command runs). Every command takes --json.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path
from typing import Any

from arena.documents import read_text_document
from arena.engine.api import Limits
from arena.engine.othello import START_TEXT, perft, solve, warm_up
from arena.engine.othello.bitboard import legal_moves, parse_position, square_name
from arena.engine.tools import check_output
from arena.errors import InvalidArgumentError
from arena.formats.errors import FormatError
from arena.formats.obf import parse_obf_file


def _emit(args: argparse.Namespace, payload: dict[str, Any], text: str) -> None:
    print(json.dumps(payload) if args.json else text)


_PERFT_SAMPLE_S = 0.05  # the shallower count that times a deep one takes at least this


def _perft_growth(position: str, depth: int) -> tuple[int, float, list[float]]:
    """Count the depths below ``depth`` until one takes ``_PERFT_SAMPLE_S``: that depth,
    its seconds, and each depth's leaves over the depth's before it."""
    shallower, seconds, growths, before = 0, 0.0, [], 1
    while shallower < depth - 1 and seconds < _PERFT_SAMPLE_S:
        shallower += 1
        started = time.perf_counter()
        leaves = perft(position, shallower)
        seconds = time.perf_counter() - started
        growths.append(leaves / before)
        before = leaves
    return shallower, seconds, growths


def _duration(seconds: float) -> str:
    """``40 s``, ``12 min``, ``3.2 h``, ``9 days``, ``2,000 years``, ``10^31 years``."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 172_800:
        return f"{seconds / 3600:.1f} h"
    years = seconds / (365.25 * 86_400)
    if years < 2:
        return f"{seconds / 86_400:.0f} days"
    return f"{years:,.0f} years" if years < 1e6 else f"10^{math.log10(years):.0f} years"


def _check_perft_time(position: str, depth: int, limit_s: float) -> None:
    """Refuse a count that would not end within ``limit_s`` (0: no limit): the leaves grow
    by about the same factor each ply, so the count of a shallower depth and that factor
    foretell a deeper one's time. A count that ends, every line a finished game, grows
    by no factor and is never refused."""
    if not limit_s:
        return
    shallower, seconds, growths = _perft_growth(position, depth)
    growth = growths[-1] if growths else 1.0
    if growth <= 1 or depth <= shallower:
        return
    # The factor itself grows ply by ply (Othello's start: 8.2 at depth 10, 10.3 at 14):
    # it goes on growing by its last step.
    step = max(0.0, growth - growths[-2]) if len(growths) > 1 else 0.0
    # A ply past the last empty square is a finished game's: it multiplies nothing.
    empties = parse_position(position).empties()
    log_s, fits = math.log(max(seconds, 1e-9)), shallower
    for ply in range(1, min(depth, empties) - shallower + 1):
        log_s += math.log(growth + ply * step)
        if log_s <= math.log(limit_s):
            fits = shallower + ply
        elif log_s > 700:  # past any duration worth saying more exactly
            break
    if fits >= min(depth, empties):
        return
    raise InvalidArgumentError(
        f"perft {depth} would take about {_duration(math.exp(min(log_s, 700.0)))} here "
        f"(perft {shallower} took {seconds:.2f} s, and each ply counts about {growth:.1f} "
        f"times the leaves of the one before, more at each ply), more than --max-time "
        f"{limit_s:g} s allows: depth {fits} fits; give a longer --max-time, or 0 for no "
        "limit")


def _cmd_perft(args: argparse.Namespace) -> int:
    position = START_TEXT if args.position == "start" else args.position
    if args.depth < 0:
        raise InvalidArgumentError(f"--depth must be 0 or more, got {args.depth}")
    if not 0 <= args.max_time < math.inf:  # NaN fails this too
        raise InvalidArgumentError(f"--max-time must be 0 (no limit) or more seconds, got "
                                   f"{args.max_time}")
    perft(position, 1)  # load the compiled kernel before the clock starts
    _check_perft_time(position, args.depth, args.max_time)
    started = time.perf_counter()
    divided: list[dict[str, Any]] = []
    if args.divide and args.depth > 0:
        root = parse_position(position)
        for move in legal_moves(root):
            after = root.play(move).to_text()
            divided.append({"move": square_name(move), "leaves": perft(after, args.depth - 1)})
            if not args.json:  # as each root move ends: the progress of a long count
                print(f"{divided[-1]['move']}: {divided[-1]['leaves']}", flush=True)
        leaves = sum(row["leaves"] for row in divided) or perft(position, args.depth)
    else:
        leaves = perft(position, args.depth)
    seconds = time.perf_counter() - started
    rate = leaves / seconds if seconds > 0 else 0.0
    payload = {"depth": args.depth, "leaves": leaves, "seconds": seconds, "leaves_per_s": rate}
    if args.divide:
        payload["divide"] = divided
    _emit(
        args,
        payload,
        f"perft {args.depth}: {leaves} leaves in {seconds:.3f} s ({rate / 1e6:.1f} M leaves/s)",
    )
    return 0


def _read_obf(path: Path) -> list[tuple[str, int | None]]:
    """Each position of an OBF file and the best score it lists (``None``: none listed)."""
    text = read_text_document(path, "OBF file")  # about 13,000 positions at most
    try:
        positions = parse_obf_file(text)
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
        position = parse_position(text)
        if expected is None:
            matches = None
        elif args.wld:
            matches = (result.score > 0) - (result.score < 0) == (expected > 0) - (expected < 0)
        else:
            matches = result.score == expected
        rows.append(
            {
                "index": index,
                "empties": position.empties(),
                "score": result.score,
                # a game over has no move to play ('PA', a pass, was shown)
                "move": square_name(result.move) if legal_moves(position) else "-",
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


_OTHELLO_TRAIN = {"solve_empties": 14, "stages": 6, "ridge": 5.0, "window": 3,
                  "iterations": 200}
_GOMOKU_TRAIN = {"l2", "hidden", "board", "starts", "folds", "teacher", "catalog",
                 "teacher_scale", "teacher_ms", "keep_positions", "positions", "records"}
# Both games: how the self-play games are played.
_GAMES = {"games": 200, "seed": 1, "depth": 4, "random_moves": 2}
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
            raise ValueError(f"{_option(name)} does not apply to {args.game}")
    if not 0 < args.holdout < 1:
        raise ValueError(f"--holdout must be between 0 and 1, got {args.holdout:g}")
    cores = os.cpu_count() or 1
    if not 1 <= args.jobs <= cores:
        raise ValueError(f"--jobs must be in 1..{cores} (this machine's cores), got {args.jobs}")
    check_output(args.output, ".npz" if args.game == "othello" else ".json", args.force)
    if args.game == "gomoku" and args.positions is not None:
        made = {*_GAMES, "teacher", "catalog", "teacher_scale", "teacher_ms", "keep_positions",
                "records"}
        given = [_option(name) for name in sorted(made) if getattr(args, name) is not None]
        if given:
            raise ValueError(f"{', '.join(given)} cannot go with --positions: the positions "
                             "are made already (the file records how)")
        return
    if args.game == "gomoku" and args.keep_positions is not None:  # of records or games
        check_output(args.keep_positions, ".npz", args.force, "--keep-positions")
    if args.game == "gomoku" and args.records is not None:
        given = [_option(name) for name in sorted(_GAMES) if getattr(args, name) is not None]
        if given:
            raise ValueError(f"{', '.join(given)} cannot go with --records: the games are "
                             "the records'")
        return
    for name, value in _GAMES.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if not 2 <= args.games <= MAX_TRAINING_GAMES:
        raise ValueError(f"--games must be in 2..{MAX_TRAINING_GAMES} (some are held out), "
                         f"got {args.games}")
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
        raise ValueError(f"--ridge must be a finite number of 0 or more, got {args.ridge:g}")


def _option(name: str) -> str:
    return f"--{name.replace('_', '-')}"


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
        check_output(args.output, ".json", args.force)
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
