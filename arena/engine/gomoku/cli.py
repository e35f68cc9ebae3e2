"""``arena engine train gomoku``: the command-line side of ``train.py`` (mounted by the
engine tools' parser in ``arena.engine.tools``)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arena.engine.gomoku.train import TeacherSettings

DEFAULT_L2 = 1e-4
DEFAULT_TEACHER_MS = 10_000
MAX_TEACHER_MS = 600_000


def train_command(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """Run a training from the parsed arguments, the common ones already checked: (JSON
    payload, text report)."""
    from arena.engine.gomoku.train import GameSettings, save, train

    if not 1 <= args.depth <= 8:
        raise ValueError(f"--depth must be in 1..8 for gomoku, got {args.depth}")
    if not 0 <= args.random_moves <= 8:
        raise ValueError(f"--random-moves must be in 0..8 for gomoku, got {args.random_moves}")
    l2 = DEFAULT_L2 if args.l2 is None else args.l2
    if not (math.isfinite(l2) and l2 >= 0):
        raise ValueError(f"--l2 must be a number of 0 or more, got {l2:g}")
    output = Path(args.output)  # its folder and suffix are checked with the common options
    teacher, teaching = _teacher(args)

    def say(line: str) -> None:
        print(line, flush=True)

    settings = GameSettings(args.depth, args.random_moves)
    result = train(args.games, args.seed, settings, l2, args.holdout, args.jobs,
                   progress=None if args.json else say, teacher=teacher)
    command = (
        f"arena engine train gomoku --games {args.games} --seed {args.seed} "
        f"--depth {args.depth} --random-moves {args.random_moves} --l2 {l2:g} "
        f"--holdout {args.holdout:g}{teaching} --output {output.with_suffix('.json').name}"
    )
    metadata: dict[str, object] = {"command": command, "seed": args.seed}
    if teacher is not None:
        metadata["teacher"] = {**teacher.teacher.describe(), "scale": teacher.scale}
    path = save(output, result, metadata)
    metrics = result.metrics
    lines = [f"wrote {path}", f"command: {command}",
             f"weights: {' '.join(str(w) for w in result.weights)}"]
    for part in ("train", "heldout"):
        m = metrics[part]
        assert isinstance(m, dict)
        lines.append(f"{part:>8}: " + " | ".join(
            f"{name}{'' if name == 'trained' else ' (scaled)'} log-loss "
            f"{m[name]['log_loss']:.4f} accuracy {m[name]['accuracy']:.3f}"
            for name in ("trained", "hand", "shipped")))
    return {"output": str(path), "command": command, "metrics": metrics}, "\n".join(lines)


def _teacher(args: argparse.Namespace) -> tuple[TeacherSettings | None, str]:
    """The training's teacher, checked before a game is played, and its part of the
    recorded command (with ``--jobs``: a teacher with a memory between positions labels
    by the processes' share of them)."""
    from arena.engine.gomoku.train import TeacherSettings

    options = {"--catalog": args.catalog, "--teacher-scale": args.teacher_scale,
               "--teacher-ms": args.teacher_ms}
    if args.teacher is None:
        given = [name for name, value in options.items() if value is not None]
        if given:
            verb = "apply" if len(given) > 1 else "applies"
            raise ValueError(f"{', '.join(given)} {verb} only with --teacher")
        return None, ""
    if args.teacher_factory is None:
        raise ValueError("--teacher needs the `arena` command (protocol engines are the "
                         "worker's): arena engine train gomoku --teacher ...")
    if args.teacher_scale is None:
        raise ValueError("--teacher needs --teacher-scale: the teacher's evaluation units "
                         "per unit of log-odds (Rapfi: 200; pbrain-arena: 1000)")
    scale = float(args.teacher_scale)
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"--teacher-scale must be a number above 0, got {scale:g}")
    move_ms = DEFAULT_TEACHER_MS if args.teacher_ms is None else args.teacher_ms
    if not 1 <= move_ms <= MAX_TEACHER_MS:
        raise ValueError(f"--teacher-ms must be in 1..{MAX_TEACHER_MS}, got {move_ms}")
    catalog = args.catalog or "arena"
    teacher = args.teacher_factory(catalog, args.teacher, "gomoku", move_ms)
    teaching = (f" --teacher {args.teacher} --catalog {Path(catalog).name} --teacher-scale "
                f"{scale:g} --teacher-ms {move_ms} --jobs {args.jobs}")
    return TeacherSettings(teacher, scale), teaching
