"""A Gomoku bot against others: colour-swapped pairs over the balanced openings.

    python bench/gomoku_match.py --bot arena-gomoku \\
        --vs sharpmoku-normal sharpmoku-hard arena-gomoku@REV --time-ms 300

Every opening is played twice per opponent, each bot Black once. Games are refereed by
the reference rules (``arena.games.gomoku``); each move is searched with ``--time-ms`` on
the searching thread's CPU clock (``--clock wall`` for wall time), so other work on the
machine does not change the result. ``NAME@REV`` is preset ``NAME`` of git revision
``REV`` (its previous version, say): that engine runs in a helper process from
``git archive REV`` (kept in the temporary folder, so its compiled kernels are reused by
the next run) and answers one move at a time, so only one search runs at once.
``--vs-time-ms`` gives the rivals another time per move (``--vs arena-gomoku --time-ms 1000
--vs-time-ms 250``: what four times the time is worth in self-play).
Prints each game, then per opponent the score, W-D-L and the Elo difference with its 95%
interval (``arena.ratings``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

Player = Callable[[list[int], int], int]  # (moves so far, seed) -> move


def export_revision(revision: str) -> Path:
    """This repository at ``revision``, unpacked once into the temporary folder."""
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", revision], check=True,
                            capture_output=True, text=True).stdout.strip()
    tree = Path(tempfile.gettempdir()) / f"arena-revision-{commit[:12]}"
    if not (tree / "arena").is_dir():
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], check=True,
                                 capture_output=True).stdout
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(tree, filter="data")
    return tree


def load_openings() -> list[list[int]]:
    from arena.openings.gomoku import balanced_openings

    return [list(opening.moves) for opening in balanced_openings()]


def local_player(
    preset: str, time_ms: int, clock: str, overrides: dict[str, int] | None = None
) -> Player:
    from arena.engine.api import Limits
    from arena.engine.gomoku import PRESETS, choose_move

    config = {**PRESETS[preset], **(overrides or {})}
    limits = Limits(time_ms=time_ms, clock="cpu" if clock == "cpu" else "wall")

    def move(moves: list[int], seed: int) -> int:
        return choose_move(15, "freestyle", moves, config, limits, seed=seed).move

    return move


class RevisionPlayer:
    """A preset of another git revision, searching in a helper process."""

    def __init__(self, preset: str, revision: str, time_ms: int, clock: str) -> None:
        tree = export_revision(revision)
        env = {**os.environ, "PYTHONPATH": str(tree)}
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--serve", preset, str(time_ms),
             clock], env=env, cwd=tree, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True)

    def __call__(self, moves: list[int], seed: int) -> int:
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(json.dumps({"moves": moves, "seed": seed}) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit("the helper engine process died")
        return int(json.loads(line)["move"])

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(timeout=30)


def serve(preset: str, time_ms: int, clock: str) -> None:
    """The helper process: one JSON request per line in, one move per line out."""
    from arena.engine.gomoku import warm_up

    warm_up()
    player = local_player(preset, time_ms, clock)
    for line in sys.stdin:
        request = json.loads(line)
        print(json.dumps({"move": player(request["moves"], request["seed"])}), flush=True)


def play_game(black: Player, white: Player, opening: list[int]) -> tuple[float, int]:
    """Black's score (1, 0.5, 0) and the number of plies."""
    from arena.games.base import Color
    from arena.games.gomoku import GomokuBoard

    board = GomokuBoard(15, "freestyle")
    for move in opening:
        board.push(move)
    while board.outcome() is None:
        player = black if board.turn is Color.BLACK else white
        board.push(player(list(board.move_stack), board.ply))
    outcome = board.outcome()
    assert outcome is not None
    if outcome.winner is None:
        return 0.5, board.ply
    return (1.0 if outcome.winner is Color.BLACK else 0.0), board.ply


@dataclass
class Tally:
    games: int = 0
    points: float = 0.0
    wins: int = 0
    draws: int = 0

    def add(self, score: float) -> None:
        self.games += 1
        self.points += score
        self.wins += score == 1.0
        self.draws += score == 0.5


def elo_line(tally: Tally) -> str:
    from arena.ratings import Game, fit_elo

    games = [Game(0, 1, 1.0)] * tally.wins + [Game(0, 1, 0.5)] * tally.draws + [
        Game(0, 1, 0.0)] * (tally.games - tally.wins - tally.draws)
    fit = fit_elo(2, games)
    diff = float(fit.elo[0] - fit.elo[1])
    half = 1.96 * fit.difference_stddev(0, 1)
    return f"Elo {diff:+.0f} [{diff - half:+.0f}, {diff + half:+.0f}]"


def match(name: str, bot: Player, rival_name: str, rival: Player,
          openings: list[list[int]]) -> Tally:
    tally = Tally()
    for index, opening in enumerate(openings):
        for bot_black in (True, False):
            started = time.monotonic()
            black, white = (bot, rival) if bot_black else (rival, bot)
            black_score, plies = play_game(black, white, opening)
            score = black_score if bot_black else 1.0 - black_score
            tally.add(score)
            colour = "B" if bot_black else "W"
            print(f"opening {index + 1:2d} {name} ({colour}) vs {rival_name}: {score:.1f} "
                  f"in {plies} plies, {time.monotonic() - started:.0f} s", flush=True)
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bot", default="arena-gomoku")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override an integer parameter of --bot's preset")
    parser.add_argument("--vs", nargs="+", default=["sharpmoku-normal", "sharpmoku-hard"])
    parser.add_argument("--time-ms", type=int, default=300)
    parser.add_argument("--vs-time-ms", type=int, default=None,
                        help="the rivals' time per move (default: --time-ms), to see "
                             "what more time is worth")
    parser.add_argument("--clock", choices=["cpu", "wall"], default="cpu")
    parser.add_argument("--openings", type=int, default=12)
    parser.add_argument("--serve", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve[0], int(args.serve[1]), args.serve[2])
        return
    from arena.engine.api import Limits

    for option, ms in (("--time-ms", args.time_ms), ("--vs-time-ms", args.vs_time_ms)):
        try:
            Limits(time_ms=ms)
        except ValueError as exc:
            parser.error(f"{option}: {exc}")
    from arena.engine.gomoku import warm_up

    warm_up()
    openings = load_openings()[: args.openings]
    overrides = {key: int(value) for key, value in (item.split("=", 1) for item in args.set)}
    bot = local_player(args.bot, args.time_ms, args.clock, overrides)
    name = args.bot + "".join(f" {key}={value}" for key, value in overrides.items())
    results: list[tuple[str, Tally]] = []
    rival_ms = args.time_ms if args.vs_time_ms is None else args.vs_time_ms
    if rival_ms != args.time_ms:
        name += f" ({args.time_ms} ms vs {rival_ms} ms)"
    for rival_name in args.vs:
        preset, _, revision = rival_name.partition("@")
        helper = RevisionPlayer(preset, revision, rival_ms, args.clock) if revision else None
        rival = helper or local_player(preset, rival_ms, args.clock)
        results.append((rival_name, match(name, bot, rival_name, rival, openings)))
        if helper:
            helper.close()
    for rival_name, tally in results:
        losses = tally.games - tally.wins - tally.draws
        print(f"{name} vs {rival_name}: {tally.points:.1f}/{tally.games} "
              f"({100 * tally.points / tally.games:.0f}%), +{tally.wins} ={tally.draws} "
              f"-{losses}, {elo_line(tally)}")


if __name__ == "__main__":
    main()
