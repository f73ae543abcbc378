"""The Node client (clients/node) against a real server: installed with npm, run with node."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from classifier import Ruleset, classify, descriptor_from_data
from classifier.answer import classification_dict
from classifier.server import GrpcServer

NODE_ERRORS = Path(__file__).with_name("node_errors.js")

OPENAI_429: dict[str, Any] = {
    "type": "openai.RateLimitError",
    "supertypes": ["openai.APIStatusError", "openai.APIError", "openai.OpenAIError", "Exception"],
    "http_status": 429,
    "origin": "provider",
    "code": "rate_limit_exceeded",
    "language": "python",
    "provider": "openai",
}
DOTNET_TIMEOUT: dict[str, Any] = {
    "type": "System.Threading.Tasks.TaskCanceledException",
    "supertypes": [
        "System.OperationCanceledException",
        "System.SystemException",
        "System.Exception",
    ],
    "origin": "provider",
    "causes": [
        {
            "type": "System.TimeoutException",
            "supertypes": ["System.SystemException", "System.Exception"],
        }
    ],
    "language": "dotnet",
}
WEIRD: dict[str, Any] = {"type": "com.example.Weird", "language": "java"}
MORE: list[dict[str, Any]] = [
    {
        "type": "io.grpc.StatusRuntimeException",
        "grpc_status": "DEADLINE_EXCEEDED",
        "language": "java",
    },
    {"type": "System.OperationCanceledException", "origin": "caller", "language": "dotnet"},
    {"type": "*net.OpError", "origin": "provider", "http_status": 503, "language": "go"},
    {
        "type": "Error",
        "origin": "reconciler",
        "attributes": {"provider_calls": 0},
        "causes": [{"type": "Error", "code": "ECONNRESET", "http_status": 502}],
        "language": "node",
    },
]
ALL = [OPENAI_429, DOTNET_TIMEOUT, WEIRD, *MORE]


def node(
    package: Path, args: list[str], stdin: str = "", script: str = "classify.js"
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["node", script, *args],
        cwd=package,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def answered(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def engine_answer(ruleset: Ruleset, data: dict[str, Any]) -> dict[str, Any]:
    return classification_dict(classify(ruleset, descriptor_from_data(data)))


def test_node_gets_the_taxonomy_answers(node_package: Path, server: GrpcServer) -> None:
    """An openai 429 is RateLimited, the .NET HttpClient timeout chain is Timeout, an unknown type is Unknown."""
    addr = f"127.0.0.1:{server.port}"
    rate = answered(node(node_package, ["--addr", addr, "-"], json.dumps(OPENAI_429)))
    timeout = answered(node(node_package, ["--addr", addr, "-"], json.dumps(DOTNET_TIMEOUT)))
    weird = answered(node(node_package, ["--addr", addr, "-"], json.dumps(WEIRD)))
    assert (rate["class"], rate["class_number"], rate["effect"], rate["retryable"]) == (
        "RateLimited",
        3,
        "fail",
        True,
    )
    assert (timeout["class"], timeout["class_number"]) == ("Timeout", 7)
    assert timeout["rule"] == "dotnet.httpclient-timeout"
    assert (weird["class"], weird["class_number"], weird["effect"]) == ("Unknown", 0, "unspecified")
    assert (weird["rule"], weird["unknown_reason"]) == ("", "no_match")


@pytest.mark.parametrize("mode", ["--batch", "--stream"])
def test_node_answers_match_the_engine(
    node_package: Path, server: GrpcServer, bundled: Ruleset, mode: str
) -> None:
    """Over ClassifyBatch and ClassifyStream, Node prints exactly what the engine decides, in order."""
    got = answered(
        node(node_package, ["--addr", f"127.0.0.1:{server.port}", mode, "-"], json.dumps(ALL))
    )
    assert got == [engine_answer(bundled, d) for d in ALL]


def test_node_explain_carries_the_reasoning(node_package: Path, server: GrpcServer) -> None:
    """With --explain the answer carries the winning rule, its conditions and the rendered text."""
    got = answered(
        node(
            node_package,
            ["--addr", f"127.0.0.1:{server.port}", "--explain", "-"],
            json.dumps(DOTNET_TIMEOUT),
        )
    )
    e = got["explanation"]
    assert e["winner_rule_id"] == got["rule"] == e["matches"][0]["rule_id"]
    assert "cause: {type: System.TimeoutException}" in e["matches"][0]["conditions"]
    assert "dotnet.httpclient-timeout" in e["text"]


def test_node_reports_every_bad_field(node_package: Path, server: GrpcServer) -> None:
    """A malformed descriptor exits 2 with each field the server refused on stderr."""
    bad = {"type": "x", "http_status": 42, "causes": [{"type": ""}]}
    done = node(node_package, ["--addr", f"127.0.0.1:{server.port}", "-"], json.dumps(bad))
    assert done.returncode == 2, done.stdout
    assert sorted(done.stderr.splitlines()) == [
        "-: descriptor.causes[0].type: must not be empty",
        "-: descriptor.http_status: 42 is not an HTTP status (100-599)",
    ]


def test_node_without_a_server_fails_plainly(node_package: Path, tmp_path: Path) -> None:
    """No server at the address: exit 1 and a one-line reason, within the deadline."""
    (tmp_path / "d.json").write_text(json.dumps(WEIRD))
    done = node(
        node_package, ["--addr", "127.0.0.1:1", "--deadline-ms", "1000", str(tmp_path / "d.json")]
    )
    assert done.returncode == 1
    assert done.stderr.startswith("errorclass-classify: ")
    assert "UNAVAILABLE" in done.stderr or "DEADLINE_EXCEEDED" in done.stderr


def test_descriptors_from_live_node_errors(
    node_package: Path, server: GrpcServer, bundled: Ruleset
) -> None:
    """descriptorFromError reads real Node errors (class chains, cause, AggregateError, system and
    gRPC errors), and the service answers each as the engine would."""
    done = node(node_package, [f"127.0.0.1:{server.port}"], script=str(NODE_ERRORS))
    got = answered(done)
    d = {name: case["descriptor"] for name, case in got.items()}
    assert d["rate_limit"] == {
        "type": "RateLimitError",
        "supertypes": ["APIError", "OpenAIError", "Error"],
        "message": "429 Rate limit reached",
        "http_status": 429,
        "code": "rate_limit_exceeded",
        "language": "node",
        "origin": "provider",
        "provider": "openai",
    }
    assert (d["abort_timeout"]["type"], d["abort_timeout"]["supertypes"]) == (
        "DOMException",
        ["Error"],
    )
    assert (d["abort_timeout"]["code"], d["abort_timeout"]["attributes"]) == (
        "23",
        {"name": "TimeoutError"},
    )
    assert (d["enoent"]["code"], d["enoent"]["attributes"]) == ("ENOENT", {"tool": "read_file"})
    assert [c["type"] for c in d["cycle"]["causes"]] == ["TypeError"]
    assert [c["type"] for c in d["aggregate"]["causes"]] == ["RangeError", "SyntaxError"]
    assert d["grpc_deadline"]["grpc_status"] == 4
    assert d["grpc_invalid"]["grpc_status"] == 3
    assert "descriptor.type: must not be empty" in d["grpc_invalid"]["message"]
    assert (d["refused_here"]["type"], d["refused_here"]["supertypes"]) == (
        "DescriptorError",
        ["Error"],
    )
    assert d["refused_here"]["message"].startswith("descriptor.orign: unknown key")
    assert (d["thrown_string"]["type"], d["thrown_string"]["message"]) == (
        "string",
        "just a string",
    )
    assert got["rate_limit"]["answer"]["class"] == "RateLimited"
    assert got["grpc_deadline"]["answer"]["class"] == "Timeout"
    for name, case in got.items():
        assert case["answer"] == engine_answer(bundled, case["descriptor"]), name


def test_a_refusal_by_the_server_is_a_descriptor_error_naming_the_field(
    node_package: Path, server: GrpcServer
) -> None:
    """The real server's INVALID_ARGUMENT (here: explainRule names a rule its ruleset does not
    have, which no client can check) rejects with the DescriptorError the client raises for
    its own refusals, its violations read from the google.rpc.BadRequest detail, as the
    Python, Go and Java clients read it; the breaker stays closed."""
    script = """
const lib = require('./classifier');
const client = new lib.Client(process.argv[1], { breaker: { failures: 1 } });
client.classify({ type: 'x' }, { explainRule: 'no.such-rule', deadlineMs: 30000 }).then(
  () => { throw new Error('answered'); },
  (err) => {
    client.close();
    console.log(JSON.stringify({
      name: err.name, violations: err.violations, cause: err.cause && err.cause.code,
      breaker: client.breaker.state,
    }));
  });
"""
    got = answered(node(node_package, [script, f"127.0.0.1:{server.port}"], script="-e"))
    assert got["name"] == "DescriptorError"
    assert [v["field"] for v in got["violations"]] == ["explain_rule"]
    assert "no rule 'no.such-rule'" in got["violations"][0]["message"]
    assert (got["cause"], got["breaker"]) == (3, "closed")


def test_node_evaluates_a_bundle_the_service_built_and_signed_as_the_engine(
    node_package: Path, bundled: Ruleset, tmp_path: Path
) -> None:
    """`classifier bundle build`, `keygen` and `sign` (the service's commands) make a bundle
    of the bundled library; the Node client loads it trusting the new key, verifies it, and
    answers every descriptor as the engine does, marked local with the file's digest; the
    same file changed by one byte is refused with bad_signature."""
    cli = [sys.executable, "-m", "classifier", "bundle"]
    bundle, key = tmp_path / "rules.bundle.json", tmp_path / "ops"
    for args in (
        ["build", "-o", str(bundle)],
        ["keygen", "-o", str(key)],
        ["sign", "--key", f"{key}.key", str(bundle)],
    ):
        subprocess.run([*cli, *args], check=True, capture_output=True, timeout=120)
    tampered = tmp_path / "tampered.json"
    tampered.write_bytes(bundle.read_bytes().replace(b'"retryable":true', b'"retryable":false', 1))
    (tmp_path / "tampered.json.sig.json").write_bytes(
        (tmp_path / "rules.bundle.json.sig.json").read_bytes()
    )
    script = """
const fs = require('node:fs');
const lib = require('./classifier');
const [file, tampered, pub, descriptors] = process.argv.slice(1);
const trustedKeys = [fs.readFileSync(pub)];
const bundle = lib.Bundle.load(file, { trustedKeys });
let refused;
try { lib.Bundle.load(tampered, { trustedKeys }); } catch (err) { refused = err.code; }
console.log(JSON.stringify({
  keyIds: bundle.keyIds, bundleDigest: bundle.bundleDigest, refused,
  answers: JSON.parse(descriptors).map((d) => lib.answerJson(bundle.classify(lib.validateDescriptor(d)))),
}));
"""
    got = answered(
        node(
            node_package,
            [script, str(bundle), str(tampered), f"{key}.pub", json.dumps(ALL)],
            script="-e",
        )
    )
    digest = "sha256:" + hashlib.sha256(bundle.read_bytes()).hexdigest()
    assert (got["bundleDigest"], got["refused"], len(got["keyIds"])) == (
        digest,
        "bad_signature",
        1,
    )
    for d, answer in zip(ALL, got["answers"], strict=True):
        assert answer.pop("local") is True
        assert answer.pop("bundle_digest") == digest
        assert answer == engine_answer(bundled, d), d
