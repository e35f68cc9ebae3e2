"""`arena engine analyze`: one search by a built-in bot, in this process, for either game.

The bot is a preset of any game or an inline configuration; its evaluator says the game.
The position is that game's text form (it says its own variant and size) or ``start``, the
game's usual start. The same search as a worker's, without services: the move, score,
depth, nodes and principal variation.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from arena.bots.presets import preset_configs
from arena.bots.validation import evaluator_game, known_evaluators
from arena.documents import read_json, read_text_document
from arena.engine.api import Limits
from arena.errors import InvalidArgumentError
from arena.games import Game, game


def bot_of(args: argparse.Namespace) -> tuple[Game, dict[str, object]]:
    """The game and configuration of ``--config`` (JSON or @file) or ``--preset``."""
    if args.config:
        text = args.config
        if text.startswith("@"):
            try:
                text = read_text_document(text[1:], "engine configuration file")
            except OSError as exc:
                raise InvalidArgumentError(f"cannot read {text[1:]}: {exc.strerror}") from None
        try:
            config = read_json(text)
        except ValueError as exc:
            raise InvalidArgumentError(f"--config is not JSON: {exc}") from None
        if not isinstance(config, dict):
            raise InvalidArgumentError("--config must be a JSON object")
        played = evaluator_game(config.get("evaluator"))
        if played is None:
            raise InvalidArgumentError(f"--config: evaluator must be one of "
                                       f"{', '.join(known_evaluators())}, got "
                                       f"{config.get('evaluator')!r}")
        return played, config
    presets = preset_configs()
    if args.preset not in presets:
        raise InvalidArgumentError(f"unknown preset {args.preset!r}; one of "
                                   f"{', '.join(presets)}")
    kind, config = presets[args.preset]
    return game(kind), config


def run(args: argparse.Namespace) -> int:
    played, config = bot_of(args)
    text = args.position_option if args.position_option is not None else args.position
    if text is None:
        raise InvalidArgumentError("a position is needed: its text form, or 'start'")
    position = played.new_position() if text == "start" else played.position_from_text(text)
    if position.is_game_over():
        raise InvalidArgumentError(f"the game is already over in {text!r}")
    limits = Limits(depth=args.depth, nodes=args.nodes, time_ms=args.time_ms).bounded()
    engine = played.engine()
    bot = engine.prepare(config)
    engine.warm_up()  # loading the kernels took a 100 ms search's time: it answered at depth 0
    result = engine.choose_move(bot, position.to_text(), position.move_stack, limits,
                                seed=args.seed)
    payload: dict[str, Any] = {
        "game": played.name,
        "move": position.move_to_str(result.move),
        "score": result.score,
        "depth": result.depth,
        "nodes": result.nodes,
        "nps": result.nps,
        "ms": round(result.elapsed_ms, 2),
        "exact": result.exact,
        "pv": [position.move_to_str(move) for move in result.pv],
    }
    if args.json:
        print(json.dumps(payload))
        return 0
    kind = "exact" if result.exact else f"depth {result.depth}"
    print(f"move {payload['move']} score {result.score:+d} ({kind}), {result.nodes} nodes in "
          f"{payload['ms']} ms ({result.nps} nodes/s)\npv {' '.join(payload['pv'])}")
    return 0

