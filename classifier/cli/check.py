"""`classifier check`: validate a ruleset, lint it, and print every finding."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import TYPE_CHECKING, Any

from classifier.cli.options import Exit, add_command, add_rules
from classifier.diagnostic_output import render_github, render_json, render_text
from classifier.errors import Diagnostic, RulesetError
from classifier.source.library import bundled_library
from classifier.text import plural

if TYPE_CHECKING:
    from classifier.engine.ruleset import Ruleset

EXIT_OK = Exit.ok
EXIT_ERRORS = Exit.failed
EXIT_STRICT_WARNINGS = Exit.strict
EXITS = {
    Exit.ok: "the ruleset is valid (lint warnings alone do not fail it)",
    Exit.failed: "the ruleset has errors",
    Exit.strict: "the ruleset is valid but has lint warnings",
}


def add_parser(sub: Any) -> None:
    p = add_command(
        sub,
        "check",
        help="validate and lint a ruleset folder",
        description="Report every error and lint warning in a ruleset, sorted by file and "
        "line, as file:line:col: code: message. Warnings fail the check only with --strict.",
        exits=EXITS,
    )
    p.add_argument("--strict", action="store_true", help="fail (exit 3) on lint warnings")
    p.add_argument(
        "--format",
        choices=("text", "json", "github"),
        default="text",
        help="text for people, json for tools, github for workflow annotations",
    )
    add_rules(p, default=None)
    p.add_argument(
        "rules_dir", nargs="?", metavar="RULES_DIR", help="the same as --rules DIR, shorter"
    )
    p.set_defaults(run=run, parser=p)


def run(args: argparse.Namespace) -> int:
    from classifier.engine.compiler import load_ruleset  # the compiler when it runs, not to parse
    from classifier.lint.checks import lint_report

    if args.rules_dir is not None and args.rules is not None:
        args.parser.error("name the ruleset folder once: RULES_DIR or --rules DIR")
    args.rules = args.rules_dir or args.rules or bundled_library()
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
        about["overridden"] = [
            {"rule": o.rule_id, "location": str(o.location), "replaced": str(o.replaced)}
            for o in ruleset.overridden
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
    """For a layered ruleset: what it builds on, which base rules it turned off and which
    it replaced with its own."""
    from classifier.source.display import shown_source

    if len(ruleset.layers) < 2:
        return
    for layer in ruleset.layers[1:]:
        shown = shown_source(layer.source)
        print(f"base: {layer.name} {layer.version} ({layer.digest[:19]}) {shown}")
    for d in ruleset.disabled:
        print(f"{d.location}: disabled {d.rule_id}: {d.reason}")
    for o in ruleset.overridden:
        print(f"{o.location}: overrides {o.rule_id} (the base's at {o.replaced})")


def _summary(fmt: str, line: str) -> None:
    """The closing line: on stdout after text, on stderr when stdout holds JSON."""
    print(line, file=sys.stderr if fmt == "json" else sys.stdout)


def _print(fmt: str, diagnostics: list[Diagnostic], summary: dict[str, Any]) -> None:
    if fmt == "json":
        print(render_json(diagnostics, summary))
    elif diagnostics:
        print(render_github(diagnostics) if fmt == "github" else render_text(diagnostics))
