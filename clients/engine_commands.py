"""`arena engine ...`: the protocol engines the live workers offer (`list`), next to the
in-process engine tools (perft, solve, analyze) and Arena's bots served as protocol engines
(nboard, gomocup)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from arena.clients.common import add_json_flag, client_from_args, print_json, to_dict

from arena.engine.teacher import Teacher
from arena.engine.tools import add_tool_commands
from arena.games import GAME_NAMES, game
from arena.v1 import common_pb2, engine_pb2

if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]


def add_engine_commands(sub: Subparsers) -> None:
    engine = sub.add_parser(
        "engine", help="protocol engines the workers offer; engine tools",
        description="`list`: the protocol engines (NBoard, Gomocup) live workers offer, for "
                    "`arena bot register --engine NAME`. The other commands run in this "
                    "process, without services.")
    commands = engine.add_subparsers(dest="engine_command", metavar="COMMAND", required=True)
    listing = commands.add_parser("list", help="the protocol engines live workers offer")
    listing.add_argument("--game", choices=GAME_NAMES)
    add_json_flag(listing)
    listing.set_defaults(func=_cmd_list)
    add_tool_commands(commands, teacher=_catalog_teacher)


def _catalog_teacher(catalog: str, name: str, game_name: str, move_ms: int) -> Teacher:
    """A catalog's protocol engine as a training's teacher (``arena engine train gomoku
    --teacher``): the worker's engine pool, loaded only when a training asks for it."""
    from arena.services.worker.engines.teacher import catalog_teacher

    return catalog_teacher(catalog, name, game_name, move_ms)


def _cmd_list(args: argparse.Namespace) -> int:
    kind = game(args.game).kind if args.game else common_pb2.GAME_KIND_UNSPECIFIED
    with client_from_args(args) as client:
        engines = client.list_engines(kind)
    if args.json:
        print_json({"engines": [to_dict(e) for e in engines]})
        return 0
    if not engines:
        print("no live worker offers a protocol engine (a worker's catalog: "
              "ARENA_ENGINES_CATALOG, or `arena up --engines FILE`; Arena's own: "
              "`--engines arena`)")
        return 0
    print(engine_table(engines))
    return 0


def engine_table(engines: list[engine_pb2.EngineOffer]) -> str:
    header = ("NAME", "PROTOCOL", "GAMES", "WORKERS", "ANALYSTS", "CHECKSUM", "DESCRIPTION")
    rows = [header] + [(e.name, e.protocol, ",".join(game(g).name for g in e.games),
                        str(e.workers), str(e.analysts), e.checksum[:12], e.description)
                       for e in engines]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
                     .rstrip() for row in rows)
