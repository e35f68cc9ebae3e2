"""Balanced 15x15 Gomoku openings made by Arena: seeded random openings that a judge engine
finds about even (``arena engine openings gomoku``).

Each candidate is a few stones (Black first, alternating) placed one by one: the first
within ``CENTRE_REACH`` points of the centre, each next on an empty point at most
``SPREAD`` points (either way) from a stone already placed. A candidate with a five, or
equal under the board's 8 symmetries to an earlier candidate, is dropped unjudged. The
judge (a protocol engine, as a training's teacher is: ``arena.engine.teacher``) is asked
for its move in each of the others, and its score, from the side to move's view, says
whether the opening is balanced: not a proven result and within ``window`` of even.
A screen (a quicker judge, with a wider window) may go first: the judge sees only what
it passes. Candidates go to the judges in batches of ``BATCH`` in the order they were
drawn, and the first ``count`` balanced ones in that order are kept, so the same seed,
judges and jobs give the same suite (with judges bounded by nodes or depth, not time).

The suite file (``arena.openings.gomoku.read_suite`` reads it): ``#`` lines say how it
was made; then one opening per line, its compact form (column letter a-o, row 1-15,
Black first), ``|`` and the judge's score.
"""

from __future__ import annotations

import argparse
import json
import os
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.engine.teacher import Judgement, Position, Teacher
from arena.engine.tools import check_output, checked_positive
from arena.games import GomokuBoard
from arena.openings.gomoku import SIZE, compact

CENTRE_REACH = 5  # the first stone: at most this far from the centre (an 11x11 square)
SPREAD = 2  # each next stone: at most this far from one already placed
BATCH = 50  # candidates judged at once (with ``jobs`` engine processes)
TRIES_PER_OPENING = 40  # give up after this many candidates per opening asked for
MAX_COUNT = 1000
MAX_STONES = 20
MAX_JUDGE_MS = 600_000


@dataclass(frozen=True)
class Balance:
    """What ``make`` is asked for: ``count`` openings of ``stones`` (fewest, most)
    stones, drawn from ``seed``, each within ``window`` of even in the judge's units."""

    count: int
    seed: int
    stones: tuple[int, int]
    window: float


@dataclass(frozen=True)
class Screen:
    """A quicker judge that goes first: the judge sees only the openings it scores within
    ``window`` of even (in its own units) and not won or lost."""

    judge: Teacher
    window: float


@dataclass(frozen=True)
class Balanced:
    compact: str
    score: float  # the judge's, from the side to move's view


@dataclass(frozen=True)
class Made:
    openings: list[Balanced]
    tried: int  # candidates drawn (the duplicates and fives among them too)
    screened: int  # candidates the screen judged (0: no screen)
    judged: int


def checked(balance: Balance) -> Balance:
    """``balance``, or ``ValueError`` saying what is wrong with it."""
    if not 1 <= balance.count <= MAX_COUNT:
        raise ValueError(f"--count must be in 1..{MAX_COUNT}, got {balance.count}")
    fewest, most = balance.stones
    if not 1 <= fewest <= most <= MAX_STONES:
        raise ValueError(f"--stones must be FEWEST-MOST with 1 <= FEWEST <= MOST <= "
                         f"{MAX_STONES}, got {fewest}-{most}")
    checked_positive("--window", balance.window)
    return balance


def parse_stones(text: str) -> tuple[int, int]:
    """``3-9`` (or ``5``, for 5-5) as (fewest, most); ``ValueError`` otherwise."""
    parts = text.split("-")
    if len(parts) in (1, 2) and all(p.strip().isdigit() for p in parts):
        fewest, most = int(parts[0]), int(parts[-1])
        return fewest, most
    raise ValueError(f"--stones must be FEWEST-MOST (like 3-9) or one number, got {text!r}")


def candidates(seed: int, stones: tuple[int, int]) -> Iterator[GomokuBoard]:
    """The candidates drawn from ``seed``, endlessly (the module docstring says how)."""
    rng = random.Random(seed)
    centre = SIZE // 2
    while True:
        board = GomokuBoard(SIZE, "freestyle")
        wanted = rng.randint(*stones)
        board.push((centre + rng.randint(-CENTRE_REACH, CENTRE_REACH)) * SIZE
                   + centre + rng.randint(-CENTRE_REACH, CENTRE_REACH))
        while board.ply < wanted and not board.is_game_over():
            board.push(rng.choice(_near(board.move_stack)))
        yield board


def _near(stones: Sequence[int]) -> list[int]:
    taken = set(stones)
    return sorted({y * SIZE + x for stone in stones
                   for y in range(stone // SIZE - SPREAD, stone // SIZE + SPREAD + 1)
                   for x in range(stone % SIZE - SPREAD, stone % SIZE + SPREAD + 1)
                   if 0 <= x < SIZE and 0 <= y < SIZE} - taken)


def _symmetries() -> list[tuple[int, ...]]:
    """The board's 8 symmetries, each as the image of every point."""
    last = SIZE - 1
    maps = []
    for swap in (False, True):
        for flip_x in (False, True):
            for flip_y in (False, True):
                image = []
                for point in range(SIZE * SIZE):
                    y, x = divmod(point, SIZE)
                    x, y = (y, x) if swap else (x, y)
                    image.append((last - y if flip_y else y) * SIZE
                                 + (last - x if flip_x else x))
                maps.append(tuple(image))
    return maps


_SYMMETRIES = _symmetries()


def canonical(moves: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The same for two openings whose stones match under one of the 8 symmetries (the
    order they were played in aside): the least of the 8 images' sorted (Black, White)."""
    return min((tuple(sorted(image[m] for m in moves[0::2])),
                tuple(sorted(image[m] for m in moves[1::2]))) for image in _SYMMETRIES)


def make(judge: Teacher, balance: Balance, jobs: int = 1,
         say: Callable[[str], None] | None = None, screen: Screen | None = None) -> Made:
    """The first ``balance.count`` balanced candidates (through ``screen`` first, if
    given); ``ValueError`` if ``TRIES_PER_OPENING`` candidates per opening asked for do
    not give them."""
    checked(balance)
    tell = say or (lambda _: None)

    def counted(stage: str, before: int) -> Callable[[int], None]:
        return lambda done: tell(f"{stage} {before + done}")

    limit = TRIES_PER_OPENING * balance.count
    drawn = candidates(balance.seed, balance.stones)
    seen: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()
    kept: list[Balanced] = []
    tried = screened = judged = 0
    while len(kept) < balance.count and tried < limit:
        batch: list[GomokuBoard] = []
        while len(batch) < BATCH and tried < limit:
            board = next(drawn)
            tried += 1
            key = canonical(board.move_stack)
            if board.is_game_over() or key in seen:
                continue
            seen.add(key)
            batch.append(board)
        if screen is not None:
            rough = _judged(screen.judge, batch, jobs, counted("screened", screened))
            screened += len(batch)
            batch = [b for b, v in zip(batch, rough, strict=True) if _balanced(v, screen.window)]
        verdicts = _judged(judge, batch, jobs, counted("judged", judged))
        judged += len(batch)
        kept += [Balanced(compact(b), v.score)
                 for b, v in zip(batch, verdicts, strict=True) if _balanced(v, balance.window)]
        tell(f"{min(len(kept), balance.count)}/{balance.count} balanced of {judged} judged")
    if len(kept) < balance.count:
        raise ValueError(
            f"only {len(kept)} of {judged} openings judged were within {balance.window:g} of "
            f"even ({tried} drawn, at most {TRIES_PER_OPENING} per opening asked for): widen "
            "--window, allow more --stones, or ask for fewer")
    return Made(kept[:balance.count], tried, screened, judged)


def _judged(judge: Teacher, boards: Sequence[GomokuBoard], jobs: int,
            progress: Callable[[int], None]) -> list[Judgement]:
    """The judge's verdicts on ``boards``; ``progress`` hears how many are judged now and
    then (a judge at its time limit takes that long per opening: a batch can take
    minutes)."""
    return judge.judge([Position(b.to_text(), tuple(b.move_stack)) for b in boards], jobs,
                       progress)


def _balanced(verdict: Judgement, window: float) -> bool:
    return not verdict.exact and abs(verdict.score) <= window


def write_suite(path: Path, made: Made, header: Sequence[str]) -> None:
    """The suite file (the module docstring), ``header`` as its first comment lines."""
    lines = [f"# {line}" for line in header]
    screened = f"{made.screened} screened, " if made.screened else ""
    lines.append(f"# {made.tried} drawn, {screened}{made.judged} judged, "
                 f"{len(made.openings)} kept; each line: the opening | the judge's score, "
                 "side to move's view")
    lines += [f"{o.compact} | {o.score:g}" for o in made.openings]
    path.write_text("\n".join(lines) + "\n")


def run(args: argparse.Namespace) -> int:
    """``arena engine openings gomoku``: check the options, make the suite, write it."""

    balance = checked(Balance(args.count, args.seed, parse_stones(args.stones), args.window))
    cores = os.cpu_count() or 1
    if not 1 <= args.jobs <= cores:
        raise ValueError(f"--jobs must be in 1..{cores} (this machine's cores), got {args.jobs}")
    if not 1 <= args.judge_ms <= MAX_JUDGE_MS:
        raise ValueError(f"--judge-ms must be in 1..{MAX_JUDGE_MS}, got {args.judge_ms}")
    check_output(args.output, ".txt", args.force)
    if args.judge_factory is None:
        raise ValueError("--judge needs the `arena` command (protocol engines are the "
                         "worker's): arena engine openings gomoku --judge ...")
    screen_window = 2 * balance.window if args.screen_window is None else args.screen_window
    if args.screen is None and args.screen_window is not None:
        raise ValueError("--screen-window applies only with --screen")
    checked_positive("--screen-window", screen_window)
    judge = args.judge_factory(args.catalog, args.judge, "gomoku", args.judge_ms)
    screen = None if args.screen is None else Screen(
        args.judge_factory(args.catalog, args.screen, "gomoku", args.judge_ms), screen_window)
    made = make(judge, balance, args.jobs, lambda line: print(line, flush=True), screen)
    fewest, most = balance.stones
    screening = "" if screen is None else (f" --screen {args.screen} --screen-window "
                                           f"{screen.window:g}")
    command = (f"arena engine openings gomoku --judge {args.judge}{screening} --catalog "
               f"{Path(args.catalog).name} --judge-ms {args.judge_ms} --window "
               f"{balance.window:g} --count {balance.count} --seed {balance.seed} --stones "
               f"{fewest}-{most} --jobs {args.jobs} --output {Path(args.output).name}")
    header = [f"{balance.count} balanced 15x15 freestyle Gomoku openings, each within "
              f"{balance.window:g} of even by the judge; play each twice, colours swapped",
              f"made by: {command}",
              f"judge: {json.dumps(judge.describe(), sort_keys=True)}"]
    if screen is not None:
        header.append(f"screen: {json.dumps(screen.judge.describe(), sort_keys=True)}")
    write_suite(Path(args.output), made, header)
    print(f"wrote {args.output}: {balance.count} openings, {made.judged} judged "
          f"({made.tried} drawn{f', {made.screened} screened' if screen else ''})")
    return 0
