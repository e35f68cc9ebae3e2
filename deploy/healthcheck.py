#!/opt/arena/bin/python3
"""Container health probe: exit 0 if the local gRPC server answers SERVING (grpc.health.v1),
or with --http, if the web gateway answers GET /healthz with 200.

Usage: arena-healthcheck [HOST:PORT] [--service NAME] [--http]. The default target is the
port of $ARENA_LISTEN on 127.0.0.1. Imports only grpc and the health stubs, to stay cheap.
"""

from __future__ import annotations

import argparse
import os
import sys
import urllib.error
import urllib.request

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
    parser.add_argument("--http", action="store_true",
                        help="probe the web gateway's GET /healthz instead of gRPC health")
    args = parser.parse_args(argv)
    if args.http:
        return check_http(args.target, args.timeout)
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


def check_http(target: str, timeout: float) -> int:
    try:
        with urllib.request.urlopen(f"http://{target}/healthz", timeout=timeout) as reply:
            status = reply.status
    except urllib.error.HTTPError as exc:  # 503 while draining
        status = exc.code
    except (urllib.error.URLError, OSError) as exc:
        print(f"{target}: {exc}", file=sys.stderr)
        return 1
    print(f"{target}: HTTP {status}")
    return 0 if status == 200 else 1


if __name__ == "__main__":
    sys.exit(main())
