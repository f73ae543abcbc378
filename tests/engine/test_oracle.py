"""The indexed engine answers exactly as the unindexed oracle, on random rulesets and descriptors."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from classifier import (
    CauseInput,
    build_descriptor,
    classify,
    classify_unindexed,
    explain,
    load_ruleset,
)
from classifier.engine.index import SPLIT_AT
from tests.support import BUNDLED_RULES

# Small pools, so rules overlap, tie, conflict, and crowd one bucket past SPLIT_AT.
TYPES = ["t.A", "t.B", "t.C"]
CAUSE_TYPES = ["c.X", "c.Y"]
MESSAGES = ["server overloaded", "Quota was exceeded today", "quota exceeded 3", "fail", "OVER"]
PATTERNS = ["(?i)over", "quota.*exceeded", "(?i)QUOTA", "fail", r"\d"]
CLASSES = ["ProviderError", "RateLimited", "Timeout"]


def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy)


when = st.fixed_dictionaries(
    {},
    optional={
        "type": st.one_of(
            st.sampled_from(TYPES),
            st.lists(st.sampled_from(TYPES), min_size=2, max_size=2, unique=True),
        ),
        "http_status": st.sampled_from([429, 503, "5xx", [400, 404]]),
        "grpc_status": st.sampled_from(["UNAVAILABLE", "DEADLINE_EXCEEDED"]),
        "code": st.sampled_from(["E1", "E2", ["E1", "E3"]]),
        "origin": st.sampled_from(["provider", "tool"]),
        "provider": st.sampled_from(["p1", "p2", "p3", ["p1", "p2"]]),
        "language": st.sampled_from(["java", "python"]),
        "message": st.sampled_from(PATTERNS),
        # `time_limit` is a decisive fact (the decisive tier); `calls` is not.
        "attributes": st.sampled_from(
            [
                {"calls": "0"},
                {"calls": ["1", "2"]},
                {"time_limit": "run"},
                {"time_limit": ["tool", "run"]},
                {"time_limit": "tool", "calls": "0"},
            ]
        ),
        "has": st.sampled_from(["code", "http_status", ["provider", "message"]]),
        "lacks": st.sampled_from(["code", "grpc_status", ["language", "message"]]),
        "cause": st.fixed_dictionaries(
            {"type": st.sampled_from(CAUSE_TYPES)},
            optional={
                "message": st.sampled_from(PATTERNS),
                "http_status": st.just(503),
                "has": st.sampled_from(["code", "message"]),
                "lacks": st.sampled_from(["code", "http_status"]),
            },
        ),
    },
)
rule = st.fixed_dictionaries(
    {"when": when, "class": st.sampled_from(CLASSES)},
    optional={
        "priority": st.sampled_from([1, 2]),
        "effect": st.sampled_from(["pause", "continue"]),
        "fallback": st.booleans(),
    },
)
rulesets = st.one_of(
    st.lists(rule, min_size=1, max_size=SPLIT_AT),
    st.lists(rule, min_size=2 * SPLIT_AT, max_size=4 * SPLIT_AT),
)

descriptor = st.fixed_dictionaries(
    {
        "type": st.sampled_from([*TYPES, "t.Z"]),
        "supertypes": st.lists(st.sampled_from(TYPES), max_size=4, unique=True),
        "http_status": maybe(st.sampled_from([429, 503, 500, 404])),
        "grpc_status": maybe(st.sampled_from([14, 4, 0])),
        "code": st.sampled_from(["", "E1", "E2", "E3"]),
        "origin": st.sampled_from([0, 1, 2]),
        "provider": st.sampled_from(["", "p1", "p2", "P3"]),
        "language": st.sampled_from(["", "java", "python"]),
        "message": st.sampled_from(["", *MESSAGES]),
        "attributes": st.sampled_from(
            [
                {},
                {"calls": "0"},
                {"calls": "2"},
                {"time_limit": "run"},
                {"time_limit": "tool", "calls": "0"},
            ]
        ),
        "causes": st.lists(
            st.builds(
                CauseInput,
                type=st.sampled_from([*CAUSE_TYPES, "c.Other"]),
                supertypes=st.sampled_from([(), ("c.X",)]),
                http_status=maybe(st.just(503)),
                grpc_status=st.none(),
                code=st.just(""),
                message=st.sampled_from(["", *MESSAGES]),
            ),
            max_size=2,
        ),
    }
)


def _first(value: Any) -> Any:
    return value[0] if isinstance(value, list) else value


_STATUS = {429: 429, 503: 503, "5xx": 500}
_MESSAGE_FOR = {p: next((m for m in MESSAGES if re.search(p, m)), "") for p in PATTERNS}


def satisfying(rules: list[dict[str, Any]], fields: dict[str, Any]) -> dict[str, Any]:
    """fields, changed so that each of rules (the later ones winning any clash) matches."""
    out = dict(fields)
    for r in rules:
        w = r["when"]
        if "type" in w:
            out["supertypes"] = [*out["supertypes"], _first(w["type"])]
        if "http_status" in w:
            out["http_status"] = _STATUS.get(_first(w["http_status"]), _first(w["http_status"]))
        if "grpc_status" in w:
            out["grpc_status"] = {"UNAVAILABLE": 14, "DEADLINE_EXCEEDED": 4}[w["grpc_status"]]
        for key in ("code", "provider", "language"):
            if key in w:
                out[key] = _first(w[key])
        if "origin" in w:
            out["origin"] = {"provider": 1, "tool": 2}[w["origin"]]
        if "message" in w:
            out["message"] = _MESSAGE_FOR[w["message"]]
        if "attributes" in w:
            out["attributes"] = {
                **out["attributes"],
                **{k: _first(v) for k, v in w["attributes"].items()},
            }
        if "cause" in w:
            c = w["cause"]
            out["causes"] = [
                CauseInput(
                    c["type"],
                    (),
                    c.get("http_status"),
                    None,
                    "",
                    _MESSAGE_FOR.get(c.get("message", ""), ""),
                )
            ]
    out["supertypes"] = list(dict.fromkeys(t for t in out["supertypes"] if t != out["type"]))
    return out


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(rulesets, st.lists(descriptor, min_size=1, max_size=12), st.data())
def test_indexed_and_unindexed_answers_are_identical(
    rules: list[dict[str, Any]], descriptors: list[dict[str, Any]], data: st.DataObject
) -> None:
    """Same class, rule, effect and Unknown reason from the index, the full scan and explain.

    Half the descriptors are drawn free; the other half are made to satisfy
    one or two of the rules, so matches, ties and conflicts are common.
    """
    folder = Path(tempfile.mkdtemp())
    try:
        shutil.copy(BUNDLED_RULES / "actions.yaml", folder / "actions.yaml")
        (folder / "ruleset.yaml").write_text("name: prop\nversion: 1.0.0\n")
        numbered = [{"id": f"r{i}", **r} for i, r in enumerate(rules)]
        # JSON is YAML, and has no aliases for the objects hypothesis shares between rules.
        (folder / "rules.yaml").write_text(json.dumps({"rules": numbered}))
        ruleset = load_ruleset(folder)
    finally:
        shutil.rmtree(folder)
    chosen = [
        data.draw(st.lists(st.sampled_from(rules), min_size=1, max_size=2)) for _ in descriptors
    ]
    for fields in [
        *descriptors,
        *(satisfying(c, f) for c, f in zip(chosen, descriptors, strict=True)),
    ]:
        d = build_descriptor(**fields)
        fast = classify(ruleset, d)
        assert fast == classify_unindexed(ruleset, d), fields
        explained = explain(ruleset, d)
        assert (explained.rule_id, explained.error_class, explained.unknown_reason) == (
            fast.rule_id,
            fast.error_class,
            fast.unknown_reason,
        )
