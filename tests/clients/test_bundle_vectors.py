"""The reference bundle evaluator (clients/python/errorclass_client/bundle) answers every
shared bundle vector as the service's engine does, and verifies every bundle_verify vector
as the service's verifier does: the bar every client language's evaluator is held to."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tools.spec.facts import ROOT, SPEC

PYTHON_CLIENT = ROOT / "clients" / "python"
if str(PYTHON_CLIENT) not in sys.path:  # the client package is not installed into the venv yet
    sys.path.insert(0, str(PYTHON_CLIENT))

from errorclass_client.bundle import Answer, Bundle, BundleError  # noqa: E402

VECTORS = ROOT / SPEC / "vectors"
BUNDLES = ROOT / SPEC / "bundles"
KEYS = ROOT / SPEC / "keys"
MIN_VECTORS = 10_000


def _files(kind: str) -> list[Path]:
    return sorted(p for p in VECTORS.glob("*.json") if p.name.split(".")[0] == kind)


def _vectors(kind: str) -> list[dict[str, Any]]:
    return [v for p in _files(kind) for v in json.loads(p.read_text("utf-8"))["vectors"]]


def _expanded(v: dict[str, Any]) -> dict[str, Any]:
    """The descriptor with @PAD@ standing for pad.text repeated pad.count times."""
    d = v["input"]["descriptor"]
    pad = v["input"].get("pad")
    if pad is None:
        return dict(d)
    text = pad["text"] * pad["count"]
    out = json.loads(json.dumps(d))
    for subject in (out, *out.get("causes", ())):
        if "message" in subject:
            subject["message"] = subject["message"].replace("@PAD@", text)
    return dict(out)


def _fields(a: Answer) -> dict[str, Any]:
    """An answer in the vectors' spelling of `want` (empty values left out)."""
    out: dict[str, Any] = {"class": a.class_name, "action": a.action.id, "effect": a.effect}
    if a.retryable:
        out["retryable"] = True
    if a.rule_id:
        out["rule_id"] = a.rule_id
    if a.unknown_reason:
        out["unknown_reason"] = a.unknown_reason
    if a.retry_after is not None:
        wait = a.retry_after
        out["retry_after"] = {"seconds": wait.seconds, "source": wait.source, "capped": wait.capped}
    return out


def test_every_bundle_vector_gets_the_engines_answer() -> None:
    """Every field of every answer equals the engine's, and echoes the bundle's ruleset."""
    bundles = {p.stem: Bundle.load(p) for p in BUNDLES.glob("*.json")}
    vectors = _vectors("bundle")
    wrong: list[str] = []
    ran: Counter[str] = Counter()
    for v in vectors:
        bundle = bundles[v["input"]["bundle"]]
        now = v["input"].get("now")
        answer = bundle.classify(_expanded(v), dt.datetime.fromisoformat(now) if now else None)
        ran[v["input"]["bundle"]] += 1
        got = _fields(answer)
        if got != v["want"]:
            wrong.append(f"{v['name']}: got {got}, want {v['want']}")
        if (answer.ruleset_version, answer.ruleset_digest) != (bundle.version, bundle.digest):
            wrong.append(f"{v['name']}: the answer names another ruleset")
    print(f"bundle: {len(vectors)} vectors ({dict(ran)})")
    assert wrong == []
    assert len(vectors) >= MIN_VECTORS


def test_the_vectors_cover_every_bundle_and_rule_of_the_test_bundles() -> None:
    """Each purpose-built bundle's every rule decides a vector, or ties in a conflict one (a
    rule written to show a tie never decides alone)."""
    decided: dict[str, set[str]] = {}
    for v in _vectors("bundle"):
        shown = decided.setdefault(v["input"]["bundle"], set())
        shown.add(v["want"].get("rule_id", ""))
        if v["want"].get("unknown_reason") == "conflict" and "/pair/" in v["name"]:
            shown.update(v["name"].split("/")[2:4])
    assert set(decided) == {p.stem for p in BUNDLES.glob("*.json")}
    for name in ("precedence", "kinds", "layers"):
        rules = {r["id"] for r in json.loads((BUNDLES / f"{name}.json").read_text())["rules"]}
        assert rules <= decided[name], f"{name}: rules no vector shows deciding"
        assert "" in decided[name], f"{name}: no Unknown among its vectors"


def _verdict(v: dict[str, Any]) -> dict[str, Any]:
    inp = v["input"]
    data = bytearray((BUNDLES / f"{inp['bundle']}.json").read_bytes())
    if "flip_byte" in inp:
        data[inp["flip_byte"]] ^= 0x01
    signatures = inp["signatures"]
    keys = [(KEYS / f"{k}.pub").read_bytes() for k in inp["trusted_keys"]]
    try:
        bundle = Bundle.from_bytes(
            bytes(data),
            signatures=signatures.encode() if signatures is not None else None,
            trusted_keys=keys,
        )
    except BundleError as exc:
        return {"refused": exc.code}
    return {"accepted": True, "key_ids": list(bundle.key_ids)}


def test_every_bundle_verify_vector_gets_the_verifiers_verdict() -> None:
    vectors = _vectors("bundle_verify")
    got = {v["name"]: _verdict(v) for v in vectors}
    print(f"bundle_verify: {len(vectors)} vectors")
    assert got == {v["name"]: v["want"] for v in vectors}
    assert {w.get("refused") for w in got.values()} >= {
        None,
        "unsigned",
        "unknown_key",
        "bad_signature",
        "malformed_signatures",
    }


def test_a_refused_bundle_names_its_reason_in_the_error() -> None:
    data = (BUNDLES / "kinds.json").read_bytes()
    with pytest.raises(BundleError) as raised:
        Bundle.from_bytes(data, trusted_keys=[(KEYS / "TEST-ONLY-a.pub").read_bytes()])
    assert raised.value.code == "unsigned"
    assert str(raised.value).startswith("unsigned: ")


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"format_version": 2}, "unsupported_format"),
        ({"precedence": ["fallback", "type_depth"]}, "unsupported_format"),
        ({"format": "something else"}, "invalid_bundle"),
    ],
)
def test_a_bundle_of_another_format_is_refused(change: dict[str, Any], code: str) -> None:
    doc = json.loads((BUNDLES / "kinds.json").read_text())
    with pytest.raises(BundleError) as raised:
        Bundle.from_bytes(json.dumps({**doc, **change}).encode())
    assert raised.value.code == code


def test_without_google_re2_loading_names_the_extra() -> None:
    """In a process where google-re2 cannot be imported, the error says what to install."""
    code = (
        "import sys; sys.modules['re2'] = None\n"
        f"sys.path.insert(0, {str(PYTHON_CLIENT)!r})\n"
        "from errorclass_client.bundle import Bundle, BundleError\n"
        "try:\n"
        f"    Bundle.load({str(BUNDLES / 'kinds.json')!r})\n"
        "except BundleError as e:\n"
        "    print(e.code, e.message)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.startswith("missing_dependency ")
    assert "pip install 'errorclass-client[bundle]'" in run.stdout


def test_the_evaluator_imports_nothing_of_the_service() -> None:
    """The reference evaluator is self-contained: loading and classifying imports no
    `classifier` module (a client runtime does not have the service installed)."""
    code = (
        f"import sys; sys.path.insert(0, {str(PYTHON_CLIENT)!r})\n"
        "from errorclass_client.bundle import Bundle\n"
        f"b = Bundle.load({str(BUNDLES / 'library.json')!r})\n"
        "b.classify({'type': 'openai.RateLimitError', 'http_status': 429})\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('classifier', 'pydantic', 'yaml')))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/"
    )
    assert run.stdout.strip() == "[]"
