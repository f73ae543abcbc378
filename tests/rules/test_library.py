"""The bundled library's shape: every class produced, ids that say where a rule lives, reasons given.

The cases themselves run through the regress runner (`pytest rules/`, and
`classifier test --coverage --min-coverage 100 rules/` in tests/regress); the
tests here check what the runner does not: that each rule is the one a case
names, and that the deliberate Unknowns are written down.
"""

from __future__ import annotations

from classifier import ErrorClass, Ruleset
from classifier.regress.cases import Case, find_case_files, read_case_file
from tests.support import BUNDLED_RULES

NOT_RULE_FILES = {"ruleset.yaml", "actions.yaml"}

ID_PREFIX = {
    "python": "python.",
    "java": "java.",
    "dotnet": "dotnet.",
    "go": "go.",
    "node": "node.",
    "providers": "api.",
    "protocol/http.yaml": "http.",
    "protocol/grpc.yaml": "grpc.",
    "origins.yaml": "origin.",
}


def _home(rule_file: str) -> str:
    rel = rule_file.removeprefix("library:default/")  # the library's files, wherever it is
    return next(key for key in ID_PREFIX if rel == key or rel.startswith(key + "/"))


def test_every_class_but_unknown_is_produced_by_some_rule(bundled: Ruleset) -> None:
    """A class no rule produces could never be answered."""
    produced = {r.outcome.error_class for r in bundled.rules}
    assert produced == set(ErrorClass) - {ErrorClass.Unknown}


def test_rule_ids_start_with_the_ecosystem_of_their_file(bundled: Ruleset) -> None:
    """`python.openai.rate-limited` lives under python/, `api.openai.*` under providers/."""
    misplaced = [
        f"{r.id} in {r.location.file}"
        for r in bundled.rules
        if not r.id.startswith(ID_PREFIX[_home(r.location.file)])
    ]
    assert not misplaced


def test_every_rule_says_why(bundled: Ruleset) -> None:
    """A rule's description is the reason a reviewer reads; none may be missing."""
    assert [r.id for r in bundled.rules if len(r.description) < 20] == []


def test_every_language_has_rules(bundled: Ruleset) -> None:
    """The library covers the five runtimes' languages, each from its own folder."""
    counts = {
        lang: sum(r.id.startswith(f"{lang}.") for r in bundled.rules)
        for lang in ("python", "java", "dotnet", "go", "node")
    }
    assert all(n >= 10 for n in counts.values()), counts


def _bundled_cases() -> list[Case]:
    files = [read_case_file(p) for p in find_case_files([BUNDLED_RULES])]
    assert all(not f.diagnostics and not f.bad_cases for f in files)
    return [case for f in files for case in f.cases]


def test_every_rule_file_has_its_cases_beside_it() -> None:
    """`python/openai.yaml` has `python/openai.cases.yaml`, so an author finds both together."""
    rule_files = [
        p
        for p in BUNDLED_RULES.rglob("*.yaml")
        if p.name not in NOT_RULE_FILES and not p.name.endswith(".cases.yaml")
    ]
    assert [p for p in rule_files if not p.with_suffix(".cases.yaml").is_file()] == []


def test_every_rule_is_named_by_a_case(bundled: Ruleset) -> None:
    """Each rule has a case whose `want.rule` names it (the runner checks that it decides)."""
    named = {c.want.rule for c in _bundled_cases() if c.want.rule and not c.todo}
    assert sorted(r.id for r in bundled.rules if r.id not in named) == []


def test_deliberate_unknowns_are_written_down() -> None:
    """Negative cases pin what the library leaves Unknown, naming no rule."""
    unknown = [c for c in _bundled_cases() if c.want.error_class is ErrorClass.Unknown]
    assert len(unknown) >= 40
    assert all(not c.want.rule for c in unknown)
