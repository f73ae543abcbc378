"""`classifier classify`: classify one descriptor from a file or stdin, for people at a terminal,
in process or by a running server."""

from __future__ import annotations

import argparse
import json
from typing import Any

from classifier.answer import classification_dict
from classifier.cli import inputs
from classifier.cli.options import Exit, add_command


def add_parser(sub: Any) -> None:
    p = add_command(
        sub,
        "classify",
        help="classify one descriptor (YAML or JSON)",
        description="Classify one descriptor file, in process with --rules (default: the "
        "bundled library) or by the server at --addr.",
        exits=inputs.EXITS,
    )
    inputs.add_arguments(p)
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--explain", action="store_true", help="also show which rules matched and why")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from classifier.engine.explain import render_classification

    answered = inputs.answer(args, explained=args.explain)
    if isinstance(answered, int):
        return answered
    if args.format == "json":
        print(json.dumps(classification_dict(answered.result), indent=2))
    elif args.explain:
        print(answered.explanation_text)
    else:
        print(render_classification(answered.result))
    return Exit.ok
