"""The side port's one way to route a request and send a reply, for the admin server and the
console alike: a table of routes (a path, the methods it takes, a WSGI handler) looked up
in order, and a refusal that each table renders its own way (the admin server as text, the
console as a page). Nothing here knows what a path serves.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

Environ = dict[str, Any]
StartResponse = Callable[[str, list[tuple[str, str]]], Any]
WsgiApp = Callable[[Environ, StartResponse], Iterable[bytes]]
TEXT = "text/plain; charset=utf-8"


@dataclass(frozen=True, slots=True)
class Reply:
    """A whole response, its length known before it is sent."""

    status: str
    body: bytes
    kind: str = TEXT
    headers: tuple[tuple[str, str], ...] = ()

    def send(self, start: StartResponse) -> list[bytes]:
        start(
            self.status,
            [("Content-Type", self.kind), ("Content-Length", str(len(self.body))), *self.headers],
        )
        return [self.body]


def text(status: str, body: str, kind: str = TEXT) -> Reply:
    return Reply(status, body.encode(), kind)


class RefusedError(Exception):
    """A response other than the one asked for (an error), raised by a handler before it
    sends anything to end the request; the table it was routed by renders it."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


Refusal = Callable[[RefusedError], Reply]


@dataclass(frozen=True, slots=True)
class Route:
    path: str
    handler: WsgiApp
    methods: frozenset[str] = frozenset()
    """The methods it takes; empty: any (probes and scrapers send what they send)."""
    under: bool = False
    """Also every path below it (`/console` takes `/console/rule`)."""

    def takes(self, path: str) -> bool:
        return path == self.path or (self.under and path.startswith(self.path + "/"))


def replying(handler: Callable[[Environ], Reply]) -> WsgiApp:
    """A handler that returns its reply, as a WSGI application."""
    return lambda environ, start: handler(environ).send(start)


class Router:
    """A WSGI application: the first route that takes the path answers; none is 404, a
    method the route does not take is 405."""

    def __init__(self, routes: Sequence[Route], refusal: Refusal) -> None:
        self.routes = tuple(routes)
        self.refusal = refusal

    def __call__(self, environ: Environ, start: StartResponse) -> Iterable[bytes]:
        path, method = environ.get("PATH_INFO", ""), environ.get("REQUEST_METHOD", "GET")
        try:
            route = next((r for r in self.routes if r.takes(path)), None)
            if route is None:
                raise RefusedError("404 Not Found", "not found")
            if route.methods and method not in route.methods:
                allowed = " or ".join(sorted(route.methods))
                raise RefusedError("405 Method Not Allowed", f"use {allowed}")
            return route.handler(environ, start)
        except RefusedError as refused:
            return self.refusal(refused).send(start)
