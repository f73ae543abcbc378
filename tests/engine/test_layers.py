"""Layered rulesets: a team's ruleset on the bundled library, overrides, disables, the stack's
digest, lint scoped to the top layer, and the serving side (GetRuleset, reload of a base)."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from classifier import RulesetError, build_descriptor, classify, explain, load_ruleset
from classifier.cli import main
from classifier.lint.checks import lint
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from tests.conftest import StartApp
from tests.support import BUNDLED_RULES, wait_for, write_atomically, write_folder

TEAM_MANIFEST = """\
name: acme
version: 1.0.0
base:
  - {base}
disable:
  - rule: python.requests.retries-exhausted
    reason: our session retries and re-raises the last error itself
"""
TEAM_RULES = """\
rules:
  - id: acme.gateway-quota
    description: Our gateway's own quota, above the provider's.
    when: {type: acme.GatewayQuotaError, language: python}
    class: QuotaExceeded
    action: acme.gateway-quota
  - id: python.openai.rate-limited
    description: The provider's 429, with our runbook.
    when: {type: openai.RateLimitError}
    class: RateLimited
    action: acme.provider-backoff
    override: true
"""
TEAM_ACTIONS = """\
actions:
  - id: acme.gateway-quota
    summary: The gateway quota of our own is used up; raise it in the gateway console.
  - id: acme.provider-backoff
    summary: The provider rate limits us; the acme runbook says how long to wait.
    runbook: https://runbooks.example/acme/backoff
"""
TEAM_CASES = """\
cases:
  - note: our gateway's quota is QuotaExceeded, with our action
    descriptor: {type: acme.GatewayQuotaError, supertypes: [Exception], language: python}
    want: {class: QuotaExceeded, rule: acme.gateway-quota, action: acme.gateway-quota}
  - note: the overridden library rule answers with our runbook's action
    descriptor: {type: openai.RateLimitError, supertypes: [openai.APIStatusError, openai.APIError, Exception], http_status: 429, language: python}
    want: {class: RateLimited, rule: python.openai.rate-limited, action: acme.provider-backoff}
"""
OWN = build_descriptor(type="acme.GatewayQuotaError", supertypes=["Exception"], language="python")
BUNDLED = build_descriptor(
    type="openai.APITimeoutError",
    supertypes=["openai.APIConnectionError", "openai.APIError", "Exception"],
    language="python",
)
RETRIES = build_descriptor(
    type="requests.exceptions.RetryError",
    supertypes=["requests.exceptions.RequestException", "OSError", "Exception"],
    origin=1,
    language="python",
)


def team(root: Path, base: str = "library: default") -> Path:
    return write_folder(
        root,
        {
            "ruleset.yaml": TEAM_MANIFEST.format(base=base),
            "actions.yaml": TEAM_ACTIONS,
            "acme.yaml": TEAM_RULES,
            "acme.cases.yaml": TEAM_CASES,
        },
    )


def test_a_team_ruleset_on_the_library_answers_for_both(tmp_path: Path) -> None:
    """Its own rule, the library's, an override and a disable, all in one stack."""
    ruleset = load_ruleset(team(tmp_path / "acme"))
    assert [layer.name for layer in ruleset.layers] == ["acme", "default"]
    assert classify(ruleset, OWN).rule_id == "acme.gateway-quota"
    assert classify(ruleset, BUNDLED).rule_id == "python.openai.timeout"
    rate = classify(
        ruleset,
        build_descriptor(type="openai.RateLimitError", supertypes=["Exception"], http_status=429),
    )
    assert (rate.rule_id, rate.action.id) == ("python.openai.rate-limited", "acme.provider-backoff")
    assert ruleset.rule("python.requests.retries-exhausted") is None
    assert classify(ruleset, RETRIES).rule_id != "python.requests.retries-exhausted"
    (off,) = ruleset.disabled
    assert off.reason.startswith("our session retries")
    assert ruleset.version == "1.0.0"
    assert ruleset.digest != load_ruleset(BUNDLED_RULES).digest


def test_check_strict_and_full_coverage_pass_for_the_team_layer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Lint and coverage are about the team's own rules, not the library's 300."""
    root = team(tmp_path / "acme")
    assert main(["check", "--strict", str(root)]) == 0
    out = capsys.readouterr().out
    assert "base: default" in out
    assert "disabled python.requests.retries-exhausted: our session retries" in out
    assert main(["test", "--coverage", "--min-coverage", "100", str(root)]) == 0
    assert "2 passed, 0 failed" in capsys.readouterr().out


def test_the_digest_changes_when_either_layer_changes(tmp_path: Path) -> None:
    base = tmp_path / "library"
    shutil.copytree(BUNDLED_RULES, base)
    root = team(tmp_path / "acme", base=f"path: {base}")
    first = load_ruleset(root).digest
    (root / "acme.yaml").write_text(TEAM_RULES.replace("Our gateway's", "The gateway's"))
    second = load_ruleset(root).digest
    manifest = base / "ruleset.yaml"
    manifest.write_text(manifest.read_text().replace("description:", "# changed\ndescription:"))
    third = load_ruleset(root).digest
    assert len({first, second, third}) == 3


def test_a_layer_rule_as_specific_as_the_base_one_wins_at_the_layer_step(
    tmp_path: Path,
) -> None:
    root = team(tmp_path / "acme")
    (root / "more.yaml").write_text(
        textwrap.dedent("""\
        rules:
          - id: acme.openai-timeout
            when: {type: openai.APITimeoutError}
            class: ProviderError
        """)
    )
    ruleset = load_ruleset(root)
    answer = explain(ruleset, BUNDLED)
    assert answer.rule_id == "acme.openai-timeout"
    assert answer.explanation is not None
    steps = {d.loser_rule_id: d.step for d in answer.explanation.decisions}
    assert steps["python.openai.timeout"] == "layer"


def _codes(root: Path) -> list[tuple[str, str]]:
    with pytest.raises(RulesetError) as caught:
        load_ruleset(root)
    return [(d.code.value, d.message) for d in caught.value.diagnostics]


def test_a_base_rule_id_without_override_is_a_duplicate_naming_both_files(tmp_path: Path) -> None:
    root = team(tmp_path / "acme")
    (root / "acme.yaml").write_text(TEAM_RULES.replace("    override: true\n", ""))
    ((code, message),) = _codes(root)
    assert code == "duplicate_rule_id"
    assert "python/openai.yaml" in message
    assert "set `override: true`" in message


def test_override_and_disable_must_name_a_base_rule(tmp_path: Path) -> None:
    root = team(tmp_path / "acme")
    (root / "acme.yaml").write_text(TEAM_RULES.replace("python.openai.rate-limited", "acme.x"))
    manifest = root / "ruleset.yaml"
    manifest.write_text(manifest.read_text().replace("retries-exhausted", "retries-exausted"))
    messages = [m for c, m in _codes(root) if c == "unknown_rule"]
    assert len(messages) == 2
    assert any("`override` names rule 'acme.x'" in m for m in messages)
    assert any("did you mean 'python.requests.retries-exhausted'?" in m for m in messages)


def test_bases_that_are_not_there_or_form_a_cycle(tmp_path: Path) -> None:
    root = team(tmp_path / "acme", base="library: defualt")
    found = _codes(root)
    assert (
        "unknown_base",
        "no library is called 'defualt' (did you mean 'default'?); the package "
        "ships one, 'default' (or name a folder with `path:`)",
    ) in found
    (root / "ruleset.yaml").write_text(TEAM_MANIFEST.format(base="path: ."))
    assert "base_cycle" in [c for c, _ in _codes(root)]


def test_a_layer_inherits_the_catalog_and_may_change_a_class_default(tmp_path: Path) -> None:
    root = team(tmp_path / "acme")
    (root / "actions.yaml").write_text(
        TEAM_ACTIONS + "classes:\n  Unknown: {action: acme.gateway-quota, effect: unspecified}\n"
    )
    ruleset = load_ruleset(root)
    unknown = classify(ruleset, build_descriptor(type="acme.Nothing"))
    assert unknown.action.id == "acme.gateway-quota"
    assert classify(ruleset, BUNDLED).action.id == "timeout.review"
    (root / "actions.yaml").unlink()
    (root / "acme.yaml").write_text(TEAM_RULES.replace("    action: acme.gateway-quota\n", ""))
    (root / "acme.yaml").write_text(
        (root / "acme.yaml").read_text().replace("    action: acme.provider-backoff\n", "")
    )
    assert load_ruleset(root).actions.keys() == load_ruleset(BUNDLED_RULES).actions.keys()


def test_lint_reports_the_top_layer_only(tmp_path: Path) -> None:
    """A conflict of the team's own is reported; the library's rules are not re-linted."""
    root = team(tmp_path / "acme")
    assert lint(load_ruleset(root)) == []
    (root / "more.yaml").write_text(
        textwrap.dedent("""\
        rules:
          - id: acme.a
            when: {type: acme.E, code: x}
            class: ToolError
          - id: acme.b
            when: {type: acme.E, origin: tool}
            class: Timeout
        """)
    )
    warnings = lint(load_ruleset(root))
    assert [w.code.value for w in warnings] == ["conflicting_rules"]
    assert warnings[0].rule_id == "acme.b"


def test_get_ruleset_lists_the_layers_and_a_base_edit_reloads(
    tmp_path: Path, start_app: StartApp
) -> None:
    base = write_folder(
        tmp_path / "platform",
        {
            "ruleset.yaml": "name: platform\nversion: 3.1.0\n",
            "actions.yaml": (BUNDLED_RULES / "actions.yaml").read_text(),
            "probe.yaml": "rules:\n  - id: probe\n    when: {type: test.Probe}\n    class: Timeout\n",
        },
    )
    root = team(tmp_path / "acme", base=f"path: {base}")
    (root / "ruleset.yaml").write_text(
        TEAM_MANIFEST.format(base=f"path: {base}").split("disable")[0]
    )
    (root / "acme.yaml").write_text(TEAM_RULES.split("  - id: python.openai")[0])
    (root / "acme.cases.yaml").unlink()
    running = start_app(root, watch=True)
    stub = running.stub
    info = stub.GetRuleset(pb.GetRulesetRequest())
    assert [(k.name, k.version) for k in info.layers] == [("acme", "1.0.0"), ("platform", "3.1.0")]
    assert info.layers[1].digest != info.digest
    probe = pb.ClassifyRequest(descriptor=pb.ExceptionDescriptor(type="test.Probe"))
    assert stub.Classify(probe).class_name == "Timeout"
    write_atomically(
        base / "probe.yaml",
        "rules:\n  - id: probe\n    when: {type: test.Probe}\n    class: ToolError\n",
    )
    wait_for(lambda: stub.Classify(probe).class_name == "ToolError")
    assert stub.GetRuleset(pb.GetRulesetRequest()).digest != info.digest
