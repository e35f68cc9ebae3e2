"""One entry point for every built-in engine: pick Othello or Gomoku from the game.

Workers, the CLI and the benchmarks call :func:`choose_move` with the game as plain data
(game name, current position text, the moves that led to it, the bot's config) and never
need to know that the Othello engine searches from a position while the Gomoku engine
searches from a move list.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from arena.engine.api import Limits, SearchResult, StopFlag
from arena.errors import FieldViolation, InvalidArgumentError
from arena.games import Color, GomokuBoard, OthelloBoard, UnknownGameError, position_from_text

GAMES = ("othello", "gomoku")
# KReversi breaks ties between equal root moves at random while the board holds at most
# this many discs (the Othello engine's rule); only then does the seed change the move.
_OTHELLO_RANDOM_TIE_MAX_DISCS = 14


def _check_game(game: str) -> None:
    if game not in GAMES:
        raise UnknownGameError(f"unknown game {game!r}; known: {list(GAMES)}")


def validate_config(game: str, config: object) -> list[FieldViolation]:
    """Every problem with a bot ``config`` for ``game``; empty when it can play."""
    _check_game(game)
    if not isinstance(config, dict):
        return [FieldViolation("config", f"must be an object, got {type(config).__name__}")]
    if game == "othello":
        from arena.engine import othello

        return othello.validate_config(config)
    from arena.engine import gomoku

    return gomoku.validate_config(config)


def evaluator_hash(game: str, config: dict[str, object]) -> str:
    """The engine's hash of what decides the config's moves (transposition cache key)."""
    _check_game(game)
    if game == "othello":
        from arena.engine import othello

        return othello.evaluator_hash(config)
    from arena.engine import gomoku

    return gomoku.evaluator_hash(config)


def presets(game: str) -> Mapping[str, dict[str, object]]:
    """The engine's named configurations for ``game``."""
    _check_game(game)
    if game == "othello":
        from arena.engine import othello

        return othello.PRESETS
    from arena.engine import gomoku

    return gomoku.PRESETS


def seed_sensitive(game: str, config: dict[str, object]) -> bool:
    """True when ``config`` draws on the seed somewhere in a game (a random tie rule or
    a random first move); such a bot's results are keyed on the seed where it matters."""
    _check_game(game)
    if game == "othello":
        from arena.engine import othello

        return bool(othello.normalize_config(config).get("random_tied_root_moves", False))
    return config.get("evaluator") == "sharpmoku"


def seed_phase(game: str, position_text: str) -> bool:
    """True in the positions where a seed-sensitive bot's seed may change its move."""
    _check_game(game)
    if game == "othello":
        squares = position_text.split()[0] if position_text.split() else ""
        discs = sum(1 for ch in squares if ch in "XO")
        return discs <= _OTHELLO_RANDOM_TIE_MAX_DISCS
    # SharpMoku opens at a random point; every later move is deterministic.
    board = GomokuBoard.from_text(position_text)
    return board.count(Color.BLACK) + board.count(Color.WHITE) == 0


def redraw(game: str, result: SearchResult, seed: int) -> SearchResult:
    """``result`` as its search would have ended under ``seed``.

    A search never depends on the seed; only a final draw among equally good root moves
    does (``result.ties``, KReversi's random tie rule), so a result found under one seed is
    reused under another by drawing again. Without ties the result is returned as it is.
    """
    _check_game(game)
    if game == "othello" and result.ties:
        from arena.engine.othello.engine import pick_tied

        return pick_tied(result, seed)
    return result


def gomoku_moves(position_text: str, history: Sequence[int]) -> list[int]:
    """The move list from the empty board that reaches ``position_text``.

    ``history`` holds the last moves played (a suffix of the game). Stones that are not
    explained by ``history`` (a custom start position) are put first, alternating black
    and white, which reaches the same board: the Gomoku engine only looks at the stones.
    """
    board = GomokuBoard.from_text(position_text)
    recent = list(history)
    if len(set(recent)) != len(recent):
        raise InvalidArgumentError(f"history {recent} repeats a point")
    black = board.stones(Color.BLACK)
    white = board.stones(Color.WHITE)
    # Walk the history backwards from the side that moved last.
    color = board.turn.other
    for move in reversed(recent):
        if board.piece_at(move) is not color:
            raise InvalidArgumentError(
                f"history move {move} is not a {color.name.lower()} stone in {position_text!r}"
            )
        color = color.other
    played = set(recent)
    early_black = [s for s in black if s not in played]
    early_white = [s for s in white if s not in played]
    if len(early_black) - len(early_white) not in (0, 1):
        raise InvalidArgumentError(
            f"history {recent} does not end the game in {position_text!r}"
        )
    prefix: list[int] = []
    for index, stone in enumerate(early_black):
        prefix.append(stone)
        if index < len(early_white):
            prefix.append(early_white[index])
    return prefix + recent


def choose_move(
    game: str,
    position_text: str,
    history: Sequence[int],
    config: dict[str, object],
    limits: Limits,
    stop: StopFlag | None = None,
    tree_budget: int = 0,
    seed: int = 0,
    *,
    validated: bool = False,
) -> SearchResult:
    """The move the configured built-in bot plays in ``position_text``.

    ``history`` is the list of moves that led to the position (only Gomoku uses it; it
    may be empty or a suffix). Raises ``InvalidArgumentError`` for a bad config and a
    ``ValueError`` subclass for a bad position. ``validated=True`` skips re-checking a
    config the caller has already validated (workers run the same bot many times).
    """
    _check_game(game)
    violations = [] if validated else validate_config(game, config)
    if violations:
        raise InvalidArgumentError.for_fields(violations)
    if game == "othello":
        from arena.engine import othello

        OthelloBoard.from_text(position_text)  # the rules library's clear errors first
        return othello.choose_move(position_text, config, limits, stop, tree_budget, seed)
    from arena.engine import gomoku

    board = position_from_text("gomoku", position_text)
    moves = gomoku_moves(position_text, history)
    return gomoku.choose_move(
        board.size, board.variant, moves, config, limits, stop, tree_budget, seed
    )


def warm_up(games: Sequence[str] = GAMES) -> None:
    """Compile (or load from numba's cache) every kernel the games' engines use."""
    for game in games:
        _check_game(game)
        if game == "othello":
            from arena.engine import othello

            othello.warm_up()
        else:
            from arena.engine import gomoku

            gomoku.warm_up()
