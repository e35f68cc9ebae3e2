"""How well a Gomoku engine's searches predict a teacher's judgement of kept positions.

    python bench/gomoku_judgement.py POSITIONS.npz [--first-game G] [--limit N] \\
        [--move-ms 200 | --depth D] [--variant KEY=VALUE,...]... \\
        [--engine NAME --catalog FILE --engine-ms 10000]

The positions are a file of ``arena engine train gomoku --keep-positions`` labelled by a
teacher (``--teacher``): the teacher's chance for the side to move, 0.99 or 0.01 where it
proved the result or was as sure (the file keeps the labels, not the proofs; for Rapfi's
scale of 200, a score past 919 is as sure). The held-out games are asked (from
``--first-game``, by default the file's last fifth, which ``arena engine train gomoku
--positions FILE --holdout 0.2`` holds out), at most ``--limit`` positions. Each judge
searches each position: every ``--variant`` of ``arena-gomoku`` (the preset with the
items) within ``--move-ms`` of CPU time or to ``--depth``, and with ``--engine`` a
catalog's protocol engine as well (its own limits; ``--engine-ms`` is its time a
position). A judge's score reads as the chance ``sigmoid(score / s)``, with the scale
``s`` that fits best (the judges' units differ), and a proven result as 0.99/0.01.

Printed per judge: the soft log-loss of its chances against the labels (the labels' own
entropy is the floor); of the positions labelled won (0.99) or lost (0.01) for the side to
move, the share the judge proves so, and its proofs against a label on the other side of
1/2; the log-loss on the positions neither the label nor the judge calls sure (scale
fitted on them alone); its mean depth.

A judge that proves more and judges the rest as well is not always the stronger player:
arena/engine/gomoku/README.md has a variant that did better here and worse in games.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
from arena.services.worker.engines.teacher import catalog_teacher
from gomoku_move_quality import search_limits, variant_config

from arena.engine.api import Limits
from arena.engine.gomoku import choose_move, warm_up
from arena.engine.gomoku.cli import checked_teacher_ms
from arena.engine.gomoku.config import ARENA_GOMOKU
from arena.engine.gomoku.position import GomokuPositionError
from arena.engine.gomoku.train import (
    SIZE,
    TEACHER_SURE,
    load_positions,
    log_loss,
    teacher_labels,
    teacher_position,
)
from arena.engine.selfplay import held_out_games
from arena.engine.teacher import Judgement

# The scales tried, 1 % apart, and none at all (every chance 1/2: the scores say nothing).
SCALES = [*np.geomspace(1.0, 100_000.0, 401), math.inf]
Floats = npt.NDArray[np.float64]
HELD_OUT = 0.2  # the share of games asked by default: the last (``--holdout 0.2``'s)


@dataclass(frozen=True)
class Judged:
    judgements: list[Judgement]
    depth: float  # mean depth (nan for a protocol engine)
    seconds: float


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("positions", type=Path, help="a teacher-labelled positions file")
    parser.add_argument("--first-game", type=int, default=-1,
                        help="the first game asked (default: the last fifth's first)")
    parser.add_argument("--limit", type=int, default=1200, help="at most this many positions")
    parser.add_argument("--move-ms", type=int, default=200, help="CPU time a position")
    parser.add_argument("--depth", type=int, default=0, help="a fixed depth instead")
    parser.add_argument("--variant", action="append", default=None, metavar="KEY=VALUE,...",
                        help="arena-gomoku with these settings (repeatable; default: as is)")
    parser.add_argument("--engine", default="", help="a catalog's engine judges too")
    parser.add_argument("--catalog", default="", help="the engine's catalog")
    parser.add_argument("--engine-ms", type=int, default=10_000,
                        help="the engine's time a position (bound it by nodes instead)")
    args = parser.parse_args()
    args.variant = args.variant or [""]
    if args.limit < 1 or args.depth < 0:
        parser.error("--limit must be at least 1, --depth at least 0")
    try:
        checked_teacher_ms(args.engine_ms)
    except ValueError as exc:
        parser.error(str(exc))
    args.limits = search_limits(parser, args.depth, args.move_ms)
    if args.engine and not args.catalog:
        parser.error("--engine needs --catalog")
    return args


def asked(path: Path, first_game: int, limit: int) -> tuple[list[list[int]], Floats]:
    """(moves, label) of the held-out positions; ``SystemExit`` for a file that is not
    teacher-labelled positions or holds none past ``first_game``."""
    try:
        kept = load_positions(path)
    except (OSError, ValueError) as exc:
        raise SystemExit(str(exc)) from None
    if not isinstance(kept.made_by.get("teacher"), dict):
        raise SystemExit(f"{path}: labelled by game results, not by a teacher (make it with "
                         "`arena engine train gomoku --teacher ... --keep-positions`)")
    first = first_game if first_game >= 0 else (
        kept.games - held_out_games(kept.games, HELD_OUT))
    chosen = np.flatnonzero(kept.data.game >= first)[:limit]
    if len(chosen) == 0:
        raise SystemExit(f"{path}: no position from game {first} on ({kept.games} games)")
    return [list(kept.data.moves[i]) for i in chosen], kept.data.label[chosen]


def by_bot(config: dict[str, object], limits: Limits, moves: list[list[int]]) -> Judged:
    started = time.monotonic()
    found = []
    for index, played in enumerate(moves):
        try:
            found.append(choose_move(SIZE, "freestyle", played, config, limits))
        except GomokuPositionError as exc:  # a file made otherwise than by the training
            raise SystemExit(f"position {index} asked ({len(played)} stones): {exc}") from None
    judgements = [Judgement(float(r.score), r.exact) for r in found]
    return Judged(judgements, float(np.mean([r.depth for r in found])),
                  time.monotonic() - started)


def by_engine(catalog: str, name: str, move_ms: int, moves: list[list[int]]) -> Judged:
    started = time.monotonic()
    try:
        engine = catalog_teacher(catalog, name, "gomoku", move_ms)
        judgements = engine.judge([teacher_position(m) for m in moves], 1)
    except ValueError as exc:
        raise SystemExit(f"the engine {name}: {exc}") from None
    return Judged(judgements, math.nan, time.monotonic() - started)


def best_fit(judgements: Sequence[Judgement], label: Floats) -> tuple[float, float]:
    """(log-loss, scale) of the scale that predicts ``label`` best."""
    return min((log_loss(teacher_labels(judgements, float(s)), label), float(s))
               for s in SCALES)


def _share(hit: npt.NDArray[np.bool_], of: npt.NDArray[np.bool_]) -> str:
    return f"{100 * hit[of].mean():.1f}% ({hit[of].sum()}/{of.sum()})" if of.any() else "-"


def report(name: str, judged: Judged, label: Floats) -> None:
    js = judged.judgements
    scores = np.array([j.score for j in js])
    exact = np.array([j.exact for j in js])
    won, lost = label >= TEACHER_SURE, label <= 1 - TEACHER_SURE
    proves_win, proves_loss = exact & (scores > 0), exact & (scores < 0)
    loss, scale = best_fit(js, label)
    open_ = ~(won | lost | exact)
    against = int((proves_win & (label < 0.5)).sum() + (proves_loss & (label > 0.5)).sum())
    print(f"{name}:\n  log-loss {loss:.4f} (scale {scale:.0f}); proves "
          f"{_share(proves_win, won)} of those labelled won, {_share(proves_loss, lost)} of "
          f"those labelled lost; {against} against the label")
    if open_.any():
        rest = [j for j, keep in zip(js, open_, strict=True) if keep]
        rest_loss, rest_scale = best_fit(rest, label[open_])
        print(f"  sure to neither ({open_.sum()}): log-loss {rest_loss:.4f} "
              f"(scale {rest_scale:.0f})")
    depth = "" if math.isnan(judged.depth) else f"mean depth {judged.depth:.1f}, "
    print(f"  {depth}{judged.seconds:.0f} s", flush=True)


def main() -> None:
    args = parse_args()
    configs = {text: variant_config(text) for text in args.variant}
    moves, label = asked(args.positions, args.first_game, args.limit)
    entropy = log_loss(label, label)
    limit = f"depth {args.depth}" if args.depth else f"{args.move_ms} ms of CPU"
    won, lost = (label >= TEACHER_SURE).mean(), (label <= 1 - TEACHER_SURE).mean()
    print(f"{len(moves)} positions of {args.positions.name}: {100 * won:.1f}% labelled won "
          f"and {100 * lost:.1f}% lost for the side to move; the labels' entropy "
          f"{entropy:.4f}; {ARENA_GOMOKU} at {limit}", flush=True)
    warm_up()
    for text, config in configs.items():
        report(text or ARENA_GOMOKU, by_bot(config, args.limits, moves), label)
    if args.engine:
        report(args.engine, by_engine(args.catalog, args.engine, args.engine_ms, moves), label)


if __name__ == "__main__":
    main()
