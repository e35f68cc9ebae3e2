"""Bots for the tests: registered through the registry's API, and external bots that are
small real gRPC servers whose behaviour is scripted: they play the first legal move, or
answer an illegal move, garbage bytes, too late, or crash; the protocol engines a worker
offers (what the registry checks a protocol bot against). Also the match helpers the
referee, worker and system tests share.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent import futures
from contextlib import contextmanager
from typing import Any

import grpc
import redis
from arena.clients.sdk import ArenaClient
from arena.services.common.protocol import workers
from arena.services.common.protocol.matches import FINISHED_STATES, MatchStore

from arena.bots.spec import config_to_struct
from arena.games import game
from arena.v1 import (
    bot_service_pb2,
    bot_service_pb2_grpc,
    bots_pb2,
    common_pb2,
    engine_pb2,
    match_pb2,
    status_pb2,
)

OTHELLO = common_pb2.GAME_KIND_OTHELLO
GOMOKU = common_pb2.GAME_KIND_GOMOKU


def external_bot(peers: ArenaClient, name: str, address: str,
                 kind: common_pb2.GameKind.ValueType = OTHELLO) -> bots_pb2.BotVersion:
    """Register an external bot (through the registry, as its owner ``root``)."""
    spec = bots_pb2.BotSpec(name=name, game=kind,
                            external=bots_pb2.ExternalEngine(address=address))
    return peers.register_bot(spec)


def advertise(client: redis.Redis, worker_id: str, *offers: engine_pb2.EngineOffer,
              ttl_ms: int = workers.TTL_MS, pool: str = "match") -> None:
    """Advertise a worker offering these protocol engines, as its heartbeat does."""
    info = status_pb2.WorkerInfo(worker_id=worker_id, pool=pool, protocol_engines=offers)
    with client.pipeline(transaction=False) as pipe:
        workers.advertise(pipe, info, ttl_ms)
        pipe.execute()


def builtin_bot(peers: ArenaClient, name: str, config: dict[str, object],
                kind: common_pb2.GameKind.ValueType = OTHELLO) -> bots_pb2.BotVersion:
    spec = bots_pb2.BotSpec(name=name, game=kind,
                            builtin=bots_pb2.BuiltinEngine(config=config_to_struct(config)))
    return peers.register_bot(spec)


# --- scripted external bots --------------------------------------------------------------

Behaviour = Callable[[bot_service_pb2.GetMoveRequest], bot_service_pb2.GetMoveResponse]


def legal_moves(request: bot_service_pb2.GetMoveRequest) -> list[int]:
    return game(request.position.game.kind).position_from_text(
        request.position.text).legal_moves()


def first_legal(request: bot_service_pb2.GetMoveRequest) -> bot_service_pb2.GetMoveResponse:
    move = legal_moves(request)[0]
    return bot_service_pb2.GetMoveResponse(
        move=common_pb2.Move(square=move), search=common_pb2.SearchInfo(depth=1, nodes=1))


def last_legal(request: bot_service_pb2.GetMoveRequest) -> bot_service_pb2.GetMoveResponse:
    return bot_service_pb2.GetMoveResponse(move=common_pb2.Move(square=legal_moves(request)[-1]))


def illegal(request: bot_service_pb2.GetMoveRequest) -> bot_service_pb2.GetMoveResponse:
    position = game(request.position.game.kind).position_from_text(request.position.text)
    size = position.size * position.size
    move = next(sq for sq in range(size) if not position.is_legal(sq))
    return bot_service_pb2.GetMoveResponse(move=common_pb2.Move(square=move))


def no_move(request: bot_service_pb2.GetMoveRequest) -> bot_service_pb2.GetMoveResponse:
    return bot_service_pb2.GetMoveResponse()


def crash(request: bot_service_pb2.GetMoveRequest) -> bot_service_pb2.GetMoveResponse:
    raise RuntimeError("the bot fell over")


def late(request: bot_service_pb2.GetMoveRequest) -> bot_service_pb2.GetMoveResponse:
    time.sleep(request.move_time_ms * 3 / 1000 + 0.3)
    return first_legal(request)


def illegal_after(plies: int) -> Behaviour:
    """Legal for the first ``plies`` plies of the game, then illegal."""
    def behave(request: bot_service_pb2.GetMoveRequest) -> bot_service_pb2.GetMoveResponse:
        return first_legal(request) if request.ply < plies else illegal(request)
    return behave


class _Servicer(bot_service_pb2_grpc.BotServiceServicer):
    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self.calls = 0

    def GetMove(self, request: bot_service_pb2.GetMoveRequest,
                context: Any) -> bot_service_pb2.GetMoveResponse:
        self.calls += 1
        return self.behaviour(request)


def _garbage_handler() -> grpc.GenericRpcHandler:
    def answer(request: bytes, context: Any) -> bytes:
        return b"\xff\xff\xff\xff not a protobuf"

    handler = grpc.unary_unary_rpc_method_handler(answer)  # raw bytes both ways
    return grpc.method_handlers_generic_handler("arena.v1.BotService", {"GetMove": handler})


@contextmanager
def bot_server(behaviour: Behaviour | str) -> Iterator[str]:
    """A real BotService on a free port; yields its address. ``"garbage"`` sends bytes
    that are not a GetMoveResponse; ``"no service"`` is a gRPC server without the
    BotService (every call UNIMPLEMENTED)."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    if behaviour == "garbage":
        server.add_generic_rpc_handlers((_garbage_handler(),))
    elif behaviour != "no service":
        assert callable(behaviour)
        bot_service_pb2_grpc.add_BotServiceServicer_to_server(_Servicer(behaviour), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(0).wait()


# --- matches ---------------------------------------------------------------------------------


def bot_ref(text: str) -> common_pb2.BotRef:
    """``name`` or ``name@version``."""
    name, _, version = text.partition("@")
    return common_pb2.BotRef(name=name, version=int(version or 0))


def match_config(black: str, white: str, kind: common_pb2.GameKind.ValueType = OTHELLO,
                 move_time_ms: int = 1000, **extra: Any) -> match_pb2.MatchConfig:
    config = match_pb2.MatchConfig(
        game=common_pb2.GameSpec(kind=kind), black=bot_ref(black), white=bot_ref(white),
        time_control=common_pb2.TimeControl(move_time_ms=move_time_ms), **extra)
    return config


def wait_finished(client: redis.Redis, match_id: str, timeout_s: float = 60.0) -> match_pb2.Match:
    store = MatchStore(client)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        match = store.get(match_id)
        if match.status in FINISHED_STATES:
            return match
        time.sleep(0.05)
    raise TimeoutError(f"match {match_id} did not finish in {timeout_s} s: "
                       f"{len(store.records(match_id))} plies recorded")


def replay_moves(match: match_pb2.Match) -> None:
    """Re-play the record through the rules library; raises on any illegal move."""
    position = game(match.config.game.kind).position_from_text(match.start_position)
    for ply, record in enumerate(match.moves):
        assert record.ply == ply, f"ply {record.ply} recorded at index {ply}"
        position.push(record.move.square)
        assert position.to_text() == record.position_after
    if match.result.termination in (match_pb2.TERMINATION_NORMAL,
                                    match_pb2.TERMINATION_BOARD_FULL):
        assert position.is_game_over()
