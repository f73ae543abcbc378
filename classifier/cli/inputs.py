"""What `classify` and `explain` both read: a ruleset folder and one descriptor file."""

from __future__ import annotations

import sys

from classifier.descriptor import Descriptor
from classifier.engine.compiler import load_ruleset
from classifier.engine.ruleset import Ruleset
from classifier.errors import DescriptorError, RulesetError
from classifier.source.descriptor_file import read_descriptor

EXIT_BAD_RULESET = 1
EXIT_BAD_DESCRIPTOR = 2


def ruleset_and_descriptor(rules: str, path: str) -> tuple[Ruleset, Descriptor] | int:
    """Both, or the exit status after printing to stderr why not (1: ruleset, 2: descriptor)."""
    try:
        return load_ruleset(rules), read_descriptor(path)
    except RulesetError as exc:
        print(exc.render(), file=sys.stderr)
        return EXIT_BAD_RULESET
    except DescriptorError as exc:
        for violation in exc.violations:
            where = "" if violation.location is not None else f"{path}: "
            print(f"{where}{violation}", file=sys.stderr)
        return EXIT_BAD_DESCRIPTOR
    except OSError as exc:
        print(f"classifier: {exc}", file=sys.stderr)
        return EXIT_BAD_DESCRIPTOR
