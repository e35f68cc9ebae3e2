"""`arena play`: a game in the terminal, in any of the seeds' four modes.

Human vs human, human vs bot, bot vs human and bot vs bot, on one board, from the
standard start, the international Reversi opening, a custom position, or (Gomoku) an
empty board. The game runs in this process with the rules library and the game's engine
(``game(name).engine()``); a bot is a preset, a bot file, a JSON engine configuration or
a bot registered in the running stack (read from the registry, then played here). Moves
are read line by line from stdin, so a game can be piped in; ``resign`` gives the game to
the other side, ``quit`` or end of input stops early. The game is saved as an Arena
native replay that ``arena match replay FILE`` opens.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from arena.clients.common import (
    TOO_LONG_LINE,
    NotAllowedWith,
    client_from_args,
    given_text,
    int32,
    int64,
    parse_bot_ref,
    read_position_file,
    read_text_file,
    typed_line,
    write_output,
)
from arena.clients.match_commands import start_of

from arena.argtypes import integer_in
from arena.bots import apply_preset, builtin_config
from arena.bots.botfile import BotFileError, parse_bot_file
from arena.documents import read_json, refuse_overwrite
from arena.engine.adapters import PreparedBot
from arena.engine.api import MAX_TIME_MS, Limits, SearchResult
from arena.errors import InvalidArgumentError, NotFoundError, UnavailableError
from arena.formats import Replay, ReplayMove, write_replay
from arena.games import GAME_NAMES, PASS, Color, Game, Outcome, Position, Termination, game
from arena.text import shown
from arena.textboard import board_summary, describe_outcome, legal_marks, render_board
from arena.v1 import bots_pb2

MODES = {
    "human-human": ("human", "human"),
    "human-bot": ("human", "bot"),
    "bot-human": ("bot", "human"),
    "bot-bot": ("bot", "bot"),
}
QUIT_WORDS = ("q", "quit", "exit")
RESIGN_WORDS = ("resign",)
HELP_WORDS = ("help", "?", "moves")
UNDO_WORDS = ("undo", "u", "back")
HINT_WORDS = ("hint", "h?")


def add_play_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    play = sub.add_parser(
        "play", help="play in the terminal: human/bot vs human/bot, saved as a replay",
        description="Play a game in the terminal. Moves are read from stdin (d3, h8, or "
                    "Gomocup x,y such as 7,7 in Gomoku); 'help' says what to type, 'undo' "
                    "takes back your last move (and the bot's answer), 'hint' asks a bot "
                    "for a move, 'resign' gives up, 'quit' (or end of input) stops. Passes "
                    "are played automatically and announced. Needs no running services, except to "
                    "play a registered bot.")
    play.add_argument("--game", choices=GAME_NAMES, default=GAME_NAMES[0],
                      help=f"game (default {GAME_NAMES[0]})")
    play.add_argument("--variant", default=None,
                      help="Othello: standard (default) or international (empty-centre "
                           "opening); Gomoku: freestyle (default) or exact-five. A --start "
                           "position says its own")
    play.add_argument("--size", type=int32, default=None, help="Gomoku board size (default 15)")
    start = play.add_mutually_exclusive_group()
    start.add_argument("--start", type=given_text, default=None,
                       help="custom start position (text form)")
    start.add_argument("--board", type=Path, help="file holding a custom start position")
    play.add_argument("--mode", choices=sorted(MODES), default="human-bot",
                      help="who plays black-white (default human-bot)")
    play.add_argument("--bot", default=None,
                      help="the bot for the bot sides: a preset, a registered bot "
                           "(NAME[@VERSION], read from the running stack), a bot file "
                           "(.toml, as `arena bot export` writes) or a JSON engine "
                           "configuration (default: the game's, "
                           + ", ".join(f"{g.name} {g.default_bot}" for g in _games()) + ")")
    play.add_argument("--black", default=None, help="black's bot (overrides --bot)")
    play.add_argument("--white", default=None, help="white's bot (overrides --bot)")
    play.add_argument("--bot-time-ms", type=integer_in(1, MAX_TIME_MS), default=1000,
                      help="bot time per move")
    save = play.add_mutually_exclusive_group()
    save.add_argument("--save", type=Path, default=None,
                      help="replay file to write (default $ARENA_HOME/games/play-<time>.json)")
    save.add_argument("--no-save", action="store_true", help="do not save the game")
    play.add_argument("--force", action="store_true", help="overwrite the --save file")
    play.add_argument("--seed", type=int64, default=0, help="seed for random choices")
    play.set_defaults(func=cmd_play)


def _games() -> list[Game]:
    return [game(name) for name in GAME_NAMES]


# -- bots -----------------------------------------------------------------------------------


@dataclass
class Player:
    name: str
    bot: PreparedBot | None = None  # None: a human at the keyboard

    @property
    def is_human(self) -> bool:
        return self.bot is None


def bot_config(args: argparse.Namespace, which: str) -> tuple[str, dict[str, object]]:
    """The name and engine configuration of the bot ``which`` names: a bot file or JSON
    configuration (a path), a preset of the game, else a bot of the running registry."""
    played = game(args.game)
    path = Path(which)
    if path.suffix in (".toml", ".json") or path.is_file():
        return _file_bot(played, path)
    presets = played.engine().presets
    if which in presets:
        return which, dict(presets[which])
    return _registered_bot(args, played, which, sorted(presets))


def _file_bot(played: Game, path: Path) -> tuple[str, dict[str, object]]:
    text = read_text_file(path, "bot")
    if path.suffix != ".json":
        try:
            parsed = parse_bot_file(text)
        except BotFileError as exc:
            raise InvalidArgumentError(f"{path}: {exc}") from None
        spec = apply_preset(parsed.spec, parsed.from_preset) if parsed.from_preset \
            else parsed.spec
        return _builtin(played, spec, spec.name or path.stem, f"bot file {path}")
    try:
        config = read_json(text)
    except ValueError as exc:
        raise InvalidArgumentError(f"{path} is not JSON: {exc}") from None
    if not isinstance(config, dict):
        raise InvalidArgumentError(f"{path} must hold a JSON object (an engine config)")
    return path.stem, config


def _registered_bot(args: argparse.Namespace, played: Game, which: str,
                    presets: list[str]) -> tuple[str, dict[str, object]]:
    ref = parse_bot_ref(which)
    not_local = (f"not one of the {played.title} presets ({', '.join(presets)}), a bot "
                 f"file (.toml) or a JSON config")
    try:
        with client_from_args(args) as client:
            bot = client.get_bot(ref.name, ref.version)
    except NotFoundError as exc:
        raise InvalidArgumentError(f"unknown bot {which!r}: {not_local}, and the registry "
                                   f"says: {exc}") from None
    except UnavailableError as exc:
        raise InvalidArgumentError(f"unknown bot {which!r}: {not_local}, and no registry "
                                   f"to look it up in ({exc})") from None
    return _builtin(played, bot.spec, f"{bot.spec.name}@{bot.version}", f"bot {which!r}")


def _builtin(played: Game, spec: bots_pb2.BotSpec, name: str,
             label: str) -> tuple[str, dict[str, object]]:
    kind = spec.WhichOneof("engine")
    if kind != "builtin":
        what = (f"plays protocol engine {spec.protocol.engine!r} on the workers"
                if kind == "protocol" else "is an external bot")
        raise InvalidArgumentError(f"{label} {what}: `arena play` runs built-in engines only "
                                   "(play it in a match instead)")
    if spec.game and spec.game != played.kind:
        other = game(spec.game).name
        raise InvalidArgumentError(f"{label} plays {other}: add --game {other}")
    return name, builtin_config(spec)


def make_bot(args: argparse.Namespace, which: str) -> Player:
    name, config = bot_config(args, which)
    return Player(name, game(args.game).engine().prepare(config))


# -- the game -------------------------------------------------------------------------------


def start_position(args: argparse.Namespace) -> Position:
    """The position the options give: a custom start says its own variant and size."""
    text, origin = args.start or "", ""
    if args.board is not None:
        text, origin = read_position_file(args.board, "board"), f"board file {args.board}"
    _spec, position = start_of(args, text, origin)
    if position.is_game_over():
        raise InvalidArgumentError(f"the game is already over in {text!r}")
    return position


@dataclass
class TerminalGame:
    position: Position
    black: Player
    white: Player
    out: TextIO
    keys: TextIO
    bot_time_ms: int = 1000
    seed: int = 0

    def __post_init__(self) -> None:
        self.replay = Replay.new(self.position, self.black.name, self.white.name)
        self.history: list[int] = []
        self.by_human: list[bool] = []  # per move of ``history``: typed by a human
        self.last_move: int | None = None
        self.stopped = False
        self.rules = game(self.position.game)
        self.rng = random.Random(self.seed)
        self.hinter: Player | None = None  # the game's bot, for hints between humans

    def player(self) -> Player:
        return self.black if self.position.turn is Color.BLACK else self.white

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def show(self) -> None:
        self.say(render_board(self.position, self.last_move, legal_marks(self.position)))
        self.say(board_summary(self.position))

    def play(self) -> None:
        self.show()
        while True:
            while (not self.position.is_game_over() and not self.stopped
                   and self.replay.outcome is None):  # a resignation ends it too
                self._turn()
                if self.replay.outcome is None and not self.stopped:
                    self.show()
            if self.stopped or self.replay.outcome is not None or not self._undo_at_the_end():
                break
            self.show()
        outcome = self.replay.outcome or self.position.outcome()
        self.replay.outcome = outcome
        if outcome is not None:
            self.say(f"game over: {self._outcome_text(outcome)}")
        else:
            count = len(self.history)
            self.say(f"game stopped after {count} move{'' if count == 1 else 's'}")

    def _turn(self) -> None:
        mover = self.position.turn.name.lower()
        player = self.player()
        if self.position.legal_moves() == [PASS]:
            self.say(f"{mover} ({player.name}) has no legal move and passes")
            self._apply(PASS, 0)
        elif player.bot is not None:
            self._bot_move(mover, player.name, player.bot)
        else:
            move = self._ask(mover)
            if move is not None:
                self._apply(move, 0, by_human=True)

    def _bot_move(self, mover: str, name: str, bot: PreparedBot) -> None:
        self.say(f"{mover} ({name}) is thinking...")
        started = time.monotonic()
        result = self._choose(bot)
        spent = int((time.monotonic() - started) * 1000)
        self.say(f"{mover} ({name}) plays {self.position.move_to_str(result.move)} "
                 f"(score {result.score:+d}, depth {result.depth}, {spent} ms)")
        self._apply(result.move, spent, result)

    def _choose(self, bot: PreparedBot, seed: int | None = None) -> SearchResult:
        return self.rules.engine().choose_move(
            bot, self.position.to_text(), list(self.history), Limits(time_ms=self.bot_time_ms),
            seed=self.rng.randrange(1 << 30) if seed is None else seed)

    def _apply(self, move: int, time_ms: int, result: SearchResult | None = None,
               by_human: bool = False) -> None:
        self.position.push(move)
        self.history.append(move)
        self.by_human.append(by_human)
        self.last_move = None if self.rules.is_pass(move) else move
        record = ReplayMove(move=move, time_ms=time_ms)
        if result is not None:
            record = ReplayMove(move=move, time_ms=time_ms, score=result.score,
                                depth=result.depth, nodes=result.nodes, pv=list(result.pv))
        self.replay.moves.append(record)

    def _resign(self, mover: str) -> None:
        self.say(f"{mover} resigns")
        self.replay.outcome = self.rules.forfeit_outcome(self.position, Termination.RESIGNATION)
        self.replay.forfeit = f"{mover} resigned"

    def _ask(self, mover: str) -> int | None:
        """Read words until a legal move (returned), a resignation or a stop (None)."""
        while True:
            line = typed_line(self.keys, self.out, f"{mover}> ")
            if not line:
                self.say("" if line == "" else TOO_LONG_LINE)
                self.stopped = True
                return None
            word = line.strip()
            if not word:
                continue
            if word.lower() in QUIT_WORDS:
                self.stopped = True
                return None
            if word.lower() in RESIGN_WORDS:
                self._resign(mover)
                return None
            if word.lower() in HELP_WORDS:
                self.say(f"{self._what_to_type()}; 'undo' takes back your last move, 'hint' "
                         "suggests one, 'resign' gives up, 'quit' stops")
                continue
            if word.lower() in UNDO_WORDS:
                if self._take_back():
                    return None  # the board is shown again and its mover asked
                self.say("nothing to take back: no move of yours yet")
                continue
            if word.lower() in HINT_WORDS:
                self._hint(mover)
                continue
            try:
                return self._parse(word)
            except ValueError:
                self.say(f"{shown(word)} is not a legal move here: {self._what_to_type()}")

    def _outcome_text(self, outcome: Outcome) -> str:
        return describe_outcome(outcome, game(self.position.game).counts_discs)

    def _undo_at_the_end(self) -> bool:
        """Once the board decides the game, a human may still take back (SharpMoku's undo
        works after the end): True if a move was taken back."""
        if True not in self.by_human:  # no human has moved (bots only)
            return False
        outcome = self.position.outcome()
        assert outcome is not None
        self.say(f"the game is over ({self._outcome_text(outcome)}): 'undo' takes back your "
                 "last move, anything else ends it")
        line = typed_line(self.keys, self.out, "> ") or ""
        return line.strip().lower() in UNDO_WORDS and self._take_back()

    def _take_back(self) -> bool:
        """Take back the last move a human typed and every move after it (the bot's
        answer, passes): a human's own last move against a bot, the opponent's last
        move between two humans. False when no human has moved."""
        if True not in self.by_human:
            return False
        last = len(self.by_human) - 1 - self.by_human[::-1].index(True)
        taken = []
        while len(self.history) > last:
            self.position.pop()
            taken.append(self.history.pop())
            self.by_human.pop()
            self.replay.moves.pop()
        names = [self.position.move_to_str(m) for m in reversed(taken)]
        self.last_move = next((m for m in reversed(self.history) if not self.rules.is_pass(m)),
                              None)
        self.say(f"took back {' '.join(names)}")
        return True

    def _hint(self, mover: str) -> None:
        """The move a bot would play here: the opponent bot, or the game's own."""
        other = self.white if self.position.turn is Color.BLACK else self.black
        if other.bot is None:
            if self.hinter is None:
                engine = self.rules.engine()
                engine.warm_up()
                self.hinter = Player(self.rules.default_bot,
                                     engine.prepare(dict(engine.presets[self.rules.default_bot])))
            other = self.hinter
        assert other.bot is not None
        result = self._choose(other.bot, seed=len(self.history))  # the game's seeds untouched
        self.say(f"hint for {mover} ({other.name}): {self.position.move_to_str(result.move)} "
                 f"(score {result.score:+d}, depth {result.depth})")

    def _parse(self, word: str) -> int:
        parse_xy = getattr(self.position, "parse_xy", None)  # Gomoku reads Gomocup x,y too
        if parse_xy is not None and "," in word:
            move: int = parse_xy(word.replace(" ", ""))
            return move
        return self.position.parse_move(word)

    def _what_to_type(self) -> str:
        if self.rules.shows_legal_moves:
            names = " ".join(self.position.move_to_str(m) for m in self.position.legal_moves())
            return f"legal moves: {names}"
        last = self.position.size - 1
        return (f"type an empty point as a letter and a row ({self.position.move_to_str(0)}) "
                f"or as Gomocup x,y from 0,0 to {last},{last}")


def _players(args: argparse.Namespace) -> tuple[Player, Player]:
    default_bot = args.bot or game(args.game).default_bot
    players = []
    for side, kind, override in zip(("black", "white"), MODES[args.mode],
                                    (args.black, args.white), strict=True):
        if kind == "human":
            if override:
                raise InvalidArgumentError(f"--{side} names a bot but mode {args.mode} has a "
                                           "human on that side")
            players.append(Player("human"))
        else:
            players.append(make_bot(args, override or default_bot))
    return players[0], players[1]


def _save_path(args: argparse.Namespace) -> Path:
    """Where the game is saved. A --save file that is there is refused before the game
    (unless --force): the game would have been written over it."""
    if args.save is not None:
        path = Path(args.save)
        # A folder is no name in use, to save beside as NAME-2: refused.
        refuse_overwrite(path, args.force, "--save", ", or --save another file")
        return path
    home = Path(args.home or os.environ.get("ARENA_HOME") or ".arena")
    return home / "games" / time.strftime("play-%Y%m%d-%H%M%S.json")


def cmd_play(args: argparse.Namespace) -> int:
    if args.no_save and args.force:  # nothing to overwrite: one of them is a mistake
        raise NotAllowedWith("--force", "--no-save")
    position = start_position(args)
    black, white = _players(args)
    path = None if args.no_save else _save_path(args)
    if not (black.is_human and white.is_human):
        # Kernels loaded now, not inside the first move's time: that move was searched to
        # depth 0 at 100 ms (the loading took 300 ms of it).
        game(args.game).engine().warm_up()
    played = TerminalGame(position, black, white, sys.stdout, sys.stdin, args.bot_time_ms,
                          args.seed)
    played.say(f"{position.game} ({position.variant}): black X {black.name} vs "
               f"white O {white.name}")
    try:
        played.play()
    finally:
        if path is not None and (played.history or played.replay.outcome is not None):
            _save(played, path, args.mode, args.force)
    return 0


def _save(played: TerminalGame, path: Path, mode: str, overwrite: bool) -> None:
    """Write the game to ``path``; unless ``overwrite``, a file made there meanwhile (by
    a game started in the same second) is kept and the game goes to ``NAME-2.json``...

    A device or a FIFO there (``/dev/stdout``) is written to, as ``match export -o`` writes
    to one: it holds no game to keep, and ``NAME-2`` beside it was a new file in ``/dev``."""
    played.replay.metadata = {"mode": mode,
                              "status": "finished" if played.replay.outcome else "stopped"}
    path.parent.mkdir(parents=True, exist_ok=True)
    text, target = write_replay(played.replay), path
    if overwrite or (path.exists() and not path.is_file()):
        write_output(path, text)
    else:
        target = _save_new(path, text)
    # A device or a FIFO keeps no game to replay.
    replay_it = f"; view it with: arena match replay {target}" if target.is_file() else ""
    played.say(f"saved {target}{replay_it}")


def _save_new(path: Path, text: str) -> Path:
    """``text`` in a file made for it: ``path``, else the first of ``NAME-2.json``...
    that no one has made."""
    number, target = 1, path
    while True:
        try:
            with open(target, "x", encoding="utf-8") as handle:
                handle.write(text)
            return target
        except FileExistsError:
            number += 1
            target = path.with_name(f"{path.stem}-{number}{path.suffix}")
