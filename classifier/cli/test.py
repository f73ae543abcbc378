"""`classifier test`: run case files against their rulesets, the way the server would answer.

A CI job that silently ran nothing is the classic trap, so "no case ran" is
never a success.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from classifier.cli.options import Exit, add_command, add_rules
from classifier.source.library import bundled_library

if TYPE_CHECKING:
    from classifier.regress.runner import Report

FORMATS = ("text", "json", "github")
"""`--format`'s choices: the keys of classifier.regress.report.RENDERERS (a test checks),
named here so that parsing the command line does not import the runner."""

EXIT_OK, EXIT_FAILED, EXIT_INVALID = Exit.ok, Exit.failed, Exit.invalid
EXITS = {
    Exit.ok: "every case passed (todo cases may still fail)",
    Exit.failed: "a case failed, a todo case passes, or coverage is below --min-coverage",
    Exit.invalid: "no case ran, or a case, a case file or a ruleset is invalid, "
    "or a path does not exist",
}


def add_parser(sub: Any) -> None:
    p = add_command(
        sub,
        "test",
        help="run regression case files (*.cases.yaml) against their rulesets",
        description="Run every case file found under PATH... through the production loader "
        "and engine and report each case that does not get the answer it wants. Without "
        "PATH, the cases of the --rules folder (default: the bundled library's).",
        exits=EXITS,
    )
    add_rules(
        p,
        what="the ruleset whose cases run when no PATH is given, and the one for case "
        "files that name none and sit in no ruleset folder",
        default=None,
    )
    p.add_argument(
        "--run", dest="run_filter", metavar="REGEX", help="run only cases whose note matches REGEX"
    )
    p.add_argument("--junit", metavar="FILE", help="also write JUnit XML to FILE")
    p.add_argument(
        "--coverage",
        action="store_true",
        help="report rules no case exercised and the confusion matrix (want vs got)",
    )
    p.add_argument(
        "--min-coverage",
        type=float,
        metavar="N",
        help="fail when fewer than N percent of a ruleset's rules decide a case",
    )
    p.add_argument("--format", choices=FORMATS, default="text")
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="case files, or folders to search for *.cases.yaml (a ruleset folder runs its "
        "own; default: the --rules folder)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from classifier.regress.cases import find_case_files
    from classifier.regress.junit import write_junit
    from classifier.regress.report import RENDERERS
    from classifier.regress.runner import run_cases

    try:
        pattern = re.compile(args.run_filter) if args.run_filter else None
    except re.error as exc:
        print(f"classifier test: --run: invalid regular expression: {exc}", file=sys.stderr)
        return EXIT_INVALID
    try:
        paths = args.paths or [args.rules or bundled_library()]
        files = find_case_files(Path(p) for p in paths)
    except FileNotFoundError as exc:
        print(f"classifier test: {exc}", file=sys.stderr)
        return EXIT_INVALID
    report = run_cases(files, rules=Path(args.rules) if args.rules else None, run=pattern)
    coverage = args.coverage or args.min_coverage is not None
    print(RENDERERS[args.format](report, coverage=coverage))
    if args.junit:
        write_junit(report, Path(args.junit))
    return _exit_status(report, args.min_coverage, files=len(files))


def _exit_status(report: Report, min_coverage: float | None, *, files: int) -> int:
    from classifier.regress.runner import Status

    if report.ran == 0:
        where = "no case file found" if files == 0 else "no case ran"
        print(f"classifier test: {where}: nothing was tested", file=sys.stderr)
        return EXIT_INVALID
    if report.problems or report.counts()[Status.error]:
        return EXIT_INVALID
    code = EXIT_OK if report.ok else EXIT_FAILED
    if min_coverage is not None:
        for c in report.coverage():
            if c.percent < min_coverage:
                print(
                    f"classifier test: coverage of {c.name} ({c.ruleset}) is {c.percent:.1f}%, "
                    f"below --min-coverage {min_coverage:g}",
                    file=sys.stderr,
                )
                code = EXIT_FAILED
    return code
