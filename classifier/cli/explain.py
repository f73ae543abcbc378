"""`classifier explain`: why a descriptor gets its class, for a rule author at a terminal.

The same explanation the gRPC `explain` flag returns: the engine run with a
tracer. Exit status: 0 with an answer (Unknown included), 1 when the
ruleset is invalid, 2 when the descriptor is.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from classifier.answer import classification_dict
from classifier.cli.inputs import ruleset_and_descriptor
from classifier.engine.explain import explain, render_explanation
from classifier.source.descriptor_file import descriptor_dict


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "explain",
        help="show which rules matched a descriptor and why the winner won",
        description="Classify one descriptor (YAML or JSON) and explain the answer: the "
        "normalised descriptor, every rule that matched with the conditions that held, the "
        "precedence step that decided, and for Unknown the rules that came closest.",
    )
    p.add_argument("--rules", default="rules", help="ruleset folder (default: rules)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("descriptor", metavar="FILE", help="descriptor file, or - for stdin")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    loaded = ruleset_and_descriptor(args.rules, args.descriptor)
    if isinstance(loaded, int):
        return loaded
    ruleset, descriptor = loaded
    result = explain(ruleset, descriptor)
    if args.format == "json":
        out = {"descriptor": descriptor_dict(descriptor), **classification_dict(result)}
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        print(render_explanation(descriptor, result))
    return 0
