#!/opt/arena/bin/python3
"""Container health probe: exit 0 if the local gRPC server answers SERVING (grpc.health.v1),
or with --http, if the web gateway answers GET /healthz with 200.

Usage: arena-healthcheck [HOST:PORT] [--service NAME] [--http]. The default target is the
port of $ARENA_LISTEN on 127.0.0.1. Imports only grpc and the health stubs, to stay cheap.

A service that serves TLS (``ARENA_TLS_CERT_FILE``) is checked over TLS: its certificate
is verified with ``ARENA_TLS_CA_FILE`` (else ``ARENA_TLS_CLIENT_CA_FILE``) against the
first name it carries, and presented as the client certificate (mutual TLS).
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


def open_channel(target: str, env: dict[str, str]) -> grpc.Channel:
    """Plaintext, or TLS as the service itself serves it (see the module docstring)."""
    cert_file = env.get("ARENA_TLS_CERT_FILE", "")
    if not cert_file:
        return grpc.insecure_channel(target)
    ca_file = env.get("ARENA_TLS_CA_FILE") or env.get("ARENA_TLS_CLIENT_CA_FILE") or ""
    with open(cert_file, "rb") as cert, open(env["ARENA_TLS_KEY_FILE"], "rb") as key:
        chain, private = cert.read(), key.read()
    roots = None
    if ca_file:
        with open(ca_file, "rb") as ca:
            roots = ca.read()
    credentials = grpc.ssl_channel_credentials(roots, private, chain)
    options = [("grpc.ssl_target_name_override", first_name(chain))]
    return grpc.secure_channel(target, credentials, options=options)


def first_name(chain: bytes) -> str:
    """The first DNS name (else address) of the certificate the server presents."""
    from cryptography import x509

    names = x509.load_pem_x509_certificate(chain).extensions.get_extension_for_class(
        x509.SubjectAlternativeName).value
    found = names.get_values_for_type(x509.DNSName) or [
        str(a) for a in names.get_values_for_type(x509.IPAddress)]
    return found[0] if found else "localhost"


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
        with open_channel(args.target, dict(os.environ)) as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=args.service), timeout=args.timeout
            )
    except grpc.RpcError as exc:
        print(f"{args.target}: {exc.code().name}", file=sys.stderr)
        return 1
    except (OSError, ValueError, KeyError) as exc:  # unreadable TLS files
        print(f"{args.target}: cannot set up TLS: {exc}", file=sys.stderr)
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
