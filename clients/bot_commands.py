"""`arena bot ...`: register, list, show, update, retire, import, export, presets, usage.

Engine parameters are options generated from the presets' keys, so every evaluator's
numbers can be given directly (``arena bot register --name t --from-preset terra
--depth-end 8``); ``--set path=value`` reaches anything else (``--set
weights.mobility=[100,60]``). Every command takes ``--json``. Errors are raised as
``arena.errors`` / ``ValueError`` and printed as one line by ``arena.clients.cli``.
"""

from __future__ import annotations

import argparse
import json
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.clients.common import (
    NotAllowedWith,
    add_json_flag,
    add_usage_command,
    bot_ref_text,
    client_from_args,
    int32,
    name_fields,
    non_negative,
    parse_bot_ref,
    print_json,
    print_usage,
    read_text_file,
    time_text,
    to_dict,
    write_output,
)
from arena.clients.sdk import ArenaClient, pool_size

from arena.argtypes import integer
from arena.bots import (
    apply_preset,
    builtin_config,
    config_from_struct,
    config_to_struct,
    evaluator_game,
    known_evaluators,
    merge_config,
    preset_configs,
    preset_problem,
)
from arena.bots.botfile import BotFileError, parse_bot_file, spec_to_toml, toml_table
from arena.bots.validation import AVATAR_MAX_BYTES
from arena.clock import clock_label
from arena.documents import NumberTooLong, read_bounded, read_json, read_toml, refuse_overwrite
from arena.errors import AlreadyExistsError, ArenaError, InvalidArgumentError
from arena.games import GAME_NAMES, game
from arena.textboard import count_text
from arena.v1 import bots_pb2, common_pb2, ladder_pb2

if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]

PARAM_PREFIX = "param:"
# Options of our own; engine parameters with these names are reached through --set.
_RESERVED = {"name", "game", "description", "avatar", "no-avatar", "json", "config", "set",
             "external", "deadline-ms", "evaluator", "from-preset", "preset", "registry", "token",
             "help", "home", "timeout", "update", "output", "force"}


# -- engine parameters as options --------------------------------------------------------

def _leaf_paths(config: dict[str, object], prefix: str = "") -> dict[str, type]:
    """Dotted path -> int or bool for every scalar parameter (tables go through --set)."""
    found: dict[str, type] = {}
    for key, value in config.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            found.update(_leaf_paths(value, f"{path}."))
        elif isinstance(value, bool) or (isinstance(value, int) and key != "evaluator"):
            found[path] = type(value)
    return found


def parameter_options() -> dict[str, tuple[str, type]]:
    """``--depth-end`` -> (``depth.end``, int) for every scalar parameter of every preset."""
    options: dict[str, tuple[str, type]] = {}
    for _game, config in preset_configs().values():
        for path, kind in _leaf_paths(config).items():
            flag = path.replace(".", "-").replace("_", "-")
            if flag not in _RESERVED:
                options.setdefault(flag, (path, kind))
    return dict(sorted(options.items()))


def _add_engine_options(parser: argparse.ArgumentParser, updating: bool) -> None:
    engine = parser.add_argument_group("engine")
    # A preset names its evaluator, and its parameters are that evaluator's: another one
    # over it was refused key by key.
    start = engine.add_mutually_exclusive_group()
    start.add_argument("--from-preset", "--preset", dest="from_preset", metavar="PRESET",
                       help="start from a preset (see `arena bot presets`); `--preset` "
                            "is the same option, named as in `arena analyze`")
    start.add_argument("--evaluator", help="built-in evaluator, not with a preset (which "
                                           "names its own): " + ", ".join(known_evaluators()))
    engine.add_argument("--config", type=Path, metavar="FILE",
                        help="engine config from a TOML or JSON file"
                             + (" (replaces the current one)" if updating else ""))
    engine.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                        help="set one engine parameter, e.g. depth.end=8 or "
                             "weights.mobility=[100,60] (repeatable)")
    engine.add_argument("--external", metavar="HOST:PORT",
                        help="an external bot: the address of its BotService")
    engine.add_argument("--deadline-ms", type=int32, metavar="MS",
                        help="external bot's own per-move deadline (0 = the match's)")
    engine.add_argument("--engine", metavar="NAME",
                        help="a protocol engine (NBoard, Gomocup) the workers offer: "
                             "see `arena engine list`")
    engine.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="a protocol engine's setting, e.g. depth=10 (NBoard) or an INFO "
                             "key (Gomocup) (repeatable)")
    params = parser.add_argument_group("engine parameters (overrides; see docs/bots.md)")
    for flag, (path, kind) in parameter_options().items():
        dest = PARAM_PREFIX + path
        if kind is bool:
            params.add_argument(f"--{flag}", dest=dest, default=argparse.SUPPRESS,
                                action=argparse.BooleanOptionalAction, help=path)
        else:
            params.add_argument(f"--{flag}", dest=dest, default=argparse.SUPPRESS, type=integer,
                                metavar="N", help=path)


def _parse_value(text: str) -> object:
    """A TOML literal (8, true, [1, 2], "x"), or the text itself."""
    try:
        return read_toml(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        return text


def _put(config: dict[str, object], path: str, value: object) -> None:
    *parents, last = path.split(".")
    node = config
    for part in parents:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise InvalidArgumentError(f"cannot set {path}: {part} is not a table")
        node = child
    node[last] = value


def parameter_overrides(args: argparse.Namespace) -> dict[str, object]:
    """The engine parameters given on the command line, as a nested config."""
    overrides: dict[str, object] = {}
    for key, value in sorted(vars(args).items()):
        if key.startswith(PARAM_PREFIX):
            _put(overrides, key[len(PARAM_PREFIX):], value)
    for path, value in settings(args.set).items():
        _put(overrides, path, value)
    if args.evaluator:
        overrides["evaluator"] = args.evaluator
    return overrides


def settings(items: list[str]) -> dict[str, object]:
    """``--set PATH=VALUE`` items: each dotted path with its value (a TOML literal or the
    text); ``InvalidArgumentError`` for an item without a path."""
    found: dict[str, object] = {}
    for item in items:
        path, sep, text = item.partition("=")
        if not sep or not path.strip():
            raise InvalidArgumentError(f"--set needs PATH=VALUE, got {item!r}")
        try:
            found[path.strip()] = _parse_value(text.strip())
        except NumberTooLong as exc:
            raise InvalidArgumentError(f"--set {path.strip()}: {exc}") from None
    return found


def set_config(items: list[str]) -> dict[str, object]:
    """``--set PATH=VALUE`` items as one nested config (``settings``)."""
    config: dict[str, object] = {}
    for path, value in settings(items).items():
        _put(config, path, value)
    return config


def _config_file(path: Path) -> dict[str, object]:
    text = read_text_file(path, "config")
    try:
        data = read_json(text) if path.suffix == ".json" else read_toml(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise InvalidArgumentError(f"bad config file {path}: {exc}") from None
    if not isinstance(data, dict):
        raise InvalidArgumentError(f"config file {path} must hold a table/object")
    table = data.get("builtin", data)  # a whole bot file works too
    return dict(table) if isinstance(table, dict) else {}


def _read_avatar(path: Path) -> bytes:
    try:
        with open(path, "rb") as handle:
            return read_bounded(handle, AVATAR_MAX_BYTES, f"avatar {path}")
    except OSError as exc:
        raise InvalidArgumentError(f"cannot read avatar {path}: {exc.strerror}") from None


# -- building specs ----------------------------------------------------------------------

def _apply_fields(spec: bots_pb2.BotSpec, args: argparse.Namespace) -> None:
    if getattr(args, "game", None):
        spec.game = game(args.game).kind
    if args.description is not None:
        spec.description = args.description
    if args.avatar is not None:
        spec.avatar_png = _read_avatar(args.avatar)
    if getattr(args, "no_avatar", False):
        spec.avatar_png = b""


def _apply_engine(spec: bots_pb2.BotSpec, args: argparse.Namespace, updating: bool) -> str:
    """Put the engine the options describe into ``spec``; returns the preset to send."""
    overrides = parameter_overrides(args)
    if args.engine is not None or (args.option and spec.WhichOneof("engine") == "protocol"):
        if (overrides or args.from_preset or args.config or args.external is not None
                or args.deadline_ms is not None):
            raise InvalidArgumentError("a protocol engine takes --option KEY=VALUE, not engine "
                                       "parameters, presets, configs or an address")
        _apply_protocol(spec, args.engine, args.option)
        return ""
    if args.option:
        raise InvalidArgumentError("--option is for protocol engines (--engine NAME)")
    if args.external is not None or (args.deadline_ms is not None and not overrides
                                     and spec.WhichOneof("engine") != "builtin"):
        _check_external_alone(args, overrides)
        if args.external is not None:
            spec.external.address = args.external
        if args.deadline_ms is not None:
            spec.external.move_deadline_ms = args.deadline_ms
        spec.preset = ""
        return ""
    if args.deadline_ms is not None:
        raise InvalidArgumentError("--deadline-ms is for external bots")
    file = None if args.config is None else _config_file(args.config)
    if args.from_preset:  # the file on top of the preset, --set on top of both
        spec.builtin.config.CopyFrom(config_to_struct(merge_config(file or {}, overrides)))
        if not updating:
            return str(args.from_preset)  # the registry merges: one source of truth
        known = args.from_preset in preset_configs() and not getattr(args, "game", None)
        if known and (problem := preset_problem(args.from_preset, spec.game)):
            # (the preset's refusal named --game, which was not typed)
            raise InvalidArgumentError(f"--from-preset: {problem}: a bot keeps its game "
                                       "(register a new bot for the other)")
        spec.CopyFrom(apply_preset(spec, args.from_preset))
        return ""
    base = file if file is not None else builtin_config(spec) if updating else {}
    config = merge_config(base, overrides)
    if not updating and "evaluator" not in config:  # else refused as 'unknown evaluator None'
        raise InvalidArgumentError(NO_ENGINE)
    if base or overrides or not updating:
        spec.builtin.config.CopyFrom(config_to_struct(config))
    plays = evaluator_game(config.get("evaluator"))  # from --evaluator, --set or --config
    if not spec.game and plays is not None:
        spec.game = plays.kind
    return ""


NO_ENGINE = ("a bot needs an engine: an evaluator (--evaluator NAME, or 'evaluator' in "
             "--config or --set), a preset (--from-preset PRESET), an external bot "
             "(--external HOST:PORT) or a protocol engine (--engine NAME)")


def _check_external_alone(args: argparse.Namespace, overrides: dict[str, object]) -> None:
    """An external bot runs its own engine: what sets up a built-in one is refused, said
    as what it is (a preset with --external was called 'engine parameters')."""
    external = "--external" if args.external is not None else "--deadline-ms"
    for option, given, what in (("--from-preset", args.from_preset, "a preset"),
                                ("--config", args.config, "an engine config")):
        if given:
            raise InvalidArgumentError(f"{option} and {external} cannot be combined: {what} "
                                       "sets up a built-in engine; an external bot runs its own")
    if overrides:
        raise InvalidArgumentError("an external bot takes no engine parameters")


def _apply_protocol(spec: bots_pb2.BotSpec, engine: str | None, items: list[str]) -> None:
    """A protocol engine in ``spec``: the same engine keeps its options (``items`` go on top),
    another starts from none. The checksum is left for the registry to pin again: a version
    registered now runs the engine the workers offer now."""
    same = spec.WhichOneof("engine") == "protocol" and engine in (None, spec.protocol.engine)
    options = config_from_struct(spec.protocol.options) if same else {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise InvalidArgumentError(f"--option needs KEY=VALUE, got {item!r}")
        options[key.strip()] = _parse_value(text.strip())
    name = engine if engine is not None else spec.protocol.engine
    spec.protocol.CopyFrom(bots_pb2.ProtocolEngine(engine=name,
                                                   options=config_to_struct(options)))
    spec.preset = ""


# -- output ------------------------------------------------------------------------------

def _engine_text(bot: bots_pb2.BotVersion) -> str:
    spec = bot.spec
    if spec.WhichOneof("engine") == "external":
        deadline = spec.external.move_deadline_ms
        return f"external {spec.external.address}" + (f", {deadline} ms/move" if deadline
                                                      else "")
    if spec.WhichOneof("engine") == "protocol":
        options = " ".join(f"{k}={v}" for k, v in
                           sorted(config_from_struct(spec.protocol.options).items()))
        return (f"protocol {spec.protocol.engine} ({spec.protocol.checksum[:12] or 'unpinned'})"
                + (f" {options}" if options else ""))
    evaluator = str(builtin_config(spec).get("evaluator", "?"))
    return f"{evaluator}" + (f" (preset {spec.preset})" if spec.preset else "")


def bot_summary(bot: bots_pb2.BotVersion) -> str:
    spec = bot.spec
    created = time_text(bot.created_at)
    rows = [
        ("name", spec.name), ("version", str(bot.version)),
        ("game", game(spec.game).name if spec.game else "?"), ("owner", bot.owner),
        ("engine", _engine_text(bot)), ("description", spec.description or "-"),
        ("avatar", f"{len(spec.avatar_png)}-byte PNG" if spec.avatar_png else "-"),
        ("retired", "yes" if bot.retired else "no"), ("created", created),
        ("content hash", bot.content_hash), ("evaluator hash", bot.evaluator_hash),
    ]
    text = "\n".join(f"{key:<15} {value}" for key, value in rows)
    if spec.WhichOneof("engine") == "builtin":
        text += "\n\n" + toml_table("builtin", builtin_config(spec)).rstrip()
    if spec.WhichOneof("engine") == "protocol":
        text += f"\n{'checksum':<15} {spec.protocol.checksum}"
    return text


def _print_bot(bot: bots_pb2.BotVersion, args: argparse.Namespace) -> None:
    if args.json:
        print_json(bot)
    else:
        print(bot_summary(bot))


def _table(bots: list[bots_pb2.BotVersion]) -> str:
    header = ("NAME", "VER", "GAME", "OWNER", "ENGINE", "RETIRED")
    rows = [header] + [(b.spec.name, str(b.version), game(b.spec.game).name, b.owner,
                        _engine_text(b), "yes" if b.retired else "") for b in bots]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
                     .rstrip() for row in rows)


# -- commands ----------------------------------------------------------------------------

def _client(args: argparse.Namespace) -> ArenaClient:
    return client_from_args(args)


def _check_evaluator(args: argparse.Namespace) -> None:
    """An unknown ``--evaluator`` is named as such (not as a missing ``--game``); an
    evaluator set with ``--set`` besides a preset or ``--evaluator`` is refused as
    ``--evaluator`` with a preset is (argparse's group cannot see into ``--set``): the
    preset's evaluator, or --evaluator's, won silently."""
    if "evaluator" in settings(args.set):
        for given, option in ((args.from_preset, "--from-preset/--preset"),
                              (args.evaluator, "--evaluator")):
            if given:
                raise NotAllowedWith("--set evaluator", option)
    if args.evaluator and evaluator_game(args.evaluator) is None:
        raise InvalidArgumentError(f"unknown evaluator {args.evaluator!r}; known: "
                                   f"{', '.join(known_evaluators())}")


def cmd_register(args: argparse.Namespace) -> int:
    _check_evaluator(args)
    spec = bots_pb2.BotSpec(name=args.name)
    _apply_fields(spec, args)
    from_preset = _apply_engine(spec, args, updating=False)
    if not spec.game and not from_preset and spec.WhichOneof("engine") != "protocol":
        # (a protocol engine's bot plays its engine's game: the registry knows which)
        raise InvalidArgumentError("--game is required (or --from-preset / --evaluator)")
    with _client(args) as client:
        _print_bot(client.register_bot(spec, from_preset), args)
    return 0


def cmd_update(args: argparse.Namespace) -> int:
    _check_evaluator(args)
    with _client(args) as client:
        latest = client.get_bot(args.name)
        spec = bots_pb2.BotSpec()
        spec.CopyFrom(latest.spec)
        _apply_fields(spec, args)
        _apply_engine(spec, args, updating=True)
        updated = client.update_bot(args.name, spec)
    if updated.version == latest.version and not args.json:
        print(f"nothing changed: {updated.spec.name} stays at version {updated.version}")
        return 0
    _print_bot(updated, args)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    ref = parse_bot_ref(args.bot)
    with _client(args) as client:
        bot = client.get_bot(ref.name, ref.version)
        _print_bot(bot, args)
        if not args.json:
            try:
                print(ratings_text(client.bot_ratings(bot.spec.name, bot.spec.game)))
            except ArenaError as exc:  # the bot is shown all the same
                print(f"\n{'rated':<15} unknown: the ladder service did not answer ({exc})")
    return 0


def ratings_text(found: list[tuple[ladder_pb2.Ratings, ladder_pb2.RatingRow]]) -> str:
    """The bot's places in the arena's rating lists (`arena ladder ratings`), one a line."""
    if not found:
        return f"\n{'rated':<15} not yet (its ladders' games rate it)"
    lines = []
    for rated, row in found:
        line, spec = row.standing, rated.game
        pool = pool_size(rated, row)
        lines.append(
            f"{'rated':<15} {spec.variant} {spec.board_size}x{spec.board_size}"
            f"{f' at {clock_label(rated.clock)}' if rated.HasField('clock') else ''}: "
            f"{bot_ref_text(line.bot)} #{line.rank} of {pool}"
            f"{f' (pool {row.pool})' if rated.pools > 1 else ''}, Elo {line.elo:+.0f} "
            f"[{line.elo_low:+.0f}, {line.elo_high:+.0f}], {count_text(line.games, 'game')}")
    return "\n" + "\n".join(lines)


def cmd_retire(args: argparse.Namespace) -> int:
    with _client(args) as client:
        bot = client.retire_bot(args.name, cancel_matches=args.cancel_matches)
    if args.json:
        print_json(bot)
    else:
        print(f"retired {bot.spec.name} (latest version {bot.version}); its history stays")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    filters: dict[str, Any] = {
        "game": game(args.game).kind if args.game else common_pb2.GAME_KIND_UNSPECIFIED,
        "owner": args.owner or "", "name_prefix": args.prefix or "",
        "include_retired": args.all,
    }
    with _client(args) as client:
        if args.page_size or args.page_token:
            page = client.list_bots(page_size=args.page_size or 0,
                                    page_token=args.page_token or "", **filters)
            bots, next_token = list(page.bots), page.next_page_token
        else:
            bots, next_token = list(client.iter_bots(**filters)), ""
    if args.json:
        print_json({"bots": [to_dict(b) for b in bots], "next_page_token": next_token})
        return 0
    print(_table(bots) if bots else "no bots")
    if next_token:
        print(f"more: --page-token {next_token}")
    return 0


def cmd_presets(args: argparse.Namespace) -> int:
    kind = game(args.game).kind if args.game else common_pb2.GAME_KIND_UNSPECIFIED
    with _client(args) as client:
        presets = client.list_presets(kind)
    if args.json:
        print_json({"presets": [to_dict(p) for p in presets]})
        return 0
    width = max((len(p.name) for p in presets), default=0)
    for preset in presets:
        print(f"{preset.name:<{width}}  {game(preset.game).name:<7}  {preset.description}")
    return 0


def cmd_usage(args: argparse.Namespace) -> int:
    with _client(args) as client:
        usage = client.get_bot_usage(args.user or "")
    print_usage(usage, "bots", [
        ("stored bytes", usage.bot_bytes, usage.bot_bytes_limit, "bot_bytes")], args.json)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    ref = parse_bot_ref(args.bot)
    if args.output is not None:
        refuse_overwrite(args.output, args.force, "-o/--output")
    with _client(args) as client:
        bot = client.get_bot(ref.name, ref.version)
    created = time_text(bot.created_at)
    text = spec_to_toml(bot.spec, comment=(
        f"Arena bot file: {bot.spec.name} version {bot.version} by {bot.owner}, {created}\n"
        f"content hash {bot.content_hash}\n"
        "Register it with `arena bot import FILE`."))
    if args.output is None:
        print(json.dumps({"toml": text}) if args.json else text, end="" if not args.json
              else "\n")
        return 0
    write_output(args.output, text)
    if args.json:
        print_json({"file": str(args.output), "name": bot.spec.name, "version": bot.version,
                    "content_hash": bot.content_hash})
    else:
        print(f"wrote {bot.spec.name} version {bot.version} to {args.output}")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    text = read_text_file(args.file, "bot")
    source = "the bot file on standard input" if str(args.file) == "-" else \
        f"bot file {args.file}"
    if not text.strip():
        raise InvalidArgumentError(f"{source} is empty (`arena bot export NAME` writes one)")
    try:
        parsed = parse_bot_file(text)
    except BotFileError as exc:
        raise InvalidArgumentError(f"{source}: {exc}") from None
    spec = parsed.spec
    if args.name:
        spec.name = args.name
    with _client(args) as client:
        try:
            bot = client.register_bot(spec, parsed.from_preset)
        except AlreadyExistsError as exc:
            if not args.update:
                raise AlreadyExistsError(f"{exc} (--name NAME imports it under another name; "
                                         "--update adds a version to a bot of yours)") from None
            if parsed.from_preset:
                spec = apply_preset(spec, parsed.from_preset)
            bot = client.update_bot(spec.name, spec)
    _print_bot(bot, args)
    return 0


# -- mounting ----------------------------------------------------------------------------

def _add_spec_fields(parser: argparse.ArgumentParser, updating: bool) -> None:
    if not updating:
        parser.add_argument("--game", choices=GAME_NAMES,
                            help="the game (implied by --from-preset or --evaluator)")
    parser.add_argument("--description", help="free text")
    avatar = parser.add_mutually_exclusive_group()
    avatar.add_argument("--avatar", type=Path, metavar="PNG", help="picture, PNG <= 256 KiB")
    if updating:
        avatar.add_argument("--no-avatar", action="store_true", help="remove the picture")


# The request fields of a bot the options of `bot register` and `bot update` fill in.
SPEC_FIELDS = {"spec.game": "--game", "spec.description": "--description",
               "spec.avatar_png": "--avatar", "from_preset": "--from-preset",
               "spec.builtin.config": "engine parameter",
               "spec.builtin.config.evaluator": "--evaluator",
               "spec.external.address": "--external",
               "spec.external.move_deadline_ms": "--deadline-ms",
               "spec.protocol.engine": "--engine", "spec.protocol.options": "--option"}


def add_bot_commands(subparsers: Subparsers) -> None:
    """Mount `arena bot ...` on the `arena` command's subparsers."""
    bot = subparsers.add_parser("bot", help="register, inspect and share bots",
                                description="Manage bots in the registry.")
    sub = bot.add_subparsers(dest="bot_command", metavar="BOT_COMMAND", required=True)

    register = sub.add_parser("register", help="register a new bot (version 1)")
    register.add_argument("--name", required=True)
    _add_spec_fields(register, updating=False)
    _add_engine_options(register, updating=False)
    register.set_defaults(func=cmd_register)
    name_fields(register, {**SPEC_FIELDS, "spec.name": "--name"})

    update = sub.add_parser("update", help="add a new version of a bot you own")
    update.add_argument("name")
    _add_spec_fields(update, updating=True)
    _add_engine_options(update, updating=True)
    update.set_defaults(func=cmd_update)
    name_fields(update, SPEC_FIELDS)

    show = sub.add_parser("show", help="one bot: NAME (latest) or NAME@VERSION")
    show.add_argument("bot", metavar="NAME[@VERSION]")
    show.set_defaults(func=cmd_show)

    listing = sub.add_parser("list", help="bots, newest versions, by name")
    listing.add_argument("--game", choices=GAME_NAMES)
    listing.add_argument("--owner")
    listing.add_argument("--prefix", help="names starting with this")
    listing.add_argument("--all", action="store_true", help="include retired bots")
    listing.add_argument("--page-size", type=non_negative, help="one page of this size")
    listing.add_argument("--page-token", help="the page after a previous one")
    listing.set_defaults(func=cmd_list)
    name_fields(listing, {"page.page_size": "--page-size", "page.page_token": "--page-token"})

    retire = sub.add_parser("retire", help="stop a bot entering new matches")
    retire.add_argument("name")
    retire.add_argument("--cancel-matches", action="store_true",
                        help="also cancel its pending and running matches: void where "
                        "you created them, a loss by resignation where someone else did")
    retire.set_defaults(func=cmd_retire)

    presets = sub.add_parser("presets", help="the presets shipped with Arena")
    presets.add_argument("--game", choices=GAME_NAMES)
    presets.set_defaults(func=cmd_presets)

    add_usage_command(sub, "bots use (bytes stored)", cmd_usage)

    export = sub.add_parser("export", help="write a bot as a TOML bot file")
    export.add_argument("bot", metavar="NAME[@VERSION]")
    export.add_argument("-o", "--output", type=Path, help="file to write (default stdout)")
    export.add_argument("--force", action="store_true", help="overwrite the file")
    export.set_defaults(func=cmd_export)

    imported = sub.add_parser("import", help="register a bot from a TOML bot file")
    imported.add_argument("file", type=Path)
    imported.add_argument("--name", help="register under this name instead")
    imported.add_argument("--update", action="store_true",
                          help="if the name exists, add a version instead of failing")
    imported.set_defaults(func=cmd_import)
    name_fields(imported, {"spec.name": "--name"})

    for parser in (register, update, show, listing, retire, presets, export,
                   imported):
        add_json_flag(parser)
