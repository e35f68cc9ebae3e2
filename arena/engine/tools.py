"""The engine tools' command line, in-process (no services): perft, solve, analyze, train
(Othello and Gomoku), probcut, balanced Gomoku openings, and Arena's bots as protocol
engines.

Mounted by the main CLI as ``arena engine ...`` (``add_tool_commands``); also runs alone:
``python -m arena.engine.tools perft --depth 6``. The commands themselves are in
``arena.engine.othello.cli``, imported when one runs: building this parser loads no numba,
so ``arena --help`` and every other command start without it.
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from arena.argtypes import integer, integer_in
from arena.documents import refuse_overwrite
from arena.engine.api import MAX_DEPTH, MAX_NODES, MAX_TIME_MS
from arena.engine.interrupt import stops_at_once
from arena.engine.teacher import TeacherFactory

PERFT_MAX_TIME_S = 600.0  # the longest count `perft` starts unless told otherwise


def check_output(name: str, suffix: str, force: bool, option: str = "--output") -> None:
    """``option`` writes to ``name`` with ``suffix``: its folder must exist and take files,
    and a file there is overwritten only with ``force`` (``--force``)."""
    output = Path(name)
    if output.is_dir() or name.endswith(("/", os.sep)):
        raise ValueError(f"{option} {name!r} is a folder; name a file in it")
    if output.suffix not in ("", suffix):
        raise ValueError(f"{option} is a {suffix} file here, got {output.name!r}")
    folder = output.parent
    if not folder.is_dir():
        raise ValueError(f"{option}'s folder {str(folder)!r} does not exist")
    if output.with_suffix(suffix).is_dir():
        raise ValueError(f"{option} {str(output.with_suffix(suffix))!r} is a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"{option}'s folder {str(folder)!r} is not writable")
    refuse_overwrite(output.with_suffix(suffix), force, option)


def checked_positive(option: str, value: float) -> float:
    """``value``, if it is a finite number above 0; else ``ValueError`` naming ``option``."""
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{option} must be a finite number above 0, got {value:g}")
    return value


def _command(name: str) -> Callable[[argparse.Namespace], int]:
    """The tool command ``name``, its module imported when it runs."""
    def run(args: argparse.Namespace) -> int:
        commands = importlib.import_module("arena.engine.othello.cli")
        return int(getattr(commands, f"_cmd_{name}")(args))
    return run


def _analyze(args: argparse.Namespace) -> int:
    from arena.engine.analyze import run  # the engines, only when it runs

    return run(args)


def _openings(args: argparse.Namespace) -> int:
    from arena.openings.balance import run  # the judge's pool, only when it runs

    return run(args)


def add_tool_commands(sub: Any, teacher: TeacherFactory | None = None) -> None:
    """The tool commands; ``teacher`` makes a catalog's engine a training's teacher (the
    ``arena`` command passes the worker's: the core imports no service)."""
    perft_p = sub.add_parser("perft", help="count leaves N plies ahead (passes are moves)")
    perft_p.add_argument("--depth", type=integer, required=True, help="plies")
    perft_p.add_argument("--max-time", type=float, default=PERFT_MAX_TIME_S, metavar="SECONDS",
                         help="refuse a count foretold to take longer (its shallower counts "
                              "time it; default %(default)g, 0: no limit)")
    perft_p.add_argument("--position", default="start", help="position text or 'start'")
    perft_p.add_argument("--divide", action="store_true",
                         help="the count below each root move too, printed as it ends")
    perft_p.add_argument("--json", action="store_true", help="print JSON")
    perft_p.set_defaults(func=stops_at_once(_command("perft")))

    solve_p = sub.add_parser("solve", help="exactly solve every position of an OBF file")
    solve_p.add_argument("file", help="OBF file: position, then MOVE:score; pairs")
    solve_p.add_argument("--wld", action="store_true", help="only win/loss/draw")
    solve_p.add_argument("--time-ms", type=integer_in(1, MAX_TIME_MS), default=None,
                         help="limit per position")
    solve_p.add_argument("--json", action="store_true", help="print JSON")
    solve_p.set_defaults(func=stops_at_once(_command("solve")))

    analyze_p = sub.add_parser(
        "analyze", help="search a position with a bot and limits (either game)",
        description="One search by a built-in bot, in this process. The bot's evaluator "
                    "says the game; the position is that game's text form or 'start'.")
    where = analyze_p.add_mutually_exclusive_group()
    where.add_argument("position", nargs="?", default=None,
                       help="position text (quote it) or 'start'")
    where.add_argument("--position", dest="position_option", metavar="POSITION",
                       help="the same, named as in `arena analyze`")
    analyze_p.add_argument("--preset", default="arena-strong",
                           help="bot preset name, of either game (see `arena bot presets`)")
    analyze_p.add_argument("--config", default=None, help="bot config JSON, or @file.json")
    analyze_p.add_argument("--depth", type=integer_in(1, MAX_DEPTH), default=None,
                           help="plies")
    analyze_p.add_argument("--time-ms", type=integer_in(1, MAX_TIME_MS), default=None,
                           help="(with no --depth or --nodes: 5000)")
    analyze_p.add_argument("--nodes", type=integer_in(1, MAX_NODES), default=None)
    analyze_p.add_argument("--seed", type=integer, default=0)
    analyze_p.add_argument("--json", action="store_true", help="print JSON")
    analyze_p.set_defaults(func=stops_at_once(_analyze))
    train_p = sub.add_parser(
        "train", help="train the pattern evaluator on self-play games (bounded, seeded)"
    )
    train_p.add_argument("game", choices=["othello", "gomoku"], help="the engine to train")
    train_p.add_argument("--games", type=integer, default=None, help="self-play games (200)")
    train_p.add_argument("--seed", type=integer, default=None, help="seed of the games (1)")
    train_p.add_argument(
        "--output", required=True, help="weights file (othello: .npz, .json beside; gomoku: .json)"
    )
    train_p.add_argument("--depth", type=integer, default=None,
                         help="self-play search depth in plies (4)")
    train_p.add_argument("--random-moves", type=integer, default=None,
                         help="random moves per game (2)")
    train_p.add_argument(
        "--solve-empties", type=integer, default=None,
        help="othello: self-play solves exactly from here (14)",
    )
    train_p.add_argument("--stages", type=integer, default=None,
                         help="othello: weight sets by disc count (6)")
    train_p.add_argument("--ridge", type=float, default=None,
                         help="othello: L2 penalty of pattern weights (5)")
    train_p.add_argument("--window", type=integer, default=None,
                         help="othello: discs a stage borrows each side (3)")
    train_p.add_argument("--iterations", type=integer, default=None,
                         help="othello: conjugate-gradient steps (200)")
    train_p.add_argument("--l2", type=float, default=None,
                         help="gomoku: L2 penalty of the fit (1e-4; 0 with --board)")
    train_p.add_argument("--hidden", type=integer, default=None,
                         help="gomoku: hidden units of a small network added to the linear "
                              "evaluation (0, none; at most 32)")
    train_p.add_argument("--board", action="store_true", default=None,
                         help="gomoku: fit a board network (16 channels) instead of the "
                              "linear evaluation (not with --hidden)")
    train_p.add_argument("--starts", type=integer, default=None,
                         help="gomoku, with --board or --hidden: fit each network from this "
                              "many starts and keep the one that fits its training positions "
                              "best (1; each start costs a whole fit)")
    train_p.add_argument("--folds", type=integer, default=None,
                         help="gomoku: cross-validation folds after the fit, each a whole "
                              "fit of its own (5; 0 for none)")
    train_p.add_argument("--teacher", default=None, metavar="ENGINE",
                         help="gomoku: label the positions with this protocol engine's "
                              "evaluations instead of the games' results")
    train_p.add_argument("--catalog", default=None,
                         help="gomoku: the teacher's engine catalog (default: arena, "
                              "Arena's own engines)")
    train_p.add_argument("--teacher-scale", type=float, default=None,
                         help="gomoku: the teacher's evaluation units per unit of log-odds "
                              "(Rapfi: 200; pbrain-arena: 1000)")
    train_p.add_argument("--teacher-ms", type=integer, default=None,
                         help="gomoku: the teacher's time limit per position (10000); "
                              "bound its search in its catalog options to make it "
                              "deterministic (Rapfi: max_node)")
    train_p.add_argument("--keep-positions", default=None, metavar="FILE",
                         help="gomoku: also write the labelled positions to FILE (.npz), "
                              "to fit them again with --positions")
    train_p.add_argument("--positions", action="append", default=None, metavar="FILE",
                         help="gomoku: fit the positions --keep-positions wrote instead of "
                              "playing games (their games, seed and teacher are the file's); "
                              "given again, the files' positions together, each file's games "
                              "after the previous file's (so the last file's are held out)")
    train_p.add_argument("--records", action="append", default=None, metavar="FILE",
                         help="gomoku: train on the positions of these game records "
                              "(PSQ, Arena's native replays; a folder: its files) instead "
                              "of self-play, labelled by their results or by --teacher; "
                              "may be given again")
    train_p.add_argument("--holdout", type=float, default=0.1, help="share of games held out")
    train_p.add_argument("--jobs", type=integer, default=1,
                         help="processes playing the games, labelling them (gomoku's "
                              "teacher) and fitting a network's --starts")
    train_p.add_argument("--json", action="store_true", help="print the metrics as JSON")
    _add_force(train_p, "--output and --keep-positions files")
    train_p.set_defaults(func=_command("train"), teacher_factory=teacher)
    openings_p = sub.add_parser(
        "openings", help="make balanced openings: seeded random ones an engine judges even",
        description="Draws random 15x15 Gomoku openings from a seed and asks a protocol "
                    "engine (the judge) for its move in each; the openings it scores within "
                    "--window of even, and not won or lost, make the suite (docs/engines.md).")
    openings_p.add_argument("game", choices=["gomoku"], help="the game")
    openings_p.add_argument("--judge", required=True, metavar="ENGINE",
                            help="the protocol engine that judges them (a catalog's name)")
    openings_p.add_argument("--catalog", default="arena",
                            help="the judge's engine catalog (default: arena, Arena's own)")
    openings_p.add_argument("--judge-ms", type=integer, default=10_000,
                            help="the judge's time limit per opening (%(default)s); bound "
                                 "its search in its catalog options to make the suite "
                                 "reproducible (Rapfi: max_node)")
    openings_p.add_argument("--window", type=float, required=True,
                            help="how far from even a kept opening may be, in the judge's "
                                 "units (Rapfi: 50)")
    openings_p.add_argument("--screen", default=None, metavar="ENGINE",
                            help="a quicker engine that goes first: the judge sees only the "
                                 "openings it scores within --screen-window of even")
    openings_p.add_argument("--screen-window", type=float, default=None,
                            help="the screen's window, in its units (twice --window)")
    openings_p.add_argument("--count", type=integer, default=100, help="openings (%(default)s)")
    openings_p.add_argument("--seed", type=integer, default=1, help="seed of the draw (1)")
    openings_p.add_argument("--stones", default="3-9", metavar="FEWEST-MOST",
                            help="stones per opening (%(default)s)")
    openings_p.add_argument("--jobs", type=integer, default=1, help="judge processes at once")
    openings_p.add_argument("--output", required=True, help="the suite file to write")
    _add_force(openings_p, "--output file")
    openings_p.set_defaults(func=_openings, judge_factory=teacher)
    probcut_p = sub.add_parser(
        "probcut", help="fit ProbCut's table for a pattern weight set (bounded, seeded)"
    )
    probcut_p.add_argument("game", choices=["othello"], help="the engine to fit")
    probcut_p.add_argument("--positions", type=integer, default=200, help="positions searched")
    probcut_p.add_argument("--seed", type=integer, default=1, help="seed of the positions")
    probcut_p.add_argument("--max-depth", type=integer, default=10, help="deepest search (plies)")
    probcut_p.add_argument("--weights", default="arena-pattern", help="pattern weight set")
    probcut_p.add_argument(
        "--output", default=None,
        help="table file (JSON), or 'ship' for the weight set's own (weights/NAME.probcut.json)",
    )
    probcut_p.add_argument("--json", action="store_true", help="print the table as JSON")
    _add_force(probcut_p, "--output file")
    probcut_p.set_defaults(func=_command("probcut"))
    from arena.protocols.cli import add_protocol_commands  # engine nboard|gtp|gomocup

    add_protocol_commands(sub)


def _add_force(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--force", action="store_true", help=f"overwrite the {what}")


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
