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
from dataclasses import dataclass

import redis
from arena.services.referee import judge
from arena.services.referee.delivery import (
    DeliveryConfig,
    entry_ms,
    move_stream_minid,
    publish_move_job,
    read_results,
)
from arena.services.referee.ledger import Ledger
from arena.services.referee.matches import FINISHED_STATES, MatchStore, start_position
from google.protobuf import timestamp_pb2

from arena.games import PASS, Color, Position
from arena.v1 import bots_pb2, common_pb2, engine_pb2, match_pb2

log = logging.getLogger(__name__)

# How long a match thread blocks on its result stream before it checks for a stop. Each
# timeout is a wasted round trip; with many matches waiting on few workers they add up.
_READ_BLOCK_MS = 2000


def seed_for_ply(seed: int, ply: int) -> int:
    """A per-move seed that depends only on the match seed and the ply (deterministic)."""
    return (seed * 6364136223846793005 + (ply + 1) * 1442695040888963407) % (1 << 63)


@dataclass
class Answer:
    """What came back for a move job: a move to record, or a forfeit."""

    record: match_pb2.MoveRecord | None = None
    forfeit: judge.Forfeit | None = None


@dataclass
class GameState:
    """A match header, its recorded moves and the position they lead to."""

    match: match_pb2.Match
    records: list[match_pb2.MoveRecord]
    position: Position

    @property
    def ply(self) -> int:
        return len(self.records)

    def time_used_ms(self, color: common_pb2.Color.ValueType) -> int:
        return sum(r.time_ms for r in self.records if r.color == color)

    def history(self) -> list[int]:
        """Moves from the configured start: the opening, then every recorded move."""
        return [*self.match.config.opening, *(r.move.square for r in self.records)]


class MatchRunner:
    """Plays matches; one instance serves every match thread of a referee."""

    def __init__(self, client: redis.Redis, config: DeliveryConfig, stop: threading.Event,
                 bot_lookup: BotLookup | None = None) -> None:
        self.client = client
        self.config = config
        self.stop = stop
        self.store = MatchStore(client)
        self.ledger = Ledger(client)
        self.bots = bot_lookup or BotLookup(client)

    def load(self, match_id: str) -> GameState:
        match = self.store.header(match_id)
        records = self.store.records(match_id)
        position = start_position(match)
        for record in records:
            position.push(record.move.square)
        return GameState(match, records, position)

    def run(self, match_id: str) -> bool:
        """Play until the end (True) or until asked to stop (False: run it again later)."""
        state = self.load(match_id)
        if state.match.status in FINISHED_STATES:
            return True
        if state.match.status == match_pb2.MATCH_STATUS_PENDING:
            state.match.status = match_pb2.MATCH_STATUS_RUNNING
        if not self.ledger.start(state.match):
            return True
        cursor = "0"  # results may already wait for us if a referee died mid-move
        published = -1  # the ply whose move job went out with the previous record
        squares = state.position.size * state.position.size
        for _ in range(2 * squares + 8):  # every ply fills a square or passes
            if self.stop.is_set():
                return False
            if state.position.is_game_over():
                return self._finish(state, judge.natural_result(state.position))
            is_pass = state.position.legal_moves() == [PASS]
            if is_pass:
                record = judge.pass_record(state.position, state.ply)
            else:
                cursor, answer = self._ask(state, cursor, published == state.ply)
                if answer is None:
                    return False
                if answer.forfeit is not None:
                    return self._finish(state, judge.forfeit_result(state.position,
                                                                    answer.forfeit))
                assert answer.record is not None
                record = answer.record
            following = self._following_job(state, record)
            written = self.ledger.append(match_id, record, is_pass, following,
                                         move_stream_minid(self.config.stall_timeout_ms))
            if written:
                state.position.push(record.move.square)
                state.records.append(record)
                published = state.ply if following is not None else -1
            else:
                state = self.load(match_id)  # another referee recorded this ply first
                published = -1
                if state.match.status in FINISHED_STATES:
                    return True
        raise RuntimeError(f"match {match_id} did not end within the board's plies")

    def _following_job(
        self, state: GameState, record: match_pb2.MoveRecord
    ) -> engine_pb2.MoveJob | None:
        """The job for the ply after ``record``, if a bot will be asked for it; the ledger
        publishes it together with the record (one round trip less per move)."""
        position = state.position.copy()
        position.push(record.move.square)
        if position.is_game_over() or position.legal_moves() == [PASS]:
            return None
        after = GameState(state.match, [*state.records, record], position)
        budget = self._budget_ms(after)
        if budget <= 0:
            return None  # a time forfeit: judged when the ply comes up
        return self._job(after, self.bots.get(self._side_to_move(after)), budget)

    @staticmethod
    def _side_to_move(state: GameState) -> common_pb2.BotRef:
        return state.match.black if state.position.turn is Color.BLACK else state.match.white

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
            log.info("match %s finished: %s %s", state.match.id,
                     match_pb2.Termination.Name(result.termination), result.detail)
            return True
        # Lost a race: either someone finished it, or recorded one more ply. Resume.
        return self.run(state.match.id)

    def _budget_ms(self, state: GameState) -> int:
        tc = state.match.config.time_control
        budget = tc.move_time_ms
        if tc.game_time_ms > 0:
            color = judge.proto_color(state.position.turn)
            left = tc.game_time_ms - state.time_used_ms(color)
            budget = min(budget, max(0, int(left)))
        return budget

    def _job(
        self, state: GameState, bot: bots_pb2.BotVersion, budget_ms: int
    ) -> engine_pb2.MoveJob:
        match = state.match
        return engine_pb2.MoveJob(
            job_id=f"{match.id}/{state.ply}/{secrets.token_hex(4)}", match_id=match.id,
            ply=state.ply, game=match.config.game.kind,
            position=common_pb2.Position(game=match.config.game,
                                         text=state.position.to_text()),
            history=state.history(), bot=bot, time_budget_ms=budget_ms,
            deadline_unix_ms=int(time.time() * 1000) + self.config.stall_timeout_ms,
            tree_node_budget=match.config.tree_node_budget if match.config.capture_trees else 0,
            seed=seed_for_ply(match.config.seed, state.ply),
        )

    def _ask(self, state: GameState, cursor: str,
             published: bool = False) -> tuple[str, Answer | None]:
        """Publish the move job (unless ``published``) and wait for the first answer for
        this ply."""
        match = state.match
        grace = match.config.time_control.grace_ms or self.config.grace_ms
        budget = self._budget_ms(state)
        if budget <= 0:
            return cursor, Answer(forfeit=judge.Forfeit(
                match_pb2.TERMINATION_TIME_FORFEIT, "no game time left"))
        if not published:
            bot = self.bots.get(self._side_to_move(state))
            publish_move_job(self.client, self._job(state, bot, budget),
                             move_stream_minid(self.config.stall_timeout_ms))
        give_up = time.monotonic() + self.config.stall_timeout_ms / 1000
        while time.monotonic() < give_up:
            if self.stop.is_set():
                return cursor, None
            cursor, events = read_results(self.client, match.id, cursor, _READ_BLOCK_MS)
            for event in events:
                if event.ply != state.ply:
                    continue  # a late or duplicate answer to an earlier ply
                if event.kind == "dead":
                    return cursor, Answer(forfeit=judge.Forfeit(
                        match_pb2.TERMINATION_DEAD_LETTERED, event.detail or "dead-lettered"))
                if event.result is not None:
                    started = entry_ms(event.started_id) if event.started_id else None
                    return cursor, self._judge(state, event.result, event.at_ms, started,
                                               budget, grace)
        return cursor, Answer(forfeit=judge.Forfeit(
            match_pb2.TERMINATION_DEAD_LETTERED,
            f"no worker answered within {self.config.stall_timeout_ms} ms"))

    def _judge(self, state: GameState, result: engine_pb2.MoveResult, answered_ms: int,
               started_ms: int | None, budget: int, grace: int) -> Answer:
        if started_ms is None:  # the answer names no started entry: the worker's clock
            started_ms = answered_ms - result.worker_time_ms
        time_ms = max(0, answered_ms - started_ms)
        forfeit = judge.judge_answer(state.position, result, time_ms, budget, grace)
        if forfeit is not None:
            return Answer(forfeit=forfeit)
        return Answer(record=judge.move_record(state.position, state.ply, result, time_ms))


class BotLookup:
    """Bot versions by exact reference (immutable, so cached for the process's life)."""

    def __init__(self, client: redis.Redis) -> None:
        from arena.services.registry.store import BotStore

        self._store = BotStore(client)
        self._cache: dict[tuple[str, int], bots_pb2.BotVersion] = {}
        self._lock = threading.Lock()

    def get(self, ref: common_pb2.BotRef) -> bots_pb2.BotVersion:
        key = (ref.name, ref.version)
        with self._lock:
            found = self._cache.get(key)
        if found is None:
            found = self._store.get(ref.name, ref.version)
            with self._lock:
                self._cache[key] = found
        return found
