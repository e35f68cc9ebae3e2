"""``python -m arena.services.worker.engines``: protocol engines on this machine.

    check [--catalog FILE]     which sandbox protections are active; every engine of the
                               catalog starts and plays a move
    smoke --engine NAME --positions FILE [--depth D] [--move-time-ms T]
                               positions with known answers: a Gomocup smoke file (BOARD
                               blocks after "# A) ... expect x,y or x,y") or an OBF file
    match --engine NAME [--catalog FILE] [--against PRESET] [--games N] ...
                               the engine against an Arena bot, colours alternating

The catalog defaults to the one shipped with Arena (its own bots as protocol engines).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from statistics import median

from arena.services.worker.engines.catalog import SHIPPED_CATALOG, load_catalog
from arena.services.worker.engines.client import PlayLimits
from arena.services.worker.engines.pool import EnginePool
from arena.services.worker.engines.sandbox import Sandbox
from arena.services.worker.engines.trial import (
    MatchSettings,
    check_catalog,
    gomocup_smoke_positions,
    obf_smoke_positions,
    play_match,
    run_smoke,
)

from arena.argtypes import integer
from arena.documents import read_text_document
from arena.errors import ArenaError
from arena.games import game as game_named

_DEFAULT_OPPONENT = {"othello": "arena-fast", "gomoku": "arena-gomoku"}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m arena.services.worker.engines",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--catalog", default=SHIPPED_CATALOG,
                        help="engine catalog (default: arena, Arena's own engines)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check", help="show the sandbox and try every engine")
    smoke = sub.add_parser("smoke", help="ask an engine positions with known answers")
    smoke.add_argument("--engine", required=True, help="engine name in the catalog")
    smoke.add_argument("--positions", required=True, type=Path,
                       help="Gomocup smoke file (Gomoku) or OBF file (Othello)")
    smoke.add_argument("--depth", type=integer, default=None, help="depth limit (NBoard)")
    smoke.add_argument("--move-time-ms", type=integer, default=10_000)
    match = sub.add_parser("match", help="play an engine against an Arena bot")
    match.add_argument("--engine", required=True, help="engine name in the catalog")
    match.add_argument("--against", default=None, help="Arena preset (default per game)")
    match.add_argument("--games", type=integer, default=2)
    match.add_argument("--move-time-ms", type=integer, default=1000)
    match.add_argument("--size", type=integer, default=15, help="Gomoku board size")
    match.add_argument("--rule", default=None, help="Othello variant or Gomoku rule")
    match.add_argument("--opening-plies", type=integer, default=0,
                       help="random moves before the bots play (a different opening per "
                            "pair of games)")
    match.add_argument("--seed", type=integer, default=0)
    return parser


def _check(args: argparse.Namespace, pool: EnginePool) -> int:
    catalog = load_catalog(args.catalog)
    print(f"catalog {args.catalog}: {len(catalog.engines)} engines")
    return 0 if check_catalog(catalog, pool, print) else 1


def _smoke(args: argparse.Namespace, pool: EnginePool) -> int:
    spec = load_catalog(args.catalog).get(args.engine)
    text = read_text_document(args.positions, "the positions file")
    positions = (obf_smoke_positions(text) if spec.games[0] == "othello"
                 else gomocup_smoke_positions(text))
    limits = PlayLimits(args.move_time_ms, depth=args.depth)
    right = run_smoke(spec, positions, pool, limits, print)
    print(f"{spec.name}: {right}/{len(positions)} right")
    return 0 if right == len(positions) else 1


def _match(args: argparse.Namespace, pool: EnginePool) -> int:
    spec = load_catalog(args.catalog).get(args.engine)
    game = spec.games[0]
    preset = args.against or _DEFAULT_OPPONENT[game]
    presets = game_named(game).engine().presets
    if preset not in presets:
        raise ValueError(f"unknown {game} preset {preset!r}; one of "
                         f"{', '.join(sorted(presets))}")
    settings = MatchSettings(args.games, args.move_time_ms, args.size, args.rule,
                             args.opening_plies, args.seed)
    score = play_match(spec, preset, settings, pool, print)
    timing = f", median {median(score.engine_ms):.1f} ms per engine move" if (
        score.engine_ms) else ""
    print(f"{spec.name} vs {preset}: +{score.wins} ={score.draws} -{score.losses}"
          f"{timing}; failures: {', '.join(score.failures) or 'none'}; "
          f"processes started: {pool.stats.starts}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        sandbox = Sandbox()
        print("sandbox:\n  " + "\n  ".join(sandbox.protections.describe()))
        pool = EnginePool(sandbox)
        try:
            commands = {"check": _check, "smoke": _smoke, "match": _match}
            return commands[args.command](args, pool)
        finally:
            pool.close()
    except (ArenaError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
