"""Messages that say how to fix: the closest name for a misspelt one, the valid keys where a key
is wrong, plain words before a library's own, a tab named as a tab, patterns as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from classifier import RulesetError, load_ruleset
from classifier.codes import REGISTRY, Code
from classifier.errors import DescriptorError
from classifier.regress.runner import run_cases
from classifier.source.descriptor_file import read_descriptor
from classifier.text import did_you_mean
from tests.support import ROOT, MakeRuleset

INTERNALS = re.compile(
    r"\b\w+Doc\b|Input should|String should|instance of|pydantic|\^\[|Extra inputs|"
    r"\bwhile (?:parsing|scanning)\b.*\(the YAML parser"
)
"""What an author should never read first: pydantic's types and words, raw regexes."""
DOCS = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")


def _messages(root: Path) -> list[tuple[str, str]]:
    """Each diagnostic's code and message."""
    with pytest.raises(RulesetError) as caught:
        load_ruleset(root)
    return [(d.code, d.message) for d in caught.value.diagnostics]


BROKEN = {
    "rules.yaml": """\
        rules:
          - id: one
            when: {type: a.A, status: 429, cause: {typ: c.C}}
            clas: Timeout
          - id: two
            when: {type: a.B, origin: provder, grpc_status: DEADLINE_EXCEDED}
            class: ratelimited
            effect: fial
            action: provider.backof
            lint_ignore: [shadowed_rules]
          - id: three words
            when: 5
            class: Timeout
            priority: high
            retryable: maybe
          - id: four
            when: {type: a.D, http_status: [true], code: [1.5], message: '(\\d+'}
            class: Timeout
    """,
}


@pytest.fixture
def broken(make_ruleset: MakeRuleset) -> list[str]:
    return [message for _, message in _messages(make_ruleset(BROKEN))]


def test_misspelt_names_get_the_closest_one(broken: list[str]) -> None:
    found = "\n".join(broken)
    for expected in (
        "unknown key 'status' at rules.0.when (did you mean 'http_status'?)",
        "unknown key 'typ' at rules.0.when.cause (did you mean 'type'?)",
        "unknown key 'clas' at rules.0 (did you mean 'class'?)",
        "unknown origin 'provder' (did you mean 'provider'?)",
        "unknown gRPC status code 'DEADLINE_EXCEDED' (did you mean 'DEADLINE_EXCEEDED'?)",
        "unknown class 'ratelimited' (did you mean 'RateLimited'?)",  # case is ignored
        "not fial (did you mean 'fail'?)",
        "'shadowed_rules' is not a lint code a rule can ignore (did you mean 'shadowed_rule'?)",
    ):
        assert expected in found, expected


def test_a_wrong_key_lists_the_keys_valid_there(broken: list[str]) -> None:
    found = "\n".join(broken)
    assert "valid keys there: type, http_status, grpc_status, code, message (" not in found
    assert (
        "unknown key 'typ' at rules.0.when.cause (did you mean 'type'?); valid keys there: "
        "type, http_status, grpc_status, code, message" in found
    )
    assert "valid keys there: id, description, when, class, action, effect" in found


def test_wrong_values_are_said_in_words_with_the_value_as_written(broken: list[str]) -> None:
    found = "\n".join(broken)
    assert "rules.2.when: must be a mapping of keys to values, not 5" in found
    assert "rules.2.priority: must be a whole number, not high" in found
    assert "rules.2.retryable: must be true or false, not maybe" in found
    assert "rules.3.when.http_status.0: must be a whole number or text, not true" in found
    assert "rules.3.when.code.0: must be text or a whole number, not 1.5" in found
    assert "three words is not a valid id: a rule id starts with a letter or digit" in found


def test_no_library_internals_reach_the_author(broken: list[str]) -> None:
    for message in broken:
        assert not INTERNALS.search(message), message


def test_an_action_not_in_the_catalog_gets_the_closest(make_ruleset: MakeRuleset) -> None:
    root = make_ruleset(
        "rules:\n  - id: a\n    when: {type: a.B}\n    class: RateLimited\n"
        "    action: provider.backof\n"
    )
    [(_, message)] = _messages(root)
    assert message.startswith(
        "action 'provider.backof' is not in the catalog (did you mean 'provider.backoff'?); "
    )


def test_a_far_name_gets_no_guess() -> None:
    assert did_you_mean("provider.fix-billing", ["provider.investigate", "provider.backoff"]) == ""
    assert (
        did_you_mean("status", ["http_status", "grpc_status"]) == " (did you mean 'http_status'?)"
    )


@pytest.mark.parametrize(
    "text",
    [
        "rules:\n  - id: t\n\twhen: {type: x}\n",  # a tab before a key
        "rules:\n\t- id: t\n",  # a tab before a list item (libyaml names no tab here)
    ],
)
def test_a_tab_is_named_as_a_tab(make_ruleset: MakeRuleset, text: str) -> None:
    root = make_ruleset({"rules.yaml": text})
    [(code, message)] = _messages(root)
    assert code.startswith(Code.yaml_syntax_error)
    assert message.startswith("a tab character: YAML indents with spaces only")


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("rules: [a, b\n", "a flow list `[...]` that opens at "),
        ("rules:\n  - id: 'a\n", "a quoted text that opens at "),
        ("rules:\n  - id: a: b\n", "a `: ` where YAML expected a plain value"),
        ("rules:\n  - id: a\n    when: {type: x}\n     class: T\n", "this line's indentation"),
    ],
)
def test_yaml_errors_say_it_in_words_then_the_parser_then_where_to_read(
    make_ruleset: MakeRuleset, text: str, plain: str
) -> None:
    root = make_ruleset({"rules.yaml": text})
    [(_, message)] = _messages(root)
    assert message.startswith(plain)
    assert "(the YAML parser: " in message
    assert message.endswith(f"; see docs/{REGISTRY[Code.yaml_syntax_error].anchor}")


@pytest.mark.parametrize(
    ("pattern", "plain"),
    [
        ("(\\d+", "a group `(` is never closed"),
        ("quota(?! will reset)", "RE2 has no lookahead"),
        ("(?<=x)y", "RE2 has no lookbehind"),
        ("(a)\\1", "RE2 has no backreferences"),
        ("a**", "a repetition"),
    ],
)
def test_a_pattern_re2_refuses_is_echoed_as_written_and_explained(
    make_ruleset: MakeRuleset, pattern: str, plain: str
) -> None:
    """Single-quoted YAML keeps backslashes as typed; the message shows them the same way."""
    root = make_ruleset(
        {
            "rules.yaml": f"rules:\n  - id: p\n    when: {{message: '{pattern}'}}\n    class: Timeout\n"
        }
    )
    [(_, message)] = _messages(root)
    assert message.startswith(f"the pattern `{pattern}` is not valid RE2: {plain}")
    assert "(RE2: " in message
    assert message.endswith(f"see docs/{REGISTRY[Code.invalid_pattern].anchor}")


def test_the_pointers_name_sections_that_exist() -> None:
    for code in (Code.yaml_syntax_error, Code.invalid_pattern):
        heading = REGISTRY[code].anchor.split("#")[1]
        assert f"#### `{heading}`" in DOCS


def test_a_descriptor_file_gets_the_same_words(tmp_path: Path) -> None:
    path = tmp_path / "d.yaml"
    path.write_text("type: a.B\nhttp_stauts: 429\norigin: provder\nsupertypes: a\n")
    with pytest.raises(DescriptorError) as caught:
        read_descriptor(str(path))
    shown = {v.field: v.message for v in caught.value.violations}
    assert shown["descriptor.http_stauts"].startswith("unknown key (did you mean 'http_status'?)")
    assert "valid keys: type, supertypes, http_status" in shown["descriptor.http_stauts"]
    assert shown["descriptor.origin"].startswith("unknown origin 'provder' (did you mean")
    assert shown["descriptor.supertypes"] == "must be a list, not a"
    for message in shown.values():
        assert not INTERNALS.search(message), message


def test_a_case_wanting_a_misspelt_rule_gets_the_closest(make_ruleset: MakeRuleset) -> None:
    root = make_ruleset(
        {
            "rules.yaml": "rules:\n  - id: openai.rate-limited\n    when: {type: a.B}\n"
            "    class: RateLimited\n",
            "rules.cases.yaml": "cases:\n  - note: n\n    descriptor: {type: a.B}\n"
            "    want: {class: RateLimited, rule: openai.rate-limted}\n",
        }
    )
    report = run_cases([root / "rules.cases.yaml"])
    [result] = report.results
    assert (
        "note: the ruleset has no rule 'openai.rate-limted' (did you mean 'openai.rate-limited'?)"
        in result.details
    )
