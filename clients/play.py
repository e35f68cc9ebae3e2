"""`arena play`: a game in the terminal, in any of the seeds' four modes.

Human vs human, human vs bot, bot vs human and bot vs bot, on one board, from the
standard start, the international Reversi opening, a custom position, or (Gomoku) an
empty board. Everything runs in this process with the rules library and the engines: no
service is needed. Moves are read line by line from stdin, so a game can be piped in;
``quit`` or end of input stops early. The game is saved as an Arena native replay that
``arena match replay FILE`` opens.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from arena.clients.common import read_text_file

from arena.engine.api import Limits, SearchResult
from arena.errors import InvalidArgumentError
from arena.formats import Replay, ReplayMove, write_replay
from arena.games import PASS, Color, Position, new_position, position_from_text
from arena.textboard import board_summary, describe_outcome, render_board

MODES = {
    "human-human": ("human", "human"),
    "human-bot": ("human", "bot"),
    "bot-human": ("bot", "human"),
    "bot-bot": ("bot", "bot"),
}
DEFAULT_BOTS = {"othello": "lab-advanced", "gomoku": "sharpmoku-normal"}
QUIT_WORDS = ("q", "quit", "exit", "resign")


def add_play_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    play = sub.add_parser(
        "play", help="play in the terminal: human/bot vs human/bot, saved as a replay",
        description="Play a game in the terminal. Moves are read from stdin (d3, f13, ...); "
                    "'help' lists the legal moves, 'quit' (or end of input) stops. Passes "
                    "are played automatically and announced. Needs no running services.")
    play.add_argument("--game", choices=sorted(DEFAULT_BOTS), default="othello")
    play.add_argument("--variant", default=None,
                      help="Othello: standard (default) or international (empty-centre "
                           "opening); Gomoku: freestyle (default) or exact-five")
    play.add_argument("--size", type=int, default=None, help="Gomoku board size (default 15)")
    start = play.add_mutually_exclusive_group()
    start.add_argument("--start", default="", help="custom start position (text form)")
    start.add_argument("--board", type=Path, help="file holding a custom start position")
    play.add_argument("--mode", choices=sorted(MODES), default="human-bot",
                      help="who plays black-white (default human-bot)")
    play.add_argument("--bot", default=None,
                      help="the bot for the bot sides: a preset name or a JSON config file "
                           "(default lab-advanced / sharpmoku-normal)")
    play.add_argument("--black", default=None, help="black's bot (overrides --bot)")
    play.add_argument("--white", default=None, help="white's bot (overrides --bot)")
    play.add_argument("--bot-time-ms", type=int, default=1000, help="bot time per move")
    play.add_argument("--save", type=Path, default=None,
                      help="replay file to write (default $ARENA_HOME/games/play-<time>.json)")
    play.add_argument("--no-save", action="store_true", help="do not save the game")
    play.add_argument("--seed", type=int, default=0, help="seed for random choices")
    play.set_defaults(func=cmd_play)


# -- players --------------------------------------------------------------------------------


Chooser = Callable[[Position, list[int]], SearchResult]


@dataclass
class Player:
    name: str
    choose: Chooser | None = None  # None: a human at the keyboard

    @property
    def is_human(self) -> bool:
        return self.choose is None


def _presets(game: str) -> dict[str, dict[str, object]]:
    if game == "othello":
        from arena.engine.othello import PRESETS as othello_presets

        return dict(othello_presets)
    from arena.engine.gomoku import PRESETS as gomoku_presets

    return dict(gomoku_presets)


def _bot_config(game: str, which: str) -> tuple[str, dict[str, object]]:
    presets = _presets(game)
    if which in presets:
        return which, dict(presets[which])
    path = Path(which)
    if path.suffix == ".json" or path.exists():
        try:
            config = json.loads(read_text_file(path, "bot configuration"))
        except ValueError as exc:
            raise InvalidArgumentError(f"{path} is not JSON: {exc}") from None
        if not isinstance(config, dict):
            raise InvalidArgumentError(f"{path} must hold a JSON object (an engine config)")
        return path.stem, config
    raise InvalidArgumentError(
        f"unknown bot {which!r}: not a {game} preset ({', '.join(presets)}) nor a JSON file"
    )


def make_bot(game: str, which: str, time_ms: int, seed: int) -> Player:
    name, config = _bot_config(game, which)
    limits = Limits(time_ms=time_ms)
    rng = random.Random(seed)
    if game == "othello":
        from arena.engine.othello import choose_move as othello_move

        def choose_othello(position: Position, history: list[int]) -> SearchResult:
            if position.in_opening():  # type: ignore[attr-defined]
                # The international opening's centre moves capture nothing and are not
                # searched: like the console seed's AI, pick a free centre square.
                move = rng.choice(position.legal_moves())
                return SearchResult(move, 0, 0, 0, 0.0, [move])
            board_text = " ".join(position.to_text().split()[:2])
            return othello_move(board_text, config, limits, seed=rng.randrange(1 << 30))

        return Player(name, choose_othello)

    from arena.engine.gomoku import choose_move as gomoku_move

    def choose_gomoku(position: Position, history: list[int]) -> SearchResult:
        return gomoku_move(position.size, position.variant, history, config, limits,
                           seed=rng.randrange(1 << 30))

    return Player(name, choose_gomoku)


# -- the game -------------------------------------------------------------------------------


def start_position(args: argparse.Namespace) -> Position:
    text = args.start
    if args.board is not None:
        text = read_text_file(args.board, "board").strip()
    if not text:
        return new_position(args.game, args.variant, args.size)
    position = position_from_text(args.game, text)
    if args.variant and args.variant != position.variant:
        raise InvalidArgumentError(
            f"the start position is {position.variant}, not {args.variant}")
    if position.is_game_over():
        raise InvalidArgumentError(f"the game is already over in {text!r}")
    return position


@dataclass
class Game:
    position: Position
    black: Player
    white: Player
    out: TextIO
    keys: TextIO

    def __post_init__(self) -> None:
        self.replay = Replay.new(self.position, self.black.name, self.white.name)
        self.history: list[int] = []
        self.last_move: int | None = None
        self.stopped = False

    def player(self) -> Player:
        return self.black if self.position.turn is Color.BLACK else self.white

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def show(self) -> None:
        marks = [] if self.position.is_game_over() else self.position.legal_moves()
        self.say(render_board(self.position, self.last_move, marks))
        self.say(board_summary(self.position))

    def play(self) -> None:
        self.show()
        while not self.position.is_game_over() and not self.stopped:
            mover = self.position.turn.name.lower()
            player = self.player()
            if self.position.legal_moves() == [PASS]:
                self.say(f"{mover} ({player.name}) has no legal move and passes")
                self._apply(PASS, 0)
                continue
            if player.is_human:
                move = self._ask(mover)
                if move is None:
                    self.stopped = True
                    break
                self._apply(move, 0)
            else:
                self._bot_move(mover, player)
            self.show()
        outcome = self.position.outcome()
        self.replay.outcome = outcome
        if outcome is not None:
            self.say(f"game over: {describe_outcome(outcome)}")
        else:
            self.say(f"game stopped after {len(self.history)} moves")

    def _bot_move(self, mover: str, player: Player) -> None:
        assert player.choose is not None
        self.say(f"{mover} ({player.name}) is thinking...")
        started = time.monotonic()
        result = player.choose(self.position.copy(), list(self.history))
        spent = int((time.monotonic() - started) * 1000)
        name = self.position.move_to_str(result.move)
        self.say(f"{mover} ({player.name}) plays {name} "
                 f"(score {result.score:+d}, depth {result.depth}, {spent} ms)")
        self._apply(result.move, spent, result)

    def _apply(self, move: int, time_ms: int, result: SearchResult | None = None) -> None:
        self.position.push(move)
        self.history.append(move)
        self.last_move = None if move == PASS and self.position.game == "othello" else move
        record = ReplayMove(move=move, time_ms=time_ms)
        if result is not None:
            record = ReplayMove(move=move, time_ms=time_ms, score=result.score,
                                depth=result.depth, nodes=result.nodes, pv=list(result.pv))
        self.replay.moves.append(record)

    def _ask(self, mover: str) -> int | None:
        """Read moves until a legal one; None on quit or end of input."""
        while True:
            print(f"{mover}> ", end="", file=self.out, flush=True)
            line = self.keys.readline()
            if not line:
                self.say("")
                return None
            word = line.strip()
            if not self.keys.isatty():  # echo piped input so the transcript reads well
                self.say(word)
            if not word:
                continue
            if word.lower() in QUIT_WORDS:
                return None
            if word.lower() in ("help", "?", "moves"):
                self.say("legal moves: " + self._legal_names() + "; 'quit' stops")
                continue
            try:
                return self.position.parse_move(word)
            except ValueError:
                self.say(f"{word!r} is not a legal move here; legal: {self._legal_names()}")

    def _legal_names(self) -> str:
        return " ".join(self.position.move_to_str(m) for m in self.position.legal_moves())


def _players(args: argparse.Namespace) -> tuple[Player, Player]:
    default_bot = args.bot or DEFAULT_BOTS[args.game]
    kinds = MODES[args.mode]
    chosen = (args.black, args.white)
    players = []
    for index, (kind, override) in enumerate(zip(kinds, chosen, strict=True)):
        if kind == "human":
            if override:
                raise InvalidArgumentError(
                    f"--{('black', 'white')[index]} names a bot but mode {args.mode} has a "
                    "human on that side")
            players.append(Player("human"))
        else:
            players.append(make_bot(args.game, override or default_bot, args.bot_time_ms,
                                    args.seed + index))
    return players[0], players[1]


def _save_path(args: argparse.Namespace) -> Path:
    if args.save is not None:
        return Path(args.save)
    home = Path(args.home or os.environ.get("ARENA_HOME") or ".arena")
    return home / "games" / time.strftime("play-%Y%m%d-%H%M%S.json")


def cmd_play(args: argparse.Namespace) -> int:
    position = start_position(args)
    if args.game == "gomoku" and (args.start or args.board) and "bot" in args.mode:
        raise InvalidArgumentError("Gomoku bots play from the empty board: drop --start/--board")
    black, white = _players(args)
    path = None if args.no_save else _save_path(args)
    game = Game(position, black, white, sys.stdout, sys.stdin)
    game.say(f"{position.game} ({position.variant}): black X {black.name} vs "
             f"white O {white.name}")
    try:
        game.play()
    finally:
        if path is not None and game.history:
            game.replay.metadata = {"mode": args.mode,
                                    "status": "finished" if game.replay.outcome else "stopped"}
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(write_replay(game.replay))
            game.say(f"saved {path}; view it with: arena match replay {path}")
    return 0

