"""An Arena process forks engine processes while gRPC calls are in flight (an analyst
during Analyze, a worker beside an external bot's call). gRPC's own fork handlers must
be off there: with them on, such a fork skips their preparation and the child may die
in them (seen as engines killed by SIGSEGV or "exited at once" at start)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

SERVER_FORKING_IN_A_CALL = textwrap.dedent("""
    import subprocess, sys, threading
    from concurrent import futures
    import arena  # as every Arena process: first
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    class Forking(health_pb2_grpc.HealthServicer):
        def Check(self, request, context):  # as the sandbox: from another thread, with
            codes = []                      # code between fork and exec
            spawn = threading.Thread(target=lambda: codes.append(subprocess.run(
                ["true"], preexec_fn=lambda: None).returncode))
            spawn.start()
            spawn.join()
            return health_pb2.HealthCheckResponse(
                status=health_pb2.HealthCheckResponse.SERVING if codes == [0] else 0)

    server = grpc.server(futures.ThreadPoolExecutor(4))
    health_pb2_grpc.add_HealthServicer_to_server(Forking(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        for _ in range(5):
            reply = stub.Check(health_pb2.HealthCheckRequest(), timeout=10)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING, reply
    server.stop(None)
    print("forked 5 times")
""")


def test_forks_during_a_grpc_call_skip_no_fork_handlers() -> None:
    env = {k: v for k, v in os.environ.items() if k != "GRPC_ENABLE_FORK_SUPPORT"}  # its own
    ran = subprocess.run([sys.executable, "-c", SERVER_FORKING_IN_A_CALL], capture_output=True,
                         text=True, timeout=120, env=env)
    assert ran.returncode == 0 and "forked 5 times" in ran.stdout, ran.stderr
    assert "skipping fork() handlers" not in ran.stderr, ran.stderr
