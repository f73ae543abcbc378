"""The bundled library's shape: every class produced, ids that say where a rule lives, reasons given."""

from __future__ import annotations

from pathlib import Path

from classifier import ErrorClass, Ruleset
from tests.support import BUNDLED_RULES

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
    rel = Path(rule_file).resolve().relative_to(BUNDLED_RULES).as_posix()
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
