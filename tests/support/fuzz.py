"""A fuzzer of Arena's API: random and mutated requests, raw undecodable bytes included, to
every RPC a stack serves (``rpc.served_methods``: the descriptors of ``arena/v1``), from
random callers. Any INTERNAL or UNKNOWN status is a bug in the service.

Requests are drawn by hypothesis, in three kinds:

* a message built from the method's request descriptor: each field maybe set, to an edge
  value (0, -1, the type's extremes, huge strings, unknown enum numbers) or a random one,
  nested messages, repeated fields and maps (``google.protobuf.Struct`` included) too;
  strings often come from the stack's own vocabulary (real bot names, match and ladder ids,
  presets, positions), so requests get past the first checks;
* a realistic request (``Vocabulary.seeds``) mutated byte by byte: bits flipped, bytes
  inserted, deleted, duplicated or overwritten, the end cut off, two requests joined;
* raw random bytes.

``tests/security/test_fuzz.py`` runs a few thousand cases per service in ``make test``;
``bench/api_fuzz.py`` runs the same at 100,000+ and prints the status-code table.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from arena.clients.sdk import ArenaClient
from arena.services.common.launcher import Launcher
from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor, MethodDescriptor
from google.protobuf.message import Message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.games import game
from arena.v1 import (
    bots_pb2,
    common_pb2,
    engine_pb2,
    ladder_pb2,
    match_pb2,
    referee_pb2,
    registry_pb2,
    status_pb2,
)
from tests.support import rpc
from tests.support.bots import match_config
from tests.support.stacks import stack_channel, stack_client

BUGS = (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN)
# Every served service, the registry last: its cases retire and change the bots that the
# others' requests name.
SERVICES = ("arena.v1.Engine", "arena.v1.Ladder", "arena.v1.Referee", "arena.v1.Status",
            "arena.v1.BotRegistry")
MAX_DEPTH = 3
CALL_TIMEOUT_S = 5.0
STREAM_REPLIES = 3

Draw = Callable[[st.SearchStrategy[Any]], Any]

_I32 = (0, 1, -1, 2, 7, 63, 64, 65, 255, 2**31 - 1, -(2**31))
_I64 = (*_I32, 2**53 + 1, 2**63 - 1, -(2**63))
_U32 = (0, 1, 2, 64, 2**31, 2**32 - 1)
_U64 = (*_U32, 2**63, 2**64 - 1)
STRINGS = ("", " ", "\x00", "é", "🙂", "../../etc/passwd", "%s%n%x", "arena:*", "*", "a" * 300,
           "x" * 9000, "standard", "freestyle", "none", "othello-balanced", "black", "pass",
           "a1", "d3", "-1", "9" * 30, "Bearer x", "<script>", "' OR 1=1 --")


def _ints(edges: Sequence[int], low: int, high: int) -> st.SearchStrategy[int]:
    return st.one_of(st.sampled_from(edges), st.integers(low, high))


SCALARS: Mapping[int, st.SearchStrategy[Any]] = {
    FieldDescriptor.TYPE_INT32: _ints(_I32, -(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SINT32: _ints(_I32, -(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SFIXED32: _ints(_I32, -(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_INT64: _ints(_I64, -(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SINT64: _ints(_I64, -(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SFIXED64: _ints(_I64, -(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_UINT32: _ints(_U32, 0, 2**32 - 1),
    FieldDescriptor.TYPE_FIXED32: _ints(_U32, 0, 2**32 - 1),
    FieldDescriptor.TYPE_UINT64: _ints(_U64, 0, 2**64 - 1),
    FieldDescriptor.TYPE_FIXED64: _ints(_U64, 0, 2**64 - 1),
    FieldDescriptor.TYPE_BOOL: st.booleans(),
    FieldDescriptor.TYPE_FLOAT: st.floats(width=32),
    FieldDescriptor.TYPE_DOUBLE: st.floats(),
    FieldDescriptor.TYPE_BYTES: st.binary(max_size=64),
}


@dataclass
class Vocabulary:
    """What the stack knows (names, ids, positions), and realistic requests per method."""

    words: list[str]
    seeds: dict[str, list[Message]] = field(default_factory=dict)  # by rpc.path

    def strings(self) -> st.SearchStrategy[str]:
        return st.one_of(st.sampled_from(self.words), st.sampled_from(STRINGS),
                         st.text(max_size=24))


# -- random messages from descriptors ---------------------------------------------------------


@st.composite
def messages(draw: Draw, descriptor: Descriptor, words: Vocabulary,
             depth: int = 0) -> Message:
    """A message of ``descriptor`` with a random subset of its fields set."""
    message = message_factory.GetMessageClass(descriptor)()
    for each in descriptor.fields:
        if draw(st.integers(0, 2)) == 0:  # most fields set: requests get further
            continue
        if each.message_type is not None and depth >= MAX_DEPTH:
            continue
        _set(draw, message, each, words, depth)
    return message


def _value(draw: Draw, each: FieldDescriptor, words: Vocabulary, depth: int) -> Any:
    if each.message_type is not None:
        return draw(messages(each.message_type, words, depth + 1))
    if each.type == FieldDescriptor.TYPE_STRING:
        return draw(words.strings())
    if each.type == FieldDescriptor.TYPE_ENUM:
        known = [value.number for value in each.enum_type.values]
        return draw(st.one_of(st.sampled_from(known), SCALARS[FieldDescriptor.TYPE_INT32]))
    return draw(SCALARS[each.type])


def _set(draw: Draw, message: Message, each: FieldDescriptor, words: Vocabulary,
         depth: int) -> None:
    target = getattr(message, each.name)
    entry = each.message_type
    if entry is not None and entry.GetOptions().map_entry:
        key_field, value_field = entry.fields_by_name["key"], entry.fields_by_name["value"]
        for _ in range(draw(st.integers(0, 3))):
            key = _value(draw, key_field, words, depth)
            value = _value(draw, value_field, words, depth)
            if value_field.message_type is not None:
                target[key].CopyFrom(value)
            else:
                target[key] = value
    elif each.is_repeated:
        values = [_value(draw, each, words, depth) for _ in range(draw(st.integers(0, 4)))]
        if each.message_type is not None:
            for value in values:
                target.add().CopyFrom(value)
        else:
            target.extend(values)
    elif each.message_type is not None:
        target.CopyFrom(_value(draw, each, words, depth))
    else:
        setattr(message, each.name, _value(draw, each, words, depth))


# -- mutations of realistic requests --------------------------------------------------------


@st.composite
def mutated(draw: Draw, seed: bytes, others: Sequence[bytes]) -> bytes:
    """``seed`` changed in one to four places (see the module docstring)."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 4))):
        where = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(("flip", "insert", "delete", "cut", "repeat", "set",
                                     "join")))
        if kind == "flip" and data:
            index = min(where, len(data) - 1)
            data[index] ^= 1 << draw(st.integers(0, 7))
        elif kind == "insert":
            data[where:where] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del data[where:where + draw(st.integers(1, 8))]
        elif kind == "cut":
            del data[where:]
        elif kind == "repeat":
            data[where:where] = data[where:where + draw(st.integers(1, 16))]
        elif kind == "set" and data:
            index = min(where, len(data) - 1)
            data[index] = draw(st.sampled_from((0x00, 0x7F, 0x80, 0xFF, 0x08, 0x0A, 0x12)))
        elif kind == "join" and others:
            data += draw(st.sampled_from(others))
    return bytes(data)


def payloads(method: MethodDescriptor, words: Vocabulary) -> st.SearchStrategy[bytes]:
    """Request bytes for ``method``: built, mutated, or raw (see the module docstring)."""
    built = messages(method.input_type, words).map(lambda m: m.SerializeToString())
    seeds = [s.SerializeToString() for s in words.seeds.get(rpc.path(method), [])]
    kinds = [built, st.binary(max_size=256)]
    if seeds:
        kinds += [st.sampled_from(seeds),
                  st.sampled_from(seeds).flatmap(lambda s: mutated(s, seeds))]
    return st.one_of(kinds)


# -- callers and the record of what came back -----------------------------------------------


def tokens(admin: str, user: str) -> st.SearchStrategy[str | None]:
    """Who calls: mostly the fuzzing user, also nobody, strangers and the admin."""
    random_token = st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E),
                           min_size=1, max_size=40)
    stranger = object()  # stands for a random token, drawn in a second step
    callers: list[object] = [user] * 7 + [admin] * 2 + [None, "not-a-token", stranger]
    # One sampled_from for all: one_of(*[same strategy] * 5, random_token) drew the random
    # token in most cases.
    return st.sampled_from(callers).flatmap(
        lambda caller: random_token if caller is stranger else st.just(caller))


@dataclass
class Finding:
    method: str
    code: str
    details: str
    payload: bytes
    token: str | None


@dataclass
class Fuzzer:
    """Sends cases to a running stack and counts the status codes by method."""

    stack: Launcher
    words: Vocabulary
    user_token: str
    table: collections.Counter[tuple[str, str]] = field(default_factory=collections.Counter)
    findings: list[Finding] = field(default_factory=list)
    _channels: dict[str, grpc.Channel] = field(default_factory=dict)

    def channel(self, method: MethodDescriptor) -> grpc.Channel:
        target = self.stack.roles()[rpc.role_of(method)]
        if target not in self._channels:
            self._channels[target] = stack_channel(self.stack, target)
        return self._channels[target]

    def case(self, method: MethodDescriptor, payload: bytes, token: str | None) -> rpc.Outcome:
        outcome = rpc.call(self.channel(method), method, payload, rpc.bearer(token),
                           CALL_TIMEOUT_S, STREAM_REPLIES)
        self.table[(rpc.path(method), outcome.code.name)] += 1
        if outcome.code in BUGS:
            self.findings.append(Finding(rpc.path(method), outcome.code.name,
                                         outcome.details, payload, token))
        return outcome

    def close(self) -> None:
        for channel in self._channels.values():
            channel.close()
        self._channels.clear()

    def report(self) -> str:
        """The status-code table: a row per method, a column per code seen."""
        codes = sorted({code for _, code in self.table})
        methods = sorted({method for method, _ in self.table})
        width = max(len(m) for m in methods) if methods else 10
        lines = [f"{'method':<{width}} " + " ".join(f"{c[:16]:>16}" for c in codes)]
        for method in methods:
            lines.append(f"{method:<{width}} " + " ".join(
                f"{self.table[(method, c)]:>16}" for c in codes))
        totals = [sum(self.table[(m, c)] for m in methods) for c in codes]
        lines.append(f"{'total':<{width}} " + " ".join(f"{t:>16}" for t in totals))
        return "\n".join(lines)


def fuzz_service(fuzzer: Fuzzer, service: str, cases: int, stop_at_bug: bool) -> None:
    """``cases`` cases spread over the methods of ``service``, drawn by hypothesis; the
    first INTERNAL or UNKNOWN fails at once if ``stop_at_bug`` (then hypothesis looks for
    the smallest request that does it), else every finding is only recorded."""
    methods = rpc.served_methods(service)
    requests = {rpc.path(m): payloads(m, fuzzer.words) for m in methods}
    callers = tokens(fuzzer.stack.admin_token, fuzzer.user_token)

    @settings(max_examples=cases, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def case(data: st.DataObject) -> None:
        method: MethodDescriptor = data.draw(st.sampled_from(methods), label="method")
        payload = data.draw(requests[rpc.path(method)], label="payload")
        outcome = fuzzer.case(method, payload, data.draw(callers, label="token"))
        assert not stop_at_bug or outcome.code not in BUGS, (
            f"{rpc.path(method)} answered {outcome.code.name}: {outcome.details}")

    case()


# -- the stack's vocabulary -----------------------------------------------------------------


def vocabulary(stack: Launcher, user_token: str) -> Vocabulary:
    """Register bots, play a match (with search trees) and cancel another, create and
    cancel a ladder (as the fuzzing user), and collect their names and ids with realistic
    requests for every method. The played match is only read by the seeds; the cancelled
    one is what the seeds of DeleteMatch and CancelMatch name."""
    with stack_client(stack, user_token) as sdk:
        black, white = "fz-black", "fz-white"
        for name in (black, white):
            sdk.register_bot(bots_pb2.BotSpec(name=name), from_preset="lab-beginner")
        config = match_config(black, white, move_time_ms=300, capture_trees=True)
        played = sdk.create_match(config).id
        victim = sdk.create_match(config).id
        sdk.cancel_match(victim)
        ladder = sdk.create_ladder(_ladder_config(black, white))
        sdk.cancel_ladder(ladder.id)
        _wait_finished(sdk, played)
        page = sdk.list_matches(page_size=1).next_page_token
        words = Vocabulary([black, white, played, victim, ladder.id, page, "alice",
                            "mallory", "lab-beginner", "arena-fast", _start("othello"),
                            _start("gomoku")])
        words.seeds = _seeds(sdk, black, white, (played, victim), ladder.id, config)
    return words


def _wait_finished(sdk: ArenaClient, match_id: str, timeout_s: float = 300.0) -> None:
    deadline = time.monotonic() + timeout_s
    while sdk.get_match(match_id).status != match_pb2.MATCH_STATUS_FINISHED:
        if time.monotonic() > deadline:
            raise TimeoutError(f"the fuzzer's match {match_id} did not finish")
        time.sleep(0.2)


def _start(name: str) -> str:
    return game(name).new_position().to_text()


def _ladder_config(black: str, white: str) -> ladder_pb2.LadderConfig:
    return ladder_pb2.LadderConfig(
        name="fuzz", game=game("othello").spec(),
        bots=[common_pb2.BotRef(name=black), common_pb2.BotRef(name=white)],
        format=ladder_pb2.LADDER_FORMAT_ROUND_ROBIN, games_per_pairing=2,
        time_control=common_pb2.TimeControl(move_time_ms=300))


def _seeds(sdk: ArenaClient, black: str, white: str, matches: tuple[str, str],
           ladder_id: str, config: match_pb2.MatchConfig) -> dict[str, list[Message]]:
    match_id, victim = matches
    spec = sdk.get_bot(black).spec
    bot = common_pb2.BotRef(name=black)
    othello = common_pb2.Position(game=game("othello").spec(), text=_start("othello"))
    gomoku = common_pb2.Position(game=game("gomoku").spec(), text=_start("gomoku"))
    quick = common_pb2.SearchLimits(depth=2, time_ms=50)
    page = common_pb2.PageRequest(page_size=3)
    return {
        "/arena.v1.BotRegistry/RegisterBot": [
            registry_pb2.RegisterBotRequest(spec=bots_pb2.BotSpec(name="fz-new"),
                                            from_preset="lab-beginner"),
            registry_pb2.RegisterBotRequest(spec=spec, request_id="r1")],
        "/arena.v1.BotRegistry/GetBot": [registry_pb2.GetBotRequest(bot=bot)],
        "/arena.v1.BotRegistry/ListBots": [registry_pb2.ListBotsRequest(page=page,
                                                                        owner="mallory")],
        "/arena.v1.BotRegistry/UpdateBot": [registry_pb2.UpdateBotRequest(name=black,
                                                                          spec=spec)],
        "/arena.v1.BotRegistry/RetireBot": [registry_pb2.RetireBotRequest(name="fz-new")],
        "/arena.v1.BotRegistry/ListPresets": [registry_pb2.ListPresetsRequest(
            game=common_pb2.GAME_KIND_GOMOKU)],
        "/arena.v1.BotRegistry/ListEngines": [registry_pb2.ListEnginesRequest(
            game=common_pb2.GAME_KIND_OTHELLO)],
        "/arena.v1.BotRegistry/GetUsage": [registry_pb2.GetBotUsageRequest(),
                                           registry_pb2.GetBotUsageRequest(user="mallory")],
        "/arena.v1.Referee/CreateMatch": [
            referee_pb2.CreateMatchRequest(config=config, request_id="m1"),
            referee_pb2.CreateMatchRequest(config=match_config(
                black, white, move_time_ms=300, opening=[19, 18], capture_trees=True))],
        "/arena.v1.Referee/GetMatch": [referee_pb2.GetMatchRequest(match_id=match_id)],
        "/arena.v1.Referee/ListMatches": [referee_pb2.ListMatchesRequest(
            bot_name=black, page=page, summary_only=True)],
        "/arena.v1.Referee/WatchMatch": [referee_pb2.WatchMatchRequest(match_id=match_id)],
        "/arena.v1.Referee/GetReplay": [referee_pb2.GetReplayRequest(
            match_id=match_id, format=fmt) for fmt in referee_pb2.ReplayFormat.values()],
        "/arena.v1.Referee/GetSearchTree": [referee_pb2.GetSearchTreeRequest(
            match_id=match_id, ply=0)],
        "/arena.v1.Referee/DeleteMatch": [referee_pb2.DeleteMatchRequest(match_id=victim)],
        "/arena.v1.Referee/CancelMatch": [referee_pb2.CancelMatchRequest(
            match_id=victim, reason="fuzz")],
        "/arena.v1.Referee/ImportMatch": [
            referee_pb2.ImportMatchRequest(content="f5d6c3d3c4\n", request_id="i1"),
            referee_pb2.ImportMatchRequest(content=sdk.get_replay(
                match_id, referee_pb2.REPLAY_FORMAT_GGF).content)],
        "/arena.v1.Ladder/CreateLadder": [ladder_pb2.CreateLadderRequest(
            config=_ladder_config(black, white), request_id="l1")],
        "/arena.v1.Ladder/GetStandings": [ladder_pb2.GetStandingsRequest(ladder_id=ladder_id)],
        "/arena.v1.Ladder/WatchLadder": [ladder_pb2.WatchLadderRequest(ladder_id=ladder_id)],
        "/arena.v1.Ladder/ListLadders": [ladder_pb2.ListLaddersRequest(page=page)],
        "/arena.v1.Ladder/CancelLadder": [ladder_pb2.CancelLadderRequest(ladder_id=ladder_id)],
        "/arena.v1.Ladder/GetUsage": [ladder_pb2.GetLadderUsageRequest(),
                                      ladder_pb2.GetLadderUsageRequest(user="mallory")],
        "/arena.v1.Status/GetStatus": [status_pb2.GetStatusRequest(forfeits=5)],
        "/arena.v1.Engine/Analyze": [
            engine_pb2.AnalyzeRequest(position=othello, bot_ref=bot, limits=quick),
            engine_pb2.AnalyzeRequest(position=othello, engine=spec.builtin, limits=quick,
                                      tree_node_budget=20, history=[19]),
            engine_pb2.AnalyzeRequest(position=gomoku, limits=quick,
                                      engine=bots_pb2.BuiltinEngine())],
    }
