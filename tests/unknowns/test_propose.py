"""`--propose` on small rulesets: what it refuses and why, and what it settles.

The decision logs here are written line by line with the server's own `decision_line`,
each answer from the engine, at chosen times.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from classifier import load_ruleset
from classifier.cli import main
from classifier.engine.evaluate import classify
from classifier.server.observers.decisions import decision_line
from classifier.source.descriptor_file import descriptor_from_data
from tests.support import MakeRuleset

T0 = dt.datetime(2026, 11, 29, 8, 0, tzinfo=dt.UTC)


def write_log(path: Path, rules: Path, descriptors: list[dict[str, Any]], step_s: int = 60) -> Path:
    ruleset = load_ruleset(rules)
    with path.open("w", encoding="utf-8") as f:
        for i, data in enumerate(descriptors):
            d = descriptor_from_data(data)
            ts = (T0 + dt.timedelta(seconds=i * step_s)).isoformat(timespec="milliseconds")
            f.write(decision_line(ts.replace("+00:00", "Z"), d, classify(ruleset, d)) + "\n")
    return path


SDK_RULES = """
rules:
  # Whatever carries code E1 is the provider's, unless a more specific rule says otherwise.
  - id: code-e1
    when: {code: E1}
    class: ProviderError
    fallback: true
"""


def _propose(capsys: pytest.CaptureFixture[str], rules: Path, log: Path) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["unknowns", "--rules", str(rules), "--propose", "--format", "json", str(log)]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def test_a_draft_that_would_change_a_classified_answer_is_refused(
    make_ruleset: MakeRuleset, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """acme.APIError without a code is Unknown; with code E1 an untyped fallback decides it.
    Every draft (its type and language; as a fallback; with the words; with the template)
    also matches the classified ones, whose message reads the same, and outranks the
    fallback there (a typed rule beats an untyped one, a rule beats a fallback): each would
    change a classified answer, so the cluster is refused."""
    rules = make_ruleset(SDK_RULES)
    classified = [
        {"type": "acme.APIError", "language": "python", "code": "E1",
         "message": f"request req_{i:04d} failed after {i} retries"}
        for i in range(6)
    ]  # fmt: skip
    unknown = [
        {"type": "acme.APIError", "language": "python",
         "message": f"request req_{i:04d} failed after {i} retries"}
        for i in range(5)
    ]  # fmt: skip
    log = write_log(tmp_path / "d.jsonl", rules, [*classified, *unknown])
    [p] = _propose(capsys, rules, log)["proposals"]
    assert p["status"] == "refused"
    assert p["reason"].startswith("every draft would change an answer that is already classified")
    assert [a["draft"] for a in p["attempts"]] == [
        "structure",
        "structure, as a fallback",
        "structure and the template's words",
        "structure and the whole template",
    ]
    for attempt in p["attempts"]:
        assert "would change 6 already classified answers (refused)" in attempt["problems"][0]
        assert "ProviderError by code-e1" in attempt["problems"][0]
    capsys.readouterr()
    assert main(["unknowns", "--rules", str(rules), "--propose", str(log)]) == 0
    text = capsys.readouterr().out
    assert "0 proposed, 1 refused" in text
    assert "REFUSED: every draft would change an answer that is already classified" in text


def test_a_fallback_is_drafted_when_the_type_alone_would_steal_classified_answers(
    make_ruleset: MakeRuleset, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """When the rule for code E1 is not a fallback, the plain draft (typed) would outrank it
    on the classified ones; as a fallback it loses to it there and decides only the Unknowns."""
    rules = make_ruleset(SDK_RULES.replace("    fallback: true\n", ""))
    log = write_log(
        tmp_path / "d.jsonl",
        rules,
        [{"type": "acme.APIError", "language": "python", "code": "E1", "message": "x"}] * 3
        + [
            {"type": "acme.APIError", "language": "python", "message": f"boom {i}"}
            for i in range(4)
        ],
    )
    [p] = _propose(capsys, rules, log)["proposals"]
    assert p["status"] == "proposed"
    assert p["rule"]["fallback"] is True
    assert "already classified" in p["attempts"][0]["problems"][0]
    assert p["replay"]["changed"] == 4


def test_origin_settles_the_class_and_a_conflict_offers_the_tied_classes(
    make_ruleset: MakeRuleset, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = make_ruleset(
        """
        rules:
          - id: a
            when: {type: com.example.E, origin: provider}
            class: ProviderError
          - id: b
            when: {type: com.example.E, code: X}
            class: RateLimited
        """
    )
    log = write_log(
        tmp_path / "d.jsonl",
        rules,
        [
            {
                "type": "com.example.Tool",
                "origin": "tool",
                "message": f"tool {i} broke for a{i}@x.io",
            }
            for i in range(3)
        ]
        + [{"type": "com.example.E", "origin": "provider", "code": "X", "message": "slow down"}]
        * 3,
    )
    proposals = {p["cluster"]: p for p in _propose(capsys, rules, log)["proposals"]}
    tool, conflict = sorted(
        proposals.values(), key=lambda p: p["rule"]["when"]["type"], reverse=True
    )
    assert tool["class"]["settled"] is True
    assert tool["class"]["proposed"] == "ToolError"
    # the case file drafted from the examples keeps no email (the server's redactor masked it
    # before the decision log was written), and still passes (checked)
    messages = sorted(case["descriptor"]["message"] for case in tool["cases"])
    assert messages == [f"tool {i} broke for [REDACTED:email]" for i in range(3)]
    assert conflict["class"]["settled"] is False
    assert [c["class"] for c in conflict["class"]["plausible"]][:2] == [
        "ProviderError",
        "RateLimited",
    ]
    # three conditions outrank the two tied rules' two: the conflict is settled for these
    assert conflict["status"] == "proposed"
    assert set(conflict["rule"]["when"]) == {"type", "origin", "code"}


def test_id_prefix_names_the_drafts(
    make_ruleset: MakeRuleset, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without it the id is the type's namespace; with it, the prefix the team chose."""
    rules = make_ruleset(SDK_RULES)
    log = write_log(
        tmp_path / "d.jsonl",
        rules,
        [{"type": "acme.vector.IndexNotReady", "language": "python", "message": f"m {i}"}
         for i in range(3)],
    )  # fmt: skip
    [p] = _propose(capsys, rules, log)["proposals"]
    assert p["rule_id"] == "acme.vector.index-not-ready"
    capsys.readouterr()
    argv = ["unknowns", "--rules", str(rules), "--propose", "--format", "json"]
    assert main([*argv, "--id-prefix", "team.search", str(log)]) == 0
    [p] = json.loads(capsys.readouterr().out)["proposals"]
    assert p["rule_id"] == "team.search.index-not-ready"
    assert {c["want"]["rule"] for c in p["cases"]} == {"team.search.index-not-ready"}
