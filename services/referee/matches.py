"""Creating matches (validated), importing game records, listing them, and the rules a
match's config must obey.

The referee stores matches through ``protocol.matches.MatchStore`` and writes game state
only through ``protocol.ledger``; bots are resolved to exact versions by asking the
registry. An imported record is stored whole, already finished (``MatchStore.store_finished``).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Iterator

import redis
from arena.services.common import paging
from arena.services.common.auth import Principal
from arena.services.common.peers import BotVersions, other_game
from arena.services.common.protocol import keys
from arena.services.common.protocol.ledger import Ledger
from arena.services.common.protocol.matches import (
    FINISHED_STATES,
    UNFINISHED_STATES,
    MatchStore,
    new_match_id,
)
from arena.services.common.protocol.requests import CreateRequest
from arena.services.common.quotas import UNLIMITED, Quota
from arena.services.referee import judge, telemetry
from google.protobuf import timestamp_pb2

from arena.bots.validation import BOT_REF_FORM, split_bot_ref, validate_name
from arena.clock import DEFAULT_MOVE_TIME_MS, clock_problems
from arena.errors import (
    FailedPreconditionError,
    FieldViolation,
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
)
from arena.games import Color, Game, GameError, Position, UnknownGameError, game
from arena.records import FORMAT_NAMES, check_storable, imported_match, read_record
from arena.text import bounded, shown, unprintable_problem
from arena.v1 import common_pb2, match_pb2, referee_pb2

DEFAULT_TREE_NODES = 2000
MAX_TREE_NODES = 200_000
MAX_RECORD_CHARS = 1_000_000  # a 19x19 Gomoku replay with full search info is ~100 kB
# A full page of a listing looks this far past it for one more match that passes the
# filters (``_continue_after``).
LOOK_AHEAD = 200


def start_position(match: match_pb2.Match) -> Position:
    """The position the bots start from (after the opening)."""
    return game(match.config.game.kind).position_from_text(match.start_position)


def position_after(match: match_pb2.Match,
                   records: Iterable[match_pb2.MoveRecord]) -> Position:
    """The position after the recorded moves (passes included) from the start."""
    position = start_position(match)
    for record in records:
        position.push(record.move.square)
    return position


# --- creation ---------------------------------------------------------------------------


def _normalized_game(spec: common_pb2.GameSpec, out: list[FieldViolation]) -> Game | None:
    try:
        played = game(spec.kind)
    except UnknownGameError as exc:
        out.append(FieldViolation("config.game.kind", str(exc)))
        return None
    try:
        spec.CopyFrom(played.spec(spec.variant, spec.board_size))
    except GameError as exc:  # (the variant or the size, where it says which)
        part = exc.part if isinstance(exc, UnknownGameError) and exc.part else ""
        out.append(FieldViolation("config.game" + (f".{part}" if part else ""), str(exc)))
        return None
    return played


def _check_time_control(tc: common_pb2.TimeControl, out: list[FieldViolation]) -> None:
    tc.move_time_ms = tc.move_time_ms or DEFAULT_MOVE_TIME_MS
    out += [FieldViolation(f"config.time_control.{part}", problem)
            for part, problem in clock_problems(tc)]


def _start_after_opening(
    config: match_pb2.MatchConfig, played: Game, out: list[FieldViolation]
) -> Position | None:
    spec = config.game
    try:
        if config.start_position:
            position = played.position_from_text(config.start_position)
            if position.variant != spec.variant or position.size != spec.board_size:
                out.append(FieldViolation("config.start_position",
                                          f"is not a {spec.variant} {spec.board_size}x"
                                          f"{spec.board_size} position"))
                return None
        else:
            position = played.new_position(spec.variant, spec.board_size)
    except GameError as exc:
        out.append(FieldViolation("config.start_position", str(exc)))
        return None
    for index, move in enumerate(config.opening):
        try:
            position.push(move)
        except GameError as exc:
            out.append(FieldViolation(f"config.opening[{index}]", str(exc)))
            return None
    if position.is_game_over():
        out.append(FieldViolation("config.opening", "leaves no game to play") if config.opening
                   else FieldViolation("config.start_position", "is a finished game: there is "
                                                                "nothing to play"))
        return None
    return position


def _resolve_bot(bots: BotVersions, field: str, ref: common_pb2.BotRef, kind: int,
                 out: list[FieldViolation]) -> common_pb2.BotRef | None:
    if not ref.name:
        out.append(FieldViolation(field, "must name a bot"))
        return None
    try:
        bot = bots.resolve(ref)
    except NotFoundError as exc:
        out.append(FieldViolation(field, str(exc)))
        return None
    wrong = other_game(bot, kind) or bots.unplayable(bot)
    if wrong:
        out.append(FieldViolation(field, wrong))
        return None
    return common_pb2.BotRef(name=ref.name, version=bot.version)


def create_match(store: MatchStore, bots: BotVersions, config: match_pb2.MatchConfig,
                 owner: str, request_id: str = "", quota: Quota = UNLIMITED) -> match_pb2.Match:
    """Validate ``config``, resolve the bot versions, store the match and queue it.

    A ``request_id`` that already made a match for the same ``config`` returns that match
    instead (a client's retry after a timeout creates nothing new); one that made a match
    for another config is refused (AlreadyExistsError). ``quota`` is the owner's.
    """
    request = CreateRequest.of("match", owner, request_id, config)
    made = store.made_for(request) if request_id else ""
    if made:
        return store.get(made)
    config = match_pb2.MatchConfig.FromString(config.SerializeToString())  # caller's stays put
    violations: list[FieldViolation] = []
    game = _normalized_game(config.game, violations)
    _check_time_control(config.time_control, violations)
    if config.tree_node_budget < 0 or config.tree_node_budget > MAX_TREE_NODES:
        violations.append(FieldViolation("config.tree_node_budget",
                                         f"must be in 0..{MAX_TREE_NODES}"))
    if config.capture_trees and config.tree_node_budget == 0:
        config.tree_node_budget = DEFAULT_TREE_NODES
    problem = game.adjudication_problem(config.adjudicate_empties) if game else None
    if problem:
        violations.append(FieldViolation("config.adjudicate_empties", problem))
    position = _start_after_opening(config, game, violations) if game else None
    black = _resolve_bot(bots, "config.black", config.black, config.game.kind, violations)
    white = _resolve_bot(bots, "config.white", config.white, config.game.kind, violations)
    if violations or position is None or black is None or white is None:
        raise InvalidArgumentError.for_fields(violations)
    _check_quota(store, owner, config, quota)
    now_ms = int(time.time() * 1000)
    created = timestamp_pb2.Timestamp()
    created.FromMilliseconds(now_ms)
    match = match_pb2.Match(
        id=new_match_id(now_ms), config=config, black=black, white=white,
        status=match_pb2.MATCH_STATUS_PENDING, owner=owner, created_at=created,
        start_position=position.to_text(),
    )
    made = store.create(match, request, quota.cap("match_bytes"))
    return match if made == match.id else store.get(made)


def _check_quota(store: MatchStore, owner: str, config: match_pb2.MatchConfig,
                 quota: Quota) -> None:
    tc = config.time_control
    quota.check("move_time_ms", tc.move_time_ms)
    quota.check("game_time_ms", tc.game_time_ms)
    quota.check("tree_nodes", config.tree_node_budget if config.capture_trees else 0)
    quota.check("queued_matches", store.unfinished(owner) + 1)


# --- importing ----------------------------------------------------------------------------


def import_match(store: MatchStore, request: referee_pb2.ImportMatchRequest,
                 owner: str, limit: int = 0) -> match_pb2.Match:
    """Read a game record (every move replayed through the rules) and store it as a
    finished match of ``owner`` (see ``arena.records.imported_match``), within ``limit``
    bytes of matches (0: none). A ``request_id`` that already stored a match from the
    same request returns that match; one that stored a match from another (other
    content, format or variant) is refused (AlreadyExistsError)."""
    served = CreateRequest.of("match-import", owner, request.request_id, request,
                              "request_id")
    made = store.made_for(served) if request.request_id else ""
    if made:
        return store.get(made)
    fmt = _record_format(request.format)
    if not request.content.strip():
        raise InvalidArgumentError.for_fields([FieldViolation("content", "is empty")])
    if len(request.content) > MAX_RECORD_CHARS:
        raise InvalidArgumentError.for_fields([FieldViolation(
            "content", f"is {len(request.content)} characters; the limit is {MAX_RECORD_CHARS}")])
    now_ms = int(time.time() * 1000)
    stamp = timestamp_pb2.Timestamp()
    stamp.FromMilliseconds(now_ms)
    try:
        fmt, replay = read_record(request.content, fmt, request.variant)
        check_storable(fmt, replay, stamp)
    except UnknownGameError as exc:  # a variant the record's game has not
        raise InvalidArgumentError.for_fields([FieldViolation("variant", str(exc))]) from None
    except InvalidArgumentError as exc:  # FormatError: the message names the line or move
        raise InvalidArgumentError.for_fields([FieldViolation("content", str(exc))]) from None
    match = imported_match(replay, fmt, new_match_id(now_ms), owner, stamp)
    made = store.store_finished(match, served, limit)
    return match if made == match.id else store.get(made)


def _record_format(fmt: referee_pb2.ReplayFormat.ValueType) -> str:
    if fmt == referee_pb2.REPLAY_FORMAT_UNSPECIFIED:
        return ""
    if fmt not in FORMAT_NAMES:
        raise InvalidArgumentError.for_fields([FieldViolation("format", f"unknown format {fmt}")])
    return FORMAT_NAMES[fmt]


# --- listing ------------------------------------------------------------------------------


def list_matches(store: MatchStore,
                 request: referee_pb2.ListMatchesRequest) -> referee_pb2.ListMatchesResponse:
    bot = _bot_filter(request.bot_name)
    page: paging.Page[match_pb2.Match] = paging.Page(paging.page_size(request.page.page_size))
    after = paging.decode_page_token(request.page.page_token)
    full, last = False, ""
    # one more than the page: an unfiltered listing knows in one read whether more follow
    headers = store.headers(_index_for(store, request, bot), after, first=page.size + 1)
    for match_id, header in headers:
        last = match_id
        if header is None or not _accepts(request, bot, header):
            continue  # deleted while we listed, or filtered out
        try:
            match = header if request.summary_only else store.get(match_id)
        except NotFoundError:
            continue
        if page.add(match):
            full = True
            break
    cursor = _continue_after(request, bot, headers, last) if full else ""
    token = paging.encode_page_token(cursor) if cursor else ""
    return referee_pb2.ListMatchesResponse(matches=page.items, next_page_token=token)


def _continue_after(request: referee_pb2.ListMatchesRequest, bot: tuple[str, int] | None,
                    headers: Iterator[tuple[str, match_pb2.Match | None]], last: str) -> str:
    """Where the next page starts after a full page ending at ``last``: there, if a match
    after it passes the filters (a token never leads to an empty page); "" if none does.
    At most ``LOOK_AHEAD`` more are read, so that a small page of a rare filter does not
    read the whole index on every call: past them the next page starts after the last one
    read (and may be empty)."""
    for seen, (match_id, header) in enumerate(headers, 1):
        if header is not None and _accepts(request, bot, header):
            return last
        if seen == LOOK_AHEAD:
            return match_id
    return ""


def _bot_filter(text: str) -> tuple[str, int] | None:
    """The bot a listing is filtered by: ``NAME`` (any version) or ``NAME@VERSION``, as
    matches name their bots ('al-1@2' listed nothing: no bot is so named)."""
    if not text:
        return None
    ref = split_bot_ref(text)
    if ref is None:
        raise InvalidArgumentError.for_fields(
            [FieldViolation("bot_name", f"{BOT_REF_FORM}, got {shown(text)}")])
    violations = validate_name(ref[0], "bot_name")  # no bot has a name it could not register
    if violations:
        raise InvalidArgumentError.for_fields(violations)
    return ref


def _index_for(store: MatchStore, request: referee_pb2.ListMatchesRequest,
               bot: tuple[str, int] | None) -> str:
    """The index a listing reads: the smallest that holds every match it may list. The
    unfinished matches are few however many finished ones the arena keeps (a page of the
    running ones read the whole index when fewer ran than the page held)."""
    if request.status in UNFINISHED_STATES:
        return store.unfinished_index()
    if request.ladder_id:
        return keys.match_index("ladder", request.ladder_id)
    if bot:
        return keys.match_index("bot", bot[0])
    if request.game:
        return keys.match_index("game", request.game)
    return keys.ALL_MATCHES


def _accepts(request: referee_pb2.ListMatchesRequest, bot: tuple[str, int] | None,
             match: match_pb2.Match) -> bool:
    if request.status and match.status != request.status:
        return False
    if request.game and match.config.game.kind != request.game:
        return False
    if request.ladder_id and match.config.ladder_id != request.ladder_id:
        return False
    if bot is None:
        return True
    # An imported record's players are no bots (it is in no bot's index either).
    name, version = bot
    return not match.imported_from and any(
        side.name == name and version in (0, side.version) for side in (match.black,
                                                                          match.white))


# --- cancelling, deleting, pruning --------------------------------------------------------


def may_change(principal: Principal, match: match_pb2.Match, bots: BotVersions) -> bool:
    """The match's creator, the owner of either bot, or an admin. The players of an
    imported record name no bot (version 0): nobody owns them."""
    if principal.is_admin or principal.name == match.owner:
        return True
    return any(bots.get(ref).owner == principal.name for ref in (match.black, match.white)
               if ref.version)


def withdrawn_side(principal: Principal, match: match_pb2.Match,
                   bots: BotVersions) -> Color | None:
    """The side whose bot ``principal`` withdraws by cancelling ``match``: the one bot of
    the two it owns in a match someone else created. None for the match's creator or an
    admin (the game is called off), and for the owner of both bots."""
    if principal.is_admin or principal.name == match.owner:
        return None
    sides = [color for color, ref in ((Color.BLACK, match.black), (Color.WHITE, match.white))
             if ref.version and bots.get(ref).owner == principal.name]
    return sides[0] if len(sides) == 1 else None


def cancel_match(store: MatchStore, ledger: Ledger, bots: BotVersions, match_id: str,
                 principal: Principal, reason: str = "") -> match_pb2.Match:
    """End a pending or running match; its referee stops at once and the worker thinking
    on its move stops its search. The creator (or an admin) calls it off: cancelled, void,
    no result. The owner of one of its bots withdraws that bot: it loses by resignation,
    counted like any loss (calling a game off when it goes badly would keep losses out of
    the ratings). Cancelling a cancelled match again returns it; a finished one cannot be
    cancelled."""
    match = store.header(match_id)
    if not may_change(principal, match, bots):
        raise PermissionDeniedError(
            f"{principal.name} may not cancel match {match_id}: its creator "
            f"({match.owner}) may, and the owner of either bot, to withdraw it")
    if match.status == match_pb2.MATCH_STATUS_CANCELLED:
        return store.get(match_id)
    if match.status == match_pb2.MATCH_STATUS_FINISHED:
        raise FailedPreconditionError(f"match {match_id} is already finished")
    problem = unprintable_problem(reason)
    if problem is not None:
        raise InvalidArgumentError.for_fields([FieldViolation("reason", problem)])
    loser = withdrawn_side(principal, match, bots)
    if loser is None:
        detail = bounded(reason.strip() or f"cancelled by {principal.name}", 500)
        match.status = match_pb2.MATCH_STATUS_CANCELLED
        match.result.CopyFrom(match_pb2.MatchResult(
            termination=match_pb2.TERMINATION_CANCELLED, detail=detail, void=True))
    else:
        why = f": {reason.strip()}" if reason.strip() else ""
        detail = bounded(f"{loser.name.lower()} withdrawn by its owner {principal.name}{why}",
                         500)
        position = position_after(match, store.records(match_id))
        match.status = match_pb2.MATCH_STATUS_FINISHED
        match.result.CopyFrom(judge.forfeit_result(
            position, judge.Forfeit(match_pb2.TERMINATION_RESIGNATION, detail), loser))
    match.finished_at.GetCurrentTime()
    if not ledger.finish(match, None):  # it ended meanwhile: report how
        current = store.get(match_id)
        if current.status == match_pb2.MATCH_STATUS_FINISHED:
            raise FailedPreconditionError(f"match {match_id} finished before the cancellation")
        return current
    telemetry.match_finished(match.result)
    return store.get(match_id)


def usage(store: MatchStore, user: str, quota: Quota) -> referee_pb2.Usage:
    """What ``user``'s matches use of their ``quota``."""
    return referee_pb2.Usage(
        user=user, match_bytes=store.stored_bytes(user),
        match_bytes_limit=quota.cap("match_bytes"),
        unfinished_matches=store.unfinished(user),
        unfinished_matches_limit=quota.cap("queued_matches"),
        running_matches=store.running(user),
        running_matches_limit=quota.cap("running_matches"))


def delete_match(store: MatchStore, bots: BotVersions, match_id: str, principal: Principal,
                 cache: redis.Redis | None) -> None:
    match = store.header(match_id)
    if not principal.is_admin and principal.name != match.owner:
        raise PermissionDeniedError(f"{principal.name} may not delete match {match_id} "
                                    f"owned by {match.owner}")
    if match.status not in FINISHED_STATES:
        raise FailedPreconditionError(f"match {match_id} is still running: cancel it first")
    store.delete(match, cache)
    store.announce_deleted(match.owner, 1)


DEFAULT_PRUNE_LIMIT = 1000
MAX_PRUNE_LIMIT = 10_000


def prune_matches(store: MatchStore, request: referee_pb2.PruneMatchesRequest,
                  principal: Principal, cache: redis.Redis | None,
                  ) -> referee_pb2.PruneMatchesResponse:
    """Forget a batch of the finished matches recorded and ended before ``request.before``,
    newest first: an admin's, every user's (the arena's retention); a user's, their own
    (room under their ``match_bytes`` quota). A ladder's games go together, once every game
    of the ladder is over and ended before that time: a game of a ladder still playing may
    not be counted yet, and a ladder's page keeps all its games or none."""
    problems = []
    if not request.HasField("before") or request.before.ToNanoseconds() <= 0:
        problems.append(FieldViolation("before", "is required: a time after 1970"))
    if not 0 <= request.limit <= MAX_PRUNE_LIMIT:
        problems.append(FieldViolation("limit", f"must be 1 to {MAX_PRUNE_LIMIT} (0: "
                                                f"{DEFAULT_PRUNE_LIMIT})"))
    after = paging.decode_page_token(request.page_token, "page_token")
    if problems:
        raise InvalidArgumentError.for_fields(problems)
    before_ms = request.before.ToMilliseconds()

    def old(match: match_pb2.Match) -> bool:
        return match.status in FINISHED_STATES and match.finished_at.ToMilliseconds() < before_ms

    ladders: dict[str, bool] = {}  # ladder id: every game of it is old

    def old_ladder(ladder_id: str) -> bool:
        if ladder_id not in ladders:
            ladders[ladder_id] = all(
                old(game) for _, game in store.headers(keys.match_index("ladder", ladder_id))
                if game is not None)
        return ladders[ladder_id]

    # Ids begin with the time they were made at (new_match_id): the older ones sort first.
    cutoff = f"{before_ms:013d}"
    after = min(after, cutoff) if after else cutoff
    limit = request.limit or DEFAULT_PRUNE_LIMIT
    examined = pruned = 0
    last = next_token = ""
    deleted: Counter[str] = Counter()  # owner: matches deleted
    index = keys.ALL_MATCHES if principal.is_admin else keys.match_index("owner", principal.name)
    for match_id, match in store.headers(index, after):
        if examined == limit:
            next_token = paging.encode_page_token(last)
            break
        examined, last = examined + 1, match_id
        if match is None:
            continue  # deleted meanwhile
        ladder = match.config.ladder_id
        if not old(match) or (ladder and (request.keep_ladder_games or not old_ladder(ladder))):
            continue
        if not request.dry_run:
            store.delete(match, cache)
            deleted[match.owner] += 1
        pruned += 1
    for owner, count in sorted(deleted.items()):
        store.announce_deleted(owner, count)
    return referee_pb2.PruneMatchesResponse(examined=examined, pruned=pruned,
                                            next_page_token=next_token)

