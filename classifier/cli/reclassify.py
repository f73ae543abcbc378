"""`classifier reclassify`: classify a table of stored failures again, or replay two rulesets.

    classifier reclassify runs.parquet -o runs-classified.parquet        # the bundled library
    classifier reclassify --rules rules/ runs.parquet -o runs-classified.parquet
    classifier reclassify --base main --head rules runs.parquet          # what would change
    classifier reclassify --engine spark --master spark://host:7077 ...  # the same on Spark

Input is Parquet (files or folders of them) or JSON Lines (a line is a
descriptor or an object with a `descriptor` key, as `classifier diff`
reads); the descriptor columns are found as `classifier.batch.arrow`
infers them, or as --descriptor-column, --json-column, --flat and
--column say. The output (Parquet or JSON Lines, by its suffix; a folder
of part files from Spark) has every input column and the answer columns.

Exit status: 0 when every row was classified (or compared); 1 when some rows
were bad (they are in the output with the `error` column, the first few
printed), or with --require-version-bump when something changed and the
ruleset version did not; 2 when it could not run (a ruleset invalid, an input
missing or of the wrong columns, Spark unable to start). A replay exits as
`classifier diff` does: bad rows are 2.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from classifier.cli.diff import FORMATS
from classifier.cli.options import Exit, add_command, add_rules
from classifier.source.library import bundled_library

EXIT_OK, EXIT_BAD_ROWS, EXIT_INVALID = 0, 1, 2


def add_parser(sub: Any) -> None:
    p = add_command(
        sub,
        "reclassify",
        help="classify a Parquet or JSON Lines table again, or replay two rulesets over it",
        description="Classify every row of a table of descriptors (Parquet or JSON Lines) and "
        "write it with the answer columns added, on every core of this machine or on Spark; "
        "with --base and --head, compare two rulesets over it instead and print the report "
        "`classifier diff` prints.",
        exits={
            Exit.ok: "every row was classified (or compared)",
            Exit.failed: "some rows were bad (they are in the output with the error column), "
            "or --require-version-bump found a change without a new version",
            Exit.invalid: "it could not run: a ruleset invalid, an input missing or of the "
            "wrong columns, Spark unable to start",
        },
    )
    p.add_argument(
        "inputs", nargs="+", metavar="INPUT", help="Parquet or JSON Lines files or folders"
    )
    add_rules(p, what="the ruleset to classify with", default=None)
    p.add_argument("-o", "--output", metavar="OUT", help="where to write (.parquet or .jsonl)")
    p.add_argument(
        "--digest",
        metavar="SHA256",
        help="refuse to run unless the ruleset's digest is this (pin a second backfill to the "
        "first one's ruleset)",
    )
    p.add_argument("--base", metavar="OLD", help="replay: the ruleset before (folder or git rev)")
    p.add_argument("--head", metavar="NEW", help="replay: the ruleset after")
    p.add_argument("--format", choices=FORMATS, default="text")  # a replay prints what diff prints
    p.add_argument(
        "--examples",
        type=int,
        default=5,
        metavar="N",
        help="replay: list N descriptors per rule-to-rule change (default 5; 0 for none)",
    )
    p.add_argument("--require-version-bump", action="store_true")
    p.add_argument("--engine", choices=("local", "spark"), default="local")  # batch.jobs.ENGINES
    p.add_argument(
        "--workers", type=int, metavar="N", help="local: worker processes (default: every core)"
    )
    p.add_argument(
        "--master",
        metavar="URL",
        help="spark: the master URL (default: spark-submit's, else local[*])",
    )
    p.add_argument(
        "--conf", action="append", default=[], metavar="KEY=VALUE", help="spark: a setting"
    )
    p.add_argument("--batch-rows", type=int, default=65_536, metavar="N")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--descriptor-column", metavar="COL", help="a struct or JSON column")
    where.add_argument("--json-column", metavar="COL", help="a column of JSON descriptors")
    where.add_argument("--flat", action="store_true", help="a column per field (see --column)")
    p.add_argument(
        "--column",
        action="append",
        default=[],
        metavar="FIELD=COL",
        help="with --flat: read FIELD from column COL (default: the column named as the field)",
    )
    p.add_argument("--prefix", default="", help="put this before every answer column's name")
    p.add_argument("--where", metavar="COL", help="name rows in reports by this column")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        print(
            "classifier reclassify: needs pyarrow: pip install 'errorclass-classifier[arrow]'",
            file=sys.stderr,
        )
        return EXIT_INVALID
    from classifier.batch.arrow import BatchSchemaError, NoDescriptorColumnError
    from classifier.batch.files import InputError
    from classifier.batch.pin import RulesetPinError
    from classifier.errors import RulesetError
    from classifier.regress.revision import RevisionError

    replay = args.base is not None or args.head is not None
    problem = _usage(args, replay)
    if problem:
        print(f"classifier reclassify: {problem}", file=sys.stderr)
        return EXIT_INVALID
    try:
        with tempfile.TemporaryDirectory(prefix="classifier-reclassify-") as tmp:
            return _replay(args, Path(tmp)) if replay else _classify(args)
    except RulesetError as exc:
        print(f"classifier reclassify: the ruleset is invalid:\n{exc.render()}", file=sys.stderr)
    except NoDescriptorColumnError as exc:
        print(
            f"classifier reclassify: {exc}\n  name the columns: --flat --column type=COL "
            "(and --column message=COL, ... for the other fields), or --descriptor-column COL "
            "/ --json-column COL for one column that holds the whole descriptor",
            file=sys.stderr,
        )
    except (
        BatchSchemaError,
        InputError,
        RulesetPinError,
        RevisionError,
        OSError,
        ValueError,
    ) as exc:
        print(f"classifier reclassify: {exc}", file=sys.stderr)
    return EXIT_INVALID


def _usage(args: argparse.Namespace, replay: bool) -> str:
    if replay:
        if args.base is None or args.head is None:
            return "a replay needs both --base and --head"
        if args.rules or args.output:
            return "--rules and --output classify; --base and --head replay: give one or the other"
    elif not args.output:
        return "give --output (or --base and --head to replay)"
    if args.column and not args.flat:
        return "--column goes with --flat"
    if args.workers is not None and args.workers < 1:
        return "--workers must be at least 1"
    if args.examples < 0:
        return "--examples must be 0 or more"
    return ""


def _options(args: argparse.Namespace) -> tuple[Any, Any]:
    """How to run and where the descriptors are, as the flags say."""
    from classifier.batch.jobs import Columns, Run

    run = Run(
        engine=args.engine,
        workers=args.workers,
        batch_rows=args.batch_rows,
        master=args.master,
        conf=dict(_pair(c, "--conf") for c in args.conf),
    )
    columns = Columns(
        descriptor=args.descriptor_column,
        json=args.json_column,
        flat=args.flat,
        fields=dict(_pair(c, "--column") for c in args.column),
    )
    return run, columns


def _pair(text: str, flag: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key or not value:
        raise ValueError(f"{flag} {text!r}: write NAME=VALUE")
    return key, value


def _classify(args: argparse.Namespace) -> int:
    from classifier.batch.jobs import pin_for, reclassify

    run, columns = _options(args)
    pin, ruleset = pin_for(args.rules or bundled_library(), run, digest=args.digest)
    print(
        f"classifier reclassify: {ruleset.name} {ruleset.version} ({ruleset.digest})",
        file=sys.stderr,
    )
    summary = reclassify(
        args.inputs,
        args.output,
        pin,
        run=run,
        columns=columns,
        prefix=args.prefix,
        where_column=args.where,
    )
    folder = "/" if run.engine == "spark" else ""
    print(f"classifier reclassify: {summary.rows} rows to {args.output}{folder}", file=sys.stderr)
    return _bad_rows(summary.bad, summary.errors)


def _bad_rows(bad: int, errors: list[str]) -> int:
    if not bad:
        return EXIT_OK
    for error in errors:
        print(error, file=sys.stderr)
    more = f" (the first {len(errors)} above)" if len(errors) < bad else ""
    print(
        f"classifier reclassify: {bad} bad rows{more}: written with the error column, "
        "not classified",
        file=sys.stderr,
    )
    return EXIT_BAD_ROWS


def _replay(args: argparse.Namespace, tmp: Path) -> int:
    from classifier.batch.jobs import pin_for, replay
    from classifier.regress.diff import RENDERERS
    from classifier.regress.revision import resolve_pair

    run, columns = _options(args)
    base_spec, head_spec = resolve_pair(args.base, args.head, tmp)
    base_pin, _ = pin_for(base_spec.folder, run, label=base_spec.label)
    head_pin, _ = pin_for(head_spec.folder, run, label=head_spec.label)
    result = replay(
        args.inputs,
        base_pin,
        head_pin,
        base_label=base_spec.label,
        head_label=head_spec.label,
        run=run,
        columns=columns,
        examples=args.examples,
        where_column=args.where,
    )
    diff = result.diff
    print(RENDERERS[args.format](diff))
    for error in result.errors:
        print(error, file=sys.stderr)
    if result.bad:
        print(f"classifier reclassify: {result.bad} bad rows", file=sys.stderr)
        return EXIT_INVALID
    if diff.total == 0:
        print("classifier reclassify: the input is empty: nothing was compared", file=sys.stderr)
        return EXIT_INVALID
    if args.require_version_bump and (why := diff.unbumped()) is not None:
        print(f"classifier reclassify: {why}", file=sys.stderr)
        return EXIT_BAD_ROWS
    return EXIT_OK
