"""gRPC wiring of the ladder service (being built: see the open issue)."""

from __future__ import annotations

from collections.abc import Callable

from arena.services.common.config import Settings
from arena.services.common.server import Registration

from arena.v1 import ladder_pb2, ladder_pb2_grpc


def create_service(
    settings: Settings,
) -> tuple[list[Registration], list[str], list[Callable[[], None]]]:
    servicer = ladder_pb2_grpc.LadderServicer()
    name = ladder_pb2.DESCRIPTOR.services_by_name["Ladder"].full_name
    return [lambda s: ladder_pb2_grpc.add_LadderServicer_to_server(servicer, s)], [name], []
