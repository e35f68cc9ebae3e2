"""``arena engine nboard``, ``arena engine gtp`` and ``arena engine gomocup``: Arena's bots as
protocol engines on stdin/stdout, for NBoard, a GTP manager (Quarry), Piskvork or any
Gomocup manager (and for Arena's own workers).

The same servers run as ``arena-nboard``, ``arena-gtp`` and ``pbrain-arena`` (console
scripts), so a GUI can start them by name: ``pbrain-arena --preset arena-gomoku``.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Sequence
from typing import Any

from arena.argtypes import integer
from arena.documents import read_json, read_text_document
from arena.engine.interrupt import stops_at_once
from arena.errors import ArenaError

_DEFAULT_PRESET = {"othello": "arena-fast", "gomoku": "arena-gomoku"}
_PROTOCOL_GAME = {"nboard": "othello", "gtp": "othello", "gomocup": "gomoku"}
# protocol: (what the bot plays, the protocol's name, who loads it, the console script)
_NAMES = {"nboard": ("an Othello", "NBoard", "NBoard", "arena-nboard"),
          "gtp": ("an Othello", "GTP", "a GTP manager (Quarry)", "arena-gtp"),
          "gomocup": ("a Gomoku", "Gomocup", "a Gomocup manager (Piskvork)", "pbrain-arena")}


def _add_server_arguments(parser: argparse.ArgumentParser, game: str) -> None:
    parser.add_argument("--preset", default=_DEFAULT_PRESET[game],
                        help=f"bot preset (default {_DEFAULT_PRESET[game]})")
    parser.add_argument("--config", default=None,
                        help="bot config JSON, or @file.json (instead of --preset)")
    parser.add_argument("--depth", type=integer, default=None, help="cap every search (plies)")
    parser.add_argument("--time-ms", type=integer, default=None, help="cap every move (ms)")
    parser.add_argument("--seed", type=integer, default=0, help="seed of the bot's random choices")
    parser.add_argument("--no-warm-up", action="store_true",
                        help="skip loading the compiled kernels before the first command")


def add_protocol_commands(subparsers: Any) -> None:
    """Mount ``nboard``, ``gtp`` and ``gomocup`` on the ``arena engine`` subcommands."""
    for protocol, game in _PROTOCOL_GAME.items():
        plays, name, manager, _ = _NAMES[protocol]
        sub = subparsers.add_parser(
            protocol, help=f"serve {plays} bot over the {name} protocol on stdin/stdout",
            description=f"Play {plays} bot of Arena's as an engine for {manager}, reading "
                        "commands on stdin and answering on stdout until the input ends.")
        _add_server_arguments(sub, game)
        sub.set_defaults(func=stops_at_once(functools.partial(_serve, protocol)))


def _bot(game: str, args: argparse.Namespace) -> Any:
    from arena.protocols.bot import ServedBot

    limits = {"depth": args.depth, "time_ms": args.time_ms, "seed": args.seed}
    if args.config:
        text = args.config
        if text.startswith("@"):
            text = read_text_document(text[1:], "engine configuration file")
        config = read_json(text)
        if not isinstance(config, dict):
            raise ValueError("--config must be a JSON object")
        return ServedBot.from_config(game, "custom", config, **limits)
    return ServedBot.from_preset(game, args.preset, **limits)


def _serve(protocol: str, args: argparse.Namespace) -> int:
    from arena.games import game as game_named

    game = _PROTOCOL_GAME[protocol]
    bot = _bot(game, args)
    if not args.no_warm_up:
        game_named(game).engine().warm_up()  # compiled before the manager's first deadline
    if protocol == "nboard":
        from arena.protocols import nboard_engine

        return nboard_engine.serve(bot)
    if protocol == "gtp":
        from arena.protocols import gtp_engine

        return gtp_engine.serve(bot)
    from arena.protocols import gomocup_brain

    return gomocup_brain.serve(bot)


def _main(protocol: str, argv: Sequence[str] | None) -> int:
    game = _PROTOCOL_GAME[protocol]
    prog = _NAMES[protocol][3]
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    _add_server_arguments(parser, game)
    args = parser.parse_args(argv)
    try:
        return stops_at_once(functools.partial(_serve, protocol))(args)
    except (ArenaError, ValueError, OSError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def nboard_main(argv: Sequence[str] | None = None) -> int:
    """The ``arena-nboard`` console script."""
    return _main("nboard", argv)


def gtp_main(argv: Sequence[str] | None = None) -> int:
    """The ``arena-gtp`` console script."""
    return _main("gtp", argv)


def gomocup_main(argv: Sequence[str] | None = None) -> int:
    """The ``pbrain-arena`` console script."""
    return _main("gomocup", argv)
