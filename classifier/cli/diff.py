"""`classifier diff`: what a rule change reclassifies, replayed over a corpus.

Exit status: 0 when the comparison ran (changes are information, not
failure); 1 when --require-version-bump is given, something changed, and
the ruleset version did not; 2 when it could not run: a ruleset is invalid
or cannot be found, a case file has a bad case, or the corpus is empty.
A JSON Lines line that does not read (a torn last line, not UTF-8, not JSON,
not a descriptor) is skipped and named as `file:line: reason`, and the rest
replays; with --strict it is fatal too (exit 2).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from classifier.cli.options import Exit, add_command
from classifier.errors import RulesetError

FORMATS = ("text", "markdown", "json")
"""`--format`'s choices: the keys of classifier.regress.diff.RENDERERS (a test checks),
named here so that parsing the command line does not import the engine."""

EXIT_OK, EXIT_NOT_BUMPED, EXIT_INVALID = Exit.ok, Exit.failed, Exit.invalid
EXITS = {
    Exit.ok: "the comparison ran (changes are information, not failure)",
    Exit.failed: "--require-version-bump, and classifications changed but the version did not",
    Exit.invalid: "a ruleset is invalid or cannot be found, the corpus has a bad entry, "
    "or it is empty",
}


def add_parser(sub: Any) -> None:
    p = add_command(
        sub,
        "diff",
        help="list the descriptors a ruleset change reclassifies",
        description="Classify a corpus (case files, or JSON Lines of descriptors) under two "
        "rulesets and print every descriptor whose class, effect, action, deciding rule, "
        "retryable flag or Unknown reason changed, grouped by (old class -> new class). "
        "A ruleset is a folder, REV:PATH "
        "(a folder at a git revision, PATH from the repository root), or REV alone (the "
        "other side's folder at that revision).",
        exits=EXITS,
    )
    p.add_argument("--base", required=True, metavar="OLD", help="the ruleset before the change")
    p.add_argument(
        "--head",
        default="rules",
        metavar="NEW",
        help="the ruleset after the change (default: rules)",
    )
    p.add_argument(
        "--require-version-bump",
        action="store_true",
        help="fail when a classification changed but the ruleset version did not",
    )
    p.add_argument("--format", choices=FORMATS, default="text")
    p.add_argument(
        "--examples",
        type=int,
        metavar="N",
        help="list at most N descriptors per rule-to-rule change (default: all); "
        "the counts still cover every one",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="a JSON Lines line that does not read fails the run (default: skipped and named)",
    )
    p.add_argument(
        "corpus",
        nargs="+",
        metavar="CORPUS",
        help="case files, JSON Lines files (.jsonl, .ndjson, .json; - for stdin), or folders",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from classifier.engine.compiler import load_ruleset
    from classifier.regress.corpus import read_corpus
    from classifier.regress.diff import RENDERERS, diff_rulesets
    from classifier.regress.revision import RevisionError, resolve_pair

    try:
        corpus = read_corpus(args.corpus)
    except OSError as exc:
        print(f"classifier diff: {exc}", file=sys.stderr)
        return EXIT_INVALID
    with tempfile.TemporaryDirectory(prefix="classifier-diff-") as tmp:
        try:
            base_spec, head_spec = resolve_pair(args.base, args.head, Path(tmp))
        except RevisionError as exc:
            print(f"classifier diff: {exc}", file=sys.stderr)
            return EXIT_INVALID
        loaded = []
        for side, spec in (("base", base_spec), ("head", head_spec)):
            try:
                loaded.append(load_ruleset(spec.folder))
            except RulesetError as exc:
                print(f"classifier diff: {side} {spec.label} is invalid:", file=sys.stderr)
                print(exc.render(), file=sys.stderr)
                return EXIT_INVALID
        base, head = loaded
    result = diff_rulesets(
        base,
        head,
        corpus.entries,
        base_label=base_spec.label,
        head_label=head_spec.label,
        examples=args.examples,
    )
    print(RENDERERS[args.format](result))
    for error in corpus.errors:
        print(error, file=sys.stderr)
    for skipped in corpus.skipped:
        print(skipped, file=sys.stderr)
    if corpus.skipped:
        print(
            f"classifier diff: {len(corpus.skipped)} corpus lines "
            f"{'refused (--strict)' if args.strict else 'skipped'}",
            file=sys.stderr,
        )
    if corpus.errors:
        print(f"classifier diff: {len(corpus.errors)} bad corpus entries", file=sys.stderr)
        return EXIT_INVALID
    if corpus.skipped and args.strict:
        return EXIT_INVALID
    if result.total == 0:
        print("classifier diff: the corpus is empty: nothing was compared", file=sys.stderr)
        return EXIT_INVALID
    if args.require_version_bump and (why := result.unbumped()) is not None:
        print(f"classifier diff: {why}", file=sys.stderr)
        return EXIT_NOT_BUMPED
    return EXIT_OK
