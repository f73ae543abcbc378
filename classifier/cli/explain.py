"""`classifier explain`: why a descriptor gets its class, for a rule author at a terminal.

The same explanation the gRPC `explain` flag returns: the engine run with a
tracer, in process with --rules or by the server at --addr.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from classifier.answer import classification_dict
from classifier.cli import inputs
from classifier.cli.options import Exit, add_command
from classifier.source.descriptor_file import descriptor_dict


def add_parser(sub: Any) -> None:
    p = add_command(
        sub,
        "explain",
        help="show which rules matched a descriptor and why the winner won",
        description="Classify one descriptor (YAML or JSON) and explain the answer: the "
        "normalised descriptor, every rule that matched with the conditions that held, the "
        "precedence step that decided, and for Unknown the rules that came closest. In "
        "process with --rules (default: the bundled library), or by the server at --addr.",
        exits=inputs.EXITS,
    )
    inputs.add_arguments(p)
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    answered = inputs.answer(args, explained=True)
    if isinstance(answered, int):
        return answered
    if args.format == "json":
        out = {
            "descriptor": descriptor_dict(answered.descriptor),
            **classification_dict(answered.result),
        }
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        print(answered.explanation_text)
    return Exit.ok
