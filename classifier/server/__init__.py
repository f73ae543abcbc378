"""The gRPC server: a thin adapter over the engine, and what running it in production needs."""

from classifier.server.app import (
    DEFAULT_ADDRESS,
    SERVICE_NAME,
    Server,
    ServerLimits,
    create_server,
)
from classifier.server.holder import ReloadResult, ReloadStatus, RulesetHolder
from classifier.server.runtime import App, ServeConfig, serve
from classifier.server.tls import TlsFiles

__all__ = [
    "DEFAULT_ADDRESS",
    "SERVICE_NAME",
    "App",
    "ReloadResult",
    "ReloadStatus",
    "RulesetHolder",
    "ServeConfig",
    "Server",
    "ServerLimits",
    "TlsFiles",
    "create_server",
    "serve",
]
