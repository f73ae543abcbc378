"""The one registry of diagnostic codes.

Every diagnostic this package reports carries a `Code` from this table, as
ruff keeps one table of rule codes: the code is what tools, `lint_ignore`
and CI grep for, so a code, once released, never changes meaning or goes
away (its message may change). Each entry says which stage reports it
(its family), whether it is an error or a lint warning, whether it is
stable yet, and where its documentation is. `tests/test_docs.py` reads this
table to check that every code is documented with a bad example and a fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Code(StrEnum):
    """A diagnostic code; the value is the code as written (`duplicate_rule_id`)."""

    yaml_syntax_error = "yaml_syntax_error"
    duplicate_key = "duplicate_key"
    yaml_alias_forbidden = "yaml_alias_forbidden"
    yaml_merge_forbidden = "yaml_merge_forbidden"
    yaml_unsafe_tag = "yaml_unsafe_tag"
    yaml_too_deep = "yaml_too_deep"
    empty_document = "empty_document"
    unknown_key = "unknown_key"
    missing_key = "missing_key"
    invalid_value = "invalid_value"
    unknown_class = "unknown_class"
    unknown_as_rule_class = "unknown_as_rule_class"
    class_to_choose = "class_to_choose"
    unknown_origin = "unknown_origin"
    unknown_grpc_code = "unknown_grpc_code"
    invalid_http_status = "invalid_http_status"
    empty_condition = "empty_condition"
    invalid_pattern = "invalid_pattern"
    non_portable_pattern = "non_portable_pattern"
    pattern_too_long = "pattern_too_long"
    unknown_lint_code = "unknown_lint_code"
    duplicate_rule_id = "duplicate_rule_id"
    duplicate_action_id = "duplicate_action_id"
    unknown_action = "unknown_action"
    missing_class_default = "missing_class_default"
    invalid_class_default = "invalid_class_default"
    retry_cannot_help = "retry_cannot_help"
    missing_manifest = "missing_manifest"
    missing_catalog = "missing_catalog"
    ruleset_not_found = "ruleset_not_found"
    unknown_base = "unknown_base"
    base_cycle = "base_cycle"
    unknown_rule = "unknown_rule"
    file_too_large = "file_too_large"
    too_many_files = "too_many_files"
    ruleset_too_large = "ruleset_too_large"
    unreadable_file = "unreadable_file"
    invalid_descriptor = "invalid_descriptor"
    duplicate_case_note = "duplicate_case_note"
    no_ruleset = "no_ruleset"
    conflicting_rules = "conflicting_rules"
    shadowed_rule = "shadowed_rule"
    catch_all_rule = "catch_all_rule"
    message_only_rule = "message_only_rule"
    unused_action = "unused_action"
    class_never_produced = "class_never_produced"
    unsatisfiable_rule = "unsatisfiable_rule"
    misspelt_value = "misspelt_value"
    overruled_rule = "overruled_rule"


class Family(StrEnum):
    """The stage that reports a code."""

    yaml = "yaml"
    """The safe YAML reader: syntax and the constructs it refuses."""
    document = "document"
    """A file's shape: keys and values the documents allow."""
    folder = "folder"
    """The ruleset folder and the limits on what is read."""
    compile = "compile"
    """The compiler: ids, the catalog, patterns."""
    case = "case"
    """Case files and the regression runner."""
    lint = "lint"
    """Warnings about a valid ruleset."""


class Stability(StrEnum):
    stable = "stable"
    """Released: the code keeps its meaning for ever."""
    preview = "preview"
    """New: may still be renamed or merged before a release."""


class Scope(StrEnum):
    """Where a lint warning's code may be silenced with `lint_ignore`."""

    none = "none"
    """Not a lint code: errors cannot be ignored."""
    rule = "rule"
    """A rule's `lint_ignore` (or the manifest's) may name it."""
    ruleset = "ruleset"
    """Only the manifest's `lint_ignore` may name it."""


@dataclass(frozen=True, slots=True)
class CodeInfo:
    family: Family
    summary: str
    anchor: str
    """The documentation section, relative to docs/ (`rules.md#duplicate_rule_id`)."""
    stability: Stability = Stability.stable
    lint_scope: Scope = Scope.none

    @property
    def is_warning(self) -> bool:
        return self.family is Family.lint


def _rules(code: str, family: Family, summary: str, heading: str = "") -> CodeInfo:
    return CodeInfo(family, summary, f"rules.md#{heading or code}")


_FOLDER = "missing_manifest-missing_catalog-ruleset_not_found"
_LIMITS = "file_too_large-too_many_files-ruleset_too_large-unreadable_file"
_CASES = "testing.md#case-files"

REGISTRY: dict[Code, CodeInfo] = {
    Code.yaml_syntax_error: _rules("yaml_syntax_error", Family.yaml, "the file is not valid YAML"),
    Code.duplicate_key: _rules("duplicate_key", Family.yaml, "a mapping repeats a key"),
    Code.yaml_alias_forbidden: _rules(
        "yaml_alias_forbidden", Family.yaml, "anchors and aliases are refused"
    ),
    Code.yaml_merge_forbidden: _rules(
        "yaml_merge_forbidden", Family.yaml, "merge keys (`<<`) are refused"
    ),
    Code.yaml_unsafe_tag: _rules("yaml_unsafe_tag", Family.yaml, "a tag that builds an object"),
    Code.yaml_too_deep: _rules("yaml_too_deep", Family.yaml, "nesting past the depth limit"),
    Code.empty_document: _rules("empty_document", Family.document, "a file with no document"),
    Code.unknown_key: _rules("unknown_key", Family.document, "a key the document does not have"),
    Code.missing_key: _rules("missing_key", Family.document, "a required key is missing"),
    Code.invalid_value: _rules("invalid_value", Family.document, "a value of the wrong type"),
    Code.unknown_class: _rules("unknown_class", Family.document, "not a class of the taxonomy"),
    Code.unknown_as_rule_class: _rules(
        "unknown_as_rule_class", Family.document, "a rule that says `class: Unknown`"
    ),
    Code.class_to_choose: CodeInfo(
        Family.document,
        "a drafted rule whose class a person has still to choose",
        "rules.md#class_to_choose",
        Stability.preview,
    ),
    Code.unknown_origin: _rules("unknown_origin", Family.document, "not a known origin"),
    Code.unknown_grpc_code: _rules("unknown_grpc_code", Family.document, "not a gRPC status"),
    Code.invalid_http_status: _rules(
        "invalid_http_status", Family.document, "not an HTTP status, class or range"
    ),
    Code.empty_condition: _rules(
        "empty_condition", Family.document, "a condition that matches everything or nothing"
    ),
    Code.unknown_lint_code: _rules(
        "unknown_lint_code", Family.document, "`lint_ignore` names no lint code it may"
    ),
    Code.invalid_pattern: _rules("invalid_pattern", Family.compile, "not a valid RE2 pattern"),
    Code.non_portable_pattern: CodeInfo(
        Family.compile,
        "a pattern the clients' RE2s (Go, Java, JavaScript) would read differently",
        "rules.md#non_portable_pattern",
        Stability.preview,
    ),
    Code.pattern_too_long: _rules("pattern_too_long", Family.compile, "a pattern past the limit"),
    Code.duplicate_rule_id: _rules("duplicate_rule_id", Family.compile, "two rules share an id"),
    Code.duplicate_action_id: _rules(
        "duplicate_action_id", Family.compile, "two catalog actions share an id"
    ),
    Code.unknown_action: _rules("unknown_action", Family.compile, "an action not in the catalog"),
    Code.missing_class_default: _rules(
        "missing_class_default", Family.compile, "a class without a catalog default"
    ),
    Code.unknown_base: CodeInfo(
        Family.folder, "a base names no library the package ships", "rules.md#unknown_base"
    ),
    Code.base_cycle: CodeInfo(
        Family.folder, "rulesets that build on each other in a circle", "rules.md#base_cycle"
    ),
    Code.unknown_rule: CodeInfo(
        Family.compile,
        "`disable` or `override` names no rule of a base",
        "rules.md#unknown_rule",
    ),
    Code.invalid_class_default: _rules(
        "invalid_class_default", Family.compile, "a class default the class cannot have"
    ),
    Code.retry_cannot_help: _rules(
        "retry_cannot_help",
        Family.compile,
        "a retryable answer where the taxonomy or the catalog says a retry cannot help",
    ),
    Code.missing_manifest: _rules(
        "missing_manifest", Family.folder, "the folder has no ruleset.yaml", _FOLDER
    ),
    Code.missing_catalog: _rules(
        "missing_catalog", Family.folder, "the folder has no actions.yaml", _FOLDER
    ),
    Code.ruleset_not_found: _rules(
        "ruleset_not_found", Family.folder, "not a ruleset folder", _FOLDER
    ),
    Code.file_too_large: _rules("file_too_large", Family.folder, "a file past 4 MiB", _LIMITS),
    Code.too_many_files: _rules("too_many_files", Family.folder, "past 2,000 files", _LIMITS),
    Code.ruleset_too_large: _rules(
        "ruleset_too_large", Family.folder, "past 16 MiB or 10,000 rules in all", _LIMITS
    ),
    Code.unreadable_file: _rules(
        "unreadable_file", Family.folder, "a file that is not UTF-8 text", _LIMITS
    ),
    Code.invalid_descriptor: CodeInfo(Family.case, "a case's descriptor is out of range", _CASES),
    Code.duplicate_case_note: CodeInfo(Family.case, "two cases share a note", _CASES),
    Code.no_ruleset: CodeInfo(Family.case, "no ruleset for a case file", _CASES),
    Code.conflicting_rules: CodeInfo(
        Family.lint,
        "equally ranked rules that disagree on one descriptor",
        "rules.md#conflicting_rules",
        lint_scope=Scope.rule,
    ),
    Code.shadowed_rule: CodeInfo(
        Family.lint, "a rule that can never win", "rules.md#shadowed_rule", lint_scope=Scope.rule
    ),
    Code.catch_all_rule: CodeInfo(
        Family.lint,
        "a rule with no condition, or a root type alone",
        "rules.md#catch_all_rule",
        lint_scope=Scope.rule,
    ),
    Code.message_only_rule: CodeInfo(
        Family.lint,
        "a rule that decides on free text alone",
        "rules.md#message_only_rule",
        lint_scope=Scope.rule,
    ),
    Code.unused_action: CodeInfo(
        Family.lint,
        "a catalog action nothing can recommend",
        "rules.md#unused_action",
        lint_scope=Scope.ruleset,
    ),
    Code.class_never_produced: CodeInfo(
        Family.lint,
        "a class no rule produces",
        "rules.md#class_never_produced",
        lint_scope=Scope.ruleset,
    ),
    Code.unsatisfiable_rule: CodeInfo(
        Family.lint,
        "a rule whose own conditions contradict each other",
        "rules.md#unsatisfiable_rule",
        lint_scope=Scope.rule,
    ),
    Code.misspelt_value: CodeInfo(
        Family.lint,
        "a language or provider close to a known one but not it",
        "rules.md#misspelt_value",
        lint_scope=Scope.rule,
    ),
    Code.overruled_rule: CodeInfo(
        Family.lint,
        "a rule that silently loses to a decisive runtime fact",
        "rules.md#overruled_rule",
        lint_scope=Scope.rule,
    ),
}

RULE_LINT_CODES = tuple(c for c, i in REGISTRY.items() if i.lint_scope is Scope.rule)
"""Lint warnings about one rule: a rule's `lint_ignore` may name these."""
LINT_CODES = tuple(c for c, i in REGISTRY.items() if i.family is Family.lint)
"""Every lint warning: the manifest's `lint_ignore` may name these."""


def info(code: Code) -> CodeInfo:
    return REGISTRY[code]


def parse_code(text: str) -> Code | None:
    """The registered code written as `text`, or None."""
    try:
        return Code(text)
    except ValueError:
        return None
