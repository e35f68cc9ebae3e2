"""Trying protocol engines on one machine, without the services: a catalog check (every
engine starts and plays a move), smoke positions with known answers, and a match between
one engine and an Arena bot played in-process, as an engine author (or an operator
installing an engine) would run them.

Moves of the protocol engine go through the same pool, sandbox and clients a worker uses;
the Arena bot's moves come from Arena's own engine; the rules library applies both.
An engine failure loses that game, with its typed reason and the engine's last stderr
lines.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from arena.services.worker.engines.catalog import Catalog, EngineSpec
from arena.services.worker.engines.client import PlayLimits
from arena.services.worker.engines.failures import EngineFailure
from arena.services.worker.engines.pool import EnginePool

from arena.engine.adapters import PreparedBot
from arena.engine.api import Limits
from arena.formats.obf import parse_obf_file
from arena.games import Color, GomokuBoard, Position, new_position
from arena.games import game as game_named
from arena.protocols import gomocup

Say = Callable[[str], None]


@dataclass(frozen=True)
class MatchSettings:
    games: int = 2
    move_time_ms: int = 1000
    size: int = 15  # Gomoku board size
    rule: str | None = None  # Othello variant or Gomoku rule (default: the game's)
    opening_plies: int = 0  # random moves before the bots take over, for variety
    seed: int = 0


@dataclass
class MatchScore:
    wins: int = 0
    draws: int = 0
    losses: int = 0
    failures: list[str] = field(default_factory=list)
    engine_ms: list[float] = field(default_factory=list)


def check_catalog(catalog: Catalog, pool: EnginePool, say: Say, move_time_ms: int = 5000
                  ) -> bool:
    """Start every engine and ask it for one move in each of its games' start positions."""
    healthy = True
    for spec in catalog.engines.values():
        for game in spec.games:
            start = new_position(game)
            try:
                answer = pool.play(spec, start.to_text(), [], PlayLimits(move_time_ms))
                say(f"ok    {spec.name} ({game}): {start.move_to_str(answer.move)} in "
                    f"{answer.elapsed_ms:.0f} ms, checksum {spec.checksum[:16]}")
            except EngineFailure as failure:
                healthy = False
                say(f"FAIL  {spec.name} ({game}): {failure.report()}")
    return healthy


@dataclass(frozen=True)
class SmokePosition:
    """A position and the moves that are right in it (``score``: the exact value of the
    best move for the side to move, when known)."""

    name: str
    position: str
    history: tuple[int, ...]
    right: frozenset[int]
    score: int | None = None


def gomocup_smoke_positions(text: str, size: int = 15) -> list[SmokePosition]:
    """The BOARD blocks of a smoke file, each after a ``# X) ... expect a,b or c,d`` line."""
    found = []
    parser = gomocup.CommandParser()
    name, right = "", frozenset[int]()
    for line in text.splitlines():
        heading = re.match(r"#\s*([A-Za-z0-9]+)\).*expect ([\d,]+(?: or [\d,]+)*)", line)
        if heading:
            name = heading.group(1)
            answers = [xy.split(",") for xy in heading.group(2).split(" or ")]
            right = frozenset(gomocup.point(int(x), int(y), size) for x, y in answers)
        command = None if line.startswith("#") else parser.feed(line)
        if isinstance(command, gomocup.Board):
            moves = gomocup.moves_from_board(command, size)
            board = GomokuBoard(size, "freestyle")
            for move in moves:
                board.push(move)
            found.append(SmokePosition(name, board.to_text(), tuple(moves), right))
    return found


def obf_smoke_positions(text: str) -> list[SmokePosition]:
    """OBF positions with their best moves and exact score."""
    found = []
    for index, entry in enumerate(parse_obf_file(text), start=1):
        best = max(score for _, score in entry.scores)
        right = frozenset(move for move, score in entry.scores if score == best)
        found.append(SmokePosition(str(index), entry.board.to_text(), (), right, best))
    return found


def run_smoke(spec: EngineSpec, positions: list[SmokePosition], pool: EnginePool,
              limits: PlayLimits, say: Say) -> int:
    """Ask the engine each position; returns how many it got right (the move, and the
    score where one is known and the engine reported one)."""
    right = 0
    for smoke in positions:
        try:
            answer = pool.play(spec, smoke.position, smoke.history, limits)
        except EngineFailure as failure:
            say(f"FAIL  {smoke.name}: {failure.report()}")
            continue
        except ValueError as exc:  # a position this engine cannot be given (GTP: no start)
            say(f"CANNOT {smoke.name}: {exc}")
            continue
        reported = answer.search.score
        score_ok = smoke.score is None or reported is None or reported == smoke.score
        ok = answer.move in smoke.right and score_ok
        right += ok
        say(f"{'ok  ' if ok else 'WRONG'} {smoke.name}: move {answer.move} (right: "
            f"{sorted(smoke.right)}), score {reported} (exact: {smoke.score}), depth "
            f"{answer.search.depth}, {answer.elapsed_ms:.0f} ms")
    return right


def play_match(spec: EngineSpec, preset: str, settings: MatchSettings, pool: EnginePool,
               say: Say) -> MatchScore:
    """``settings.games`` games, the engine Black in the even ones."""
    game = spec.games[0]
    bot = game_named(game).engine().prepare(dict(game_named(game).engine().presets[preset]))
    score = MatchScore()
    for index in range(settings.games):
        engine_color = Color.BLACK if index % 2 == 0 else Color.WHITE
        board = _opening(game, settings, random.Random(settings.seed + index // 2))
        failure = _play_game(board, engine_color, spec, bot, settings, pool, score)
        _score_game(board, engine_color, failure, score)
        result = failure.report() if failure else _result_text(board)
        say(f"game {index + 1}: {spec.name} as {engine_color.name.lower()} vs {preset}: "
            f"{result} after {len(board.move_stack)} moves")
    return score


def _opening(game: str, settings: MatchSettings, rng: random.Random) -> Position:
    size = settings.size if len(game_named(game).sizes) > 1 else None
    board = new_position(game, settings.rule, size)
    for _ in range(settings.opening_plies):
        if board.is_game_over():
            break
        board.push(rng.choice(board.legal_moves()))
    return board


def _play_game(board: Position, engine_color: Color, spec: EngineSpec, bot: PreparedBot,
               settings: MatchSettings, pool: EnginePool,
               score: MatchScore) -> EngineFailure | None:
    arena_engine = game_named(board.game).engine()
    while not board.is_game_over():
        text, history = board.to_text(), board.move_stack
        if board.turn is engine_color:
            started = time.monotonic()
            try:
                move = pool.play(spec, text, history, PlayLimits(settings.move_time_ms)).move
            except EngineFailure as failure:
                return failure
            score.engine_ms.append((time.monotonic() - started) * 1000)
        else:
            move = arena_engine.choose_move(bot, text, history,
                                            Limits(time_ms=settings.move_time_ms),
                                            seed=settings.seed).move
        board.push(move)
    return None


def _score_game(board: Position, engine_color: Color, failure: EngineFailure | None,
                score: MatchScore) -> None:
    if failure is not None:
        score.losses += 1
        score.failures.append(failure.reason.value)
        return
    outcome = board.outcome()
    assert outcome is not None
    if outcome.winner is None:
        score.draws += 1
    elif outcome.winner is engine_color:
        score.wins += 1
    else:
        score.losses += 1


def _result_text(board: Position) -> str:
    outcome = board.outcome()
    assert outcome is not None
    return f"{outcome.result} ({outcome.black_score}-{outcome.white_score})"
