"""`classifier explain`: why a descriptor gets its class, for a rule author at a terminal.

The same explanation the gRPC `explain` flag returns: the engine run with a
tracer. Exit status: 0 with an answer (Unknown included), 1 when the
ruleset is invalid, 2 when the descriptor is.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from classifier.compiler import load_ruleset
from classifier.descriptor_io import read_descriptor
from classifier.errors import DescriptorError, RulesetError
from classifier.explain import classification_dict, descriptor_dict, explain, render_explanation


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
    try:
        ruleset = load_ruleset(args.rules)
        descriptor = read_descriptor(args.descriptor)
    except RulesetError as exc:
        print(exc.render(), file=sys.stderr)
        return 1
    except DescriptorError as exc:
        for violation in exc.violations:
            print(f"{args.descriptor}: {violation}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"classifier: {exc}", file=sys.stderr)
        return 2
    result = explain(ruleset, descriptor)
    if args.format == "json":
        out = {"descriptor": descriptor_dict(descriptor), **classification_dict(result)}
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        print(render_explanation(descriptor, result))
    return 0
