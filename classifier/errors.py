"""The project's errors.

    ClassifierError                  root of everything this package raises
    ├── RulesetError                 a ruleset could not be loaded or compiled
    │                                (carries every Diagnostic, not just the first)
    ├── DescriptorError              a descriptor is malformed (carries FieldViolations)
    ├── RevisionError                regress.revision: a ruleset spec names neither a
    │                                folder nor a git tree
    ├── BatchSchemaError             batch.mappings: a batch's columns do not fit the mapping
    │   └── NoDescriptorColumnError  batch.mappings: no column looks like a descriptor
    ├── InputError                   batch.files: a file cannot be read or written
    ├── RulesetPinError              batch.pin: a worker loaded another ruleset than the
    │                                digest its job is pinned to
    └── SparkSetupError              batch.spark: Spark cannot start here (no Java runtime)

The subclasses outside this module live beside what raises them; a test
checks this tree names every one. The client's errors (`DescriptorError`,
`ServiceError`, `Unclassified`) are its own, in `errorclass_client.errors`:
the client is a distribution apart and imports nothing of this package.

A `Diagnostic` is one finding about a rule file, with a stable `code` from
the registry in `classifier.codes` (`duplicate_rule_id`, `invalid_pattern`,
...) that tools may grep for; the message may change, the code may not.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from classifier.codes import Code
from classifier.location import Location


class Severity(StrEnum):
    error = "error"
    warning = "warning"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding about a ruleset, located in its source."""

    code: Code
    message: str
    location: Location
    rule_id: str = ""
    severity: Severity = Severity.error
    related: tuple[Location, ...] = ()
    witness: str = ""

    def render(self) -> str:
        """`file:line:col: code: message`, with the rule id when there is one.

        A witness follows on its own indented line, `    witness: {...}`, so it
        can be copied whole.
        """
        rule = f' (rule "{self.rule_id}")' if self.rule_id else ""
        prefix = "" if self.severity is Severity.error else f"{self.severity.value}: "
        line = f"{self.location}: {prefix}{self.code}: {self.message}{rule}"
        return f"{line}\n    witness: {self.witness}" if self.witness else line

    def sort_key(self) -> tuple[Location, str, str]:
        return (self.location, self.code, self.message)


def sorted_diagnostics(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Diagnostics in file, line, column order, duplicates removed."""
    return sorted(set(diagnostics), key=Diagnostic.sort_key)


class ClassifierError(Exception):
    """Root of every error this package raises."""


class RulesetError(ClassifierError):
    """A ruleset is invalid; `diagnostics` holds every problem found, sorted."""

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics = sorted_diagnostics(diagnostics)
        super().__init__(self.render())

    def render(self) -> str:
        return "\n".join(d.render() for d in self.diagnostics)


@dataclass(frozen=True, slots=True)
class FieldViolation:
    """A malformed field of a descriptor, named by its path (`descriptor.causes[1].type`)."""

    field: str
    message: str
    location: Location | None = None
    """Where the field is, when the descriptor was read from a file."""

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location is not None else ""
        return f"{where}{self.field}: {self.message}"


class DescriptorError(ClassifierError):
    """A descriptor is malformed; every violation names the field."""

    def __init__(self, violations: Iterable[FieldViolation]) -> None:
        self.violations = list(violations)
        super().__init__("; ".join(str(v) for v in self.violations))
