"""`classifier bundle`: build, sign and verify ruleset bundles (docs/bundles.md).

One thin module per subcommand over `classifier.bundle`; `common` holds how
they print a failure and its stable codes.
"""

from __future__ import annotations

from typing import Any

from classifier.cli.bundle import build, keygen, sign, verify

SUBCOMMANDS = (build, sign, verify, keygen)


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "bundle",
        help="build, sign and verify ruleset bundles for in-process evaluation",
        description="A bundle is the compiled ruleset as JSON that every client language "
        "evaluates in process (docs/bundles.md); Ed25519 signatures beside it, several keys "
        "at once, let a runtime trust only bundles its operators signed.",
    )
    commands = p.add_subparsers(dest="bundle_command", required=True, metavar="SUBCOMMAND")
    for command in SUBCOMMANDS:
        command.add_parser(commands)
