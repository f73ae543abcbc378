"""The `classifier` command: one module per subcommand, each thin over the library."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from classifier import version
from classifier.cli import (
    bundle,
    check,
    classify,
    diff,
    explain,
    health,
    init,
    reclassify,
    ruleset,
    schema,
    serve,
    test,
    unknowns,
)
from classifier.cli.options import EXIT_MEANINGS, USAGE_ERROR

COMMANDS = (
    serve,
    check,
    classify,
    explain,
    test,
    diff,
    reclassify,
    unknowns,
    health,
    ruleset,
    schema,
    init,
    bundle,
)


def _epilog() -> str:
    lines = ["exit status (the same in every command; its --help says what each means there):"]
    for status, meaning in EXIT_MEANINGS.items():
        lines.append(f"  {int(status)}  {meaning}" + (f", or {USAGE_ERROR}" if status == 2 else ""))
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="classifier",
        description="A declarative, rule-based error classifier service.",
        epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"classifier {version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    code: int = args.run(args)
    return int(code)


def entry() -> None:
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader left early (`classifier check rules | head`): not worth a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 1
    sys.exit(code)
