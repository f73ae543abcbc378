"""`classifier classify`: classify one descriptor from a file or stdin, for people at a terminal."""

from __future__ import annotations

import argparse
import json
from typing import Any

from classifier.answer import classification_dict
from classifier.cli.inputs import ruleset_and_descriptor
from classifier.engine.evaluate import classify
from classifier.engine.explain import explain, render_classification, render_explanation


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "classify", help="classify one descriptor (YAML or JSON)"
    )
    p.add_argument("--rules", default="rules", help="ruleset folder (default: rules)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--explain", action="store_true", help="also show which rules matched and why")
    p.add_argument("descriptor", metavar="FILE", help="descriptor file, or - for stdin")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    loaded = ruleset_and_descriptor(args.rules, args.descriptor)
    if isinstance(loaded, int):
        return loaded
    ruleset, descriptor = loaded
    result = explain(ruleset, descriptor) if args.explain else classify(ruleset, descriptor)
    if args.format == "json":
        print(json.dumps(classification_dict(result), indent=2))
    elif args.explain:
        print(render_explanation(descriptor, result))
    else:
        print(render_classification(result))
    return 0
