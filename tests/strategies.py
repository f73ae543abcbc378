"""Hypothesis strategies: random rulesets and descriptors over a small shared vocabulary.

The vocabulary is small on purpose (three types, two codes, a few statuses
and patterns), so random rules overlap, tie and conflict often, and random
descriptors match them often.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

from classifier import CauseInput, Descriptor, Origin, Ruleset, build_descriptor, load_ruleset
from tests.catalog import CATALOG

TYPES = ["a.A", "a.B", "a.C"]
CLASSES = ["Timeout", "RateLimited", "ProviderError"]
PATTERNS = ["timeout", "(?i)rate limit", "^boom", "quota$"]
MESSAGES = ["", "timeout here", "Rate Limit", "boom", "over quota", "boom: rate limit timeout"]
MANIFEST = "name: random\nversion: '1'\nlint_ignore: [class_never_produced, unused_action]\n"


def _one_or_two(values: list[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.sampled_from(values),
        st.lists(st.sampled_from(values), min_size=2, max_size=2, unique=True),
    )


@st.composite
def cause_conditions(draw: st.DrawFn) -> dict[str, Any]:
    when: dict[str, Any] = {}
    if draw(st.booleans()):
        when["type"] = draw(_one_or_two(TYPES))
    if draw(st.booleans()):
        when["code"] = draw(st.sampled_from(["c1", "c2"]))
    if draw(st.integers(0, 3)) == 0:
        when["has"] = draw(st.sampled_from(["code", "message"]))
    if draw(st.integers(0, 3)) == 0:
        when["lacks"] = draw(st.sampled_from(["code", "http_status"]))
    if draw(st.booleans()) or not when:
        when["message"] = draw(st.sampled_from(PATTERNS))
    return when


@st.composite
def rules(draw: st.DrawFn, *, messages: bool = True, causes: bool = True) -> dict[str, Any]:
    """One rule document (an id is added by `rulesets`)."""
    when: dict[str, Any] = {}
    if draw(st.booleans()):
        when["type"] = draw(_one_or_two(TYPES))
    optional: dict[str, st.SearchStrategy[Any]] = {
        "http_status": st.sampled_from([429, 503, "5xx", [429, 503]]),
        "grpc_status": _one_or_two(["UNAVAILABLE", "DEADLINE_EXCEEDED"]),
        "origin": _one_or_two(["provider", "tool"]),
        "code": _one_or_two(["c1", "c2"]),
        "provider": st.sampled_from(["p1", "p2"]),
        # `time_limit` is a decisive fact: its rules are in the decisive tier
        "attributes": st.one_of(
            st.fixed_dictionaries({"k": _one_or_two(["v1", "v2"])}),
            st.fixed_dictionaries({"time_limit": _one_or_two(["tool", "run"])}),
        ),
        "has": _one_or_two(["code", "http_status", "provider"]),
        "lacks": _one_or_two(["code", "grpc_status", "provider"]),
    }
    if messages:
        optional["message"] = st.sampled_from(PATTERNS)
    if causes:
        optional["cause"] = cause_conditions()
    for key, strategy in optional.items():
        if draw(st.integers(0, 3)) == 0:
            when[key] = draw(strategy)
    rule: dict[str, Any] = {"when": when, "class": draw(st.sampled_from(CLASSES))}
    if draw(st.integers(0, 4)) == 0:
        rule["effect"] = "pause"
    if draw(st.integers(0, 4)) == 0:
        rule["priority"] = 1
    if draw(st.integers(0, 4)) == 0:
        rule["fallback"] = True
    return rule


@st.composite
def rulesets(draw: st.DrawFn, *, messages: bool = True, causes: bool = True) -> list[Any]:
    docs = draw(st.lists(rules(messages=messages, causes=causes), min_size=1, max_size=8))
    return [{"id": f"r{i}", **doc} for i, doc in enumerate(docs)]


@st.composite
def descriptors(draw: st.DrawFn) -> Descriptor:
    own = draw(st.sampled_from([*TYPES, "x.Other"]))
    supertypes = draw(st.lists(st.sampled_from([t for t in TYPES if t != own]), unique=True))
    causes = draw(
        st.lists(
            st.builds(
                CauseInput,
                type=st.sampled_from([*TYPES, "x.Cause"]),
                supertypes=st.just(()),
                http_status=st.none(),
                grpc_status=st.none(),
                code=st.sampled_from(["", "c1", "c2"]),
                message=st.sampled_from(MESSAGES),
            ),
            max_size=2,
        )
    )
    return build_descriptor(
        type=own,
        supertypes=supertypes,
        http_status=draw(st.sampled_from([None, 429, 503, 500])),
        grpc_status=draw(st.sampled_from([None, 14, 4])),
        origin=draw(st.sampled_from([Origin.unspecified, Origin.provider, Origin.tool])),
        code=draw(st.sampled_from(["", "c1", "c2"])),
        provider=draw(st.sampled_from(["", "p1", "p2"])),
        message=draw(st.sampled_from(MESSAGES)),
        attributes=draw(st.sampled_from([{}, {"k": "v1"}, {"k": "v2"}, {"time_limit": "run"}])),
        causes=causes,
    )


@contextmanager
def compiled(rule_docs: list[Any]) -> Iterator[Ruleset]:
    """The rules written to a real ruleset folder (tests/catalog.yaml), loaded and compiled."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shutil.copy(CATALOG, root / "actions.yaml")
        (root / "ruleset.yaml").write_text(MANIFEST)
        (root / "rules.yaml").write_text(yaml.safe_dump({"rules": rule_docs}, sort_keys=False))
        yield load_ruleset(root)
