"""gRPC wiring of the referee service (being built: see the open issue)."""

from __future__ import annotations

from collections.abc import Callable

from arena.services.common.config import Settings
from arena.services.common.server import Registration

from arena.v1 import referee_pb2, referee_pb2_grpc


def create_service(
    settings: Settings,
) -> tuple[list[Registration], list[str], list[Callable[[], None]]]:
    servicer = referee_pb2_grpc.RefereeServicer()
    name = referee_pb2.DESCRIPTOR.services_by_name["Referee"].full_name
    return [lambda s: referee_pb2_grpc.add_RefereeServicer_to_server(servicer, s)], [name], []
