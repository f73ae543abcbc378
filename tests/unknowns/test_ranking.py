"""One near-miss ranking in the four places that show near misses: `classifier explain`,
`classifier unknowns`, the console (a real server, its page over HTTP) and `--propose`.

The ruleset is built so that the ranking this replaced (fewest failed conditions first)
puts the rules that held only on `language:`, `lacks:` or `origin:` first: each fails one
condition and holds two. The ranking by the conditions that decide classes must show the
rule that held on a type and a status first, then the ones that held on a type or a status,
and never the rules that held on scope alone.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from classifier import load_ruleset
from classifier.cli import main
from classifier.engine.evaluate import classify
from classifier.engine.nearness import rank
from classifier.engine.trace import ExplainTracer
from classifier.source.descriptor_file import descriptor_from_data
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from errorclass_client.wire import descriptor_to_proto
from tests.conftest import StartApp
from tests.support import MakeRuleset, wait_for
from tests.unknowns.test_propose import write_log

RULES = """
rules:
  - id: scope.language-lacks
    when: {language: python, lacks: code, type: acme.other.Thing}
    class: ContentFiltered
  - id: scope.origin-language
    when: {language: python, origin: tool, has: message}
    class: ToolError
  - id: near.type
    when: {type: acme.vector.VectorError, origin: provider}
    class: ProviderError
  - id: near.status
    when: {http_status: 409, code: conflict}
    class: QuotaExceeded
  - id: near.type-and-status
    when: {type: acme.vector.VectorError, http_status: 409, code: index_building}
    class: ProviderError
"""
DESCRIPTOR: dict[str, Any] = {
    "type": "acme.vector.IndexNotReady",
    "supertypes": ["acme.vector.VectorError", "Exception"],
    "language": "python",
    "http_status": 409,
    "message": "index 'docs' is not ready: build 40% complete",
}
NEAREST = ["near.type-and-status", "near.type", "near.status"]
"""Two deciding conditions held before one; among those, ruleset order."""
SCOPE_ONLY = {"scope.language-lacks", "scope.origin-language"}


@pytest.fixture
def rules(make_ruleset: MakeRuleset) -> Path:
    return make_ruleset(RULES)


def test_the_old_ranking_would_have_put_scope_first(rules: Path) -> None:
    """What makes this ruleset a test: by failed conditions alone, scope rules come first."""
    d = descriptor_from_data(DESCRIPTOR)
    tracer = ExplainTracer(descriptor=d)
    classify(load_ruleset(rules), d, tracer)
    by_failed = sorted(
        (sum(not ok for _, ok in results), -sum(ok for _, ok in results), rule.order, rule.id)
        for rule, results, _ in tracer.evaluations
        if any(ok for _, ok in results)
    )
    assert by_failed[0][-1] in SCOPE_ONLY
    assert [n.rule.id for n in rank(tracer.evaluations, d)] == NEAREST


def _ids(lines: list[str]) -> list[str]:
    return [
        m.group(1) for line in lines if (m := re.match(r"^\s*(\S+) -> \w+  \S+:\d+:\d+$", line))
    ]


def test_explain(rules: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "d.json"
    path.write_text(json.dumps(DESCRIPTOR))
    assert main(["explain", "--rules", str(rules), "--format", "json", str(path)]) == 0
    near = json.loads(capsys.readouterr().out)["explanation"]["near_misses"]
    assert [n["rule_id"] for n in near] == NEAREST
    assert main(["explain", "--rules", str(rules), str(path)]) == 0
    text = capsys.readouterr().out
    assert _ids(text.split("near misses (closest first):")[1].splitlines()) == NEAREST


def test_classifier_unknowns(
    rules: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = write_log(tmp_path / "d.jsonl", rules, [DESCRIPTOR] * 3)
    capsys.readouterr()
    assert main(["unknowns", "--rules", str(rules), "--format", "json", str(log)]) == 0
    [cluster] = json.loads(capsys.readouterr().out)["ranked"]
    assert [n["rule"] for n in cluster["near_misses"]] == NEAREST
    assert main(["unknowns", "--rules", str(rules), str(log)]) == 0
    assert _ids(capsys.readouterr().out.splitlines()) == NEAREST


def test_propose(rules: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = write_log(tmp_path / "d.jsonl", rules, [DESCRIPTOR] * 3)
    capsys.readouterr()
    argv = ["unknowns", "--rules", str(rules), "--propose", "--format", "json", str(log)]
    assert main(argv) == 0
    [p] = json.loads(capsys.readouterr().out)["proposals"]
    assert [n["rule"] for n in p["near_misses"]] == NEAREST
    # and no scope-only rule lends its class: ContentFiltered and ToolError are not evidence
    reasons = " ".join(c["why"] for c in p["class"]["plausible"])
    assert not SCOPE_ONLY & set(re.findall(r"rule (\S+)", reasons))
    assert main([*argv[:-3], str(log)]) == 0
    text = capsys.readouterr().out
    assert re.findall(r"near miss: (\S+) ->", text) == NEAREST


def test_the_console(rules: Path, start_app: StartApp) -> None:
    running = start_app(rules, watch=False, unknown_sample_bytes=64 * 1024)
    descriptor = descriptor_to_proto(descriptor_from_data(DESCRIPTOR))
    for _ in range(3):
        running.stub.Classify(pb.ClassifyRequest(descriptor=descriptor), timeout=10)
    wait_for(lambda: "acme.vector.IndexNotReady" in running.http("/console")[1])
    status, page = running.http("/console")
    assert status == 200
    [near] = re.findall(r"<pre class=near>(.*?)</pre>", page, re.S)
    assert _ids(html.unescape(near).splitlines()) == NEAREST
