"""Every vector of clients/spec/vectors/, run against this client's own functions.

The spec is `clients/spec` of the repository, or the folder named by ERRORCLASS_SPEC_DIR.
Each vector is a test named `file::vector` (a `bundle` file, thousands of vectors, is one
test naming each vector that fails); a failure names the file, the vector and the field
that differs. A file of a kind this runner does not know fails. The summary prints
how many vectors of each kind ran (`vectors: error_body 36`). Alone:

    ERRORCLASS_SPEC_DIR=clients/spec .venv/bin/pytest -q clients/python/tests/test_vectors.py
"""

from __future__ import annotations

import datetime as dt
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
from errorclass_client.bundle import Bundle, BundleError
from errorclass_client.descriptor import Descriptor, descriptor_fields
from errorclass_client.error_body import BodyEvidence, stream_error
from errorclass_client.python_exception import LANGUAGE
from errorclass_client.retry_after import RetryAfter, retry_after
from errorclass_client.runtime_facts import facts_attributes

SPEC = Path(os.environ.get("ERRORCLASS_SPEC_DIR") or Path(__file__).parents[2] / "spec")
VECTORS = SPEC / "vectors"
BUNDLES = SPEC / "bundles"
KEYS = SPEC / "keys"


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


def _evidence(where: str, got: BodyEvidence, want: dict[str, Any]) -> None:
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


def error_body(where: str, given: dict[str, Any], want: dict[str, Any]) -> None:
    body: str = given["body"]
    if "pad" in given:
        body = body.replace("@PAD@", given["pad"]["text"] * given["pad"]["count"])
    _evidence(where, evidence(given["status"], given["headers"], body), want)


def stream_error_(where: str, given: dict[str, Any], want: dict[str, Any]) -> None:
    _evidence(where, stream_error(given["event"], given["data"]), want)


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


_LOADED: dict[str, Bundle] = {}


def _bundle(name: str) -> Bundle:
    """`bundles/NAME.json`, loaded once (its signatures are bundle_verify's business)."""
    if name not in _LOADED:
        _LOADED[name] = Bundle.load(BUNDLES / f"{name}.json")
    return _LOADED[name]


def _instant(text: str) -> dt.datetime:
    """An RFC 3339 instant as the vectors write it (`2026-01-01T00:00:00Z`)."""
    return dt.datetime.fromisoformat(text)


def _wait(advice: RetryAfter | None) -> dict[str, Any] | None:
    """A wait as the vectors spell it: seconds rounded to whole microseconds (a timedelta's
    resolution), the attribute it came from, whether the cap cut it."""
    if advice is None:
        return None
    return {"seconds": advice.seconds, "source": advice.source, "capped": advice.capped}


def retry_after_(where: str, given: dict[str, Any], want: dict[str, Any]) -> None:
    """The wait a retryable answer advises, from the descriptor's retry evidence."""
    now = _instant(given["now"])
    got = retry_after(given["attributes"], dt.timedelta(seconds=given["cap_seconds"]), lambda: now)
    _differs(where, {"retry_after": want.get("retry_after")}, {"retry_after": _wait(got)})


def bundle(where: str, given: dict[str, Any], want: dict[str, Any]) -> None:
    """Classify in process from the named bundle, as the service would."""
    descriptor = json.loads(json.dumps(given["descriptor"]))
    if "pad" in given:
        text = given["pad"]["text"] * given["pad"]["count"]
        for subject in (descriptor, *descriptor.get("causes", ())):
            if "message" in subject:
                subject["message"] = subject["message"].replace("@PAD@", text)
    loaded = _bundle(given["bundle"])
    answer = loaded.classify(descriptor, _instant(given["now"]) if "now" in given else None)
    got: dict[str, Any] = {"class": answer.class_name, "action": answer.action.id}
    got["effect"] = answer.effect
    if answer.retryable:
        got["retryable"] = True
    if answer.rule_id:
        got["rule_id"] = answer.rule_id
    if answer.unknown_reason:
        got["unknown_reason"] = answer.unknown_reason
    if answer.retry_after is not None:
        got["retry_after"] = _wait(answer.retry_after)
    _differs(where, want, got)
    assert (answer.ruleset_version, answer.ruleset_digest) == (loaded.version, loaded.digest), (
        f"{where}: the answer names another ruleset than the bundle's"
    )


def bundle_verify(where: str, given: dict[str, Any], want: dict[str, Any]) -> None:
    """Whether the bundle's signatures let it be used, trusting the named keys."""
    data = bytearray((BUNDLES / f"{given['bundle']}.json").read_bytes())
    if "flip_byte" in given:
        data[given["flip_byte"]] ^= 0x01
    signatures = given["signatures"]
    try:
        loaded = Bundle.from_bytes(
            bytes(data),
            signatures=signatures.encode() if signatures is not None else None,
            trusted_keys=[(KEYS / f"{k}.pub").read_bytes() for k in given["trusted_keys"]],
        )
        got: dict[str, Any] = {"accepted": True, "key_ids": list(loaded.key_ids)}
    except BundleError as exc:
        got = {"refused": exc.code}
    _differs(where, want, got)


RUNNERS: dict[str, Callable[[str, dict[str, Any], dict[str, Any]], None]] = {
    "error_body": error_body,
    "stream_error": stream_error_,
    "finish_reason": finish_reason,
    "response": response,
    "runtime_facts": runtime_facts,
    "validate": validate_,
    "fit": fit_,
    "breaker": breaker,
    "outage": outage,
    "bundle": bundle,
    "bundle_verify": bundle_verify,
    "retry_after": retry_after_,
}
"""Every kind this client runs; a file of another kind fails."""


@pytest.mark.parametrize(("name", "data"), FILES, ids=[name for name, _ in FILES])
def test_every_file_is_of_a_kind_this_client_runs(name: str, data: dict[str, Any]) -> None:
    assert data.get("kind") in RUNNERS, f"{name}: kind {data.get('kind')!r} has no runner here"
    assert data["vectors"], f"{name}: no vectors"


WHOLE_FILES = {"bundle"}
"""Kinds whose files hold thousands of vectors: one test a file, naming each that fails."""

CASES = [
    pytest.param(data["kind"], name, v, id=f"{name}::{v['name']}")
    for name, data in FILES
    if data.get("kind") not in WHOLE_FILES
    for v in data["vectors"]
]
FILE_CASES = [
    pytest.param(data["kind"], name, data["vectors"], id=name)
    for name, data in FILES
    if data.get("kind") in WHOLE_FILES
]


@pytest.mark.parametrize(("kind", "file", "vector"), CASES)
def test_vector(kind: str, file: str, vector: dict[str, Any], vectors_ran: Counter[str]) -> None:
    where = f"{file}: {vector['name']}"
    runner = RUNNERS.get(kind)
    assert runner is not None, f"{where}: kind {kind!r} has no runner here"
    vectors_ran[kind] += 1
    runner(where, vector["input"], vector["want"])


@pytest.mark.parametrize(("kind", "file", "vectors"), FILE_CASES)
def test_vector_file(
    kind: str, file: str, vectors: list[dict[str, Any]], vectors_ran: Counter[str]
) -> None:
    runner = RUNNERS[kind]
    failed: list[str] = []
    for vector in vectors:
        vectors_ran[kind] += 1
        try:
            runner(f"{file}: {vector['name']}", vector["input"], vector["want"])
        except AssertionError as exc:
            failed.append(str(exc).split("\n")[0])
    assert failed == [], f"{len(failed)} of {len(vectors)} vectors differ:\n" + "\n".join(
        failed[:20]
    )
