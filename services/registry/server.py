"""gRPC wiring of the registry service (being built: see the open issue)."""

from __future__ import annotations

from collections.abc import Callable

from arena.services.common.config import Settings
from arena.services.common.server import Registration

from arena.v1 import registry_pb2, registry_pb2_grpc


def create_service(
    settings: Settings,
) -> tuple[list[Registration], list[str], list[Callable[[], None]]]:
    servicer = registry_pb2_grpc.BotRegistryServicer()
    name = registry_pb2.DESCRIPTOR.services_by_name["BotRegistry"].full_name
    return [lambda s: registry_pb2_grpc.add_BotRegistryServicer_to_server(servicer, s)], [name], []
