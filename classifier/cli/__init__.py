"""The `classifier` command: one module per subcommand, each thin over the library.

Every subcommand's parser is built on every run, so a module imports at its top only what
its parser needs (the kernel, `classifier.defaults`), and the library it runs on (the
compiler, the server stack, gRPC) inside `run`: `--version`, `--help` and parsing any
command line load none of it (tests/cli/test_start_up.py measures the modules loaded).
"""

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
