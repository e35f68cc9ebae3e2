"""The `arena` command. Each command group lives in its own module and mounts itself here."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path


def _cmd_up(args: argparse.Namespace) -> int:
    from arena.services.common.stack import run_up

    return run_up(args.workers, args.home)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arena", description="Arena: a bot arena for Othello/Reversi and Gomoku."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    up = sub.add_parser("up", help="start Redis, every service and N workers locally",
                        description="Start the embedded stack and stop it on Ctrl-C/SIGTERM.")
    up.add_argument("--workers", type=int, default=2, help="engine worker processes")
    up.add_argument("--home", type=Path, default=None, help="state folder (default .arena)")
    up.set_defaults(func=_cmd_up)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
