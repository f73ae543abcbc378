"""`classifier health`: ask a server's gRPC health service whether it is serving.

Exit 0 when SERVING, 1 otherwise: a container HEALTHCHECK or a script can
use it where a native gRPC probe is not available.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from classifier.client import TLS
from classifier.server import DEFAULT_ADDRESS


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "health", help="check that a server is serving (gRPC health)"
    )
    p.add_argument(
        "--addr", default=DEFAULT_ADDRESS, help=f"server address (default: {DEFAULT_ADDRESS})"
    )
    p.add_argument("--service", default="", help="service to ask about (default: the server)")
    p.add_argument("--timeout", type=float, default=3.0, help="seconds to wait (default: 3)")
    p.add_argument(
        "--tls-ca",
        type=Path,
        metavar="PEM",
        help="use TLS, trusting this CA (any --tls-* flag means TLS; default: the system's CAs)",
    )
    p.add_argument("--tls-cert", type=Path, metavar="PEM", help="client certificate (mTLS)")
    p.add_argument("--tls-key", type=Path, metavar="PEM", help="client key (mTLS)")
    p.set_defaults(run=run)


def channel(args: argparse.Namespace) -> grpc.Channel:
    """Plaintext, or TLS when any --tls-* flag is given (ValueError for an unusable set)."""
    if args.tls_ca is None and args.tls_cert is None and args.tls_key is None:
        return grpc.insecure_channel(args.addr)
    tls = TLS.from_files(ca=args.tls_ca, cert=args.tls_cert, key=args.tls_key)
    return grpc.secure_channel(args.addr, tls.credentials())


def run(args: argparse.Namespace) -> int:
    try:
        with channel(args) as ch:
            stub: Any = health_pb2_grpc.HealthStub(ch)  # the typeshed stub lacks Check
            reply = stub.Check(
                health_pb2.HealthCheckRequest(service=args.service), timeout=args.timeout
            )
    except grpc.RpcError as exc:
        print(f"{args.addr}: {exc.code().name}: {exc.details()}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as exc:
        print(f"classifier: {exc}", file=sys.stderr)
        return 2
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
    print(f"{args.addr}: {status}")
    return 0 if reply.status == health_pb2.HealthCheckResponse.SERVING else 1
