"""``arena engine train gomoku``: the command-line side of ``train.py`` (mounted by the
engine tools' parser in ``arena.engine.tools``)."""

from __future__ import annotations

import argparse
import hashlib
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.engine.tools import checked_positive

if TYPE_CHECKING:
    from arena.engine.gomoku.train import Fitting, TeacherSettings, TrainingResult

DEFAULT_L2 = 1e-4
# With --board: no penalty. On the t30k positions (README.md) a board network's fit held
# out 0.5504 at 0 against 0.5577 at 1e-4, and fitted its training positions worse at 1e-4.
BOARD_L2 = 0.0
MAX_STARTS = 16
MAX_FOLDS = 10
DEFAULT_TEACHER_MS = 10_000
MAX_TEACHER_MS = 600_000


def train_command(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """Run a training from the parsed arguments, the common ones already checked: (JSON
    payload, text report)."""
    from arena.engine.gomoku.evaluation import BOARD_CHANNELS, FEATURES, MAX_HIDDEN
    from arena.engine.gomoku.train import FOLDS, Fitting, save

    board = bool(args.board)
    l2 = (BOARD_L2 if board else DEFAULT_L2) if args.l2 is None else args.l2
    if not (math.isfinite(l2) and l2 >= 0):
        raise ValueError(f"--l2 must be a finite number of 0 or more, got {l2:g}")
    output = Path(args.output)  # its folder and suffix are checked with the common options
    hidden = 0 if args.hidden is None else args.hidden
    if not 0 <= hidden <= MAX_HIDDEN:
        raise ValueError(f"--hidden must be in 0..{MAX_HIDDEN}, got {hidden}")
    if board and args.hidden is not None:
        raise ValueError("--board cannot go with --hidden: a board network replaces the "
                         "linear evaluation and its hidden units")
    starts = 1 if args.starts is None else args.starts
    if not 1 <= starts <= MAX_STARTS:
        raise ValueError(f"--starts must be in 1..{MAX_STARTS}, got {starts}")
    if starts > 1 and not (board or hidden):
        raise ValueError("--starts needs a network to start from: --board or --hidden N (the "
                         "linear fit has one answer)")
    folds = FOLDS if args.folds is None else args.folds
    if not (folds == 0 or 2 <= folds <= MAX_FOLDS):
        raise ValueError(f"--folds must be 0 (none) or in 2..{MAX_FOLDS}, got {folds}")
    form = f" --hidden {hidden}" if hidden else " --board" if board else ""
    form += f" --starts {starts}" if starts > 1 else ""
    form += f" --folds {folds}" if folds != FOLDS else ""
    fitting = Fitting(l2, args.holdout, hidden, board, starts, folds, args.jobs)
    told = (f" --l2 {l2:g}{form} --holdout {args.holdout:g} --output "
            f"{output.with_suffix('.json').name}")

    def say(line: str) -> None:
        print(line, flush=True)

    progress = None if args.json else say
    if args.positions is not None:
        result, metadata = _train_on_kept(args, fitting, told, progress)
    elif args.records is not None:
        result, metadata = _train_on_records(args, fitting, told, progress)
    else:
        result, metadata = _train_on_new(args, fitting, told, progress)
    path = save(output, result, metadata)
    command = str(metadata["command"])
    metrics = result.metrics
    lines = [f"wrote {path}", f"command: {command}"]
    if board:
        lines.append(f"board network: {BOARD_CHANNELS} channels (in the file; the weights "
                     "all zero)")
    else:
        lines.append(f"weights: {' '.join(str(w) for w in result.weights[:FEATURES])}")
    if hidden:
        lines.append(f"network: {hidden} hidden units (in the file)")
    losses = metrics.get("starts")
    if isinstance(losses, list):
        lines.append(f"starts: training log-loss {', '.join(f'{x:.4f}' for x in losses)}; kept "
                     f"start {losses.index(min(losses)) + 1}")
    for part in ("train", "heldout"):
        m = metrics[part]
        assert isinstance(m, dict)
        lines.append(f"{part:>8}: " + " | ".join(
            f"{name}{'' if name == 'trained' else ' (scaled)'} log-loss "
            f"{m[name]['log_loss']:.4f} accuracy {_figure(m[name]['accuracy'])}"
            for name in ("trained", "hand", "shipped")))
    return {"output": str(path), "command": command, "metrics": metrics}, "\n".join(lines)


def _figure(value: float | None) -> str:
    """An accuracy, or '-' where there is none (every label a draw)."""
    return "-" if value is None else f"{value:.3f}"


def _train_on_new(args: argparse.Namespace, fitting: Fitting, told: str,
                  progress: Callable[[str], None] | None
                  ) -> tuple[TrainingResult, dict[str, object]]:
    """Play (and have the teacher label) new games, keep them if asked, and fit
    (``told``: the fit's options as the recorded command gives them)."""
    from arena.engine.gomoku.train import GameSettings, train

    if not 1 <= args.depth <= 8:
        raise ValueError(f"--depth must be in 1..8 for gomoku, got {args.depth}")
    if not 0 <= args.random_moves <= 8:
        raise ValueError(f"--random-moves must be in 0..8 for gomoku, got {args.random_moves}")
    teacher, teaching = _teacher(args)
    making = (f"arena engine train gomoku --games {args.games} --seed {args.seed} "
              f"--depth {args.depth} --random-moves {args.random_moves}{teaching}")
    made_by: dict[str, object] = {"command": making, "seed": args.seed}
    if teacher is not None:
        made_by["teacher"] = {**teacher.teacher.describe(), "scale": teacher.scale}
    keep = None if args.keep_positions is None else (Path(args.keep_positions), made_by)
    result = train(args.games, args.seed, GameSettings(args.depth, args.random_moves),
                   fitting, progress, teacher, keep)
    return result, {**made_by, "command": making + told}


MAX_RECORD_BYTES = 10 << 20  # a game record is a few kilobytes; a bound on what is read


def _train_on_records(args: argparse.Namespace, fitting: Fitting, told: str,
                      progress: Callable[[str], None] | None
                      ) -> tuple[TrainingResult, dict[str, object]]:
    """Fit the positions of game records (``--records``: files, or folders of them),
    labelled by their results or by the teacher."""
    from arena.engine.gomoku.train import train_on_records

    say = progress or (lambda _: None)
    teacher, teaching = _teacher(args)
    games, digest = read_records(args.records)
    unfinished = sum(score is None for _, score in games)
    if unfinished and teacher is None:
        games = [game for game in games if game[1] is not None]
        say(f"left out {unfinished} record(s) without a result (a teacher would label "
            "their positions)")
        if len(games) < 2:
            raise ValueError(f"--records: {len(games)} record(s) with a result; at least 2 "
                             "are needed (some are held out)")
    given = " ".join(f"--records {Path(name).name}" for name in args.records)
    making = f"arena engine train gomoku {given}{teaching}"
    made_by: dict[str, object] = {"command": making, "seed": None,
                                  "records": {"games": len(games), "sha256": digest}}
    if teacher is not None:
        made_by["teacher"] = {**teacher.teacher.describe(), "scale": teacher.scale}
    say(f"{len(games)} recorded games")
    keep = None if args.keep_positions is None else (Path(args.keep_positions), made_by)
    result = train_on_records(games, fitting, progress, teacher, keep)
    return result, {**made_by, "command": making + told}


def read_records(names: list[str]) -> tuple[list[tuple[list[int], float | None]], str]:
    """The games of the records ``names`` (files, or folders whose files are all
    records, in name order): each game's moves and Black's score (None: no result), and
    one SHA-256 over every file read; ``ValueError`` naming the file that is not a
    freestyle 15x15 Gomoku game from the empty board."""
    from arena.documents import decode_text
    from arena.engine.gomoku.train import SIZE
    from arena.engine.othello.cli import MAX_TRAINING_GAMES
    from arena.formats.errors import FormatError
    from arena.games import GomokuBoard
    from arena.games.base import Color
    from arena.records import read_record

    files: list[Path] = []
    for name in names:  # every path is looked at before any is read
        path = Path(name)
        if path.is_dir():
            files += sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
        elif path.is_file():
            files.append(path)
        else:  # as --positions says it: a path that exists may still be no file
            what = "not a file or folder" if path.exists() else "no such file or folder"
            raise ValueError(f"--records {name!r}: {what}")
        if len(files) > MAX_TRAINING_GAMES:
            raise ValueError(f"--records: more than {MAX_TRAINING_GAMES} records")
    if len(files) < 2:
        raise ValueError(f"--records: {len(files)} record(s); at least 2 games are needed "
                         "(some are held out)")
    empty = GomokuBoard(SIZE, "freestyle").to_text()
    digest = hashlib.sha256()
    games: list[tuple[list[int], float | None]] = []
    for path in files:
        try:
            size = path.stat().st_size
            if size > MAX_RECORD_BYTES:
                raise ValueError(f"{size} bytes: a game record is at most "
                                 f"{MAX_RECORD_BYTES >> 20} MB")
            raw = path.read_bytes()
            _format, replay = read_record(decode_text(raw, "the record"))
        except (OSError, FormatError, ValueError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else exc
            raise ValueError(f"--records {str(path)!r}: {why}") from None
        if (replay.game, replay.variant, replay.size) != ("gomoku", "freestyle", SIZE):
            raise ValueError(f"--records {str(path)!r}: a {replay.game} game "
                             f"({replay.variant}, size {replay.size}); the evaluation is "
                             f"trained on freestyle Gomoku on {SIZE}x{SIZE}")
        if replay.start != empty:
            raise ValueError(f"--records {str(path)!r}: the game starts from a set position; "
                             "the training needs games from the empty board")
        digest.update(hashlib.sha256(raw).digest())
        outcome = replay.outcome
        score = (None if outcome is None else 0.5 if outcome.winner is None
                 else 1.0 if outcome.winner == Color.BLACK else 0.0)
        games.append(([record.move for record in replay.moves], score))
    return games, digest.hexdigest()


def _train_on_kept(args: argparse.Namespace, fitting: Fitting, told: str,
                   progress: Callable[[str], None] | None
                   ) -> tuple[TrainingResult, dict[str, object]]:
    """Fit the positions of the files ``--keep-positions`` wrote (``train.joined``, in the
    order given): no game is played. The network's (or board network's) start is drawn
    from the first file's seed."""
    from arena.engine.gomoku.train import fit_and_measure, joined, load_positions

    say = progress or (lambda _: None)
    files: list[dict[str, object]] = []
    kept = []
    seeds: dict[object, str] = {}  # seed: the file whose games it played
    for name in args.positions:  # every path before the first is read
        if not Path(name).is_file():
            what = "not a file" if Path(name).exists() else "no such file"
            raise ValueError(f"--positions {name!r}: {what}")
    for name in args.positions:
        path = Path(name)
        try:
            raw = path.read_bytes()  # once: the file fitted is the file whose digest is kept
        except OSError as exc:
            raise ValueError(f"--positions {name!r}: cannot be read ({exc.strerror})") from None
        one = load_positions(path, raw)
        seed = one.made_by.get("seed")
        if seed is not None and seed in seeds:
            raise ValueError(
                f"--positions {name!r}: its games were played from seed {seed}, as "
                f"{seeds[seed]}'s were: one seed plays the same games, which would be "
                "trained on and held out at once")
        seeds[seed] = path.name
        digest = hashlib.sha256(raw).hexdigest()
        say(f"{path.name}: {len(one.data)} positions of {one.games} games, made by: "
            f"{one.made_by.get('command')}")
        files.append({"file": path.name, "sha256": digest, "games": one.games,
                      "made_by": one.made_by})
        kept.append(one)
    data, games = joined(kept)
    seed = kept[0].made_by.get("seed")
    result = fit_and_measure(data, games, fitting, say, seed if isinstance(seed, int) else 0)
    given = " ".join(f"--positions {f['file']}" for f in files)
    return result, {"command": f"arena engine train gomoku {given}{told}", "seed": seed,
                    "positions": files}


def checked_teacher_ms(move_ms: int) -> int:
    """``--teacher-ms`` (the teacher's time per position), or ``ValueError``."""
    if not 1 <= move_ms <= MAX_TEACHER_MS:
        raise ValueError(f"--teacher-ms must be in 1..{MAX_TEACHER_MS}, got {move_ms}")
    return move_ms


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
    scale = checked_positive("--teacher-scale", float(args.teacher_scale))
    move_ms = checked_teacher_ms(DEFAULT_TEACHER_MS if args.teacher_ms is None
                                 else args.teacher_ms)
    catalog = args.catalog or "arena"
    teacher = args.teacher_factory(catalog, args.teacher, "gomoku", move_ms)
    teaching = (f" --teacher {args.teacher} --catalog {Path(catalog).name} --teacher-scale "
                f"{scale:g} --teacher-ms {move_ms} --jobs {args.jobs}")
    return TeacherSettings(teacher, scale), teaching
