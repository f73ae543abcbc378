"""Loopback only: refuse, inside this process, any connection or name lookup beyond 127.0.0.1.

The SDKs the suite drives can phone home on their own (a cost map on import, a tracing
exporter, a tokenizer download); the suite turns each of those off, and this guard makes
a missed one fail loudly instead of reaching the network. `install()` is idempotent. A
lookup with AI_NUMERICHOST passes: it only parses the name, and asks no resolver (the
runtime suite's DNS failures are made that way).
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "ip6-localhost"})
_installed = False


class NetworkBlockedError(OSError):
    """A connection or lookup beyond loopback was attempted."""


def is_loopback(host: object) -> bool:
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    if not isinstance(host, str):
        return False
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _check(address: Any) -> None:
    if isinstance(address, tuple) and address and not is_loopback(address[0]):
        raise NetworkBlockedError(f"conformance suite: no traffic beyond loopback ({address[0]!r})")


def install() -> None:
    global _installed
    if _installed:
        return
    _installed = True
    connect, connect_ex = socket.socket.connect, socket.socket.connect_ex
    getaddrinfo = socket.getaddrinfo

    def guarded_connect(self: socket.socket, address: Any) -> None:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            _check(address)
        connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> int:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            _check(address)
        return connect_ex(self, address)

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        flags = kwargs.get("flags", args[4] if len(args) > 4 else 0)
        numeric = bool(flags & socket.AI_NUMERICHOST)  # parses the name, asks no resolver
        if host is not None and not numeric and not is_loopback(host):
            raise NetworkBlockedError(
                f"conformance suite: no name lookups beyond loopback ({host!r})"
            )
        return getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = guarded_connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = guarded_connect_ex  # type: ignore[method-assign,assignment]
    socket.getaddrinfo = guarded_getaddrinfo
