"""Rule files: every problem reported at once, each at `file:line:col` with its code and rule id."""

from __future__ import annotations

from pathlib import Path

import pytest

from classifier import RulesetError, load_ruleset
from classifier.source.display import display_path
from classifier.source.loader import glob_match
from tests.support import MANIFEST, MakeRuleset


def _errors(root: Path) -> list[str]:
    with pytest.raises(RulesetError) as info:
        load_ruleset(root)
    shown = display_path(root)
    return [line.replace(shown + "/", "") for line in info.value.render().splitlines()]


def test_every_error_is_reported_with_its_location(make_ruleset: MakeRuleset) -> None:
    root = make_ruleset(
        {
            "a.yaml": """\
                rules:
                  - id: one
                    when: {type: a.A, colour: red}
                    class: RateLimited
                  - id: two
                    when: {message: "(?<=x)y"}
                    class: NotAClass
                  - id: three
                    when: {grpc_status: SLOW, origin: martian, http_status: 7xx}
                    class: Timeout
                    action: no.such-action
                  - id: one
                    when: {type: b.B}
                    class: ToolError
                """,
            "b.yaml": """\
                rules:
                  - id: dup-key
                    when: {type: a.A}
                    when: {type: b.B}
                    class: ToolError
                  - id: no-class
                    when: {type: c.C}
                """,
        }
    )
    assert _errors(root) == [
        "a.yaml:3:23: unknown_key: unknown key 'colour' at rules.0.when; valid keys there: type, "
        "http_status, grpc_status, code, message, has, lacks, origin, provider, language, attributes, cause "
        '(rule "one")',
        "a.yaml:7:12: unknown_class: unknown class 'NotAClass'; known: Unknown, ProviderError, "
        "ProviderUnavailable, RateLimited, QuotaExceeded, ContentFiltered, ToolError, Timeout, "
        "CompilationFailed, BudgetExceeded, Canceled, ContentBlocked, Infrastructure, ToolTimeout "
        '(rule "two")',
        "a.yaml:9:25: unknown_grpc_code: unknown gRPC status code 'SLOW'; known: OK, CANCELLED, "
        "UNKNOWN, INVALID_ARGUMENT, DEADLINE_EXCEEDED, NOT_FOUND, ALREADY_EXISTS, PERMISSION_DENIED, "
        "RESOURCE_EXHAUSTED, FAILED_PRECONDITION, ABORTED, OUT_OF_RANGE, UNIMPLEMENTED, INTERNAL, "
        'UNAVAILABLE, DATA_LOSS, UNAUTHENTICATED (rule "three")',
        "a.yaml:9:39: unknown_origin: unknown origin 'martian'; known: provider, tool, guard, "
        'runtime, interceptor, reconciler, user (rule "three")',
        "a.yaml:9:61: invalid_http_status: '7xx' is not an HTTP status: use a number (429), a class "
        '(5xx) or a range (500-504) (rule "three")',
        "a.yaml:11:13: unknown_action: action 'no.such-action' is not in the catalog; add it to "
        'actions.yaml, or name one that is there (rule "three")',
        "b.yaml:4:5: duplicate_key: key 'when' is already set at line 3",
        "b.yaml:6:5: missing_key: missing required key 'class' (a rule needs id, when and class) "
        '(rule "no-class")',
    ]


def test_compile_errors_are_reported_with_schema_errors_elsewhere(
    make_ruleset: MakeRuleset,
) -> None:
    """A bad regex and a duplicate id in one file still show up while another file is broken."""
    root = make_ruleset(
        {
            "a.yaml": """\
                rules:
                  - id: one
                    when: {message: "(?<=x)y"}
                    class: Timeout
                  - id: one
                    when: {type: b.B}
                    class: ToolError
                    action: no.such-action
                """,
            "b.yaml": "rules: [{id: x, when: {}, class: Nope}]\n",
        }
    )
    assert _errors(root) == [
        "a.yaml:3:21: invalid_pattern: the pattern `(?<=x)y` is not valid RE2: RE2 has no "
        "lookbehind (`(?<=`, `(?<!`) (RE2: invalid perl operator: (?<=); RE2 matches in linear "
        "time, so rewrite the pattern, or test a code or status instead; see "
        'docs/rules.md#invalid_pattern (rule "one")',
        "a.yaml:5:9: duplicate_rule_id: rule 'one' is already defined at a.yaml:2:9 (rule \"one\")",
        "a.yaml:8:13: unknown_action: action 'no.such-action' is not in the catalog; add it to "
        'actions.yaml, or name one that is there (rule "one")',
        "b.yaml:1:34: unknown_class: unknown class 'Nope'; known: Unknown, ProviderError, "
        "ProviderUnavailable, RateLimited, QuotaExceeded, ContentFiltered, ToolError, Timeout, "
        "CompilationFailed, BudgetExceeded, Canceled, ContentBlocked, Infrastructure, ToolTimeout "
        '(rule "x")',
    ]


def test_an_invalid_rules_unknown_action_is_reported_in_the_same_run(
    make_ruleset: MakeRuleset,
) -> None:
    """A rule with an unknown key or class is invalid, and its action is still looked up in
    the catalog: every unknown name at once, not the action on the run after the fix."""
    root = make_ruleset(
        """\
        rules:
          - id: a
            when: {type: a.A, stauts: 4}
            class: Timeout
            action: provider.bakcoff
          - id: b
            when: {type: a.B}
            class: RateLimted
            action: provider.bakcoff
          - id: c
            when: {type: a.C}
            class: NotAClass
            action: provider.backoff
        """
    )
    codes = [(line.split(":")[1], line.split(": ")[1]) for line in _errors(root)]
    assert codes == [
        ("3", "unknown_key"),
        ("5", "unknown_action"),
        ("8", "unknown_class"),
        ("9", "unknown_action"),
        ("12", "unknown_class"),
    ]
    assert _errors(root)[1] == (
        "rules.yaml:5:13: unknown_action: action 'provider.bakcoff' is not in the catalog (did "
        "you mean 'provider.backoff'?); add it to actions.yaml, or name one that is there "
        '(rule "a")'
    )


def test_no_action_is_called_unknown_when_the_catalog_could_not_be_read(
    make_ruleset: MakeRuleset,
) -> None:
    """The catalog's own problem is the one reported: which actions exist is not known."""
    root = make_ruleset(
        "rules:\n  - {id: a, when: {type: a.A}, class: Timeout, action: provider.backoff}\n"
        "  - {id: b, when: {type: a.B, colour: red}, class: Timeout, action: x.y}\n"
    )
    catalog = root / "actions.yaml"
    catalog.write_text(catalog.read_text() + "bogus: 1\n")
    assert [line.split(": ")[1] for line in _errors(root)] == ["unknown_key", "unknown_key"]


def test_yaml_syntax_errors_point_at_the_problem(make_ruleset: MakeRuleset) -> None:
    root = make_ruleset("rules:\n  - id: a\n    when: {type: [a.A}\n")
    [error] = _errors(root)
    assert error.startswith("rules.yaml:3:22: yaml_syntax_error: ")


def test_missing_keys_are_named(make_ruleset: MakeRuleset) -> None:
    root = make_ruleset("rules:\n  - id: a\n    when: {type: a.A}\n")
    assert _errors(root) == [
        "rules.yaml:2:5: missing_key: missing required key 'class' (a rule needs id, when and "
        'class) (rule "a")'
    ]


def test_aliases_and_unsafe_tags_are_refused(make_ruleset: MakeRuleset) -> None:
    """Rule files cannot construct objects or expand aliases (billion laughs)."""
    root = make_ruleset(
        {
            "alias.yaml": "rules:\n- &r {id: a, when: {type: a.A}, class: Timeout}\n- *r\n",
            "tag.yaml": "rules: !!python/object:os.system {}\n",
        }
    )
    assert _errors(root) == [
        "alias.yaml:2:3: yaml_alias_forbidden: this value is reused through an alias (*name); "
        "aliases are not allowed in rule files",
        "tag.yaml:1:8: yaml_unsafe_tag: tag 'tag:yaml.org,2002:python/object:os.system' is not allowed",
    ]


def test_a_manifest_without_a_version_is_an_error(make_ruleset: MakeRuleset) -> None:
    root = make_ruleset("rules: []\n", manifest="name: x\n")
    assert _errors(root) == [
        "ruleset.yaml:1:1: missing_key: missing required key 'version' (a manifest (ruleset.yaml) "
        "needs name and version)"
    ]


def test_a_folder_without_manifest_or_catalog_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "rules.yaml").write_text("rules: []\n")
    assert [e.split(": ")[1] for e in _errors(tmp_path)] == ["missing_catalog", "missing_manifest"]


def test_case_files_and_hidden_folders_are_not_rule_files(make_ruleset: MakeRuleset) -> None:
    """Case files sit beside rules; a ConfigMap's ..data folder must not load twice."""
    root = make_ruleset(
        {
            "a.yaml": "rules: [{id: a, when: {type: a.A}, class: Timeout}]\n",
            "a.cases.yaml": "cases: []\n",
            "..data/a.yaml": "rules: [{id: a, when: {type: a.A}, class: Timeout}]\n",
        }
    )
    assert [r.id for r in load_ruleset(root).rules] == ["a"]


def test_the_digest_follows_the_content(make_ruleset: MakeRuleset) -> None:
    root = make_ruleset("rules: [{id: a, when: {type: a.A}, class: Timeout}]\n")
    first = load_ruleset(root).digest
    assert load_ruleset(root).digest == first
    (root / "rules.yaml").write_text("rules: [{id: a, when: {type: a.B}, class: Timeout}]\n")
    assert load_ruleset(root).digest != first


def test_linked_folders_are_followed_once(make_ruleset: MakeRuleset) -> None:
    """A linked subfolder (as in a ConfigMap volume) loads; a link loop is walked once."""
    root = make_ruleset({"real/a.yaml": "rules: [{id: a, when: {type: a.A}, class: Timeout}]\n"})
    (root / "real").rename(root / ".hidden")
    (root / "linked").symlink_to(".hidden")
    (root / "linked" / "loop").symlink_to("..")
    (root / "loop2").symlink_to(".")
    ruleset = load_ruleset(root)
    assert [(r.id, r.location.file) for r in ruleset.rules] == [
        ("a", f"{display_path(root)}/linked/a.yaml")
    ]


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/*.yaml", "a.yaml", True),
        ("**/*.yaml", "x/y/a.yaml", True),
        ("*.yaml", "x/a.yaml", False),
        ("x/**", "x/y/a.yaml", True),
        ("x/*.yaml", "x/y/a.yaml", False),
        ("**/y/*.yml", "x/y/a.yml", True),
        ("**/[ab].yaml", "x/b.yaml", True),
    ],
)
def test_include_globs_span_folders_only_with_double_star(
    pattern: str, path: str, matches: bool
) -> None:
    """`**` spans any number of folders; `*` stays within one, as in the manifest's include."""
    assert glob_match(tuple(path.split("/")), tuple(pattern.split("/"))) is matches


@pytest.mark.parametrize("key", ["1", "true", "null", "~", "2.5"])
def test_a_key_that_is_not_text_is_an_unknown_key_at_the_key(
    make_ruleset: MakeRuleset, key: str
) -> None:
    """YAML reads `1:` or `null:` as a number or null: reported like a typo, never dropped."""
    root = make_ruleset(f"rules: [{{id: a, when: {{type: a.A, {key}: x}}, class: Timeout}}]\n")
    shown = "null" if key == "~" else key
    assert _errors(root) == [
        f"rules.yaml:1:35: unknown_key: unknown key {shown} at rules.0.when (a key must be a "
        "name); valid keys there: type, http_status, grpc_status, code, message, has, lacks, origin, "
        'provider, language, attributes, cause (rule "a")'
    ]


def test_exclude_globs_match_like_include_globs(make_ruleset: MakeRuleset) -> None:
    """`exclude: [drafts/**]` drops everything under the top-level drafts/, and nothing else."""
    rule = "rules: [{{id: {0}, when: {{type: a.{0}}}, class: Timeout}}]\n"
    root = make_ruleset(
        {
            "a.yaml": rule.format("a"),
            "drafts/b.yaml": rule.format("b"),
            "drafts/deep/c.yaml": rule.format("c"),
            "team/drafts/d.yaml": rule.format("d"),
        },
        manifest=MANIFEST + 'exclude: ["drafts/**"]\n',
    )
    assert [r.id for r in load_ruleset(root).rules] == ["a", "d"]


def test_only_unknown_has_a_conflict_action(make_ruleset: MakeRuleset) -> None:
    """conflict_action means 'the action for an Unknown by conflict'; elsewhere it is an error."""
    root = make_ruleset("rules: []\n")
    catalog = root / "actions.yaml"
    text = catalog.read_text()
    text = text.replace(
        "conflict_action: rules.resolve-conflict", "conflict_action: no.such-action"
    )
    text = text.replace(
        "RateLimited:         {action: provider.backoff,",
        "RateLimited:         {conflict_action: provider.backoff, action: provider.backoff,",
    )
    catalog.write_text(text)
    errors = [e.split(": ")[1] for e in _errors(root)]
    assert errors == ["unknown_action", "invalid_class_default"]


def test_unknown_is_never_retryable(make_ruleset: MakeRuleset) -> None:
    """An Unknown answer is never retryable, so a catalog saying it is gets an error, not ignored."""
    root = make_ruleset("rules: []\n")
    catalog = root / "actions.yaml"
    text = catalog.read_text().replace(
        "effect: unspecified, retryable: false,", "effect: unspecified, retryable: true,"
    )
    catalog.write_text(text)
    row, line = next((n, t) for n, t in enumerate(text.splitlines(), 1) if "Unknown:" in t)
    column = line.index("retryable: true") + len("retryable: ") + 1
    assert _errors(root) == [
        f"actions.yaml:{row}:{column}: invalid_class_default: an Unknown answer is never "
        "retryable (no rule vouched for the failure): leave retryable out, or set it to false"
    ]
