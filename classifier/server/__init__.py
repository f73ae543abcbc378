"""The service around the engine, in rooms (dependencies point down this list):

shared/      what every room shares: the log, the serving ruleset's home and its
             bundle, the token bucket, grpcio's internals
explain/     `Explaining` (the explain budget and the explaining process) and its refusal
observers/   metrics, the decision log, the shadow, the live Unknown sample, activity
rpc/         the gRPC port: app, servicer, conversion, lanes, interceptors, TLS
web/         the side port: /metrics, /-/ endpoints and the console
runtime, reload, workers   `classifier serve` assembled: the one owner of the pieces
"""

from classifier.defaults import DEFAULT_ADDRESS
from classifier.server.rpc.app import (
    SERVICE_NAME,
    GrpcServer,
    ServerLimits,
    create_server,
)
from classifier.server.rpc.tls import TlsFiles
from classifier.server.runtime import App, ServeConfig, serve
from classifier.server.shared.serving_ruleset import ReloadResult, ReloadStatus, RulesetHolder

__all__ = [
    "DEFAULT_ADDRESS",
    "SERVICE_NAME",
    "App",
    "GrpcServer",
    "ReloadResult",
    "ReloadStatus",
    "RulesetHolder",
    "ServeConfig",
    "ServerLimits",
    "TlsFiles",
    "create_server",
    "serve",
]
