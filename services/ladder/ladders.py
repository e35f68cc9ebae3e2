"""Ladder domain logic: validate and create, count results, standings, cancel, list.

A ladder's bots are resolved to exact versions at creation, so every game of the ladder
plays the same versions even if someone registers a new version while it runs. All of a
ladder's matches are created (and queued to the referees) at creation; results come back
through ``count_match``, which is safe to call any number of times for the same match.
"""

from __future__ import annotations

import logging

import redis
from arena.services.common import paging
from arena.services.ladder.schedule import MAX_BOTS, MAX_GAMES, PlannedGame, even_games, plan_games
from arena.services.ladder.store import RUNNING, LadderStore, ResultRecord, new_ladder_id, now_ms
from arena.services.referee.ledger import Ledger
from arena.services.referee.matches import FINISHED_STATES, MatchStore, create_match
from arena.services.registry.store import BotStore
from google.protobuf import timestamp_pb2

from arena.errors import (
    FailedPreconditionError,
    FieldViolation,
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
)
from arena.games import GameError, new_position
from arena.openings import UnknownSuiteError, load_suite, select_openings
from arena.ratings import Game, compute_standings
from arena.v1 import common_pb2, ladder_pb2, match_pb2

log = logging.getLogger(__name__)

GAME_NAMES = {common_pb2.GAME_KIND_OTHELLO: "othello", common_pb2.GAME_KIND_GOMOKU: "gomoku"}
DEFAULT_VARIANT = {"othello": "standard", "gomoku": "freestyle"}
DEFAULT_SIZE = {"othello": 8, "gomoku": 15}


def bot_label(ref: common_pb2.BotRef) -> str:
    return f"{ref.name}@v{ref.version}"


# --- creation -----------------------------------------------------------------------------


def _check_game(config: ladder_pb2.LadderConfig, out: list[FieldViolation]) -> str | None:
    """Fix the variant and size the suite needs (or the defaults); return the game name."""
    game = GAME_NAMES.get(config.game.kind)
    if game is None:
        out.append(FieldViolation("config.game.kind", "must be othello or gomoku"))
        return None
    try:
        suite = load_suite(config.opening_suite)
        variant, size = suite.resolve(game, config.game.variant, config.game.board_size)
        config.opening_suite = suite.name
        config.game.variant = variant or DEFAULT_VARIANT[game]
        config.game.board_size = size or DEFAULT_SIZE[game]
        new_position(game, config.game.variant, config.game.board_size)
    except UnknownSuiteError as exc:
        out.append(FieldViolation("config.opening_suite", str(exc)))
        return None
    except GameError as exc:
        out.append(FieldViolation("config.game", str(exc)))
        return None
    return str(game)


def _resolve_bots(
    client: redis.Redis, config: ladder_pb2.LadderConfig, out: list[FieldViolation]
) -> None:
    """Replace every bot reference by its exact version; flag unknown and repeated bots."""
    if not 2 <= len(config.bots) <= MAX_BOTS:
        out.append(
            FieldViolation("config.bots", f"need 2..{MAX_BOTS} bots, got {len(config.bots)}")
        )
        return
    seen: dict[tuple[str, int], int] = {}
    store = BotStore(client)
    for index, ref in enumerate(config.bots):
        field = f"config.bots[{index}]"
        if not ref.name:
            out.append(FieldViolation(field, "must name a bot"))
            continue
        try:
            bot = store.get(ref.name, ref.version)
        except NotFoundError as exc:
            out.append(FieldViolation(field, str(exc)))
            continue
        if bot.spec.game != config.game.kind:
            out.append(FieldViolation(field, f"bot {ref.name!r} does not play this game"))
        elif bot.retired and ref.version == 0:
            out.append(FieldViolation(field, f"bot {ref.name!r} is retired"))
        key = (ref.name, bot.version)
        if key in seen:
            out.append(
                FieldViolation(field, f"{bot_label(bot_ref(key))} is already bots[{seen[key]}]")
            )
        seen[key] = index
        ref.version = bot.version


def bot_ref(key: tuple[str, int]) -> common_pb2.BotRef:
    return common_pb2.BotRef(name=key[0], version=key[1])


def validate_config(
    client: redis.Redis, config: ladder_pb2.LadderConfig
) -> tuple[ladder_pb2.LadderConfig, list[PlannedGame]]:
    """A normalised copy of ``config`` and its games; raises ``InvalidArgumentError``."""
    config = ladder_pb2.LadderConfig.FromString(config.SerializeToString())
    violations: list[FieldViolation] = []
    if config.format == ladder_pb2.LADDER_FORMAT_UNSPECIFIED:
        config.format = ladder_pb2.LADDER_FORMAT_ROUND_ROBIN
    if config.format not in (
        ladder_pb2.LADDER_FORMAT_ROUND_ROBIN,
        ladder_pb2.LADDER_FORMAT_GAUNTLET,
    ):
        violations.append(FieldViolation("config.format", f"unknown format {config.format}"))
    if config.games_per_pairing < 0:
        violations.append(FieldViolation("config.games_per_pairing", "must not be negative"))
    game = _check_game(config, violations)
    if game is not None:
        _resolve_bots(client, config, violations)
    if violations:
        raise InvalidArgumentError.for_fields(violations)
    suite = load_suite(config.opening_suite)
    config.games_per_pairing = even_games(config.games_per_pairing, len(suite.openings))
    openings = select_openings(suite, config.games_per_pairing // 2, config.seed)
    games = plan_games([f"{bot.name}@{bot.version}" for bot in config.bots], config.format,
                       config.games_per_pairing, openings, config.seed)
    if len(games) > MAX_GAMES:
        raise InvalidArgumentError.for_fields(
            [
                FieldViolation(
                    "config.games_per_pairing",
                    f"the ladder would play {len(games)} games; the limit is {MAX_GAMES}",
                )
            ]
        )
    return config, games


def match_config(
    ladder_id: str, config: ladder_pb2.LadderConfig, game: PlannedGame
) -> match_pb2.MatchConfig:
    return match_pb2.MatchConfig(
        game=config.game,
        black=config.bots[game.black],
        white=config.bots[game.white],
        opening=list(game.opening.moves),
        time_control=config.time_control,
        capture_trees=config.capture_trees,
        seed=game.seed,
        ladder_id=ladder_id,
    )


def create_ladder(
    client: redis.Redis, config: ladder_pb2.LadderConfig, owner: str
) -> ladder_pb2.LadderInfo:
    """Validate, store the ladder and create (queue) all of its matches."""
    config, games = validate_config(client, config)
    created_ms = now_ms()
    created = timestamp_pb2.Timestamp()
    created.FromMilliseconds(created_ms)
    info = ladder_pb2.LadderInfo(
        id=new_ladder_id(created_ms),
        config=config,
        status=RUNNING,
        games_total=len(games),
        owner=owner,
        created_at=created,
    )
    store = LadderStore(client)
    store.create(info, created_ms)
    # The first match goes through the referee's validation (time control and the rest);
    # every other match differs only in colours, opening and seed, all checked already.
    try:
        first = create_match(client, match_config(info.id, config, games[0]), owner)
    except Exception:
        store.delete(info.id)
        raise
    store.add_match(info.id, first.id)
    for game in games[1:]:
        match = create_match(client, match_config(info.id, config, game), owner)
        store.add_match(info.id, match.id)
    return store.get(info.id)


# --- results --------------------------------------------------------------------------------


def result_record(config: ladder_pb2.LadderConfig, match: match_pb2.Match) -> ResultRecord | None:
    """The ladder's view of a finished match, or None if its bots are not the ladder's."""
    index = {(ref.name, ref.version): i for i, ref in enumerate(config.bots)}
    black = index.get((match.black.name, match.black.version))
    white = index.get((match.white.name, match.white.version))
    if black is None or white is None:
        return None
    result = match.result
    void = (
        match.status == match_pb2.MATCH_STATUS_CANCELLED
        or result.termination
        in (
            match_pb2.TERMINATION_CANCELLED,
            match_pb2.TERMINATION_UNSPECIFIED,
        )
        or (
            result.termination == match_pb2.TERMINATION_DEAD_LETTERED
            and result.winner == common_pb2.COLOR_UNSPECIFIED
        )
    )
    if void:
        return ResultRecord(black, white, None)
    score = {common_pb2.COLOR_BLACK: 1.0, common_pb2.COLOR_WHITE: 0.0}.get(result.winner, 0.5)
    return ResultRecord(black, white, score)


def count_match(store: LadderStore, config: ladder_pb2.LadderConfig, match: match_pb2.Match) -> int:
    """Count a finished match of the ladder ``config`` belongs to (see ``LadderStore.count``)."""
    if match.status not in FINISHED_STATES:
        return 0
    record = result_record(config, match)
    if record is None:
        return -2
    return store.count(match.config.ladder_id, match.id, record)


def reconcile(store: LadderStore, ladder_id: str) -> int:
    """Count every finished match of a ladder that is not counted yet (a safety net for
    results whose stream entry was lost); returns how many were counted now."""
    info = store.get(ladder_id)
    matches = MatchStore(store.client)
    counted = 0
    for match_id in store.uncounted(ladder_id):
        try:
            match = matches.header(match_id)
        except NotFoundError:
            continue  # deleted by its owner: it will never produce a result
        counted += count_match(store, info.config, match) == 1
    return counted


# --- reading and cancelling ---------------------------------------------------------------


def standings(store: LadderStore, ladder_id: str) -> ladder_pb2.Standings:
    info = store.get(ladder_id)
    bots = list(info.config.bots)
    games = [
        Game(r.black, r.white, r.score)
        for r in store.results(ladder_id).values()
        if r.score is not None
    ]
    table = compute_standings(len(bots), games)
    rows = [
        ladder_pb2.StandingRow(
            bot=bots[row.player],
            games=row.record.games,
            wins=row.record.wins,
            draws=row.record.draws,
            losses=row.record.losses,
            score_pct=row.record.score_pct,
            elo=row.elo,
            elo_low=row.elo_low,
            elo_high=row.elo_high,
            rank=row.rank,
        )
        for row in table.rows
    ]
    pairs = [
        ladder_pb2.HeadToHead(
            bot=bot_label(bots[line.player]),
            opponent=bot_label(bots[line.opponent]),
            wins=line.record.wins,
            draws=line.record.draws,
            losses=line.record.losses,
            los=line.los,
            bot_ref=bots[line.player],
            opponent_ref=bots[line.opponent],
        )
        for line in table.head_to_head
    ]
    return ladder_pb2.Standings(ladder=info, rows=rows, head_to_head=pairs)


def cancel_ladder(
    store: LadderStore, ladder_id: str, caller: str, is_admin: bool
) -> ladder_pb2.LadderInfo:
    """Stop a running ladder: its matches that no referee has started yet are ended as
    cancelled through the referee's ledger (a referee that picks one up later finds it
    over and skips it); matches already running play on and their results still count.
    The ladder stays CANCELLED and WatchLadder ends."""
    info = store.get(ladder_id)
    if not is_admin and caller != info.owner:
        raise PermissionDeniedError(
            f"{caller} may not cancel ladder {ladder_id} owned by {info.owner}"
        )
    if not store.cancel(ladder_id):
        raise FailedPreconditionError(f"ladder {ladder_id} is not running")
    matches = MatchStore(store.client)
    ledger = Ledger(store.client)
    for match_id in store.uncounted(ladder_id):
        try:
            match = matches.header(match_id)
        except NotFoundError:
            continue
        if match.status != match_pb2.MATCH_STATUS_PENDING:
            continue
        match.status = match_pb2.MATCH_STATUS_CANCELLED
        match.result.CopyFrom(
            match_pb2.MatchResult(
                termination=match_pb2.TERMINATION_CANCELLED, detail=f"ladder {ladder_id} cancelled"
            )
        )
        match.finished_at.FromMilliseconds(now_ms())
        # Zero plies: only a match nobody has played a move of can be ended this way.
        if ledger.finish(match, 0):
            count_match(store, info.config, match)
    return store.get(ladder_id)


def list_ladders(
    store: LadderStore, page: common_pb2.PageRequest
) -> ladder_pb2.ListLaddersResponse:
    size = paging.page_size(page.page_size)
    cursor = paging.decode_page_token(page.page_token) or "0"
    if not cursor.isdigit():
        raise InvalidArgumentError.for_fields(
            [FieldViolation("page.page_token", f"is not a token this server issued: {cursor!r}")]
        )
    offset = int(cursor)
    ids, more = store.page(offset, size)
    ladders = []
    for ladder_id in ids:
        try:
            ladders.append(store.get(ladder_id))
        except NotFoundError:
            continue
    token = paging.encode_page_token(str(offset + size)) if more else ""
    return ladder_pb2.ListLaddersResponse(ladders=ladders, next_page_token=token)
