"""Each game's built-in engine behind one interface, :class:`GameEngine`.

Callers never branch on the game: they ask its description for the engine
(``game("othello").engine()``) and use the same calls for both. A bot's configuration is
validated and hashed once, by :meth:`GameEngine.prepare`, into a :class:`PreparedBot`
that a worker keeps for every later move of that bot version.

The two engines take the game in different shapes (the Othello engine searches from a
position, the Gomoku engine from the move list that reached it); the adapters hide that.
"""

from __future__ import annotations

import importlib
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from arena.engine.api import Limits, SearchResult, StopFlag
from arena.errors import FieldViolation, InvalidArgumentError
from arena.games.base import Color
from arena.games.gomoku import GomokuBoard, moves_from_empty
from arena.games.othello import OthelloBoard

# KReversi breaks ties between equal root moves at random while the board holds at most
# this many discs (the Othello engine's rule); only then does the seed change the move.
_OTHELLO_RANDOM_TIE_MAX_DISCS = 14


@dataclass(frozen=True)
class PreparedBot:
    """A built-in bot's configuration, validated once; cheap to use for every move."""

    game: str
    config: Mapping[str, object]
    evaluator_hash: str  # what decides its moves (the shared search cache keys on it)
    seed_sensitive: bool  # the seed can change its move somewhere in a game


class GameEngine(Protocol):
    """What every game's engine offers (see the module docstring)."""

    game: str

    @property
    def presets(self) -> Mapping[str, Mapping[str, object]]: ...

    @property
    def evaluators(self) -> frozenset[str]: ...

    def validate_config(self, config: object) -> list[FieldViolation]: ...

    def evaluator_hash(self, config: Mapping[str, object]) -> str: ...

    def prepare(self, config: object) -> PreparedBot: ...

    def choose_move(self, bot: PreparedBot, position_text: str, history: Sequence[int],
                    limits: Limits, stop: StopFlag | None = None, tree_budget: int = 0,
                    seed: int = 0) -> SearchResult: ...

    def seed_phase(self, position_text: str) -> bool: ...

    def redraw(self, result: SearchResult, seed: int) -> SearchResult: ...

    def warm_up(self) -> None: ...

    def warm_thread(self) -> None:
        """Ready the calling thread's search tables, before its first search (which would
        otherwise fault them in inside its time)."""
        ...

    def exact_score(self, position_text: str, max_nodes: int) -> int | None:
        """The final score of perfect play from the position for the side to move (disc
        difference, the empty squares to the winner), or None when it is not proved within
        ``max_nodes`` (or the game has no exact solver: ``Game.exact_empties`` is 0)."""
        ...


class _Engine:
    """What both adapters share: the engine module's config API and preparation."""

    game = ""
    module_name = ""  # the engine package, imported on first use (it loads numba)

    def _module(self) -> types.ModuleType:
        return importlib.import_module(self.module_name)

    @property
    def presets(self) -> Mapping[str, Mapping[str, object]]:
        presets: Mapping[str, Mapping[str, object]] = self._module().PRESETS
        return presets

    @property
    def evaluators(self) -> frozenset[str]:
        """Every evaluator the engine offers (each one has at least one preset)."""
        return frozenset(str(config["evaluator"]) for config in self.presets.values())

    def validate_config(self, config: object) -> list[FieldViolation]:
        if not isinstance(config, dict):
            return [FieldViolation("config", f"must be an object, got {type(config).__name__}")]
        violations: list[FieldViolation] = self._module().validate_config(config)
        return violations

    def evaluator_hash(self, config: Mapping[str, object]) -> str:
        return str(self._module().evaluator_hash(dict(config)))

    def prepare(self, config: object) -> PreparedBot:
        violations = self.validate_config(config)
        if violations:
            raise InvalidArgumentError.for_fields(violations)
        assert isinstance(config, dict)
        return PreparedBot(self.game, dict(config), self.evaluator_hash(config),
                           self._seed_sensitive(config))

    def _seed_sensitive(self, config: dict[str, object]) -> bool:
        return False

    def redraw(self, result: SearchResult, seed: int) -> SearchResult:
        return result

    def warm_up(self) -> None:
        self._module().warm_up()

    def warm_thread(self) -> None:
        self._module().warm_thread()

    def exact_score(self, position_text: str, max_nodes: int) -> int | None:
        return None


class OthelloEngine(_Engine):
    game = "othello"
    module_name = "arena.engine.othello"

    def _seed_sensitive(self, config: dict[str, object]) -> bool:
        normalized = self._module().normalize_config(config)
        return bool(normalized.get("random_tied_root_moves", False))

    def choose_move(self, bot: PreparedBot, position_text: str, history: Sequence[int],
                    limits: Limits, stop: StopFlag | None = None, tree_budget: int = 0,
                    seed: int = 0) -> SearchResult:
        OthelloBoard.from_text(position_text)  # the rules library's clear errors first
        result: SearchResult = self._module().choose_move(
            position_text, dict(bot.config), limits, stop, tree_budget, seed)
        return result

    def seed_phase(self, position_text: str) -> bool:
        squares = position_text.split()[0] if position_text.split() else ""
        return sum(1 for ch in squares if ch in "XO") <= _OTHELLO_RANDOM_TIE_MAX_DISCS

    def redraw(self, result: SearchResult, seed: int) -> SearchResult:
        """``result`` as its search would have ended under ``seed``: a search never depends
        on the seed, only the final draw among tied root moves does (KReversi's rule)."""
        if not result.ties:
            return result
        from arena.engine.othello.engine import pick_tied

        return pick_tied(result, seed)

    def exact_score(self, position_text: str, max_nodes: int) -> int | None:
        try:
            result = self._module().solve(position_text, limits=Limits(nodes=max_nodes))
        except TimeoutError:
            return None
        return int(result.score)


class GomokuEngine(_Engine):
    game = "gomoku"
    module_name = "arena.engine.gomoku"

    def _seed_sensitive(self, config: dict[str, object]) -> bool:
        return config.get("evaluator") == "sharpmoku"  # its random first move

    def choose_move(self, bot: PreparedBot, position_text: str, history: Sequence[int],
                    limits: Limits, stop: StopFlag | None = None, tree_budget: int = 0,
                    seed: int = 0) -> SearchResult:
        board = GomokuBoard.from_text(position_text)
        moves = moves_from_empty(board, history)
        result: SearchResult = self._module().choose_move(
            board.size, board.variant, moves, dict(bot.config), limits, stop, tree_budget, seed)
        return result

    def seed_phase(self, position_text: str) -> bool:
        board = GomokuBoard.from_text(position_text)  # only SharpMoku's first move is drawn
        return board.count(Color.BLACK) + board.count(Color.WHITE) == 0


OTHELLO = OthelloEngine()
GOMOKU = GomokuEngine()
