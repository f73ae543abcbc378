"""`classifier explain`: why a descriptor gets its class, for a rule author at a terminal.

The same explanation the gRPC `explain` flag returns: the engine run with a
tracer, in process with --rules or by the server at --addr. `--rule ID` adds
why that rule did or did not decide the descriptor: which of its conditions
held and failed (with the descriptor's values), or the precedence step it
lost and to whom, whatever the answer was.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any

from classifier.answer import classification_dict
from classifier.cli import inputs
from classifier.cli.options import Exit, add_command


def add_parser(sub: Any) -> None:
    p = add_command(
        sub,
        "explain",
        help="show which rules matched a descriptor and why the winner won",
        description="Classify one descriptor (YAML or JSON) and explain the answer: the "
        "normalised descriptor, every rule that matched with the conditions that held, the "
        "precedence step that decided, and for Unknown the rules that came closest. In "
        "process with --rules (default: the bundled library), or by the server at --addr. "
        "With --rule, also why that rule did not decide it (or did).",
        exits=inputs.EXITS,
    )
    inputs.add_arguments(p)
    p.add_argument(
        "--rule",
        metavar="ID",
        help="say why this rule did or did not decide the descriptor: the conditions that "
        "held and failed, or the precedence step it lost and to whom",
    )
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from classifier.source.descriptor_file import descriptor_dict

    answered = inputs.answer(args, explained=True, rule=args.rule)
    if isinstance(answered, int):
        return answered
    if args.format == "json":
        out = {
            "descriptor": descriptor_dict(answered.descriptor),
            **classification_dict(answered.result),
        }
        if answered.verdict is not None:
            out["rule_verdict"] = dataclasses.asdict(answered.verdict)
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        print(answered.explanation_text)
    return Exit.ok
