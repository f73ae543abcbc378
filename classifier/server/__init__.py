"""The gRPC server: a thin adapter over the engine."""

from classifier.server.app import DEFAULT_ADDRESS, SERVICE_NAME, Server, create_server, serve
from classifier.server.service import RulesetHolder

__all__ = ["DEFAULT_ADDRESS", "SERVICE_NAME", "RulesetHolder", "Server", "create_server", "serve"]
