#!/opt/arena/bin/python3
"""Container health probe: exit 0 if the local gRPC server answers SERVING (grpc.health.v1).

Usage: arena-healthcheck [HOST:PORT] [--service NAME]. The default target is the port of
$ARENA_LISTEN on 127.0.0.1. Imports only grpc and the health stubs, to stay cheap.
"""

from __future__ import annotations

import argparse
import os
import sys

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc


def default_target() -> str:
    listen = os.environ.get("ARENA_LISTEN", "0.0.0.0:50051")
    return "127.0.0.1:" + listen.rsplit(":", 1)[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="arena-healthcheck", description=__doc__)
    parser.add_argument("target", nargs="?", default=default_target())
    parser.add_argument("--service", default="", help="service name ('' = the whole server)")
    parser.add_argument("--timeout", type=float, default=3.0)
    args = parser.parse_args(argv)
    try:
        with grpc.insecure_channel(args.target) as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=args.service), timeout=args.timeout
            )
    except grpc.RpcError as exc:
        print(f"{args.target}: {exc.code().name}", file=sys.stderr)
        return 1
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
    print(f"{args.target}: {status}")
    return 0 if reply.status == health_pb2.HealthCheckResponse.SERVING else 1


if __name__ == "__main__":
    sys.exit(main())
