"""`classifier check`: validate a ruleset and print every diagnostic."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from classifier.compiler import load_ruleset
from classifier.errors import RulesetError


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("check", help="validate a ruleset folder")
    p.add_argument("rules", metavar="RULES_DIR", help="ruleset folder")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        ruleset = load_ruleset(args.rules)
    except RulesetError as exc:
        print(exc.render())
        print(f"{len(exc.diagnostics)} error(s)", file=sys.stderr)
        return 1
    print(
        f"ok: {ruleset.name} {ruleset.version}: {len(ruleset.rules)} rules ({ruleset.digest[:19]})"
    )
    return 0
