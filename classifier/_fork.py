"""gRPC's fork handlers off, before gRPC is imported: the server forks its explaining
process (classifier.server.explain.process), which never calls gRPC.

gRPC's core reads the setting once, when it starts. With its handlers on, a fork
while calls were being served logged a line of gRPC's to stderr each time, and
about one fork in two from a test process running a server crashed the child
in those handlers; with them off, none did. The command's entry point
(`classifier.__main__`) and the test suite's conftest call `grpc_fork_handlers_off`
first; a program that embeds the server calls it before importing grpc, or its
explanations fall back to its own interpreter when the process cannot be started.
"""

from __future__ import annotations

import os

SETTING = "GRPC_ENABLE_FORK_SUPPORT"


def grpc_fork_handlers_off() -> None:
    """Turn gRPC's fork handlers off unless the environment already says."""
    os.environ.setdefault(SETTING, "false")
