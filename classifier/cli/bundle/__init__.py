"""`classifier bundle`: build, sign and verify ruleset bundles (docs/bundles.md).

One thin module per subcommand over `classifier.bundle`; `common` holds how
they print a failure and its stable codes.
"""

from __future__ import annotations

from typing import Any

from classifier.cli.bundle import build, keygen, sign, verify
from classifier.cli.options import Exit, add_command

SUBCOMMANDS = (build, sign, verify, keygen)


EXITS = {
    Exit.ok: "built, signed, verified or a key pair written",
    Exit.failed: "the ruleset has errors, or the bundle was refused (each subcommand's --help)",
    Exit.invalid: "a file or key cannot be read or written",
}


def add_parser(sub: Any) -> None:
    p = add_command(
        sub,
        "bundle",
        help="build, sign and verify ruleset bundles for in-process evaluation",
        description="A bundle is the compiled ruleset as JSON that every client language "
        "evaluates in process (docs/bundles.md); Ed25519 signatures beside it, several keys "
        "at once, let a runtime trust only bundles its operators signed.",
        exits=EXITS,
    )
    commands = p.add_subparsers(dest="bundle_command", required=True, metavar="SUBCOMMAND")
    for command in SUBCOMMANDS:
        command.add_parser(commands)
