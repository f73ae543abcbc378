"""`classifier health`: ask a server's gRPC health service whether it is serving.

A container HEALTHCHECK or a script can use it where a native gRPC probe is
not available (Docker reserves exit status 2 for itself, so an unreachable
server is 1, like one that is not serving).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from classifier.cli.options import (
    Exit,
    add_command,
    add_server,
    not_grpc_port,
    server_failure,
    tls_from,
)

if TYPE_CHECKING:
    import grpc

EXITS = {
    Exit.ok: "the server is SERVING",
    Exit.failed: "it is not serving, or cannot be reached",
    Exit.invalid: "unusable TLS files, or the address is not a gRPC port (an admin port)",
}


def add_parser(sub: Any) -> None:
    p = add_command(
        sub,
        "health",
        help="check that a server is serving (gRPC health)",
        description="Ask a server's standard grpc.health.v1 service whether it is serving.",
        exits=EXITS,
    )
    p.add_argument("--service", default="", help="service to ask about (default: the server)")
    add_server(p, timeout=3.0)
    p.set_defaults(run=run)


def channel(args: argparse.Namespace) -> grpc.Channel:
    """Plaintext, or TLS when any --tls-* flag is given (ValueError for an unusable set)."""
    import grpc

    tls = tls_from(args)
    if tls is None:
        return grpc.insecure_channel(args.addr)
    options = [("grpc.ssl_target_name_override", tls.server_name)] if tls.server_name else []
    return grpc.secure_channel(args.addr, tls.credentials(), options=options)


def run(args: argparse.Namespace) -> int:
    import grpc  # gRPC when it calls: parsing the command line never loads it
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    try:
        with channel(args) as ch:
            stub: Any = health_pb2_grpc.HealthStub(ch)  # the typeshed stub lacks Check
            reply = stub.Check(
                health_pb2.HealthCheckRequest(service=args.service), timeout=args.timeout
            )
    except grpc.RpcError as exc:
        failure = f"{exc.code().name}: {exc.details()}"
        print(server_failure(args.addr, failure), file=sys.stderr)
        return Exit.invalid if not_grpc_port(failure) else Exit.failed
    except (OSError, ValueError) as exc:
        print(f"classifier: {exc}", file=sys.stderr)
        return Exit.invalid
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
    print(f"{args.addr}: {status}")
    return Exit.ok if reply.status == health_pb2.HealthCheckResponse.SERVING else Exit.failed
