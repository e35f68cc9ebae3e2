"""``arena engine train gomoku``: the command-line side of ``train.py`` (mounted by the
engine tools' parser in ``arena.engine.tools``)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

DEFAULT_L2 = 1e-4


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

    def say(line: str) -> None:
        print(line, flush=True)

    settings = GameSettings(args.depth, args.random_moves)
    result = train(args.games, args.seed, settings, l2, args.holdout, args.jobs,
                   progress=None if args.json else say)
    command = (
        f"arena engine train gomoku --games {args.games} --seed {args.seed} "
        f"--depth {args.depth} --random-moves {args.random_moves} --l2 {l2:g} "
        f"--holdout {args.holdout:g} --output {output.with_suffix('.json').name}"
    )
    path = save(output, result, {"command": command, "seed": args.seed})
    metrics = result.metrics
    lines = [f"wrote {path}", f"command: {command}",
             f"weights: {' '.join(str(w) for w in result.weights)}"]
    for part in ("train", "heldout"):
        m = metrics[part]
        assert isinstance(m, dict)
        lines.append(
            f"{part:>8}: trained log-loss {m['trained']['log_loss']:.4f} accuracy "
            f"{m['trained']['accuracy']:.3f} | hand (scaled) log-loss "
            f"{m['hand']['log_loss']:.4f} accuracy {m['hand']['accuracy']:.3f}")
    return {"output": str(path), "command": command, "metrics": metrics}, "\n".join(lines)
