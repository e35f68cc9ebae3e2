"""The `arena` command. Each command group lives in its own module and mounts itself here.

Errors never reach the user as tracebacks: an ``arena.errors`` exception, a bad value
(``ValueError``) or an OS error prints one line, ``arena: error: ...``, and exits 1.
Options that contradict each other are refused as argparse refuses a mutually exclusive
group's (``NotAllowedWith``, where no group can say it): the usage, one line naming both,
exit 2.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

# gRPC's own log lines (a failed TLS handshake, ...) would come before the one-line error
# that says the same. gRPC reads its level once, when it is first imported (grpcio 1.85:
# setting it later, in main, no longer did), so before anything imports it.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

from arena.clients.common import NotAllowedWith, in_users_words, seconds

from arena.argtypes import integer
from arena.errors import ArenaError, InvalidArgumentError, UnavailableError
from arena.text import SHOWN_CHARS, bounded, printable

EXIT_ERROR = 1
EXIT_INTERRUPTED = 130
# Global address options: flag -> the SDK's role (the analysis pool is the "engine" role,
# env ARENA_ENGINE; `--engine NAME` is a protocol engine in `arena bot register`).
_ROLES = {"registry": "registry", "referee": "referee", "ladder": "ladder",
          "analysis": "engine"}
# TLS files (default: stack.json's, which `arena up --tls` writes).
_TLS_OPTIONS = {
    "tls_ca": ("PEM CA file to verify the services with; turns TLS on", "ARENA_TLS_CA_FILE"),
    "tls_cert": ("PEM client certificate, for servers that require one",
                 "ARENA_TLS_CERT_FILE"),
    "tls_key": ("PEM key of the client certificate", "ARENA_TLS_KEY_FILE"),
}
if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]


def _catalog(path: Path | None) -> Path | None:
    """The engine catalog, checked before anything starts (a bad file: every problem)."""
    if path is None:
        return None
    from arena.services.worker.engines.catalog import catalog_file, load_catalog

    load_catalog(path)
    return catalog_file(path)


def _cmd_up(args: argparse.Namespace) -> int:
    from arena.services.common.launcher import check_worker_count, run_up

    check_worker_count(args.workers, "--workers")
    try:
        return run_up(args.workers, args.up_home or args.home, web=args.web,
                      metrics=args.metrics, engines=_catalog(args.engines),
                      tls=args.tls or args.mutual_tls, mutual_tls=args.mutual_tls)
    except (RuntimeError, TimeoutError) as exc:  # a service died while starting
        raise UnavailableError(f"the stack did not start: {exc}") from None


def _cmd_worker(args: argparse.Namespace) -> int:
    from arena.clients.workers import run_worker

    argv = list(args.worker_args)
    return run_worker(args.home, argv[1:] if argv[:1] == ["--"] else argv)


def _cmd_demo(args: argparse.Namespace) -> int:
    from arena.clients.demo import run_demo

    try:
        return run_demo(args)
    except RuntimeError as exc:  # a service died while starting; its log is named
        raise UnavailableError(f"the demo stack did not start: {exc}") from None


def _add_up(sub: Subparsers) -> None:
    up = sub.add_parser("up", help="start Redis, every service and N workers locally",
                        description="Start the embedded stack, restart any part that dies, "
                                    "and stop everything on Ctrl-C/SIGTERM.")
    up.add_argument("--workers", type=integer, default=2,
                    help="engine worker processes (default 2; at most 4 per core)")
    up.add_argument("--web", action=argparse.BooleanOptionalAction, default=True,
                    help="start the web gateway too (its pages: docs/web.md)")
    up.add_argument("--engines", type=Path, metavar="CATALOG",
                    help="the workers' engine catalog: protocol engines they offer "
                         "(docs/engines.md); `--engines arena`: Arena's own bots as "
                         "NBoard, GTP and Gomocup engines")
    up.add_argument("--metrics", action="store_true",
                    help="serve Prometheus /metrics from every process (free loopback ports, "
                         "listed in stack.json)")
    up.add_argument("--home", dest="up_home", type=Path, default=None,
                    help="state folder (default .arena)")
    up.add_argument("--tls", action="store_true",
                    help="serve every service over TLS with a local CA made under HOME/tls "
                         "(commands find it through stack.json)")
    up.add_argument("--mutual-tls", action="store_true",
                    help="--tls, and every server also requires a client certificate")
    up.set_defaults(func=_cmd_up)


def _add_worker(sub: Subparsers) -> None:
    worker = sub.add_parser(
        "worker", help="run one more engine worker on the running stack (in this terminal)",
        description="Run an engine worker process that consumes move jobs, found through "
                    "the stack file like every command (`arena up` stops it with the stack). "
                    "Worker options go after `--`: `arena worker -- --help`.")
    # The worker's own options pass through untouched (see main: parse_known_args).
    worker.set_defaults(func=_cmd_worker, worker_args=[])
    workers = sub.add_parser("workers", help="change the running stack's worker pool",
                             description="Manage the workers `arena up` runs.")
    verbs = workers.add_subparsers(dest="workers_command", metavar="COMMAND", required=True)
    scale = verbs.add_parser("scale", help="run N workers (start or stop some)")
    scale.add_argument("count", type=integer,
                       help="how many workers to run (at most 4 per core; 0 pauses play "
                            "until workers are back)")
    scale.add_argument("--wait", type=seconds, default=120.0, metavar="SECONDS",
                       help="how long to wait for the change (default 120)")
    scale.set_defaults(func=_cmd_workers_scale)


def _cmd_workers_scale(args: argparse.Namespace) -> int:
    from arena.clients.workers import scale_workers

    return scale_workers(args.home, args.count, args.wait)


def _add_demo(sub: Subparsers) -> None:
    from arena.clients.demo import add_demo_arguments

    demo = sub.add_parser(
        "demo", help="the main job: start the stack, run a ladder of the preset bots",
        description="Start the embedded stack (Redis, services, workers), register the "
                    "preset bots, play a colour-swapped round robin of KReversi's Lucy, "
                    "Madoka, Ryo and Terra, the lab's Advanced level and arena-strong, "
                    "print the standings and stop everything.")
    add_demo_arguments(demo)
    demo.set_defaults(func=_cmd_demo)


def _mount_optional(sub: Subparsers, module: str, function: str) -> None:
    """Mount a command group another module provides (`arena bot`, `arena engine`)."""
    try:
        mounted = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module:  # the module exists but something it imports is broken
            raise
        return
    getattr(mounted, function)(sub)


def _add_global_options(parser: argparse.ArgumentParser, default: Any = None) -> None:
    """The options every command takes, before its name or (``default`` SUPPRESS: given
    there they win, absent they leave the global value alone) after it; a command's own
    option of the same name (``arena match list --ladder ID``) keeps it."""
    where = parser.add_argument_group(
        "where the services are (default: $ARENA_HOME/stack.json, written by `arena up`)")
    taken = parser._option_string_actions

    def option(flag: str, **kwargs: Any) -> None:
        if flag not in taken:
            where.add_argument(flag, default=default, **kwargs)

    option("--home", type=Path, help="state folder (default .arena)")
    for flag, role in _ROLES.items():
        option(f"--{flag}", metavar="HOST:PORT",
               help=f"{flag} address (env ARENA_{role.upper()})")
    option("--token", help="bearer token (env ARENA_TOKEN)")
    for name, (what, variable) in _TLS_OPTIONS.items():
        option(f"--{name.replace('_', '-')}", dest=name, metavar="FILE",
               help=f"{what} (env {variable})")
    option("--timeout", type=seconds, metavar="SECONDS",
           help="deadline of each call (default 10)")


def _reaches_services(prog: str) -> bool:
    """Whether the command ``prog`` talks to running services, so that the options saying
    where they are belong in its usage: not those that start processes of their own (`arena
    up`, `demo`, `worker`), nor the engine tools, which run in this process (everything
    under `arena engine` but `list`)."""
    if prog in ("arena up", "arena demo", "arena worker"):
        return False
    return not prog.startswith("arena engine ") or prog == "arena engine list"


def _leaves(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """Every command's parser under ``parser`` (``arena match list``, ``arena up``...)."""
    groups = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not groups:
        yield parser
    for group in groups:
        seen: set[int] = set()  # a command's aliases share its parser
        for child in group.choices.values():
            if id(child) not in seen:
                seen.add(id(child))
                yield from _leaves(child)


def _version() -> str:
    """The installed distribution's version (``pyproject.toml``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("arena")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


class _VersionAction(argparse.Action):
    """``--version``: the installed version, looked up only when asked (the lookup costs
    40 ms, which every command would pay at start-up)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0,
                         help="show the installed version and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        print(f"arena {_version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    from arena.clients.engine_commands import add_engine_commands
    from arena.clients.ladder_commands import add_analyze_command, add_ladder_commands
    from arena.clients.match_commands import add_match_commands
    from arena.clients.play import add_play_command
    from arena.clients.sprt_commands import add_test_command
    from arena.clients.status_commands import add_status_command

    # No abbreviations of the global options: argparse reads every word of the command
    # line against them, the command's own too, and took `arena up --tls` for an
    # ambiguous `--tls-ca`/`--tls-cert`/`--tls-key` (the commands keep theirs).
    parser = argparse.ArgumentParser(
        prog="arena", description="Arena: a bot arena for Othello/Reversi and Gomoku.",
        epilog="Every command has --help; read commands take --json.", allow_abbrev=False,
    )
    parser.add_argument("--version", action=_VersionAction)
    _add_global_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _add_up(sub)
    _add_demo(sub)
    _mount_optional(sub, "arena.clients.bot_commands", "add_bot_commands")
    add_match_commands(sub)
    add_ladder_commands(sub)
    add_analyze_command(sub)
    add_test_command(sub)
    add_play_command(sub)
    add_status_command(sub)
    _add_worker(sub)
    add_engine_commands(sub)
    for command in _leaves(parser):
        if _reaches_services(command.prog):
            _add_global_options(command, default=argparse.SUPPRESS)
    return parser


def _apply_global_options(args: argparse.Namespace, argv: Sequence[str],
                          command: argparse.ArgumentParser) -> None:
    """Make the global options reach every command (through ``args``).

    A mounted group may define an option of the same name (``arena bot list
    --registry``), whose default would hide the global one, so the global options are
    parsed again on their own; but not one the command took for an option of its own
    under that name (``arena match list --ladder ID`` is no ladder service's address).
    """
    only_globals = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    _add_global_options(only_globals)
    given, _ = only_globals.parse_known_args(argv)
    for name in ("home", "timeout", *_ROLES, "token", *_TLS_OPTIONS):
        own = command._option_string_actions.get(f"--{name.replace('_', '-')}")
        if own is not None and own.dest != name:
            continue
        if getattr(args, name, None) is None:
            setattr(args, name, getattr(given, name))


def _error_text(exc: Exception) -> str:
    """One line: a file's error as ``PATH: reason`` (not ``[Errno 2] ...``), else the
    first line of the message. The path is cut as a quoted value is: a match id of 100,000
    characters, taken for a file name, is too long a name, and the reason came after it."""
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        return f"{bounded(str(exc.filename), SHOWN_CHARS)}: {exc.strerror}"
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _command_parser(parser: argparse.ArgumentParser, argv: Sequence[str]
                    ) -> argparse.ArgumentParser:
    """The parser of the command ``argv`` names (``arena analyze``), whose usage is the
    one that helps with an argument it does not take."""
    for word in argv:
        groups = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if groups and word in groups[0].choices:
            parser = groups[0].choices[word]
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    words = sys.argv[1:] if argv is None else argv
    command = _command_parser(parser, words)
    if unknown and args.command != "worker":
        command.error(f"unrecognized arguments: {' '.join(unknown)}")
    args.worker_args = unknown
    _apply_global_options(args, words, command)
    handler: Callable[[argparse.Namespace], Any] = args.func
    try:
        return int(handler(args) or 0)
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return EXIT_INTERRUPTED
    except NotAllowedWith as exc:  # as argparse says a mutually exclusive group's: exit 2
        command.error(str(exc))
    except BrokenPipeError:
        sys.stderr.close()  # the reader went away (`arena match list | head`)
        return EXIT_ERROR
    except (ArenaError, ValueError, OSError) as exc:
        if isinstance(exc, InvalidArgumentError):  # the options it was given, not fields
            exc = in_users_words(exc, getattr(args, "field_options", {}))
        # A service's message may quote what a bot or engine said: printed made safe.
        print(f"arena: error: {printable(bounded(_error_text(exc)))}", file=sys.stderr)
        return EXIT_ERROR
    except RecursionError:  # input nested beyond reason (a JSON or TOML file)
        print("arena: error: the input is nested too deeply", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
