"""`classifier check`: validate a ruleset, lint it, and print every finding.

Exit status: 0 when the ruleset is valid (warnings alone do not fail it),
1 when it has errors, 3 when `--strict` is given and there are warnings.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any

from classifier.engine.compiler import load_ruleset
from classifier.engine.ruleset import Ruleset
from classifier.errors import Diagnostic, RulesetError
from classifier.lint.checks import lint_report
from classifier.report import render_github, render_json, render_text
from classifier.text import plural

EXIT_OK = 0
EXIT_ERRORS = 1
EXIT_STRICT_WARNINGS = 3


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "check",
        help="validate and lint a ruleset folder",
        description="Report every error (exit 1) and lint warning in a ruleset, sorted by "
        "file and line. Warnings fail the check only with --strict (exit 3).",
    )
    p.add_argument("--strict", action="store_true", help="fail (exit 3) on lint warnings")
    p.add_argument(
        "--format",
        choices=("text", "json", "github"),
        default="text",
        help="text for people, json for tools, github for workflow annotations",
    )
    p.add_argument("rules", metavar="RULES_DIR", help="ruleset folder")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        ruleset = load_ruleset(args.rules)
    except RulesetError as exc:
        errors = exc.diagnostics
        _print(args.format, errors, {"ok": False, "errors": len(errors), "warnings": 0})
        _summary(args.format, f"failed: {args.rules}: {plural(len(errors), 'error')}")
        return EXIT_ERRORS
    report = lint_report(ruleset)
    warnings = report.warnings
    failed = args.strict and bool(warnings)
    about: dict[str, Any] = {
        "name": ruleset.name,
        "version": ruleset.version,
        "digest": ruleset.digest,
        "rules": len(ruleset.rules),
    }
    summary = {
        "ok": not failed,
        "errors": 0,
        "warnings": len(warnings),
        "suppressed": report.suppressed,
        "ruleset": about,
    }
    if len(ruleset.layers) > 1:
        about["layers"] = [dataclasses.asdict(layer) for layer in ruleset.layers]
        about["disabled"] = [
            {"rule": d.rule_id, "reason": d.reason, "location": str(d.location)}
            for d in ruleset.disabled
        ]
    _print(args.format, warnings, summary)
    if args.format == "text":
        _print_stack(ruleset)
    shown = plural(len(warnings), "warning") if warnings else "no warnings"
    line = (
        f"{ruleset.name} {ruleset.version}: {plural(len(ruleset.rules), 'rule')} "
        f"({ruleset.digest[:19]}), {shown}"
    )
    if report.suppressed:
        line += f" ({report.suppressed} silenced by lint_ignore)"
    if failed:
        _summary(args.format, f"failed: {line}, fatal with --strict")
        return EXIT_STRICT_WARNINGS
    _summary(args.format, f"ok: {line}")
    return EXIT_OK


def _print_stack(ruleset: Ruleset) -> None:
    """For a layered ruleset: what it builds on, and which base rules it turned off."""
    if len(ruleset.layers) < 2:
        return
    for layer in ruleset.layers[1:]:
        print(f"base: {layer.name} {layer.version} ({layer.digest[:19]}) {layer.source}")
    for d in ruleset.disabled:
        print(f"{d.location}: disabled {d.rule_id}: {d.reason}")


def _summary(fmt: str, line: str) -> None:
    """The closing line: on stdout after text, on stderr when stdout holds JSON."""
    print(line, file=sys.stderr if fmt == "json" else sys.stdout)


def _print(fmt: str, diagnostics: list[Diagnostic], summary: dict[str, Any]) -> None:
    if fmt == "json":
        print(render_json(diagnostics, summary))
    elif diagnostics:
        print(render_github(diagnostics) if fmt == "github" else render_text(diagnostics))
