"""gRPC wiring of the worker service (being built: see the open issue)."""

from __future__ import annotations

from collections.abc import Callable

from arena.services.common.config import Settings
from arena.services.common.server import Registration

from arena.v1 import engine_pb2, engine_pb2_grpc


def create_service(
    settings: Settings,
) -> tuple[list[Registration], list[str], list[Callable[[], None]]]:
    servicer = engine_pb2_grpc.EngineServicer()
    name = engine_pb2.DESCRIPTOR.services_by_name["Engine"].full_name
    return [lambda s: engine_pb2_grpc.add_EngineServicer_to_server(servicer, s)], [name], []
