"""Arena: a bot arena for Othello/Reversi and Gomoku (services, engines, client)."""

import os

# gRPC's core installs fork handlers (the build's default). A worker forks its engine
# processes (exec follows at once) from its own thread; a fork while another thread is in
# a gRPC call skips the handlers' preparation and the child could die in them (SIGSEGV,
# or an engine "exited at once": seen on the analysis pool, whose forks happen during the
# Analyze call). Arena never uses gRPC in a forked child, and gRPC's Python layer has no
# fork support unless asked, so the handlers are off unless the environment says else.
# Read when gRPC is imported: here, before any Arena module imports it.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
