"""Where Arena's Gomoku games are lost: a teacher engine's judgement along each game.

    python bench/gomoku_losses.py GAMES.jsonl --teacher rapfi-n100000 \\
        --catalog /path/engines.toml --teacher-scale 200 [--vct-plies 21 --vct-nodes 2000000]

``GAMES.jsonl`` is what ``bench/engine_strength.py --keep-games`` wrote. For every game
the built-in bot did not win, a catalog engine (the same teacher as ``arena engine train
gomoku --teacher``) judges the position after each of the bot's moves, and the bot's
chance is read from its score as ``sigmoid(-score / teacher_scale)`` (the opponent is to
move); a proven win for the opponent is a loss outright, as is a five left open, and a move
that fills the board a draw. Printed:

- per game, the bot's chance after each of its moves (``L``: proven lost), and its
  *decisive move*: the first after which the teacher proves the loss;
- whether the opponent's win after the decisive move is a threat sequence Arena's own
  threat search finds (a VCT of at most ``--vct-plies`` plies within ``--vct-nodes``
  nodes), or something deeper;
- over the games, the bot's mean chance after its 1st, 2nd, ... move, and how far below an
  even game it stood just before the decisive move.

The teacher's judgements take about as long as its node limit allows (Rapfi at 100,000
nodes: about 50 ms a position).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from pathlib import Path
from typing import Any

from arena.services.worker.engines.teacher import catalog_teacher

from arena.engine.gomoku.board import FREESTYLE, is_win
from arena.engine.gomoku.bots import threat_line
from arena.engine.gomoku.cli import checked_teacher_ms
from arena.engine.gomoku.patterns import FIVE, setup, stat
from arena.engine.gomoku.position import GomokuPositionError, position_from_moves
from arena.engine.gomoku.train import SIZE, teacher_position
from arena.engine.teacher import Judgement, Teacher
from arena.engine.tools import checked_positive

LOST = -1.0  # the bot's chance, as printed, when the teacher proves the loss
MAX_EXPONENT = 700.0  # within math.exp's range: a chance that small is still above 0


def teacher_parser(description: str) -> argparse.ArgumentParser:
    """A parser of the kept games file and the teacher's options (this bench's and
    ``gomoku_move_quality.py``'s)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("games", type=Path, help="games file of engine_strength --keep-games")
    parser.add_argument("--teacher", required=True, help="the catalog's judging engine")
    parser.add_argument("--catalog", required=True, help="engine catalog (TOML)")
    parser.add_argument("--teacher-scale", type=float, default=200.0,
                        help="the teacher's units per unit of log-odds (Rapfi: 200)")
    parser.add_argument("--teacher-ms", type=int, default=10_000,
                        help="the teacher's time per position (bound it by nodes instead)")
    return parser


def parse_teacher_args(parser: argparse.ArgumentParser) -> argparse.Namespace:
    """``parser``'s arguments, the teacher's checked as ``arena engine train`` checks them."""
    args = parser.parse_args()
    try:
        checked_positive("--teacher-scale", args.teacher_scale)
        checked_teacher_ms(args.teacher_ms)
    except ValueError as exc:
        parser.error(str(exc))
    return args


def parse_args() -> argparse.Namespace:
    parser = teacher_parser(__doc__.split("\n")[0])
    parser.add_argument("--vct-plies", type=int, default=21)
    parser.add_argument("--vct-nodes", type=int, default=2_000_000)
    return parse_teacher_args(parser)


def decided(moves: list[int]) -> float | None:
    """The bot's chance after ``moves`` (its own move last) where no teacher is needed: 1
    when that move made five, 0.5 when it filled the board, 0 when the opponent has a five
    to play; None otherwise."""
    cells, _pat, st, _table = setup(SIZE, FREESTYLE, moves)
    if is_win(cells, SIZE, moves[-1], FREESTYLE):
        return 1.0
    if len(moves) == SIZE * SIZE:
        return 0.5
    return 0.0 if stat(st, 1 + len(moves) % 2, FIVE) > 0 else None


def chance_after(judgement: Judgement, scale: float) -> float:
    """The bot's chance in a position the teacher judged with the opponent to move."""
    if judgement.exact:  # a proven win of the opponent (> 0), a proven loss, or a draw
        return 0.0 if judgement.score > 0 else 1.0 if judgement.score < 0 else 0.5
    return 1 / (1 + math.exp(min(judgement.score / scale, MAX_EXPONENT)))


def chances(teacher: Teacher, scale: float, game: dict[str, Any]) -> list[tuple[int, float]]:
    """(ply of the bot's move, the bot's chance after it) for each of the bot's moves."""
    moves = list(game["opening"]) + list(game["moves"])
    parity = 0 if game["builtin"] == "black" else 1  # Black plays the even plies
    plies = [ply for ply in range(len(game["opening"]), len(moves)) if ply % 2 == parity]
    known = {ply: decided(moves[: ply + 1]) for ply in plies}
    asked = [ply for ply, chance in known.items() if chance is None]
    judgements = teacher.judge([teacher_position(moves[: ply + 1]) for ply in asked], 1)
    judged = {ply: chance_after(j, scale) for ply, j in zip(asked, judgements, strict=True)}
    found = []
    for ply, chance in known.items():
        found_chance = judged[ply] if chance is None else chance
        found.append((ply, LOST if found_chance == 0 else found_chance))
    return found


GAME_FIELDS: dict[str, type | tuple[type, ...]] = {
    "match": str, "builtin": str, "points": (float, int, type(None)), "opening": list,
    "moves": list}


def read_games(path: Path) -> list[dict[str, Any]]:
    """The games of a ``--keep-games`` file, each a legal game (it may have ended with its
    last move); ``SystemExit`` with the reason if it is not one."""
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise SystemExit(f"{path}: {exc.strerror}") from None
    games = []
    for number, line in enumerate(lines, 1):
        try:
            game = json.loads(line)
        except ValueError:
            raise SystemExit(f"{path}:{number}: not JSON (a file engine_strength.py "
                             "--keep-games wrote?)") from None
        if not isinstance(game, dict) or any(not isinstance(game.get(k), t)
                                             for k, t in GAME_FIELDS.items()):
            raise SystemExit(f"{path}:{number}: not a kept game (fields "
                             f"{', '.join(GAME_FIELDS)})")
        moves = game["opening"] + game["moves"]
        try:  # a game in progress before its last move, and that move on an empty cell
            position_from_moves(SIZE, "freestyle", moves[:-1])
            if moves and not (type(moves[-1]) is int and 0 <= moves[-1] < SIZE * SIZE
                              and moves[-1] not in moves[:-1]):
                raise GomokuPositionError(f"the last move, {moves[-1]!r}, is no empty cell")
        except GomokuPositionError as exc:
            raise SystemExit(f"game {game['match']}, before ply {len(moves) - 1}: {exc}"
                             ) from None
        games.append(game)
    return games


def main() -> None:
    args = parse_args()
    games = read_games(args.games)
    try:
        teacher = catalog_teacher(args.catalog, args.teacher, "gomoku", args.teacher_ms)
    except ValueError as exc:
        raise SystemExit(str(exc)) from None
    lost = [g for g in games if g["points"] is not None and g["points"] < 1]
    print(f"{len(games)} games, {len(lost)} not won by the built-in bot; judged by "
          f"{args.teacher}")
    by_move: dict[int, list[float]] = {}
    before: list[float] = []
    kinds = {"vct": 0, "deeper": 0, "never proven": 0}
    for game in lost:
        line = chances(teacher, args.teacher_scale, game)
        shown = " ".join(f"{ply}:{'L' if c == LOST else round(100 * c)}" for ply, c in line)
        decisive = next((i for i, (_, c) in enumerate(line) if c == LOST), None)
        for k, (_, c) in enumerate(line):
            by_move.setdefault(k, []).append(0.0 if c == LOST else c)
        if decisive is None:
            kinds["never proven"] += 1
            how = "no decisive move (never proven lost)"
        else:
            ply = line[decisive][0]
            moves = (list(game["opening"]) + list(game["moves"]))[: ply + 1]
            if decisive > 0:
                before.append(line[decisive - 1][1])
            open_five = decided(moves) == 0
            vct = [] if open_five else threat_line(
                position_from_moves(SIZE, "freestyle", moves), args.vct_plies, False,
                args.vct_nodes)
            kinds["vct" if vct or open_five else "deeper"] += 1
            how = f"decisive move at ply {ply}"
            if decisive > 0:
                how += f", after {100 * line[decisive - 1][1]:.0f}%"
            if open_five:
                how += "; a five left open"
            elif vct:
                how += f"; the opponent's win: a VCT of {len(vct)} plies"
            else:
                how += f"; no VCT of {args.vct_plies} plies in {args.vct_nodes} nodes"
        print(f"  {game['match']} ({game['builtin']}, {game['points']:g}): {how}")
        print(f"    {shown}")
    print("the bot's mean chance after its k-th move (games still going):")
    print("  " + " ".join(f"{k + 1}:{100 * statistics.fmean(v):.0f}%"
                          for k, v in sorted(by_move.items()) if len(v) >= max(1, len(lost) // 4)))
    if before:
        print(f"chance just before the decisive move: median {100 * statistics.median(before):.0f}%"
              f", mean {100 * statistics.fmean(before):.0f}% ({len(before)} games)")
    print(f"decisive moves: {kinds['vct']} lost to a VCT (or a five) Arena's threat search "
          f"finds, {kinds['deeper']} to a deeper win; never proven lost: {kinds['never proven']}")


if __name__ == "__main__":
    main()
