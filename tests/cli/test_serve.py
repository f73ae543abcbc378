"""`classifier serve` as a real process: graceful shutdown under load, SIGHUP reload,
refusing bad rules and bad flags at start, and `classifier health` against it."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest

from classifier.cli import main
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from errorclass_client.proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc
from tests.support import ROOT, ruleset_files, wait_for, write_folder

GRACE = 5.0
SLACK = 0.25
"""Seconds before SIGTERM within which a call may still meet the closing listener."""
PROBE = pb.ClassifyRequest(descriptor=pb.ExceptionDescriptor(type="test.Probe"))


@dataclass
class Served:
    proc: subprocess.Popen[bytes]
    log: Path
    start: dict[str, Any]

    def events(self) -> list[dict[str, Any]]:
        return [
            json.loads(line) for line in self.log.read_text().splitlines() if line.startswith("{")
        ]


def _serve(tmp_path: Path, *args: str) -> Served:
    log = tmp_path / "serve.log"
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "classifier", "serve", "--addr", "127.0.0.1:0", *args],
            cwd=ROOT,
            stderr=err,
        )
    served = Served(proc, log, {})

    def started() -> bool:
        assert proc.poll() is None, log.read_text()
        events = served.events()
        if events and events[0]["event"] == "start":
            served.start = events[0]
            return True
        return False

    wait_for(started, timeout=30)
    return served


def _serve_refused(*args: str) -> subprocess.CompletedProcess[str]:
    """Run `classifier serve` expecting it to refuse to start (exit 1) straight away."""
    out = subprocess.run(
        [sys.executable, "-m", "classifier", "serve", "--addr", "127.0.0.1:0", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 1, out.stderr
    return out


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    processes: list[Served] = []

    def start(*args: str) -> Served:
        processes.append(_serve(tmp_path, *args))
        return processes[-1]

    yield start
    for p in processes:
        if p.proc.poll() is None:
            p.proc.kill()
            p.proc.wait()


def test_sigterm_under_load_lets_in_flight_calls_finish_and_exits_0(
    tmp_path: Path, serve: Any
) -> None:
    """Streams open at SIGTERM keep being answered; calls made after it are refused; exit 0."""
    rules = write_folder(tmp_path / "rules", ruleset_files("1.0.0", "Timeout"))
    served: Served = serve("--rules", str(rules), "--grace", str(GRACE))
    address = served.start["address"]
    channel = grpc.insecure_channel(address)
    stub = pb_grpc.ErrorClassifierStub(channel)

    feeds: list[queue.Queue[pb.ClassifyRequest | None]] = [queue.Queue() for _ in range(4)]

    def requests(feed: queue.Queue[pb.ClassifyRequest | None]) -> Iterator[pb.ClassifyRequest]:
        while (item := feed.get(timeout=30)) is not None:
            yield item

    streams = [stub.ClassifyStream(requests(f), timeout=30) for f in feeds]
    for feed, stream in zip(feeds, streams, strict=True):
        feed.put(PROBE)
        assert next(stream).class_name == "Timeout"

    unary: list[tuple[float, str]] = []
    signalled = threading.Event()
    stop = threading.Event()

    def hammer() -> None:
        with grpc.insecure_channel(address) as ch:
            s = pb_grpc.ErrorClassifierStub(ch)
            while not stop.is_set():
                sent = time.monotonic()
                try:
                    outcome = s.Classify(PROBE, timeout=10).class_name
                except grpc.RpcError as err:
                    outcome = err.code().name
                unary.append((sent, outcome))
                if signalled.is_set() and outcome != "Timeout":
                    time.sleep(0.01)

    hammers = [threading.Thread(target=hammer) for _ in range(4)]
    for t in hammers:
        t.start()
    time.sleep(1.0)
    sigterm_at = time.monotonic()
    served.proc.send_signal(signal.SIGTERM)
    signalled.set()

    answered = [1] * len(streams)
    for _ in range(10):  # keep talking on the open streams after the signal
        time.sleep(0.05)
        for i, (feed, stream) in enumerate(zip(feeds, streams, strict=True)):
            feed.put(PROBE)
            assert next(stream).class_name == "Timeout"
            answered[i] += 1
    for feed, stream in zip(feeds, streams, strict=True):
        feed.put(None)
        assert list(stream) == []
    stop.set()
    for t in hammers:
        t.join(timeout=30)
    channel.close()

    assert served.proc.wait(timeout=GRACE + 5) == 0
    exited_after = time.monotonic() - sigterm_at
    before = [o for sent, o in unary if sent < sigterm_at - SLACK]
    refused = [(sent, o) for sent, o in unary if o != "Timeout"]
    print(
        f"\nshutdown: {len(unary)} unary calls ({len(before)} before SIGTERM, all answered), "
        f"{len(refused)} refused after it, {len(streams)} streams answered "
        f"{sum(answered)} messages ({len(streams) * 10} after SIGTERM), exit 0 "
        f"{exited_after:.2f}s after SIGTERM (grace {GRACE:g}s)"
    )
    assert before
    assert set(before) == {"Timeout"}
    # refused, never hung: UNAVAILABLE, or CANCELLED for a call that reached gRPC's
    # listener as it shut down (never served, so safe to retry elsewhere)
    assert {o for _, o in refused} <= {"UNAVAILABLE", "CANCELLED"}
    assert all(sent >= sigterm_at - SLACK for sent, _ in refused)
    assert exited_after < GRACE + 2
    events = [e["event"] for e in served.events()]
    assert events == ["start", "shutdown", "stopped"]


def test_sighup_reloads_the_rules(tmp_path: Path, serve: Any) -> None:
    """With --no-watch, an edit takes effect on SIGHUP, and GetRuleset says so."""
    rules = write_folder(tmp_path / "rules", ruleset_files("1.0.0", "Timeout"))
    served: Served = serve("--rules", str(rules), "--no-watch")
    with grpc.insecure_channel(served.start["address"]) as channel:
        stub = pb_grpc.ErrorClassifierStub(channel)
        assert stub.Classify(PROBE, timeout=10).class_name == "Timeout"
        write_folder(rules, ruleset_files("2.0.0", "ToolError"))
        time.sleep(0.3)
        assert stub.GetRuleset(pb.GetRulesetRequest()).version == "1.0.0"
        served.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: stub.GetRuleset(pb.GetRulesetRequest()).version == "2.0.0")
        assert stub.GetRuleset(pb.GetRulesetRequest()).last_reload.trigger == "signal"
        assert stub.Classify(PROBE, timeout=10).class_name == "ToolError"
    served.proc.send_signal(signal.SIGTERM)
    assert served.proc.wait(timeout=15) == 0
    reload = next(e for e in served.events() if e["event"] == "reload")
    assert (reload["trigger"], reload["result"], reload["version"]) == (
        "signal",
        "reloaded",
        "2.0.0",
    )


def test_the_health_command_reports_a_serving_server(
    tmp_path: Path, serve: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 0 and SERVING against a live server; exit 1 when nothing listens."""
    rules = write_folder(tmp_path / "rules", ruleset_files("1.0.0", "Timeout"))
    served: Served = serve("--rules", str(rules), "--no-watch")
    address = served.start["address"]
    assert main(["health", "--addr", address]) == 0
    assert capsys.readouterr().out == f"{address}: SERVING\n"
    served.proc.send_signal(signal.SIGTERM)
    assert served.proc.wait(timeout=15) == 0
    assert main(["health", "--addr", address, "--timeout", "1"]) == 1
    assert "UNAVAILABLE" in capsys.readouterr().err


def test_broken_rules_refuse_to_start_with_file_line_col(tmp_path: Path) -> None:
    """A bad rules folder at start is exit 1 with every diagnostic, not a half-working server."""
    rules = write_folder(
        tmp_path / "rules",
        ruleset_files(
            "1.0.0", "Timeout", extra="  - id: bad\n    when: {message: '(x'}\n    class: Timeout\n"
        ),
    )
    out = _serve_refused("--rules", str(rules))
    assert f"{rules}/checks/probe.yaml:9:21: invalid_pattern: " in out.stderr
    assert "classifier: cannot serve: 1 error(s) in the rules" in out.stderr


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--tls-cert", "c.pem"], "--tls-cert and --tls-key go together"),
        (["--tls-client-ca", "ca.pem"], "--tls-client-ca needs --tls-cert and --tls-key"),
        (["--enable-reload-endpoint"], "--enable-reload-endpoint needs --metrics-addr"),
        (["--decision-log-unknown-only"], "--decision-log-unknown-only needs --decision-log"),
        (
            ["--bundle-key", "k.pem", "--unsigned-bundle"],
            "--bundle-key and --unsigned-bundle exclude each other",
        ),
        (
            ["--bundle-signatures", "b.sig.json", "--bundle-key", "k.pem"],
            "--bundle-key and --bundle-signatures exclude each other",
        ),
        (["--bundle-signatures", "b.sig.json"], "--bundle-signatures needs --bundle-public-key"),
        (["--bundle-public-key", "k.pub"], "--bundle-public-key goes with --bundle-signatures"),
    ],
)
def test_flags_that_need_others_are_usage_errors(
    flags: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 2 with the parser's message, before anything is loaded or bound."""
    with pytest.raises(SystemExit) as info:
        main(["serve", *flags])
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_a_port_in_use_is_a_clear_error(tmp_path: Path, serve: Any) -> None:
    """A metrics port already taken stops the start with the reason, exit 1."""
    rules = write_folder(tmp_path / "rules", ruleset_files("1.0.0", "Timeout"))
    served: Served = serve("--rules", str(rules), "--no-watch", "--metrics-addr", "127.0.0.1:0")
    out = _serve_refused("--rules", str(rules), "--metrics-addr", served.start["metrics_address"])
    assert "classifier: cannot serve: [Errno 98] Address already in use" in out.stderr


def _key_pair(tmp_path: Path, name: str) -> tuple[Path, Path]:
    assert main(["bundle", "keygen", "-o", str(tmp_path / name)]) == 0
    return tmp_path / f"{name}.key", tmp_path / f"{name}.pub"


def test_two_bundle_keys_sign_what_getbundle_serves(
    tmp_path: Path, serve: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--bundle-key` twice: the served bundle verifies with either public key, and
    `classifier ruleset --addr` names it signed."""
    rules = write_folder(tmp_path / "rules", ruleset_files("1.0.0", "Timeout"))
    (old, old_pub), (new, new_pub) = _key_pair(tmp_path, "old"), _key_pair(tmp_path, "new")
    served: Served = serve(
        "--rules", str(rules), "--no-watch", "--bundle-key", str(old), "--bundle-key", str(new)
    )
    assert served.start["bundle_signing"] == "keys"
    assert len(served.start["bundle_key_ids"]) == 2
    with grpc.insecure_channel(served.start["address"]) as channel:
        got = pb_grpc.ErrorClassifierStub(channel).GetBundle(pb.GetBundleRequest(), timeout=10)
    assert got.signed
    assert got.bundle_digest == served.start["bundle_digest"]
    bundle, sigs = tmp_path / "got.json", tmp_path / "got.json.sig.json"
    bundle.write_bytes(got.bundle)
    sigs.write_bytes(got.signatures)
    capsys.readouterr()
    for pub in (old_pub, new_pub):
        assert main(["bundle", "verify", "--public-key", str(pub), str(bundle)]) == 0
    assert main(["ruleset", "--addr", served.start["address"]]) == 0
    assert f"bundle:      {got.bundle_digest} (signed)" in capsys.readouterr().out.splitlines()


@pytest.mark.parametrize(
    ("flag", "content", "said"),
    [
        ("--bundle-key", b"not a key\n", "not an unencrypted PEM private key"),
        ("--bundle-key", None, "No such file or directory"),
        (
            "--bundle-public-key",
            b"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
            "not a PEM public key",
        ),
    ],
)
def test_a_bad_bundle_key_file_is_a_start_up_error_naming_the_flag(
    tmp_path: Path, flag: str, content: bytes | None, said: str
) -> None:
    rules = write_folder(tmp_path / "rules", ruleset_files("1.0.0", "Timeout"))
    key = tmp_path / "bad.pem"
    if content is not None:
        key.write_bytes(content)
    extra = ["--bundle-signatures", str(tmp_path / "b.sig.json")] if flag != "--bundle-key" else []
    out = _serve_refused("--rules", str(rules), flag, str(key), *extra)
    [line] = out.stderr.splitlines()
    assert line.startswith(f"classifier: cannot serve: {flag} {key}: ")
    assert said in line


def test_a_ci_signature_for_other_rules_refuses_to_start(tmp_path: Path) -> None:
    """A CI-signed bundle of another ruleset must never be served as signed: exit 1."""
    rules = write_folder(tmp_path / "rules", ruleset_files("1.0.0", "Timeout"))
    other = write_folder(tmp_path / "other", ruleset_files("1.1.0", "ToolError"))
    key, pub = _key_pair(tmp_path, "ci")
    bundle = tmp_path / "other.bundle.json"
    assert main(["bundle", "build", "--rules", str(other), "-o", str(bundle)]) == 0
    assert main(["bundle", "sign", "--key", str(key), str(bundle)]) == 0
    sigs = f"{bundle}.sig.json"
    out = _serve_refused(
        "--rules", str(rules), "--bundle-signatures", sigs, "--bundle-public-key", str(pub)
    )
    [line] = out.stderr.splitlines()
    assert line.startswith(f"classifier: cannot serve: --bundle-signatures {sigs}: bad_signature: ")
