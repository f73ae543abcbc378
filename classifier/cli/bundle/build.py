"""`classifier bundle build`: compile a ruleset and write its bundle."""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path
from typing import Any

from classifier.cli.bundle.common import Failure, fail
from classifier.cli.options import Exit, add_command, add_rules
from classifier.diagnostic_output import render_text
from classifier.errors import RulesetError

EXITS = {
    Exit.ok: "the bundle is written",
    Exit.failed: "the ruleset has errors (printed as `classifier check` prints them)",
    Exit.invalid: "the bundle cannot be written",
}


def add_parser(sub: Any) -> None:
    p = add_command(
        sub,
        "build",
        help="compile a ruleset into a bundle (JSON every client evaluates in process)",
        description="Compile the ruleset and write its bundle: every enabled rule after "
        "layering with its conditions, precedence key and answer, the class defaults and "
        "the Unknown answers, as JSON (classifier/schemas/bundle.schema.json). The same "
        "ruleset always gives the same bytes.",
        exits=EXITS,
    )
    add_rules(p)
    p.add_argument("-o", "--out", type=Path, required=True, metavar="FILE", help="the bundle")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from classifier.bundle import bundle_bytes
    from classifier.engine.compiler import load_ruleset

    try:
        ruleset = load_ruleset(args.rules)
    except RulesetError as exc:
        print(render_text(exc.diagnostics), file=sys.stderr)
        return Exit.failed
    data = bundle_bytes(ruleset)
    try:
        args.out.write_bytes(data)
    except OSError as exc:
        fail("build", str(args.out), Failure.unreadable_file, exc.strerror or str(exc))
        return Exit.invalid
    print(
        f"{args.out}: {ruleset.name} {ruleset.version} ({ruleset.digest}), "
        f"{len(ruleset.rules)} rules, {len(data):,} bytes, "
        f"sha256:{hashlib.sha256(data).hexdigest()}"
    )
    return Exit.ok
