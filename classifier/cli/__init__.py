"""The `classifier` command: one module per subcommand, each thin over the library."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from classifier.cli import check, classify, diff, health, serve, test

COMMANDS = (serve, check, classify, test, diff, health)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="classifier",
        description="A declarative, rule-based error classifier service.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    code: int = args.run(args)
    return code


def entry() -> None:
    sys.exit(main())
