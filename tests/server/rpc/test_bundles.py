"""GetBundle and ReportDecisions against a real server on 127.0.0.1.

The serving bundle is signed as `serve` was told (two keys, a CI step's signatures file,
unsigned, or not served at all), is the bytes `classifier bundle build` makes of the same
rules, and is replaced after a reload; the decisions clients made from it (with the
reference evaluator, errorclass_client.bundle, as a client would) are written to the
decision log marked local, counted apart in the metrics and taken into the live sample.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from classifier import load_ruleset
from classifier.bundle import bundle_bytes
from classifier.bundle.signing import generate_key, key_id, private_pem, public_pem
from classifier.cli import main
from classifier.server import App, ServeConfig
from classifier.server.shared.serving_bundle import BundleConfig, BundleError
from errorclass_client.bundle import Answer, Bundle
from errorclass_client.bundle import BundleError as ClientBundleError
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from tests.conftest import Running, StartApp
from tests.support import ConfigMapVolume, ruleset_files, wait_for, write_folder, written_json_lines

PROBE = {"type": "test.Probe", "origin": "provider"}
LIMITED = {"type": "openai.RateLimitError", "http_status": 429, "origin": "provider"}
WEIRD = {"type": "com.example.Weird", "message": "the flux capacitor is out of flux"}
EFFECTS = {"unspecified": 0, "fail": 1, "pause": 2, "continue": 3}
REASONS = {"": 0, "no_match": 1, "conflict": 2}
OTHER_BUNDLE = "sha256:" + "ab" * 32


@pytest.fixture
def rules(tmp_path: Path) -> Path:
    return write_folder(tmp_path / "rules", ruleset_files("1.0.0", "Timeout"))


def _keys(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """A key pair written as `classifier bundle keygen` writes one: (private, public)."""
    key = generate_key()
    private, public = tmp_path / f"{name}.key", tmp_path / f"{name}.pub"
    private.write_bytes(private_pem(key))
    public.write_bytes(public_pem(key.public_key()))
    return private, public


def _pb_descriptor(d: dict[str, Any]) -> pb.ExceptionDescriptor:
    out = pb.ExceptionDescriptor(type=d["type"], message=d.get("message", ""))
    if "http_status" in d:
        out.http_status = d["http_status"]
    if "origin" in d:
        out.origin = pb.Origin.Value(f"ORIGIN_{d['origin'].upper()}")  # type: ignore[assignment]
    return out


def _pb_answer(a: Answer) -> pb.ClassifyResponse:
    """The evaluator's answer as a client reports it (the wire's ClassifyResponse)."""
    return pb.ClassifyResponse(
        error_class=a.error_class,  # type: ignore[arg-type]
        class_name=a.class_name,
        action=pb.Action(
            id=a.action.id, summary=a.action.summary, runbook_url=a.action.runbook_url
        ),
        effect=EFFECTS[a.effect],  # type: ignore[arg-type]
        retryable=a.retryable,
        rule_id=a.rule_id,
        ruleset_version=a.ruleset_version,
        ruleset_digest=a.ruleset_digest,
        unknown_reason=REASONS[a.unknown_reason],  # type: ignore[arg-type]
    )


def _decision(
    bundle: Bundle, digest: str, d: dict[str, Any], decided_at: int | None = None
) -> pb.ReportedDecision:
    out = pb.ReportedDecision(
        descriptor=_pb_descriptor(d), answer=_pb_answer(bundle.classify(d)), bundle_digest=digest
    )
    if decided_at is not None:
        out.decided_at.seconds = decided_at
    return out


def _bad_request(err: grpc.RpcError) -> list[tuple[str, str]]:
    status = rpc_status.from_call(err)  # type: ignore[arg-type]
    assert status is not None
    detail = error_details_pb2.BadRequest()
    assert status.details[0].Unpack(detail)
    return [(v.field, v.description) for v in detail.field_violations]


def _lines(path: Path) -> list[dict[str, Any]]:
    return written_json_lines(path)


def test_without_a_signing_flag_getbundle_names_the_three_and_the_rest_serves(
    rules: Path, start_app: StartApp
) -> None:
    running = start_app(rules, watch=False)
    with pytest.raises(grpc.RpcError) as info:
        running.stub.GetBundle(pb.GetBundleRequest())
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    details = info.value.details() or ""
    for flag in ("--bundle-key", "--bundle-signatures", "--unsigned-bundle"):
        assert flag in details
    # The bundle is still built: GetRuleset names it, unsigned, and answers are as before.
    built = bundle_bytes(load_ruleset(rules))
    info_ = running.stub.GetRuleset(pb.GetRulesetRequest())
    assert info_.bundle_digest == "sha256:" + hashlib.sha256(built).hexdigest()
    assert info_.bundle_signed is False
    probe = running.stub.Classify(pb.ClassifyRequest(descriptor=_pb_descriptor(PROBE)))
    assert probe.class_name == "Timeout"
    assert running.metric("errorclass_bundle_info", digest=info_.bundle_digest, signing="off") == 1
    assert running.metric("errorclass_rpcs_total", rpc="GetBundle", code="FAILED_PRECONDITION") == 1


def test_two_keys_sign_the_bundle_build_makes_and_either_verifies_it(
    tmp_path: Path, rules: Path, start_app: StartApp
) -> None:
    (old, old_pub), (new, new_pub) = _keys(tmp_path, "old"), _keys(tmp_path, "new")
    running = start_app(rules, watch=False, bundle=BundleConfig(keys=(old, new)))
    got = running.stub.GetBundle(pb.GetBundleRequest())

    assert main(["bundle", "build", "--rules", str(rules), "-o", str(tmp_path / "b.json")]) == 0
    assert got.bundle == (tmp_path / "b.json").read_bytes()  # the same bytes, byte for byte
    assert got.bundle_digest == "sha256:" + hashlib.sha256(got.bundle).hexdigest()
    described = running.stub.GetRuleset(pb.GetRulesetRequest())
    assert got.ruleset_digest == described.digest
    assert (described.bundle_digest, described.bundle_signed) == (got.bundle_digest, True)
    assert got.signed is True
    assert got.unchanged is False
    ids = [s["key_id"] for s in json.loads(got.signatures)["signatures"]]
    assert ids == [key_id(_public(old_pub)), key_id(_public(new_pub))]
    for pub in (old_pub, new_pub):  # a client trusting either key accepts it
        bundle = Bundle.from_bytes(
            got.bundle, signatures=got.signatures, trusted_keys=[pub.read_bytes()]
        )
        assert bundle.classify(PROBE).class_name == "Timeout"
    (tmp_path / "b.json.sig.json").write_bytes(got.signatures)
    for pub in (old_pub, new_pub):  # and so does `classifier bundle verify`
        assert main(["bundle", "verify", "--public-key", str(pub), str(tmp_path / "b.json")]) == 0
    _, stranger = _keys(tmp_path, "stranger")
    with pytest.raises(ClientBundleError) as refused:
        Bundle.from_bytes(
            got.bundle, signatures=got.signatures, trusted_keys=[stranger.read_bytes()]
        )
    assert refused.value.code == "unknown_key"
    assert running.metric("errorclass_rpcs_total", rpc="GetBundle", code="OK") == 1
    assert running.metric("errorclass_bundle_info", digest=got.bundle_digest, signing="keys") == 1


def _public(path: Path) -> Any:
    from classifier.bundle.signing import load_public_key

    return load_public_key(path)


def test_if_none_match_the_serving_digest_is_unchanged_and_carries_no_bytes(
    rules: Path, start_app: StartApp
) -> None:
    running = start_app(rules, watch=False, bundle=BundleConfig(unsigned=True))
    full = running.stub.GetBundle(pb.GetBundleRequest())
    same = running.stub.GetBundle(pb.GetBundleRequest(if_none_match=full.bundle_digest))
    assert same.unchanged is True
    assert (same.bundle, same.signatures) == (b"", b"")
    assert (same.bundle_digest, same.ruleset_digest) == (full.bundle_digest, full.ruleset_digest)
    assert same.ByteSize() < 200
    other = running.stub.GetBundle(pb.GetBundleRequest(if_none_match=OTHER_BUNDLE))
    assert other.unchanged is False
    assert other.bundle == full.bundle


def test_unsigned_is_served_marked_so_and_a_client_trusting_keys_refuses_it(
    tmp_path: Path, rules: Path, start_app: StartApp
) -> None:
    running = start_app(rules, watch=False, bundle=BundleConfig(unsigned=True))
    got = running.stub.GetBundle(pb.GetBundleRequest())
    assert (got.signed, got.signatures) == (False, b"")
    assert running.stub.GetRuleset(pb.GetRulesetRequest()).bundle_signed is False
    assert Bundle.from_bytes(got.bundle).classify(PROBE).class_name == "Timeout"
    _, pub = _keys(tmp_path, "ops")
    with pytest.raises(ClientBundleError) as refused:
        Bundle.from_bytes(got.bundle, signatures=None, trusted_keys=[pub.read_bytes()])
    assert refused.value.code == "unsigned"


def test_after_a_reload_getbundle_returns_the_new_bundle_signed_anew(
    tmp_path: Path, rules: Path, start_app: StartApp
) -> None:
    """A real reload: the folder changes, the watcher reloads, the digest changes."""
    key, pub = _keys(tmp_path, "ops")
    running = start_app(rules, bundle=BundleConfig(keys=(key,)))
    before = running.stub.GetBundle(pb.GetBundleRequest())
    write_folder(rules, ruleset_files("1.1.0", "ToolTimeout"))
    wait_for(lambda: running.stub.GetRuleset(pb.GetRulesetRequest()).version == "1.1.0", timeout=30)
    after = running.stub.GetBundle(pb.GetBundleRequest(if_none_match=before.bundle_digest))
    assert after.unchanged is False
    assert after.bundle_digest != before.bundle_digest
    assert after.bundle_digest == "sha256:" + hashlib.sha256(after.bundle).hexdigest()
    assert after.bundle == bundle_bytes(load_ruleset(rules))
    assert after.ruleset_digest == running.stub.GetRuleset(pb.GetRulesetRequest()).digest
    bundle = Bundle.from_bytes(
        after.bundle, signatures=after.signatures, trusted_keys=[pub.read_bytes()]
    )
    assert bundle.classify(PROBE).class_name == "ToolTimeout"
    assert running.stub.GetRuleset(pb.GetRulesetRequest()).bundle_digest == after.bundle_digest
    assert running.metric("errorclass_bundle_info", digest=after.bundle_digest, signing="keys") == 1
    assert (
        running.metric("errorclass_bundle_info", digest=before.bundle_digest, signing="keys") == 0
    )
    again = running.stub.GetBundle(pb.GetBundleRequest(if_none_match=after.bundle_digest))
    assert again.unchanged is True


def _ci_sign(tmp_path: Path, rules: Path, key: Path, name: str = "ci") -> Path:
    """What a CI step does: build the bundle of `rules` and sign it; the signatures file."""
    bundle = tmp_path / f"{name}.bundle.json"
    assert main(["bundle", "build", "--rules", str(rules), "-o", str(bundle)]) == 0
    assert main(["bundle", "sign", "--key", str(key), str(bundle)]) == 0
    return Path(f"{bundle}.sig.json")


def test_a_ci_signed_signatures_file_is_served_when_it_verifies_over_the_built_bundle(
    tmp_path: Path, rules: Path, start_app: StartApp
) -> None:
    key, pub = _keys(tmp_path, "ci")
    signatures = _ci_sign(tmp_path, rules, key)
    running = start_app(
        rules, watch=False, bundle=BundleConfig(signatures=signatures, public_keys=(pub,))
    )
    got = running.stub.GetBundle(pb.GetBundleRequest())
    assert got.signatures == signatures.read_bytes()
    assert got.signed is True
    Bundle.from_bytes(got.bundle, signatures=got.signatures, trusted_keys=[pub.read_bytes()])
    assert (
        running.metric(
            "errorclass_bundle_info", digest=got.bundle_digest, signing="signatures_file"
        )
        == 1
    )


def test_a_signatures_file_made_for_another_bundle_refuses_to_start(
    tmp_path: Path, rules: Path
) -> None:
    key, pub = _keys(tmp_path, "ci")
    other = write_folder(tmp_path / "other", ruleset_files("2.0.0", "ToolError"))
    signatures = _ci_sign(tmp_path, other, key)
    config = ServeConfig(
        rules=rules,
        address="127.0.0.1:0",
        watch=False,
        bundle=BundleConfig(signatures=signatures, public_keys=(pub,)),
    )
    with pytest.raises(BundleError) as refused:
        App(config)
    message = str(refused.value)
    assert message.startswith(f"--bundle-signatures {signatures}: bad_signature: ")
    assert f"the signature by key {key_id(_public(pub))} does not verify" in message
    assert load_ruleset(rules).digest in message  # which rules the server built it from

    _, stranger = _keys(tmp_path, "stranger")
    config = ServeConfig(
        rules=rules,
        address="127.0.0.1:0",
        watch=False,
        bundle=BundleConfig(signatures=_ci_sign(tmp_path, rules, key), public_keys=(stranger,)),
    )
    with pytest.raises(BundleError, match=r": unknown_key: signed by key \w+, which no "):
        App(config)


def test_a_reload_to_rules_the_signatures_were_not_made_for_fails_and_the_old_serves(
    tmp_path: Path, rules: Path, start_app: StartApp
) -> None:
    key, pub = _keys(tmp_path, "ci")
    signatures = tmp_path / "served.sig.json"
    signatures.write_bytes(_ci_sign(tmp_path, rules, key, "v1").read_bytes())
    running = start_app(
        rules, watch=False, bundle=BundleConfig(signatures=signatures, public_keys=(pub,))
    )
    v1 = running.stub.GetBundle(pb.GetBundleRequest())

    write_folder(rules, ruleset_files("1.1.0", "ToolTimeout"))  # the rules came, not the file
    status = running.app.reload("signal")["active"]
    assert status.result.value == "failed"
    assert status.error.startswith(f"--bundle-signatures {signatures}: bad_signature: ")
    info = running.stub.GetRuleset(pb.GetRulesetRequest())
    assert (info.version, info.bundle_digest) == ("1.0.0", v1.bundle_digest)
    assert info.last_reload.result == pb.RELOAD_RESULT_FAILED
    assert "bad_signature" in info.last_reload.error
    assert running.stub.GetBundle(pb.GetBundleRequest()).bundle == v1.bundle
    assert running.metric("errorclass_reload_last_success", role="active") == 0

    signatures.write_bytes(_ci_sign(tmp_path, rules, key, "v2").read_bytes())  # then the file
    assert running.app.reload("signal")["active"].result.value == "reloaded"
    v2 = running.stub.GetBundle(pb.GetBundleRequest())
    assert v2.bundle_digest != v1.bundle_digest
    assert v2.signatures == signatures.read_bytes()

    # A second key added to the file for a rotation, the rules as they were: served at the
    # next reload, which finds the rules unchanged.
    new_key, _ = _keys(tmp_path, "ci-next")
    rotated = tmp_path / "rotate.bundle.json"
    rotated.write_bytes(v2.bundle)
    (tmp_path / "rotate.bundle.json.sig.json").write_bytes(signatures.read_bytes())
    assert main(["bundle", "sign", "--key", str(new_key), str(rotated)]) == 0
    signatures.write_bytes((tmp_path / "rotate.bundle.json.sig.json").read_bytes())
    assert running.app.reload("signal")["active"].result.value == "failed"  # new_pub not given
    assert running.stub.GetBundle(pb.GetBundleRequest()).signatures == v2.signatures


def test_a_rotation_file_with_every_key_given_is_served_at_an_unchanged_reload(
    tmp_path: Path, rules: Path, start_app: StartApp
) -> None:
    (old, old_pub), (new, new_pub) = _keys(tmp_path, "old"), _keys(tmp_path, "new")
    signatures = tmp_path / "served.sig.json"
    signatures.write_bytes(_ci_sign(tmp_path, rules, old).read_bytes())
    running = start_app(
        rules,
        watch=False,
        bundle=BundleConfig(signatures=signatures, public_keys=(old_pub, new_pub)),
    )
    first = running.stub.GetBundle(pb.GetBundleRequest())
    assert (
        main(
            [
                "bundle",
                "sign",
                "--key",
                str(new),
                "-o",
                str(signatures),
                str(tmp_path / "ci.bundle.json"),
            ]
        )
        == 0
    )
    assert running.app.reload("signal")["active"].result.value == "unchanged"
    second = running.stub.GetBundle(pb.GetBundleRequest())
    assert second.bundle_digest == first.bundle_digest
    assert second.signatures == signatures.read_bytes() != first.signatures
    Bundle.from_bytes(
        second.bundle, signatures=second.signatures, trusted_keys=[new_pub.read_bytes()]
    )


def test_rules_and_their_signatures_in_one_configmap_update_are_one_signed_reload(
    tmp_path: Path, start_app: StartApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deployment docs/bundles.md gives: the CI step builds the rules at the path the
    server names them by (here `rules`, under each one's working directory) and puts its
    signatures beside them in the ConfigMap. The file is no rule file (the digest ignores
    it), and the watcher reloads the new rules with their new signatures in one swap."""
    key, pub = _keys(tmp_path, "ci")
    (tmp_path / "server").mkdir()
    (tmp_path / "ci").mkdir()
    volume = ConfigMapVolume(tmp_path / "server" / "rules")
    sigfile = volume.root / "rules.bundle.json.sig.json"

    def publish(version: str, probe_class: str) -> None:
        files = ruleset_files(version, probe_class)
        monkeypatch.chdir(tmp_path / "ci")  # the CI step, in its checkout
        write_folder(Path("rules"), files)
        assert main(["bundle", "build", "--rules", "rules", "-o", "b.json"]) == 0
        assert main(["bundle", "sign", "--key", str(key), "b.json"]) == 0
        files["rules.bundle.json.sig.json"] = Path("b.json.sig.json").read_text()
        monkeypatch.chdir(tmp_path / "server")
        volume.publish(files)

    publish("1.0.0", "Timeout")
    running = start_app(volume.root, bundle=BundleConfig(signatures=sigfile, public_keys=(pub,)))
    first = running.stub.GetBundle(pb.GetBundleRequest())
    assert first.bundle == (tmp_path / "ci" / "b.json").read_bytes()
    publish("1.1.0", "ToolTimeout")
    wait_for(lambda: running.stub.GetRuleset(pb.GetRulesetRequest()).version == "1.1.0", timeout=30)
    info = running.stub.GetRuleset(pb.GetRulesetRequest())
    assert info.last_reload.result == pb.RELOAD_RESULT_RELOADED
    assert running.metric("errorclass_reloads_total", role="active", result="failed") == 0
    second = running.stub.GetBundle(pb.GetBundleRequest(if_none_match=first.bundle_digest))
    assert second.bundle == (tmp_path / "ci" / "b.json").read_bytes()
    assert second.signatures == sigfile.read_bytes()
    bundle = Bundle.from_bytes(
        second.bundle, signatures=second.signatures, trusted_keys=[pub.read_bytes()]
    )
    assert bundle.classify(PROBE).class_name == "ToolTimeout"


def test_a_ci_bundle_built_from_another_path_is_accepted(
    tmp_path: Path, rules: Path, start_app: StartApp
) -> None:
    """A bundle names each rule's file inside its layer, not as a machine shows it: the same
    rules built elsewhere (a CI checkout) are the same bytes, so their signature holds."""
    key, pub = _keys(tmp_path, "ci")
    copy = write_folder(tmp_path / "elsewhere" / "checkout", ruleset_files("1.0.0", "Timeout"))
    assert load_ruleset(copy).digest == load_ruleset(rules).digest  # the same rules
    running = start_app(
        rules,
        watch=False,
        bundle=BundleConfig(signatures=_ci_sign(tmp_path, copy, key), public_keys=(pub,)),
    )
    got = running.stub.GetBundle(pb.GetBundleRequest(), timeout=10)
    assert got.signed
    assert got.bundle == bundle_bytes(load_ruleset(copy))


def test_a_bundle_past_4_mib_is_served_to_a_client_that_raised_its_receive_limit(
    tmp_path: Path, start_app: StartApp, capfd: pytest.CaptureFixture[str]
) -> None:
    """gRPC clients refuse a message over 4 MiB by default: the server says so at build."""
    pattern = "x" * 2000
    rules = "rules:\n" + "".join(
        f"  - id: big.r{i}\n    when: {{type: big.T{i}, message: '{pattern}{i}'}}\n"
        "    class: ToolError\n"
        for i in range(1100)
    )
    files = ruleset_files("1.0.0", "Timeout")
    files["big.yaml"] = rules
    folder = write_folder(tmp_path / "big", files)
    running = start_app(folder, watch=False, bundle=BundleConfig(unsigned=True))
    warnings = [
        json.loads(line) for line in capfd.readouterr().err.splitlines() if "bundle_large" in line
    ]
    assert len(warnings) == 1
    size = warnings[0]["bytes"]
    assert size > 4 * 1024 * 1024
    with pytest.raises(grpc.RpcError) as info:
        running.stub.GetBundle(pb.GetBundleRequest())
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    options = [("grpc.max_receive_message_length", 64 * 1024 * 1024)]
    with grpc.insecure_channel(running.app.address, options=options) as channel:
        from errorclass_client.proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc

        got = pb_grpc.ErrorClassifierStub(channel).GetBundle(pb.GetBundleRequest())
    assert len(got.bundle) == size


# ReportDecisions


@pytest.fixture
def reporting(rules: Path, tmp_path: Path, start_app: StartApp) -> Running:
    """A server with a decision log and the live sample, serving its bundle unsigned."""
    return start_app(
        rules,
        watch=False,
        decision_log=tmp_path / "decisions.jsonl",
        bundle=BundleConfig(unsigned=True),
    )


def _fetched(running: Running) -> tuple[Bundle, str]:
    got = running.stub.GetBundle(pb.GetBundleRequest())
    return Bundle.from_bytes(got.bundle), got.bundle_digest


def test_reported_decisions_are_logged_marked_local_counted_and_sampled(
    reporting: Running, tmp_path: Path
) -> None:
    bundle, digest = _fetched(reporting)
    decided = 1_700_000_000
    report = pb.ReportDecisionsRequest(
        decisions=[
            _decision(bundle, digest, PROBE, decided),
            _decision(bundle, digest, LIMITED, decided + 1),
            _decision(bundle, digest, WEIRD, decided + 2),
        ]
    )
    response = reporting.stub.ReportDecisions(report)
    assert (response.accepted, response.bundle_digest) == (3, digest)
    log = tmp_path / "decisions.jsonl"
    wait_for(lambda: len(_lines(log)) == 3)
    lines = _lines(log)
    assert [line["answer"]["class"] for line in lines] == ["Timeout", "RateLimited", "Unknown"]
    first = lines[0]
    assert list(first)[:6] == [
        "ts", "ruleset_version", "local", "bundle_digest", "bundle_serving", "reported_at"
    ]  # fmt: skip
    assert first["ts"] == "2023-11-14T22:13:20.000Z"  # when the client decided
    assert first["reported_at"] > first["ts"]
    assert (first["local"], first["bundle_digest"], first["bundle_serving"]) == (True, digest, True)
    assert first["ruleset_version"] == "1.0.0"
    assert first["answer"]["rule"] == "probe"
    assert first["answer"]["ruleset_digest"] == load_ruleset(reporting.app.config.rules).digest
    assert first["descriptor"] == {"type": "test.Probe", "origin": "provider"}
    assert lines[2]["answer"]["unknown_reason"] == "no_match"

    labels = {"origin": "provider", "bundle": "serving"}
    assert (
        reporting.metric("errorclass_local_decisions_total", **{"class": "Timeout"}, **labels) == 1
    )
    assert (
        reporting.metric("errorclass_local_decisions_total", **{"class": "RateLimited"}, **labels)
        == 1
    )
    assert (
        reporting.metric(
            "errorclass_local_decisions_total",
            **{"class": "Unknown"},
            origin="unspecified",
            bundle="serving",
        )
        == 1
    )
    assert reporting.metric("errorclass_local_unknown_total", reason="no_match") == 1
    # The series of the server's own answers are as they were: it gave none.
    assert reporting.metric("errorclass_unknown_total", reason="no_match") == 0
    assert (
        reporting.metric(
            "errorclass_classifications_total",
            **{"class": "Timeout"},
            rule="probe",
            origin="provider",
        )
        == 0
    )
    assert reporting.metric("errorclass_rpcs_total", rpc="ReportDecisions", code="OK") == 1

    def sampled() -> list[dict[str, Any]]:
        status, body = reporting.http("/-/unknowns")
        assert status == 200
        return [json.loads(line) for line in body.splitlines()]

    wait_for(lambda: len(sampled()) == 1)
    [unknown] = sampled()
    assert unknown["descriptor"]["type"] == "com.example.Weird"
    assert (unknown["local"], unknown["bundle_digest"], unknown["seen"]) == (True, digest, 1)


def test_the_corpus_readers_read_local_lines(
    reporting: Running, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`classifier unknowns` counts a local Unknown as the server's own, and `classifier
    diff` replays local lines like any decision-log line."""
    bundle, digest = _fetched(reporting)
    reporting.stub.Classify(pb.ClassifyRequest(descriptor=_pb_descriptor(WEIRD)))
    report = pb.ReportDecisionsRequest(
        decisions=[_decision(bundle, digest, WEIRD), _decision(bundle, OTHER_BUNDLE, PROBE)]
    )
    reporting.stub.ReportDecisions(report)
    log = tmp_path / "decisions.jsonl"
    wait_for(lambda: len(_lines(log)) == 3)
    assert [line.get("local", False) for line in _lines(log)] == [False, True, True]
    capsys.readouterr()

    rules = str(reporting.app.config.rules)
    assert main(["unknowns", "--rules", rules, "--format", "json", str(log)]) == 0
    found = json.loads(capsys.readouterr().out)
    assert (found["unknowns"], found["answers"], found["clusters"]) == (2, 3, 1)
    assert found["ranked"][0]["count"] == 2

    next_rules = write_folder(tmp_path / "next", ruleset_files("1.1.0", "ToolTimeout"))
    assert (
        main(["diff", "--base", rules, "--head", str(next_rules), "--format", "json", str(log)])
        == 0
    )
    diff = json.loads(capsys.readouterr().out)
    assert diff["total"] == 3
    assert diff["changed"] == 1  # the probe: Timeout -> ToolTimeout


def test_a_decision_by_another_bundle_is_recorded_with_the_ruleset_that_decided(
    reporting: Running, tmp_path: Path
) -> None:
    bundle, _ = _fetched(reporting)
    answer = _pb_answer(bundle.classify(PROBE))
    answer.ruleset_version, answer.ruleset_digest = "0.9.0", "sha256:" + "cd" * 32
    decision = pb.ReportedDecision(
        descriptor=_pb_descriptor(PROBE), answer=answer, bundle_digest=OTHER_BUNDLE
    )
    assert (
        reporting.stub.ReportDecisions(pb.ReportDecisionsRequest(decisions=[decision])).accepted
        == 1
    )
    log = tmp_path / "decisions.jsonl"
    wait_for(lambda: len(_lines(log)) == 1)
    [line] = _lines(log)
    assert (line["bundle_digest"], line["bundle_serving"]) == (OTHER_BUNDLE, False)
    assert line["ruleset_version"] == "0.9.0"
    assert line["answer"]["ruleset_digest"] == "sha256:" + "cd" * 32
    assert line["ts"] == line["reported_at"]  # the client did not say when it decided
    assert (
        reporting.metric(
            "errorclass_local_decisions_total",
            **{"class": "Timeout"},
            origin="provider",
            bundle="other",
        )
        == 1
    )


def test_more_than_1000_decisions_are_refused_naming_decisions_and_nothing_is_written(
    reporting: Running, tmp_path: Path
) -> None:
    bundle, digest = _fetched(reporting)
    one = _decision(bundle, digest, WEIRD)
    with pytest.raises(grpc.RpcError) as info:
        reporting.stub.ReportDecisions(pb.ReportDecisionsRequest(decisions=[one] * 1001))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert _bad_request(info.value) == [
        ("decisions", "1001 decisions exceed the report limit of 1000")
    ]
    assert (
        reporting.stub.ReportDecisions(pb.ReportDecisionsRequest(decisions=[one] * 1000)).accepted
        == 1000
    )
    log = tmp_path / "decisions.jsonl"
    wait_for(lambda: len(_lines(log)) == 1000, timeout=30)
    assert reporting.metric("errorclass_local_unknown_total", reason="no_match") == 1000


def test_a_malformed_reported_decision_is_named_and_the_whole_report_refused(
    reporting: Running, tmp_path: Path
) -> None:
    bundle, digest = _fetched(reporting)
    good = _decision(bundle, digest, PROBE)
    bad_descriptor = _decision(bundle, digest, PROBE)
    bad_descriptor.descriptor.http_status = 42
    bad_descriptor.descriptor.causes.add()
    bad_answer = _decision(bundle, digest, LIMITED)
    bad_answer.answer.error_class = 99  # type: ignore[assignment]
    bad_answer.answer.unknown_reason = pb.UNKNOWN_REASON_CONFLICT
    unnamed = pb.ReportedDecision(descriptor=_pb_descriptor(PROBE), bundle_digest="v1")
    report = pb.ReportDecisionsRequest(decisions=[good, bad_descriptor, bad_answer, unnamed])
    with pytest.raises(grpc.RpcError) as info:
        reporting.stub.ReportDecisions(report)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    violations = _bad_request(info.value)
    assert [field for field, _ in violations] == [
        "decisions[1].descriptor.causes[0].type",
        "decisions[1].descriptor.http_status",
        "decisions[2].answer.error_class",
        "decisions[3].answer",
        "decisions[3].bundle_digest",
    ]
    said = dict(violations)
    assert said["decisions[1].descriptor.http_status"] == "42 is not an HTTP status (100-599)"
    assert said["decisions[2].answer.error_class"] == "99 is no class this server knows (0-13)"
    assert "decisions[1].descriptor.http_status" in (info.value.details() or "")
    # Nothing was taken: no line, no count, no sample.
    reporting.stub.Classify(pb.ClassifyRequest(descriptor=_pb_descriptor(LIMITED)))
    log = tmp_path / "decisions.jsonl"
    wait_for(lambda: len(_lines(log)) == 1)
    assert [line.get("local") for line in _lines(log)] == [None]
    assert (
        reporting.metric(
            "errorclass_local_decisions_total",
            **{"class": "Timeout"},
            origin="provider",
            bundle="serving",
        )
        == 0
    )


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (
            {"class_name": "Timeout"},
            "answer.class_name",
            "'Timeout' is not the name of class 3 (RateLimited)",
        ),
        ({"effect": 9}, "answer.effect", "9 is no effect this server knows (0-3)"),
        (
            {"unknown_reason": pb.UNKNOWN_REASON_NO_MATCH},
            "answer.unknown_reason",
            "only an Unknown answer has a reason",
        ),
        (
            {"error_class": 0, "class_name": ""},
            "answer.unknown_reason",
            "an Unknown answer says why: NO_MATCH or CONFLICT",
        ),
        (
            {"rule_id": "no spaces"},
            "answer.rule_id",
            "'no spaces' is not a rule id (the rules' id grammar)",
        ),
        (
            {"ruleset_digest": ""},
            "answer.ruleset_digest",
            "must be the digest of the ruleset that decided, sha256:<64 hex digits>, not empty",
        ),
        (
            {"action.summary": "x" * 4097},
            "answer.action.summary",
            "4,097 characters, over 4,096",
        ),
    ],
)
def test_a_reported_answer_is_checked_field_by_field(
    reporting: Running, change: dict[str, Any], field: str, message: str
) -> None:
    bundle, digest = _fetched(reporting)
    decision = _decision(bundle, digest, LIMITED)
    for path, value in change.items():
        *parents, name = path.split(".")
        target: Any = decision.answer
        for parent in parents:
            target = getattr(target, parent)
        setattr(target, name, value)
    with pytest.raises(grpc.RpcError) as info:
        reporting.stub.ReportDecisions(pb.ReportDecisionsRequest(decisions=[decision]))
    assert _bad_request(info.value) == [(f"decisions[0].{field}", message)]


def test_a_reported_wait_is_logged_with_its_source_and_whether_the_cap_cut_it(
    reporting: Running, tmp_path: Path
) -> None:
    bundle, digest = _fetched(reporting)
    decision = _decision(bundle, digest, LIMITED)
    decision.answer.retryable = True
    decision.answer.retry_after.FromMilliseconds(60_000)
    decision.answer.retry_after_source = "http.response.header.x-ratelimit-reset-tokens (capped)"
    reporting.stub.ReportDecisions(pb.ReportDecisionsRequest(decisions=[decision]))
    log = tmp_path / "decisions.jsonl"
    wait_for(lambda: len(_lines(log)) == 1)
    [line] = _lines(log)
    assert line["answer"]["retry_after"] == {
        "seconds": 60.0,
        "source": "http.response.header.x-ratelimit-reset-tokens",
        "capped": True,
    }


@pytest.mark.parametrize(
    ("retryable", "seconds", "source", "field", "message"),
    [
        (False, 5, "http.response.header.retry-after", "retry_after", "only a retryable answer"),
        (True, 90_000, "http.response.header.retry-after", "retry_after", "outside 0 s to 1 day"),
        (True, 5, "", "retry_after_source", "must name the attribute"),
    ],
)
def test_a_reported_wait_must_be_one_a_ruleset_could_advise(
    reporting: Running, retryable: bool, seconds: int, source: str, field: str, message: str
) -> None:
    bundle, digest = _fetched(reporting)
    decision = _decision(bundle, digest, LIMITED)
    decision.answer.retryable = retryable
    decision.answer.retry_after.FromSeconds(seconds)
    decision.answer.retry_after_source = source
    with pytest.raises(grpc.RpcError) as info:
        reporting.stub.ReportDecisions(pb.ReportDecisionsRequest(decisions=[decision]))
    [(named, said)] = _bad_request(info.value)
    assert named == f"decisions[0].answer.{field}"
    assert message in said


def test_a_bad_decided_at_is_named(reporting: Running) -> None:
    bundle, digest = _fetched(reporting)
    decision = _decision(bundle, digest, LIMITED)
    decision.decided_at.nanos = -1
    with pytest.raises(grpc.RpcError) as info:
        reporting.stub.ReportDecisions(pb.ReportDecisionsRequest(decisions=[decision]))
    assert [f for f, _ in _bad_request(info.value)] == ["decisions[0].decided_at"]


def test_unknown_only_keeps_only_reported_unknowns(
    rules: Path, tmp_path: Path, start_app: StartApp
) -> None:
    running = start_app(
        rules,
        watch=False,
        decision_log=tmp_path / "d.jsonl",
        decision_log_unknown_only=True,
        bundle=BundleConfig(unsigned=True),
    )
    bundle, digest = _fetched(running)
    report = [_decision(bundle, digest, d) for d in (PROBE, WEIRD, LIMITED)]
    running.stub.ReportDecisions(pb.ReportDecisionsRequest(decisions=report))
    wait_for(lambda: running.metric("errorclass_local_unknown_total", reason="no_match") == 1)
    running.app.decisions.close()  # type: ignore[union-attr]  # flushes what is queued
    assert [line["answer"]["class"] for line in _lines(tmp_path / "d.jsonl")] == ["Unknown"]
