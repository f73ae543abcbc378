"""Build and run the gRPC server: the classifier, health checking and reflection."""

from __future__ import annotations

import signal
import threading
from concurrent import futures
from types import FrameType

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from classifier._proto.errorclass.v1 import classifier_pb2 as pb
from classifier._proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc
from classifier.ruleset import Ruleset
from classifier.server.log import log
from classifier.server.service import ClassifierService, RulesetHolder

SERVICE_NAME: str = pb.DESCRIPTOR.services_by_name["ErrorClassifier"].full_name
DEFAULT_ADDRESS = "127.0.0.1:50051"
DEFAULT_THREADS = 4
DEFAULT_GRACE_SECONDS = 5.0


class Server:
    """A running classifier server and the parts an operator (or a test) needs to reach."""

    def __init__(
        self,
        grpc_server: grpc.Server,
        port: int,
        holder: RulesetHolder,
        health: health.HealthServicer,
    ) -> None:
        self.grpc_server = grpc_server
        self.port = port
        self.holder = holder
        self.health = health

    def start(self) -> None:
        self.grpc_server.start()
        self.health.set("", health_pb2.HealthCheckResponse.SERVING)
        self.health.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)

    def stop(self, grace: float | None = DEFAULT_GRACE_SECONDS) -> None:
        """Stop taking calls; in-flight calls get `grace` seconds to finish."""
        self.health.enter_graceful_shutdown()
        self.grpc_server.stop(grace).wait()


def create_server(
    ruleset: Ruleset | RulesetHolder,
    address: str = DEFAULT_ADDRESS,
    *,
    threads: int = DEFAULT_THREADS,
) -> Server:
    """A server bound to `address` (port 0 picks a free port), not yet started."""
    holder = ruleset if isinstance(ruleset, RulesetHolder) else RulesetHolder(ruleset)
    grpc_server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=threads, thread_name_prefix="classify"),
        options=[("grpc.so_reuseport", 0)],
    )
    pb_grpc.add_ErrorClassifierServicer_to_server(ClassifierService(holder), grpc_server)
    health_servicer = health.HealthServicer(experimental_non_blocking=True)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, grpc_server)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), grpc_server
    )
    port = grpc_server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"cannot bind {address}")
    return Server(grpc_server, port, holder, health_servicer)


def serve(
    ruleset: Ruleset,
    address: str,
    *,
    threads: int = DEFAULT_THREADS,
    grace: float = DEFAULT_GRACE_SECONDS,
) -> None:
    """Serve until SIGTERM or SIGINT, then let in-flight calls finish and return."""
    server = create_server(ruleset, address, threads=threads)
    stopping = threading.Event()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        log("shutdown", signal=signal.Signals(signum).name, grace_seconds=grace)
        stopping.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    server.start()
    host = address.rsplit(":", 1)[0]
    log(
        "start",
        address=f"{host}:{server.port}",
        ruleset=ruleset.name,
        version=ruleset.version,
        digest=ruleset.digest,
        rules=len(ruleset.rules),
        source=ruleset.source,
    )
    stopping.wait()
    server.stop(grace)
    log("stopped")
