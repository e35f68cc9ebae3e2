"""Running one match: ask for each move through a move job, judge it, record it, end it.

:class:`MatchRunner` plays a match from whatever is recorded (a fresh match, or one a dead
referee left half-way) to its end. It holds nothing that is not in Redis, so stopping it at
any point and running it again elsewhere continues the same game.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import redis
from arena.services.common.peers import BotVersions
from arena.services.common.protocol import workers
from arena.services.common.protocol.delivery import (
    DeliveryConfig,
    move_stream_minid,
    read_results,
)
from arena.services.common.protocol.ledger import Ledger
from arena.services.common.protocol.matches import FINISHED_STATES, MatchStore
from arena.services.common.protocol.streams import entry_ms
from arena.services.common.quotas import UNLIMITED, Quota
from arena.services.referee import judge, telemetry
from arena.services.referee.matches import position_after
from google.protobuf import timestamp_pb2

from arena.clock import game_time_left_ms
from arena.games import PASS, Color, Position, game_of
from arena.text import printable
from arena.v1 import bots_pb2, common_pb2, engine_pb2, match_pb2

log = logging.getLogger(__name__)

# Nodes the referee's exact solve of a position may take to adjudicate it (well under a
# second at 18 empties, the most a match may ask for); one not proved within them is
# played on, and tried again at the next ply.
ADJUDICATION_NODES = 20_000_000
# How long a match thread blocks on its result stream before it checks for a stop. Each
# timeout is a wasted round trip; with many matches waiting on few workers they add up.
_READ_BLOCK_MS = 2000


def runs_on_worker(bot: bots_pb2.BotVersion) -> bool:
    """A bot whose moves Arena's worker computes or hosts (a built-in engine, a protocol
    engine's process): the worker can measure their CPU time. An external bot's cannot."""
    return bot.spec.WhichOneof("engine") in ("builtin", "protocol")


def seed_for_ply(seed: int, ply: int) -> int:
    """A per-move seed that depends only on the match seed and the ply (deterministic)."""
    return (seed * 6364136223846793005 + (ply + 1) * 1442695040888963407) % (1 << 63)


@dataclass
class Answer:
    """What came back for a move job: a move to record, or a forfeit."""

    record: match_pb2.MoveRecord | None = None
    forfeit: judge.Forfeit | None = None
    void: judge.Forfeit | None = None  # the infrastructure failed: the game ends void
    cancelled: bool = False  # the match was cancelled meanwhile (it is over, not judged)


@dataclass
class GameState:
    """A match header, its recorded moves and the position they lead to."""

    match: match_pb2.Match
    records: list[match_pb2.MoveRecord]
    position: Position

    @property
    def ply(self) -> int:
        return len(self.records)

    def history(self) -> list[int]:
        """Moves from the configured start: the opening, then every recorded move."""
        return [*self.match.config.opening, *(r.move.square for r in self.records)]

    def after(self, record: match_pb2.MoveRecord) -> GameState:
        """The state one recorded move later (this one is left as it is)."""
        position = self.position.copy()
        position.push(record.move.square)
        return GameState(self.match, [*self.records, record], position)


def _build(bot: bots_pb2.BotVersion) -> tuple[str, str] | None:
    """The protocol engine build (name, checksum) a bot pinned; None for other bots."""
    if bot.spec.WhichOneof("engine") != "protocol":
        return None
    return bot.spec.protocol.engine, bot.spec.protocol.checksum


class OfferedBuilds:
    """The protocol engine builds live match workers offer (their presence), read at most
    once a second for all the matches of a referee."""

    EVERY_S = 1.0

    def __init__(self, client: redis.Redis) -> None:
        self.client = client
        self._lock = threading.Lock()
        self._read_at = -self.EVERY_S
        self._builds: frozenset[tuple[str, str]] = frozenset()

    def __call__(self) -> frozenset[tuple[str, str]]:
        with self._lock:
            if time.monotonic() - self._read_at < self.EVERY_S:
                return self._builds
        builds = frozenset((offer.name, offer.checksum)
                           for offer in workers.offers(workers.alive(self.client))
                           if offer.workers)
        with self._lock:
            self._builds, self._read_at = builds, time.monotonic()
        return builds


class MatchRunner:
    """Plays matches; one instance serves every match thread of a referee."""

    def __init__(self, client: redis.Redis, config: DeliveryConfig, stop: threading.Event,
                 bots: BotVersions, quota_of: Callable[[str], Quota] = lambda owner: UNLIMITED
                 ) -> None:
        self.client = client
        self.config = config
        self.stop = stop
        self.store = MatchStore(client)
        self.ledger = Ledger(client)
        self.bots = bots
        self.quota_of = quota_of  # an owner's quotas: running_matches, match_bytes
        # Per match being run, the last ply whose position was solved for adjudication,
        # and the result (None: not adjudicated there). Solved once, asked twice per ply.
        self._solved: dict[str, tuple[int, match_pb2.MatchResult | None]] = {}
        self.offered = OfferedBuilds(client)

    def load(self, match_id: str) -> GameState:
        match = self.store.header(match_id)
        records = self.store.records(match_id)
        return GameState(match, records, position_after(match, records))

    def admit(self, match_id: str, entry_id: str) -> bool:
        """May the match of job ``entry_id`` run now, under its owner's quotas? False: it
        is over, or parked (acknowledged; its job comes back when one of the owner's
        matches ends), or cancelled because its owner's matches already take their
        ``match_bytes`` (created while there was room: a match refused at its start says
        why, where one left parked would wait for a deletion in silence). The referee asks
        before it starts the match's thread, one job after another in the stream's order,
        so an owner's matches start in the order they were made."""
        match = self.store.header(match_id)
        quota = self.quota_of(match.owner)
        decision = self.ledger.admit(match, quota.cap("running_matches"), entry_id,
                                     quota.cap("match_bytes"))
        if decision == "full":
            self._cancel_full(match, quota.cap("match_bytes"))
        return decision == "run"

    def _cancel_full(self, match: match_pb2.Match, limit: int) -> None:
        used = self.store.stored_bytes(match.owner)
        match.status = match_pb2.MATCH_STATUS_CANCELLED
        match.result.CopyFrom(match_pb2.MatchResult(
            termination=match_pb2.TERMINATION_NOT_STARTED, void=True,
            detail=f"not started: quota match_bytes is {limit:,} and {match.owner}'s "
                   f"matches take {used:,} bytes (delete some with `arena match delete` "
                   "or `arena match prune`)"))
        match.finished_at.GetCurrentTime()
        if self.ledger.finish(match, None):
            telemetry.refused_at_start(match, "match_bytes")

    def run(self, match_id: str) -> bool:
        """Play until the end (True) or until asked to stop (False: run it again later)."""
        try:
            return self._run(match_id)
        finally:
            self._solved.pop(match_id, None)  # however the run ended: finished, stopped

    def _run(self, match_id: str) -> bool:
        state = self.load(match_id)
        if state.match.status in FINISHED_STATES:
            return True
        fresh = state.match.status == match_pb2.MATCH_STATUS_PENDING
        if fresh:
            state.match.status = match_pb2.MATCH_STATUS_RUNNING
        if not self.ledger.start(state.match):
            return True
        telemetry.match_started(state.match, fresh)
        cursor = "0"  # results may already wait for us if a referee died mid-move
        asked: engine_pb2.MoveJob | None = None  # the job published for the next ply
        squares = state.position.size * state.position.size
        for _ in range(2 * squares + 8):  # every ply fills a square or passes
            if self.stop.is_set():
                return False
            if state.position.is_game_over():
                return self._finish(state, judge.natural_result(state.position))
            adjudicated = self._adjudicated(state)
            if adjudicated is not None:
                return self._finish(state, adjudicated)
            is_pass = state.position.legal_moves() == [PASS]
            if is_pass:
                record = judge.pass_record(state.position, state.ply)
            else:
                if asked is None or asked.ply != state.ply:
                    asked = self._job(state)
                    if asked is None:
                        telemetry.out_of_game_time(state.match, state.ply)
                        return self._finish(state, judge.forfeit_result(
                            state.position, judge.Forfeit(match_pb2.TERMINATION_TIME_FORFEIT,
                                                          "no game time left")))
                    if not self.ledger.ask(asked, self._minid()):
                        telemetry.not_published(asked)
                        state, asked = self.load(match_id), None  # recorded or ended meanwhile
                        if state.match.status in FINISHED_STATES:
                            return True
                        continue
                    telemetry.published(asked)
                cursor, answer = self._await(state, asked, cursor)
                if answer is None:
                    return False
                if answer.cancelled:
                    return True
                if answer.forfeit is not None:
                    telemetry.forfeited(asked, answer.forfeit.termination, answer.forfeit.detail)
                    return self._finish(state, judge.forfeit_result(state.position,
                                                                    answer.forfeit))
                if answer.void is not None:
                    return self._finish(state, judge.void_result(state.position, answer.void))
                assert answer.record is not None
                record = answer.record
            following = self._job(state.after(record))
            with telemetry.recording(None if is_pass else asked):
                appended = self.ledger.append(state.match, record, is_pass, following,
                                              self._minid())
            if appended:
                if not is_pass and asked is not None:
                    telemetry.recorded(asked, record)
                telemetry.published(following)
                state.position.push(record.move.square)
                state.records.append(record)
                asked = following
            else:
                telemetry.not_published(following)
                telemetry.not_published(None if is_pass else asked)
                state, asked = self.load(match_id), None  # another referee recorded it
                if state.match.status in FINISHED_STATES:
                    return True
        raise RuntimeError(f"match {match_id} did not end within the board's plies")

    def _minid(self) -> str:
        return move_stream_minid(self.config.stall_timeout_ms)

    def _job(self, state: GameState) -> engine_pb2.MoveJob | None:
        """The move job for the ply ``state`` is at: None when no bot is asked there (the
        game is over or adjudicated, the side to move must pass) or its time is used up (a
        forfeit)."""
        position = state.position
        if (position.is_game_over() or position.legal_moves() == [PASS]
                or self._adjudicated(state) is not None):
            return None
        budget = self._budget_ms(state)
        if budget <= 0:
            return None
        match = state.match
        side = match.black if position.turn is Color.BLACK else match.white
        return telemetry.job_built(engine_pb2.MoveJob(
            job_id=f"{match.id}/{state.ply}/{secrets.token_hex(4)}", match_id=match.id,
            ply=state.ply, game=match.config.game.kind,
            position=common_pb2.Position(game=match.config.game, text=position.to_text()),
            history=state.history(), bot=self.bots.get(side), time_budget_ms=budget,
            deadline_unix_ms=int(time.time() * 1000) + self.config.stall_timeout_ms,
            tree_node_budget=match.config.tree_node_budget if match.config.capture_trees else 0,
            seed=seed_for_ply(match.config.seed, state.ply),
            game_time_left_ms=self._game_time_left_ms(state),
            cpu_clock=self.config.cpu_clock and runs_on_worker(self.bots.get(side)),
            owner=match.owner, ladder_id=match.config.ladder_id,
        ))

    def _adjudicated(self, state: GameState) -> match_pb2.MatchResult | None:
        """Perfect play's result once the match's ``adjudicate_empties`` is reached and
        the game's exact solver proves it within ``ADJUDICATION_NODES``; else None. The
        solve is deterministic, so a referee that takes the match over finds the same."""
        limit = state.match.config.adjudicate_empties
        position = state.position
        if limit <= 0:
            return None
        empties = int(getattr(position, "empties"))  # noqa: B009 (games with a solver)
        if empties > limit:
            return None
        solved = self._solved.get(state.match.id)
        if solved is None or solved[0] != state.ply:
            score = game_of(position).engine().exact_score(position.to_text(),
                                                          ADJUDICATION_NODES)
            result = None if score is None else judge.adjudicated_result(position, score,
                                                                          empties)
            solved = self._solved[state.match.id] = (state.ply, result)
        return solved[1]

    def _finish(self, state: GameState, result: match_pb2.MatchResult) -> bool:
        finished = match_pb2.Match()
        finished.CopyFrom(state.match)
        finished.status = match_pb2.MATCH_STATUS_FINISHED
        finished.result.CopyFrom(result)
        stamp = timestamp_pb2.Timestamp()
        stamp.GetCurrentTime()
        finished.finished_at.CopyFrom(stamp)
        del finished.moves[:]
        if self.ledger.finish(finished, state.ply):
            telemetry.match_finished(result)
            log.info("match %s finished: %s %s", state.match.id,
                     match_pb2.Termination.Name(result.termination), result.detail)
            return True
        # Lost a race: either someone finished it, or recorded one more ply. Resume.
        return self.run(state.match.id)

    def _budget_ms(self, state: GameState) -> int:
        budget = state.match.config.time_control.move_time_ms
        if state.match.config.time_control.game_time_ms > 0:
            budget = min(budget, self._game_time_left_ms(state))
        return budget

    @staticmethod
    def _game_time_left_ms(state: GameState) -> int:
        """The side to move's game budget left (0 when the match has none)."""
        return game_time_left_ms(state.match.config.time_control, state.records,
                                 judge.proto_color(state.position.turn))

    def _await(self, state: GameState, job: engine_pb2.MoveJob,
               cursor: str) -> tuple[str, Answer | None]:
        """Wait for the first answer for the ply ``job`` asked about."""
        match = state.match
        clock = judge.MoveClock(job.time_budget_ms,
                                match.config.time_control.grace_ms or self.config.grace_ms,
                                job.cpu_clock, self.config.cpu_wall_factor)
        give_up = time.monotonic() + self.config.stall_timeout_ms / 1000
        build = _build(job.bot)
        unoffered_since: float | None = None
        while time.monotonic() < give_up:
            if self.stop.is_set():
                return cursor, None
            if build is not None:
                now = time.monotonic()
                if build in self.offered():
                    unoffered_since = None
                elif unoffered_since is None:
                    unoffered_since = now
                elif now - unoffered_since >= self.config.unoffered_ms / 1000:
                    return cursor, Answer(void=judge.Forfeit(
                        match_pb2.TERMINATION_DEAD_LETTERED,
                        f"no live worker offers engine {build[0]!r} build {build[1][:12]} "
                        f"(for {self.config.unoffered_ms / 1000:g} s)"))
            cursor, events = read_results(self.client, match.id, cursor, _READ_BLOCK_MS)
            for event in events:
                if event.kind == "cancelled":
                    return cursor, Answer(cancelled=True)
                if event.ply != state.ply:
                    continue  # a late or duplicate answer to an earlier ply
                if event.kind == "dead":
                    return cursor, Answer(void=judge.Forfeit(
                        match_pb2.TERMINATION_DEAD_LETTERED, event.detail or "dead-lettered"))
                if event.result is not None:
                    started = entry_ms(event.started_id) if event.started_id else None
                    with telemetry.judging(job):
                        answer = self._judge(state, event.result, event.at_ms, started,
                                             clock)
                    if answer.record is not None and started and event.queued_id:
                        answer.record.wait_ms = max(0, started - entry_ms(event.queued_id))
                    return cursor, answer
        return cursor, Answer(void=judge.Forfeit(
            match_pb2.TERMINATION_DEAD_LETTERED,
            f"no worker answered within {self.config.stall_timeout_ms} ms"))

    def _judge(self, state: GameState, result: engine_pb2.MoveResult, answered_ms: int,
               started_ms: int | None, clock: judge.MoveClock) -> Answer:
        if started_ms is None:  # the answer names no started entry: the worker's clock
            started_ms = answered_ms - result.worker_time_ms
        time_ms = max(0, answered_ms - started_ms)
        if result.error == engine_pb2.MOVE_ERROR_WORKER_FAULT:  # the worker's, not the bot's
            return Answer(void=judge.Forfeit(match_pb2.TERMINATION_DEAD_LETTERED, printable(
                f"the worker could not play the move: {result.error_detail}")))
        forfeit = judge.judge_answer(state.position, result, time_ms, clock)
        if forfeit is not None:
            return Answer(forfeit=forfeit)
        return Answer(record=judge.move_record(state.position, state.ply, result, time_ms,
                                               clock.charged_ms(time_ms, result)))
