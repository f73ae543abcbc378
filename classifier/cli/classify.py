"""`classifier classify`: classify one descriptor from a file or stdin, for people at a terminal."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from classifier.compiler import load_ruleset
from classifier.descriptor_io import read_descriptor
from classifier.engine import classify
from classifier.errors import DescriptorError, RulesetError
from classifier.explain import (
    classification_dict,
    explain,
    render_classification,
    render_explanation,
)


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
    result = explain(ruleset, descriptor) if args.explain else classify(ruleset, descriptor)
    if args.format == "json":
        print(json.dumps(classification_dict(result), indent=2))
    elif args.explain:
        print(render_explanation(descriptor, result))
    else:
        print(render_classification(result))
    return 0
