"""What several subcommands share, defined once: how a rules folder is named, how a
server is reached (address and TLS), and the exit-status table every `--help` ends with.
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Mapping
from enum import IntEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from classifier.defaults import DEFAULT_ADDRESS, DEFAULT_TIMEOUT
from classifier.source.library import bundled_library

if TYPE_CHECKING:
    from errorclass_client import TLS, Client

EXPLAIN_TIMEOUT = 10.0
"""`--timeout`'s default for a call asking for an explanation (the server bounds one at
limits.EXPLAIN_TIMEOUT_SECONDS)."""


class Exit(IntEnum):
    """Exit statuses: each number means the same kind of outcome in every subcommand."""

    ok = 0
    failed = 1
    invalid = 2
    strict = 3


EXIT_MEANINGS: dict[Exit, str] = {
    Exit.ok: "success",
    Exit.failed: "failed",
    Exit.invalid: "could not run",
    Exit.strict: "warnings under --strict",
}
"""What each number means everywhere; a subcommand says what it means for it."""

WIDTH = 79
USAGE_ERROR = "bad arguments"
"""argparse exits 2 for a usage error in every subcommand, so every table says so."""


def exit_table(meanings: Mapping[Exit, str]) -> str:
    """The `exit status:` table of a subcommand's --help: each status it uses, with the
    shared meaning first and the subcommand's own after it."""
    lines = ["exit status:"]
    table = dict(meanings)
    table[Exit.invalid] = (
        f"{table[Exit.invalid]}; {USAGE_ERROR}" if Exit.invalid in table else USAGE_ERROR
    )
    for status in sorted(table):
        lines += textwrap.wrap(
            f"{EXIT_MEANINGS[status]}: {table[status]}",
            WIDTH,
            initial_indent=f"  {int(status)}  ",
            subsequent_indent="     ",
            break_on_hyphens=False,
        )
    return "\n".join(lines)


def add_command(
    sub: Any, name: str, *, help: str, description: str, exits: Mapping[Exit, str]
) -> argparse.ArgumentParser:
    """A subcommand's parser, its --help ending with its exit-status table."""
    parser: argparse.ArgumentParser = sub.add_parser(
        name,
        help=help,
        description=textwrap.fill(description, WIDTH),
        epilog=exit_table(exits),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser


_BUNDLED = object()


def add_rules(
    parser: argparse.ArgumentParser | Any, *, what: str = "", default: object = _BUNDLED
) -> None:
    """`--rules DIR`: the ruleset folder, the bundled library unless told otherwise.

    `default=None` lets a command tell an absent flag from the library itself
    (and then use `bundled_library()` in its place).
    """
    parser.add_argument(
        "--rules",
        type=Path,
        default=bundled_library() if default is _BUNDLED else default,
        metavar="DIR",
        help=(what or "the ruleset folder")
        + " (default: the bundled library, which ships inside the package)",
    )


def add_server(
    parser: argparse.ArgumentParser | Any,
    *,
    address: str | None = DEFAULT_ADDRESS,
    timeout: float | None = DEFAULT_TIMEOUT,
    addr_help: str = "",
    addr_group: Any = None,
) -> None:
    """`--addr`, `--timeout` and the TLS flags of a command that calls a running server.

    With `address` None, `--addr` has no default: its absence means the
    command works in process. `addr_group` is a mutually exclusive group to put
    `--addr` in (beside `--rules`).
    """
    default = f" (default: {address})" if address else ""
    (parser if addr_group is None else addr_group).add_argument(
        "--addr",
        default=address,
        metavar="HOST:PORT",
        help=(addr_help or "the server's address") + default,
    )
    shown = (
        f"{timeout:g}"
        if timeout is not None
        else f"{DEFAULT_TIMEOUT:g}, or {EXPLAIN_TIMEOUT:g} for an explanation"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=timeout,
        metavar="SECONDS",
        help=f"how long to wait for the server (default: {shown})",
    )
    add_tls(parser)


def add_tls(parser: argparse.ArgumentParser | Any) -> None:
    tls = parser.add_argument_group("TLS (any --tls-* flag means TLS)")
    tls.add_argument(
        "--tls-ca",
        type=Path,
        metavar="PEM",
        help="trust this CA (default: the system's CAs)",
    )
    tls.add_argument("--tls-cert", type=Path, metavar="PEM", help="client certificate (mTLS)")
    tls.add_argument("--tls-key", type=Path, metavar="PEM", help="client key (mTLS)")
    tls.add_argument(
        "--tls-server-name",
        default="",
        metavar="NAME",
        help="the name to check the server's certificate against (default: the host of --addr)",
    )


def tls_from(args: argparse.Namespace) -> TLS | None:
    """None for plaintext, else the TLS the flags name (ValueError for an unusable set)."""
    from errorclass_client import TLS  # gRPC, when a command calls a server: not to parse

    if args.tls_ca is None and args.tls_cert is None and args.tls_key is None:
        if args.tls_server_name:
            raise ValueError("--tls-server-name needs TLS: give --tls-ca (or another --tls-*)")
        return None
    return TLS.from_files(
        ca=args.tls_ca, cert=args.tls_cert, key=args.tls_key, server_name=args.tls_server_name
    )


_HTTP1_PEER = ("Expected SETTINGS frame", "http1.x server", "Failed parsing HTTP/2")
"""What gRPC says when the port it reached speaks HTTP/1.1 (an admin port, say)."""


def not_grpc_port(details: str) -> bool:
    """Whether a failed call's details say the address is not a gRPC port at all."""
    return any(mark in details for mark in _HTTP1_PEER)


def server_failure(address: str, failure: str) -> str:
    """A failed call as a command prints it; given the admin port (HTTP/1.1), it says which
    port `--addr` expects."""
    if not_grpc_port(failure):
        return (
            f"{address}: not a gRPC port (it answered HTTP/1.1): --addr is the server's gRPC "
            "port (serve --addr), not its admin port (serve --metrics-addr)"
        )
    return f"{address}: {failure}"


def client_from(args: argparse.Namespace, *, explained: bool = False) -> Client:
    """A client for `--addr` with the TLS flags and `--timeout` (ValueError for unusable
    TLS files); it does not retry, so an unreachable server is reported at once. Without
    `--timeout`, a call that asks for an explanation waits EXPLAIN_TIMEOUT: it costs about
    a hundred answers and may start the server's explaining process."""
    from errorclass_client import Client

    timeout = args.timeout
    if timeout is None:
        timeout = EXPLAIN_TIMEOUT if explained else DEFAULT_TIMEOUT
    return Client(args.addr, tls=tls_from(args), timeout=timeout, attempts=1)
