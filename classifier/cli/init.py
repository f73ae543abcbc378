"""`classifier init`: a team's ruleset on top of the bundled library, ready to grow.

It writes the smallest layered ruleset that passes the CI gate as it stands
(`check --strict`, `test --coverage --min-coverage 100`): a manifest whose
`base:` names the library, one example rule and the case that proves it,
each file starting with the modeline that points an editor at its JSON
Schema, and those schemas in `.schemas/` beside them. A newcomer edits a
ruleset that works instead of assembling one from the reference. It never
overwrites a file: a scaffold written over someone's rules would lose them.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any

from classifier.cli.options import Exit, add_command
from classifier.cli.schema import SCHEMAS, copy_schemas, file_name
from classifier.source.library import LIBRARY_NAME

SCHEMA_FOLDER = ".schemas"
"""Where, inside the new ruleset, the modelines find the schemas."""
FIRST_VERSION = "0.1.0"
CONSOLE_ADDRESS = "127.0.0.1:9464"
"""The side port the next steps serve on (`make run`'s too): without `--metrics-addr` a
server has no console, no /metrics and no live Unknown sample."""
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
"""A ruleset name that is also a rule id's prefix and a plain YAML string."""

MANIFEST = """\
# yaml-language-server: $schema=.schemas/manifest.schema.json
# {name}'s own rules, on top of the bundled library: every library rule takes part, a rule
# here as specific as a library rule wins the tie, and `disable:` turns library rules off.
name: {name}
version: {version}
description: {name}'s rules for its own exceptions, on top of the bundled library.
base:
  - library: {base}
# disable:
#   - rule: python.openai.api-error
#     reason: our gateway re-raises these; {name}.gateway-error decides them
"""
RULES = """\
# yaml-language-server: $schema=.schemas/rules.schema.json
rules:
  - id: {name}.budget-exhausted
    description: >-
      An example to replace: our runtime's own exception when a run has spent its
      token budget. The library cannot know this type; without this rule it is Unknown.
    when: {{type: {name}.agent.BudgetExhausted}}
    class: BudgetExceeded
"""
CASES = """\
# yaml-language-server: $schema=.schemas/cases.schema.json
cases:
  - note: {name}/a run that spent its token budget is BudgetExceeded
    descriptor:
      type: {name}.agent.BudgetExhausted
      supertypes: [{name}.agent.AgentError, Exception]
      origin: runtime
    want: {{class: BudgetExceeded, rule: {name}.budget-exhausted}}
"""
FILES = {"ruleset.yaml": MANIFEST, "rules.yaml": RULES, "rules.cases.yaml": CASES}
"""The files `init` writes, by name inside the folder (the README shows them)."""

EXITS = {
    Exit.ok: "the ruleset was written",
    Exit.invalid: "a file it would write exists, the folder cannot be written, or the name "
    "is not a ruleset name",
}


def add_parser(sub: Any) -> None:
    p = add_command(
        sub,
        "init",
        help="start a ruleset of your own on top of the bundled library",
        description="Write a ruleset into DIR that builds on the bundled library: "
        "ruleset.yaml with `base:`, one example rule (rules.yaml) and its case "
        "(rules.cases.yaml), each with the modeline of its JSON Schema, and the schemas in "
        f"DIR/{SCHEMA_FOLDER}. It passes `check --strict` and `test --coverage "
        "--min-coverage 100` as written. Existing files are never overwritten.",
        exits=EXITS,
    )
    p.add_argument(
        "--base",
        choices=(LIBRARY_NAME,),
        default=LIBRARY_NAME,
        help="the bundled library to build on (default: %(default)s)",
    )
    p.add_argument(
        "--name", help="the ruleset's name, and its rule ids' prefix (default: DIR's name)"
    )
    p.add_argument("dir", type=Path, metavar="DIR", help="the folder to write (made if missing)")
    p.set_defaults(run=run)


def scaffold(name: str, base: str = LIBRARY_NAME) -> dict[str, str]:
    """The files of a new ruleset called name on the library base: path → text."""
    return {
        path: text.format(name=name, base=base, version=FIRST_VERSION)
        for path, text in FILES.items()
    }


def planned(folder: Path, name: str, base: str) -> dict[Path, str | None]:
    """Every file init writes: the scaffold's texts, and the schemas (None: copied)."""
    files: dict[Path, str | None] = {
        folder / path: text for path, text in scaffold(name, base).items()
    }
    files.update({folder / SCHEMA_FOLDER / file_name(s): None for s in SCHEMAS})
    return files


def run(args: argparse.Namespace) -> int:
    folder: Path = args.dir
    name = args.name if args.name is not None else folder.resolve().name
    if not NAME.fullmatch(name):
        return _refuse(
            f"{name!r} is not a ruleset name (a letter, then letters, digits, - or _): "
            "give one with --name"
        )
    files = planned(folder, name, args.base)
    taken = [path for path in files if os.path.lexists(path)]
    if taken:
        one = len(taken) == 1
        return _refuse(
            f"{', '.join(map(str, taken))} already exist{'s' if one else ''}; init never "
            f"overwrites a file: move {'it' if one else 'them'} away, or init another folder"
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for path, text in files.items():
            if text is not None:
                with path.open("x", encoding="utf-8") as out:
                    out.write(text)
        copy_schemas(folder / SCHEMA_FOLDER)
    except OSError as exc:
        return _refuse(str(exc))
    print(f"wrote {name} {FIRST_VERSION}, on library:{args.base}, into {folder}:")
    for path in files:
        if files[path] is not None:
            print(f"  {path}")
    print(f"  {folder / SCHEMA_FOLDER}/ ({len(SCHEMAS)} JSON Schemas, for editors)")
    print("next, replace the example rule and its case with your own, then:")
    print(f"  classifier check --strict {folder}")
    print(f"  classifier test --coverage --min-coverage 100 {folder}")
    print(f"  classifier serve --rules {folder} --metrics-addr {CONSOLE_ADDRESS}")
    print(f"and open the operator console at http://{CONSOLE_ADDRESS}/console")
    return Exit.ok


def _refuse(message: str) -> int:
    print(f"classifier init: {message}", file=sys.stderr)
    return Exit.invalid
