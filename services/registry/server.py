"""gRPC wiring of the registry service: a BotStore on the durable Redis behind the servicer."""

from __future__ import annotations

import grpc
from arena.services.common.config import Config
from arena.services.common.egress import EgressPolicy
from arena.services.common.peers import peer_client
from arena.services.common.protocol import workers
from arena.services.common.protocol.bots import BotStore
from arena.services.common.quotas import Quotas
from arena.services.common.redis_clients import connect
from arena.services.common.runner import ServiceParts
from arena.services.registry.servicer import BotRegistryServicer

from arena.bots import preset_configs
from arena.v1 import registry_pb2, registry_pb2_grpc

SERVICE_NAME = registry_pb2.DESCRIPTOR.services_by_name["BotRegistry"].full_name


def create_service(config: Config) -> ServiceParts:
    preset_configs()  # import both engines now: a broken engine fails startup, not a request
    client = connect(config.redis_url)
    referee = peer_client(config) if config.referee else None
    servicer = BotRegistryServicer(BotStore(client), Quotas.from_config(config, client),
                                   referee, EgressPolicy.parse(config.external_allow),
                                   lambda: workers.offers(workers.alive(client)))

    def register(server: grpc.Server) -> None:
        registry_pb2_grpc.add_BotRegistryServicer_to_server(servicer, server)

    def stop() -> None:
        client.close()
        if referee is not None:
            referee.close()

    return [register], [SERVICE_NAME], [stop]
