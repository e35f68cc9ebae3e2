"""Ladder domain logic: validate and create, schedule games, count results, standings,
cancel, list.

A ladder's bots are resolved to exact versions at creation (by asking the registry), so
every game plays the same versions even if someone registers a new version meanwhile.
Creating a ladder costs the same whatever its size: its games are planned one at a time
(``schedule.game_at``) and created through the referee a few at a time, as earlier ones
finish, each with an idempotency key (the ladder and the game index), so a ladder service
that restarts never creates a game twice. Results come back through ``count``, which is
safe to call any number of times for the same match. An SPRT ladder (``sprt``) is judged
after every counted result and concluded as soon as its test decides.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from arena.clients.sdk import ArenaClient
from arena.services.common import paging
from arena.services.common.ladder_limits import MAX_GAMES, bot_count_problem, repeated_bots
from arena.services.common.lru import LruCache
from arena.services.common.metrics import LADDER_GAMES
from arena.services.common.peers import BotVersions, other_game
from arena.services.common.protocol.ladders import (
    CANCELLED,
    FINISHED,
    LADDER_ID,
    OPEN,
    RUNNING,
    LadderStore,
    ResultRecord,
    new_ladder_id,
    now_ms,
)
from arena.services.common.protocol.requests import REFUSED, CreateRequest
from arena.services.common.quotas import UNLIMITED, Quota
from arena.services.ladder import sprt
from arena.services.ladder.schedule import (
    even_games,
    game_at,
    games_total,
    pairings,
)
from google.protobuf import timestamp_pb2

from arena.bots.validation import validate_name
from arena.errors import (
    ArenaError,
    DeadlineExceededError,
    FailedPreconditionError,
    FieldViolation,
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
    ResourceExhaustedError,
    UnavailableError,
)
from arena.games import Game as Rules
from arena.games import GameError, UnknownGameError, game
from arena.openings import (
    CUSTOM,
    Opening,
    OpeningSuite,
    UnknownSuiteError,
    custom_suite,
    load_suite,
    select_openings,
)
from arena.ratings import Game, compute_standings
from arena.v1 import common_pb2, ladder_pb2, match_pb2

log = logging.getLogger(__name__)

# A referee's refusals that are for now: the game waits for the next round.
_FOR_NOW = (ResourceExhaustedError, UnavailableError, DeadlineExceededError)
_OPENING_PROBLEMS_SHOWN = 10  # a file of 256 bad openings: the first few say enough
FORMATS = (ladder_pb2.LADDER_FORMAT_ROUND_ROBIN, ladder_pb2.LADDER_FORMAT_GAUNTLET,
           ladder_pb2.LADDER_FORMAT_SPRT)


def bot_label(ref: common_pb2.BotRef) -> str:
    return f"{ref.name}@v{ref.version}"


@dataclass(frozen=True)
class Plan:
    """What a ladder's games are made of; computed once per ladder (its config is fixed)."""

    ladder_id: str
    owner: str
    config: ladder_pb2.LadderConfig

    @cached_property
    def openings(self) -> list[Opening]:
        suite = ladder_suite(self.config)
        return select_openings(suite, len(suite.openings), self.config.seed)

    @cached_property
    def bots(self) -> list[str]:
        return [f"{bot.name}@{bot.version}" for bot in self.config.bots]

    @cached_property
    def planned(self) -> int:
        return games_total(len(self.config.bots), self.config.format,
                           self.config.games_per_pairing)

    def match_config(self, original: int) -> match_pb2.MatchConfig:
        """The match of planned game ``original`` (a replayed game plays it again)."""
        config = self.config
        planned = game_at(self.bots, config.format, config.games_per_pairing, self.openings,
                          config.seed, original)
        return match_pb2.MatchConfig(
            game=config.game, black=config.bots[planned.black],
            white=config.bots[planned.white], opening=list(planned.opening.moves),
            time_control=config.time_control, capture_trees=config.capture_trees,
            seed=planned.seed, ladder_id=self.ladder_id,
            adjudicate_empties=config.adjudicate_empties,
        )

    def request_id(self, index: int) -> str:
        return f"ladder:{self.ladder_id}:{index}"


def ladder_suite(config: ladder_pb2.LadderConfig) -> OpeningSuite:
    """The openings a (validated) ladder plays: its own, or its suite's."""
    if config.opening_suite == CUSTOM:
        suite, _ = custom_suite(game(config.game.kind).name, config.game.variant,
                                config.game.board_size, [list(o.moves) for o in config.openings])
        return suite
    return load_suite(config.opening_suite)


# --- validation ---------------------------------------------------------------------------


def _check_own_openings(played: Rules, config: ladder_pb2.LadderConfig,
                        out: list[FieldViolation]) -> bool:
    """A ladder with openings of its own: they, played out on its game, replace a suite."""
    if config.opening_suite not in ("", CUSTOM):
        out.append(FieldViolation("config.opening_suite", f"give a suite or openings of the "
                                  f"ladder's own, not both (the suite is {CUSTOM!r} then)"))
        return False
    try:
        config.game.CopyFrom(played.spec(config.game.variant or None,
                                         config.game.board_size or None))
    except GameError as exc:
        out.append(FieldViolation("config.game", str(exc)))
        return False
    config.opening_suite = CUSTOM
    _, problems = custom_suite(played.name, config.game.variant, config.game.board_size,
                               [list(o.moves) for o in config.openings])
    out += [FieldViolation(f"config.openings{where}", problem)
            for where, problem in problems[:_OPENING_PROBLEMS_SHOWN]]
    return not problems


def _check_game(config: ladder_pb2.LadderConfig, out: list[FieldViolation]) -> bool:
    """Fill in the variant, size and opening suite the game and each other imply."""
    try:
        played = game(config.game.kind)
    except UnknownGameError as exc:
        out.append(FieldViolation("config.game.kind", str(exc)))
        return False
    if config.openings:
        return _check_own_openings(played, config, out)
    try:
        name = config.opening_suite or played.default_suite(config.game.variant or None,
                                                             config.game.board_size or None)
        suite = load_suite(name)
        variant, size = suite.resolve(played.name, config.game.variant, config.game.board_size)
        config.opening_suite = suite.name
        config.game.CopyFrom(played.spec(variant or None, size or None))
    except UnknownSuiteError as exc:
        out.append(FieldViolation("config.opening_suite", str(exc)))
        return False
    except GameError as exc:
        out.append(FieldViolation("config.game", str(exc)))
        return False
    return True


def _resolve_bots(bots: BotVersions, config: ladder_pb2.LadderConfig,
                  out: list[FieldViolation]) -> None:
    """Replace every bot reference by its exact version; flag unknown and repeated bots."""
    resolved: dict[int, str] = {}  # index -> name@version
    for index, ref in enumerate(config.bots):
        field = f"config.bots[{index}]"
        if not ref.name:
            out.append(FieldViolation(field, "must name a bot"))
            continue
        try:
            bot = bots.resolve(ref)
        except (NotFoundError, FailedPreconditionError) as exc:
            out.append(FieldViolation(field, str(exc)))
            continue
        wrong = other_game(bot, config.game.kind) or bots.unplayable(bot)
        if wrong:
            out.append(FieldViolation(field, wrong))
        # as every message names a version, NAME@VERSION (bot_label is the head to head's
        # older 'ann@v1', kept in the API)
        resolved[index] = f"{ref.name}@{bot.version}"
        ref.version = bot.version
    indexes, labels = list(resolved), list(resolved.values())
    for repeat, first in repeated_bots(labels).items():
        out.append(FieldViolation(f"config.bots[{indexes[repeat]}]",
                                  f"{labels[repeat]} is already bots[{indexes[first]}]"))


def validate_config(bots: BotVersions, config: ladder_pb2.LadderConfig,
                    quota: Quota = UNLIMITED) -> ladder_pb2.LadderConfig:
    """A normalised copy of ``config``; raises ``InvalidArgumentError``. Its size is checked
    before anything is planned or any bot looked up."""
    config = ladder_pb2.LadderConfig.FromString(config.SerializeToString())
    violations: list[FieldViolation] = []
    if config.format == ladder_pb2.LADDER_FORMAT_UNSPECIFIED:
        config.format = ladder_pb2.LADDER_FORMAT_ROUND_ROBIN
    if config.format not in FORMATS:
        violations.append(FieldViolation("config.format", f"unknown format {config.format}"))
    if config.games_per_pairing < 0:
        violations.append(FieldViolation("config.games_per_pairing", "must not be negative"))
    if count_problem := bot_count_problem(len(config.bots)):  # before its games are counted
        violations.append(FieldViolation("config.bots", count_problem))
    if config.name:  # optional; shown to everyone who lists ladders
        violations += validate_name(config.name, "config.name")
    sprt.check_config(config, violations)
    if violations or not _check_game(config, violations):
        raise InvalidArgumentError.for_fields(violations)
    problem = game(config.game.kind).adjudication_problem(config.adjudicate_empties)
    if problem:
        raise InvalidArgumentError.for_fields([FieldViolation("config.adjudicate_empties",
                                                              problem)])
    suite = ladder_suite(config)
    # Checked before it is stored: 2**31 - 1 rounded up to even would not fit the field.
    games = even_games(config.games_per_pairing, len(suite.openings))
    total = games_total(len(config.bots), config.format, games)
    if total > MAX_GAMES:
        raise InvalidArgumentError.for_fields([FieldViolation(
            "config.games_per_pairing",
            f"the ladder would play {total} games; the limit is {MAX_GAMES}")])
    config.games_per_pairing = games
    quota.check("ladder_games", total)
    quota.check("move_time_ms", config.time_control.move_time_ms)
    quota.check("game_time_ms", config.time_control.game_time_ms)
    _resolve_bots(bots, config, violations)
    if violations:
        raise InvalidArgumentError.for_fields(violations)
    return config


# --- results --------------------------------------------------------------------------------


def is_void(match: match_pb2.Match) -> bool:
    """A game the infrastructure ended (cancelled, dead-lettered, stalled): no result."""
    result = match.result
    return (match.status == match_pb2.MATCH_STATUS_CANCELLED or result.void
            or result.termination in (match_pb2.TERMINATION_CANCELLED,
                                      match_pb2.TERMINATION_UNSPECIFIED))


def result_record(config: ladder_pb2.LadderConfig, match: match_pb2.Match) -> ResultRecord | None:
    """The ladder's view of a finished match, or None if its bots are not the ladder's."""
    index = {(ref.name, ref.version): i for i, ref in enumerate(config.bots)}
    black = index.get((match.black.name, match.black.version))
    white = index.get((match.white.name, match.white.version))
    if black is None or white is None:
        return None
    if is_void(match):
        return ResultRecord(black, white, None)
    score = {common_pb2.COLOR_BLACK: 1.0, common_pb2.COLOR_WHITE: 0.0}.get(
        match.result.winner, 0.5)
    return ResultRecord(black, white, score)


FINISHED_STATES = (match_pb2.MATCH_STATUS_FINISHED, match_pb2.MATCH_STATUS_CANCELLED)
TABLES_KEPT = 64  # ladders whose last standings table is kept
PLANS_KEPT = 1024  # ladders whose plan is kept (a plan is remade from the store at will)

class Ladders:
    """A ladder service's work: every method is safe to run in several services at once."""

    def __init__(self, store: LadderStore, referee: ArenaClient, bots: BotVersions,
                 in_flight: int = 16) -> None:
        self.store = store
        self.referee = referee
        self.bots = bots
        self.in_flight = max(1, in_flight)
        self._plans: LruCache[str, Plan] = LruCache(PLANS_KEPT)
        self._tables: LruCache[str, tuple[object, list[ladder_pb2.StandingRow],
                                          list[ladder_pb2.HeadToHead]]] = LruCache(TABLES_KEPT)
        self._tests: LruCache[tuple[str, int, int, int], ladder_pb2.SprtState] = LruCache(
            TABLES_KEPT)

    def plan(self, ladder_id: str) -> Plan:
        found = self._plans.get(ladder_id)
        if found is None:
            info = self.store.get(ladder_id, with_games=False)
            found = self._plans.put(ladder_id, Plan(ladder_id, info.owner, info.config))
        return found

    # -- creation and scheduling ---------------------------------------------------------

    def create(self, config: ladder_pb2.LadderConfig, owner: str, request_id: str = "",
               quota: Quota = UNLIMITED) -> ladder_pb2.LadderInfo:
        """Validate and store the ladder and create its first game (the referee checks the
        time control and the rest of a match's config); the others follow as it plays.
        ``quota`` is the owner's: its size is checked before anything is planned. A
        ``request_id`` that already made a ladder for the same ``config`` returns that
        ladder; one that made a ladder for another config is refused (AlreadyExistsError).
        """
        request = CreateRequest.of("ladder", owner, request_id, config)
        made = self.store.made_for(request) if request_id else ""
        if made:  # a retry: its ladder, though a bot in it may have been retired since
            return self.info(made)
        config = validate_config(self.bots, config, quota)
        created_ms = now_ms()
        created = timestamp_pb2.Timestamp()
        created.FromMilliseconds(created_ms)
        total = games_total(len(config.bots), config.format, config.games_per_pairing)
        info = ladder_pb2.LadderInfo(id=new_ladder_id(created_ms), config=config,
                                     status=RUNNING, games_total=total, owner=owner,
                                     created_at=created)
        most = quota.cap("running_ladders")
        made = self.store.create(info, created_ms, request, most)
        if made == REFUSED:
            raise ResourceExhaustedError(
                f"quota running_ladders is {most}: {owner} has {most} ladders running; "
                "cancel one or wait for one to end", "running_ladders")
        if made != info.id:
            return self.info(made)  # a retried request: the ladder it made
        try:
            self.schedule(info.id, most=1, strict=True)
        except (InvalidArgumentError, ResourceExhaustedError):
            self.store.delete(info.id, owner, request)  # the corrected request may use its key
            raise
        self.schedule(info.id)
        return self.info(info.id)

    def schedule(self, ladder_id: str, most: int | None = None, strict: bool = False) -> int:
        """Create the ladder's games that may start now; returns how many. A game the
        referee cannot take now (the owner's quota is full, no referee answers) waits for
        the next round, unless ``strict`` (the ladder's creation: its first game). The
        ladder's ``waiting`` says why its next game waits, the referee's refusal (any:
        one that is not for now is raised as well), until a game is created again."""
        return self._schedule(ladder_id, most, strict)[0]

    def _schedule(self, ladder_id: str, most: int | None = None,
                  strict: bool = False) -> tuple[int, ArenaError | None]:
        """``schedule``, and the refusal that stopped it (None: every game asked for was
        created)."""
        plan = self.plan(ladder_id)
        status, ending = self.store.state(ladder_id)
        if (status, ending) != OPEN:  # no game, not even one it had claimed
            if ending:  # an end begun by a service that died, or one under way: done here
                self.end(ladder_id, plan.owner)
            return 0, None
        indices = self.store.unrecorded(ladder_id)
        indices += self.store.claim_games(ladder_id, self.in_flight, most or self.in_flight)
        created = 0
        for index in indices:
            original = self.store.original_index(ladder_id, index, plan.planned)
            try:
                match = self.referee.create_match(plan.match_config(original),
                                                  request_id=plan.request_id(index),
                                                  owner=plan.owner)
            except ArenaError as exc:
                retired = None if strict else self._retired(plan.match_config(original))
                if retired:  # never playable again: the ladder ends rather than wait for ever
                    self.end(ladder_id, plan.owner, f"bot {retired!r} is retired: its games "
                                                    "cannot be played")
                    return created, exc
                self.store.set_waiting(ladder_id, plan.owner, str(exc))
                if strict or not isinstance(exc, _FOR_NOW):
                    raise
                log.info("ladder %s: game %d waits: %s", ladder_id, index, exc)
                return created, exc  # claimed but unrecorded: the next round creates it
            ended = self.store.record_game(ladder_id, index, match.id) != OPEN
            created += 1
            if ended:  # an end began while the referee created it
                match = self._call_off(match.id, f"ladder {ladder_id} ended") or match
            if match.status in FINISHED_STATES:  # cancelled before we recorded it
                self.count(match)
            if ended:  # the games it claimed besides are not created, to be called off
                return created, None
        if indices:
            self.store.set_waiting(ladder_id, plan.owner, "")  # every game asked for is created
        return created, None

    def _retired(self, config: match_pb2.MatchConfig) -> str:
        """The name of a bot of a game's ``config`` that is retired ("" if none is)."""
        for ref in (config.black, config.white):
            try:
                self.bots.resolve(ref)
            except FailedPreconditionError:
                return ref.name
            except ArenaError:
                continue  # not known now, or the registry did not answer: not a retirement
        return ""

    def schedule_each(self, ladder_ids: Iterable[str]) -> int:
        """``schedule`` each ladder, oldest first; one ladder's trouble is logged, the others
        go on. Once the referee refuses an owner's game for their quota, that owner's other
        waiting ladders wait on untried (each would be refused the same way): a user with
        thousands of waiting ladders cost a refused CreateMatch for each of them after every
        game of theirs, and every other user's ladders waited behind those calls."""
        full: set[str] = set()  # owners the referee refused this round
        waiting: dict[str, str] = {}  # read once some owner is full: most rounds need none
        scheduled = 0
        for ladder_id in sorted(ladder_ids):
            if full and waiting.get(ladder_id) in full:
                continue
            try:
                made, refusal = self._schedule(ladder_id)
            except ArenaError as exc:  # one ladder's trouble must not stop the others
                log.warning("could not schedule games of ladder %s: %s", ladder_id, exc)
                continue
            scheduled += made
            if isinstance(refusal, ResourceExhaustedError):
                full.add(self.plan(ladder_id).owner)
                waiting = waiting or self.store.waiting_owners()
        return scheduled

    # -- results ---------------------------------------------------------------------------

    def count(self, match: match_pb2.Match) -> int:
        """Count a finished match of a ladder (see ``LadderStore.count``)."""
        if match.status not in FINISHED_STATES or not match.config.ladder_id:
            return 0
        try:
            plan = self.plan(match.config.ladder_id)
        except NotFoundError:
            return -1  # the ladder is gone
        record = result_record(plan.config, match)
        if record is None:
            return -2
        # A game its owner's quota kept from starting is no result about the bots: it is
        # played again (once there is room: its creation waits until then) in any ladder.
        replay = (plan.config.replay_void
                  or match.result.termination == match_pb2.TERMINATION_NOT_STARTED)
        counted = self.store.count(match.config.ladder_id, plan.owner, match.id, record,
                                   replay)
        if counted == 1:
            LADDER_GAMES.inc()
            if plan.config.format == ladder_pb2.LADDER_FORMAT_SPRT:
                self.judge_sprt(plan)
        return counted

    # -- SPRT ladders ------------------------------------------------------------------------

    def judge_sprt(self, plan: Plan) -> bool:
        """Run a running SPRT ladder's test on its counted results; when it decides, end
        the ladder FINISHED with the verdict, its games still in flight cancelled (their
        results, if they end first, are counted and not used). True if it ended the ladder."""
        ladder_id = plan.ladder_id
        if self.store.state(ladder_id) != OPEN:
            return False
        state = sprt.sprt_state(plan.config, self.store.planned_games(ladder_id),
                                self.store.results(ladder_id))
        if not sprt.decided(state) or not self.end(ladder_id, plan.owner, final=state):
            return False
        log.info("SPRT ladder %s decided after %d pairs: %s", ladder_id, state.pairs,
                 ladder_pb2.SprtVerdict.Name(state.verdict))
        return True

    def with_sprt(self, info: ladder_pb2.LadderInfo) -> ladder_pb2.LadderInfo:
        """``info`` with its SPRT test: the stored verdict once decided, else the test on
        the results counted so far (other formats are returned as they are). The test reads
        every counted result, and every watcher of the ladder asks for it after each game:
        it is kept for as long as the ladder's counters stay the same (a count moves
        ``games_done``, a replayed void game ``games_total`` too)."""
        if info.config.format != ladder_pb2.LADDER_FORMAT_SPRT or info.HasField("sprt"):
            return info
        progress = (info.id, info.games_done, info.games_void, info.games_total)
        state = self._tests.get(progress)
        if state is None:
            state = self._tests.put(progress, sprt.sprt_state(
                info.config, self.store.planned_games(info.id), self.store.results(info.id)))
        info.sprt.CopyFrom(state)
        return info

    def info(self, ladder_id: str, with_games: bool = True,
             store: LadderStore | None = None) -> ladder_pb2.LadderInfo:
        """The ladder; ``with_games``, with the match id of each game scheduled so far;
        read through ``store`` (default this service's)."""
        return self.with_sprt((store or self.store).get(ladder_id, with_games))

    def reconcile(self, ladder_id: str) -> int:
        """Count every finished match of a ladder that is not counted yet (a safety net for
        results whose stream entry was lost); returns how many were counted now."""
        counted = 0
        for match_id in self.store.uncounted(ladder_id):
            try:
                match = self.referee.get_match(match_id)
            except NotFoundError:
                continue  # deleted by its owner: it will never produce a result
            counted += self.count(match) == 1
        return counted

    # -- reading and cancelling ------------------------------------------------------------

    def standings(self, ladder_id: str) -> ladder_pb2.Standings:
        info = self.info(ladder_id)
        bots = list(info.config.bots)
        games = [Game(r.black, r.white, r.score)
                 for r in self.store.results(ladder_id).values() if r.score is not None]
        # Every page watching a running ladder asks again after each game, and fitting
        # the ratings of a large one takes tens of milliseconds: the last table of each
        # ladder is kept for as long as its counted games stay the same.
        signature = (len(bots), frozenset(Counter(games).items()))
        kept = self._tables.get(ladder_id)
        if kept is not None and kept[0] == signature:
            return ladder_pb2.Standings(ladder=info, rows=kept[1], head_to_head=kept[2])
        rows, pairs = self._table(bots, games, info.config.format)
        self._tables.put(ladder_id, (signature, rows, pairs))
        return ladder_pb2.Standings(ladder=info, rows=rows, head_to_head=pairs)

    @staticmethod
    def _table(bots: list[common_pb2.BotRef], games: list[Game], ladder_format: int,
               ) -> tuple[list[ladder_pb2.StandingRow], list[ladder_pb2.HeadToHead]]:
        """The rows, and the head to head of the pairs the format has meet (a gauntlet's
        field never meets itself: a 0-0-0 of theirs read as played without a result)."""
        table = compute_standings(len(bots), games)
        meet = {frozenset(pair) for pair in pairings(len(bots), ladder_format)}
        rows = [
            ladder_pb2.StandingRow(
                bot=bots[row.player], games=row.record.games, wins=row.record.wins,
                draws=row.record.draws, losses=row.record.losses,
                score_pct=row.record.score_pct, elo=row.elo, elo_low=row.elo_low,
                elo_high=row.elo_high, rank=row.rank)
            for row in table.rows
        ]
        pairs = [
            ladder_pb2.HeadToHead(
                bot=bot_label(bots[line.player]), opponent=bot_label(bots[line.opponent]),
                wins=line.record.wins, draws=line.record.draws, losses=line.record.losses,
                los=line.los, bot_ref=bots[line.player], opponent_ref=bots[line.opponent])
            for line in table.head_to_head if {line.player, line.opponent} in meet
        ]
        return rows, pairs

    def cancel(self, ladder_id: str, caller: str, is_admin: bool) -> ladder_pb2.LadderInfo:
        """Stop a running ladder: no game starts any more, and the games scheduled and not
        over are cancelled through the referee (they count as void). The ladder stays
        CANCELLED and WatchLadder ends."""
        info = self.store.get(ladder_id, with_games=False)  # its owner
        if not is_admin and caller != info.owner:
            raise PermissionDeniedError(
                f"{caller} may not cancel ladder {ladder_id} owned by {info.owner}")
        if not self.end(ladder_id, info.owner):
            raise FailedPreconditionError(f"ladder {ladder_id} is not running")
        return self.info(ladder_id)

    def end(self, ladder_id: str, owner: str, why: str = "",
            final: ladder_pb2.SprtState | None = None) -> bool:
        """End the running ladder: CANCELLED, or FINISHED with an SPRT ladder's verdict
        ``final``; ``why``: the arena cancels it, not its owner (its ``ended_because``). No
        game starts any more; its games not over are cancelled through the referee and
        counted (void) before the status changes, so whoever sees the end sees its final
        counts. An end begun before (by another caller, or a service that died half-way)
        is carried out as it began. False if the ladder was not running."""
        ended = self.store.begin_end(ladder_id, FINISHED if final else CANCELLED, why, final)
        if not ended:
            return False
        reason = (f"SPRT ladder {ladder_id} decided" if ended == FINISHED
                  else f"ladder {ladder_id} cancelled")
        if why:
            log.warning("ladder %s ends: %s", ladder_id, why)
        for match_id in self.store.uncounted(ladder_id):
            match = self._call_off(match_id, reason)
            if match is not None:
                self.count(match)
        self.store.end(ladder_id, owner)
        return True

    def _call_off(self, match_id: str, reason: str) -> match_pb2.Match | None:
        """Cancel a game of an ending ladder through the referee: the match as it ended,
        cancelled, or finished just now (its result counts); None if it was deleted."""
        try:
            try:
                return self.referee.cancel_match(match_id, reason)
            except FailedPreconditionError:  # finished just now
                return self.referee.get_match(match_id)
        except NotFoundError:
            return None  # deleted: it gives no result

    def list(self, page: common_pb2.PageRequest, store: LadderStore | None = None,
             running_only: bool = False) -> ladder_pb2.ListLaddersResponse:
        """A page of ladders (``running_only``: of the running ones), read through
        ``store`` (default this service's: another client of the same Redis, with its own
        timeouts)."""
        store = store or self.store
        size = paging.page_size(page.page_size)
        after = paging.decode_page_token(page.page_token)
        if after and not LADDER_ID.fullmatch(after):
            raise InvalidArgumentError.for_fields(
                [FieldViolation("page.page_token", "is not a token this server issued")])
        ids, more = store.page(after, size, running_only)
        filled: paging.Page[ladder_pb2.LadderInfo] = paging.Page(size)
        for taken, ladder_id in enumerate(ids, 1):
            after = ladder_id
            try:
                full = filled.add(self.info(ladder_id, with_games=False, store=store))
            except NotFoundError:
                continue
            if full and taken < len(ids):
                more = True  # stopped by bytes: the next page goes on after this ladder
                break
        token = paging.encode_page_token(after) if more else ""
        return ladder_pb2.ListLaddersResponse(ladders=filled.items, next_page_token=token)
