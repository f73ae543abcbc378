"""Every vector of clients/spec/vectors/, run against this client's own functions.

The spec is `clients/spec` of the repository, or the folder named by ERRORCLASS_SPEC_DIR.
Each vector is a test named `file::vector`; a failure names the file, the vector and the
field that differs. A file of a kind this runner does not know fails. The summary prints
how many vectors of each kind ran (`vectors: error_body 36`). Alone:

    ERRORCLASS_SPEC_DIR=clients/spec .venv/bin/pytest -q clients/python/tests/test_vectors.py
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import outage_harness
import pytest

from errorclass_client import (
    DescriptorError,
    RuntimeFactError,
    descriptor_from_finish_reason,
    descriptor_from_response,
    evidence,
    fit,
    validate,
)
from errorclass_client.breaker import BreakerState
from errorclass_client.descriptor import Descriptor, descriptor_fields
from errorclass_client.python_exception import LANGUAGE
from errorclass_client.runtime_facts import facts_attributes

SPEC = Path(os.environ.get("ERRORCLASS_SPEC_DIR") or Path(__file__).parents[2] / "spec")
VECTORS = SPEC / "vectors"


def _files() -> list[tuple[str, dict[str, Any]]]:
    files = sorted(VECTORS.glob("*.json"))
    assert files, f"no vector files in {VECTORS}"
    return [(p.name, json.loads(p.read_text(encoding="utf-8"))) for p in files]


FILES = _files()


def _differs(where: str, want: Any, got: Any) -> None:
    """Assert got equals want, naming the first field that differs."""

    def first(path: str, w: Any, g: Any) -> str | None:
        if isinstance(w, dict) and isinstance(g, dict):
            for key in sorted(set(w) | set(g)):
                found = first(f"{path}.{key}" if path else key, w.get(key), g.get(key))
                if found:
                    return found
            return None
        if isinstance(w, list) and isinstance(g, list) and len(w) == len(g):
            for i, (wi, gi) in enumerate(zip(w, g, strict=True)):
                found = first(f"{path}[{i}]", wi, gi)
                if found:
                    return found
            return None
        return None if w == g else f"{path or '(whole)'}: want {w!r}, got {g!r}"

    found = first("", want, got)
    assert found is None, f"{where}: {found}"


def _built(where: str, d: Descriptor | None) -> dict[str, Any] | None:
    """A builder's descriptor as the vectors spell it, after checking it carries this
    client's own language (which `want` leaves out)."""
    if d is None:
        return None
    fields = descriptor_fields(d)
    assert fields.pop("language", None) == LANGUAGE, f"{where}: descriptor.language"
    return fields


def error_body(where: str, given: dict[str, Any], want: dict[str, Any]) -> None:
    body: str = given["body"]
    if "pad" in given:
        body = body.replace("@PAD@", given["pad"]["text"] * given["pad"]["count"])
    got = evidence(given["status"], given["headers"], body)
    _differs(
        where,
        {
            "code": want.get("code", ""),
            "grpc_status": want.get("grpc_status"),
            "message": want.get("message", ""),
            "attributes": want.get("attributes", {}),
        },
        {
            "code": got.code,
            "grpc_status": got.grpc_status,
            "message": got.message,
            "attributes": dict(got.attributes),
        },
    )


def finish_reason(where: str, given: dict[str, Any], want: dict[str, Any]) -> None:
    d = descriptor_from_finish_reason(
        given["reason"],
        provider=given["provider"],
        prompt_blocked=given.get("prompt_blocked", False),
        model=given.get("model", ""),
    )
    _differs(where, {"descriptor": want.get("descriptor")}, {"descriptor": _built(where, d)})


def response(where: str, given: dict[str, Any], want: dict[str, Any]) -> None:
    d = descriptor_from_response(given["response"], provider=given.get("provider"))
    _differs(where, {"descriptor": want.get("descriptor")}, {"descriptor": _built(where, d)})


def runtime_facts(where: str, given: dict[str, Any], want: dict[str, Any]) -> None:
    try:
        got: dict[str, Any] = {"attributes": facts_attributes(given["facts"])}
    except RuntimeFactError as exc:
        got = {"error": exc.fact}
    _differs(where, {k: want[k] for k in ("attributes", "error") if k in want}, got)


def validate_(where: str, given: dict[str, Any], want: dict[str, Any]) -> None:
    try:
        got: dict[str, Any] = {"descriptor": descriptor_fields(validate(given["descriptor"]))}
    except DescriptorError as exc:
        got = {"violations": sorted({v.field for v in exc.violations})}
    expected: dict[str, Any] = (
        {"violations": sorted({v["field"] for v in want["violations"]})}
        if "violations" in want
        else {"descriptor": want["descriptor"]}
    )
    _differs(where, expected, got)


def fit_(where: str, given: dict[str, Any], want: dict[str, Any]) -> None:
    _differs(where, want["descriptor"], descriptor_fields(fit(given["descriptor"])))


def breaker(where: str, given: dict[str, Any], want: dict[str, Any]) -> None:
    state = BreakerState()
    states: list[str] = []
    waits: list[int] = []
    for event in given["events"]:
        if event == "call":
            states.append("allowed" if state.allow() else "short_circuited")
            continue
        if event in ("probe_ok", "probe_failed"):
            waits.append(state.probe_wait_ms)
            state.probe(event == "probe_ok")
        else:
            state.result(event)
        states.append(state.state)
    expected = {"states": want["states"]}
    got: dict[str, Any] = {"states": states}
    if "probe_waits_ms" in want:
        expected["probe_waits_ms"] = want["probe_waits_ms"]
        got["probe_waits_ms"] = waits
    _differs(where, expected, got)


def outage(where: str, given: dict[str, Any], want: dict[str, Any]) -> None:
    outage_harness.run(where, {"input": given, "want": want})


RUNNERS: dict[str, Callable[[str, dict[str, Any], dict[str, Any]], None]] = {
    "error_body": error_body,
    "finish_reason": finish_reason,
    "response": response,
    "runtime_facts": runtime_facts,
    "validate": validate_,
    "fit": fit_,
    "breaker": breaker,
    "outage": outage,
}
"""Every kind this client runs; a file of another kind fails."""


@pytest.mark.parametrize(("name", "data"), FILES, ids=[name for name, _ in FILES])
def test_every_file_is_of_a_kind_this_client_runs(name: str, data: dict[str, Any]) -> None:
    assert data.get("kind") in RUNNERS, f"{name}: kind {data.get('kind')!r} has no runner here"
    assert data["vectors"], f"{name}: no vectors"


CASES = [
    pytest.param(data["kind"], name, v, id=f"{name}::{v['name']}")
    for name, data in FILES
    for v in data["vectors"]
]


@pytest.mark.parametrize(("kind", "file", "vector"), CASES)
def test_vector(kind: str, file: str, vector: dict[str, Any], vectors_ran: Counter[str]) -> None:
    where = f"{file}: {vector['name']}"
    runner = RUNNERS.get(kind)
    assert runner is not None, f"{where}: kind {kind!r} has no runner here"
    vectors_ran[kind] += 1
    runner(where, vector["input"], vector["want"])
