"""The same failover test in every language (issue 34): a client that survives the service.

Each client ships a driver program (its own test tree) that speaks JSON lines: `open`,
`classify`, `load_bundle`, `refresh`, `flush`, `status`, `close` (clients/spec/README.md,
"The failover driver"). This harness drives the four with one script against a real
`classifier serve` on loopback, serving a copy of the bundled library with a signing key:

1. the server answers (the client fetched its signed bundle and verified it with the
   trusted key);
2. the server is killed (SIGKILL): the next classifications come from the bundle, marked
   local with the bundle's digest, equal in every field to what the server answered for
   the same descriptors, none slower than the client's deadline; a driver started now
   from the bundle file answers the same at once;
3. a tampered, an unsigned and an unknown key's bundle are refused with their stable
   codes, and the bundle in use stays in use;
4. the server comes back on the same address: answers come from it again;
5. the rules change (a reload): the client sees the new ruleset digest in an answer and
   fetches the new bundle;
6. the bundle's answers while the server was away reach its decision log once it is back;
   local-first: decisions made in process reach it too, marked local, reported in batches.

Every step is bounded; every process is stopped by its id.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest

from classifier.bundle.signing import add_signature, dump_signatures, load_private_key, sign
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from errorclass_client.proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc
from tests.conformance.go_drivers import go_environment
from tests.conformance.java_drivers import CLIENT_DIR as JAVA_CLIENT
from tests.conformance.java_drivers import java_available, maven_lock
from tests.support import ROOT, wait_for, written_json_lines

SPEC = ROOT / "clients" / "spec"
KEYS = SPEC / "keys"
DEADLINE_MS = 2000
SLACK_MS = 100
"""What a call may take past its deadline as the driver measures it: the timer's and the
scheduler's granularity on a loaded 2-core machine, not a second chance."""
SAMPLE = 40
"""Descriptors per language: the library's cases, spread over its files, and retry
evidence (the wait must come back the same from the bundle)."""
REPLY_S = 30.0
"""The longest a driver may take to answer one line (a JVM's first call included)."""
ANSWER_FIELDS = (
    "class",
    "action",
    "effect",
    "retryable",
    "rule_id",
    "ruleset_version",
    "ruleset_digest",
    "unknown_reason",
    "retry_after_ms",
    "retry_after_source",
)


# the drivers --------------------------------------------------------------------------------


def _python() -> list[str]:
    return [sys.executable, str(ROOT / "clients" / "python" / "tests" / "failover_driver.py")]


def _node() -> list[str]:
    if shutil.which("node") is None:
        pytest.skip("node is not on PATH")
    modules = ROOT / "clients" / "node" / "node_modules"
    if not modules.is_dir():
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--prefer-offline"],
            cwd=modules.parent,
            check=True,
            capture_output=True,
            timeout=600,
        )
    return ["node", str(ROOT / "clients" / "node" / "tests" / "failover-driver.mjs")]


def _go(out: Path) -> list[str]:
    if shutil.which("go") is None:
        pytest.skip("go is not on PATH")
    binary = out / "failover-driver"
    if not binary.exists():
        done = subprocess.run(
            ["go", "build", "-o", str(binary), "./internal/failoverdriver"],
            cwd=ROOT / "clients" / "go",
            env=go_environment(),
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr
    return [str(binary)]


def _java() -> list[str]:
    if not java_available():
        pytest.skip("java or mvn is not on PATH")
    target = JAVA_CLIENT / "target"
    classpath = target / "test.classpath"
    if not classpath.exists() or not (target / "test-classes").is_dir():
        with maven_lock():
            subprocess.run(
                [
                    "mvn", "-q", "-B", "-ntp", "-f", str(JAVA_CLIENT / "pom.xml"),
                    "test-compile", "dependency:build-classpath",
                    "-Dmdep.includeScope=test", f"-Dmdep.outputFile={classpath}",
                ],
                check=True,
                capture_output=True,
                timeout=900,
            )  # fmt: skip
    path = os.pathsep.join(
        [str(target / "classes"), str(target / "test-classes"), classpath.read_text().strip()]
    )
    return ["java", "-cp", path, "dev.errorclass.client.FailoverDriver"]


LANGUAGES = ("python", "node", "go", "java")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("failover-drivers")


def command(language: str, built: Path) -> list[str]:
    if language == "python":
        return _python()
    if language == "node":
        return _node()
    if language == "go":
        return _go(built)
    return _java()


class Driver:
    """One driver process; every reply is bounded by REPLY_S."""

    def __init__(self, argv: list[str], log: Path) -> None:
        self._err = log.open("ab")
        self.proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err,
            text=True,
            bufsize=1,
        )
        self.log = log

    def ask(self, **request: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = _read_line(self.proc, REPLY_S)
        assert line, f"the driver answered nothing to {request['op']}: {self.log.read_text()}"
        reply: dict[str, Any] = json.loads(line)
        return reply

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                assert self.ask(op="close") == {"ok": True}
                self.proc.wait(timeout=REPLY_S)
            finally:
                if self.proc.poll() is None:
                    self.proc.kill()
                    self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()
        self._err.close()


def _read_line(proc: subprocess.Popen[str], timeout: float) -> str:
    """A line of the driver's stdout, or "" when none came within `timeout`."""
    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout):
            return ""
    return proc.stdout.readline()


# the server ---------------------------------------------------------------------------------


@dataclass
class Server:
    rules: Path
    address: str
    decisions: Path
    log: Path
    proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as err:
            self.proc = subprocess.Popen(
                [
                    sys.executable, "-m", "classifier", "serve", "--rules", str(self.rules),
                    "--addr", self.address, "--no-watch",
                    "--bundle-key", str(KEYS / "TEST-ONLY-a.key"),
                    "--decision-log", str(self.decisions),
                ],
                cwd=ROOT,
                stderr=err,
            )  # fmt: skip
        wait_for(self._serving, timeout=60)

    def _serving(self) -> bool:
        assert self.proc is not None
        assert self.proc.poll() is None, self.log.read_text()
        try:
            with grpc.insecure_channel(self.address) as channel:
                pb_grpc.ErrorClassifierStub(channel).GetRuleset(pb.GetRulesetRequest(), timeout=1)
            return True
        except grpc.RpcError:
            return False

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def bundle(self) -> pb.GetBundleResponse:
        with grpc.insecure_channel(self.address) as channel:
            got: pb.GetBundleResponse = pb_grpc.ErrorClassifierStub(channel).GetBundle(
                pb.GetBundleRequest(), timeout=10
            )
        return got

    def reload(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGHUP)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", rules, ignore=shutil.ignore_patterns("*.cases.yaml"))
    s = Server(
        rules,
        f"127.0.0.1:{_free_port()}",
        tmp_path / "decisions.jsonl",
        tmp_path / "serve.log",
    )
    s.start()
    yield s
    s.stop()


# the descriptors ----------------------------------------------------------------------------


def sample() -> list[dict[str, Any]]:
    """Library cases spread over the vector file, and the library's retry-evidence vectors."""
    cases = json.loads((SPEC / "vectors" / "bundle.library.json").read_text())["vectors"]
    plain = [v for v in cases if "pad" not in v["input"]]
    step = max(1, len(plain) // (SAMPLE - 8))
    chosen = [v["input"]["descriptor"] for v in plain[::step]][: SAMPLE - 8]
    tests = json.loads((SPEC / "vectors" / "bundle.json").read_text())["vectors"]
    waits = [
        v["input"]["descriptor"]
        for v in tests
        if v["input"]["bundle"] == "library" and "retry_after" in v["want"]
    ]
    return chosen + waits[:8]


def _answer(reply: dict[str, Any]) -> dict[str, Any]:
    assert "answer" in reply, reply
    answer: dict[str, Any] = reply["answer"]
    return answer


def _same(answer: dict[str, Any]) -> dict[str, Any]:
    return {k: answer.get(k) for k in ANSWER_FIELDS}


def _files(tmp_path: Path, fetched: pb.GetBundleResponse) -> dict[str, Path]:
    """The served bundle as files: as signed, tampered, unsigned, and signed by an unknown
    key only (its signatures file rewritten with key c's signature)."""
    out = tmp_path / "bundles"
    out.mkdir()
    good = out / "good.json"
    good.write_bytes(fetched.bundle)
    (out / "good.json.sig.json").write_bytes(fetched.signatures)
    tampered = out / "tampered.json"
    data = bytearray(fetched.bundle)
    at = data.index(b'"version"')
    data[at + 12] ^= 1
    tampered.write_bytes(bytes(data))
    (out / "tampered.json.sig.json").write_bytes(fetched.signatures)
    unsigned = out / "unsigned.json"
    unsigned.write_bytes(fetched.bundle)
    unknown = out / "unknown.json"
    unknown.write_bytes(fetched.bundle)
    key = load_private_key(KEYS / "TEST-ONLY-c.key")
    signed = add_signature(None, sign(fetched.bundle, key))
    (out / "unknown.json.sig.json").write_bytes(dump_signatures(signed))
    return {"good": good, "tampered": tampered, "unsigned": unsigned, "unknown": unknown}


# the test -----------------------------------------------------------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_client_survives_the_service(
    language: str, server: Server, tmp_path: Path, built: Path
) -> None:
    argv = command(language, built)
    trusted = [str(KEYS / "TEST-ONLY-a.pub")]
    descriptors = sample()
    fetched = server.bundle()
    files = _files(tmp_path, fetched)
    opened = {
        "op": "open",
        "addr": server.address,
        "mode": "remote",
        "deadline_ms": DEADLINE_MS,
        "bundle_file": None,
        "signatures_file": None,
        "trusted_keys": trusted,
        "allow_unsigned": False,
        "fetch_bundle": True,
        "report_batch": 10,
        "report_interval_ms": 200,
    }
    driver = Driver(argv, tmp_path / f"{language}-driver.log")
    try:
        # 1. The server answers; the client holds the served bundle, verified.
        assert driver.ask(**opened).get("ok") is True
        refreshed = driver.ask(op="refresh")
        assert refreshed.get("ok") is True, refreshed
        assert refreshed["bundle_digest"] == fetched.bundle_digest
        served = [_answer(driver.ask(op="classify", descriptor=d)) for d in descriptors]
        assert not any(a["local"] for a in served), "the server was up: no answer is local"
        assert any(a["retry_after_ms"] is not None for a in served), "no wait came back"

        # 2. Killed: the bundle answers, the same in every field, within the deadline.
        server.kill()
        local = [driver.ask(op="classify", descriptor=d) for d in descriptors]
        slowest = max(r["elapsed_ms"] for r in local)
        assert slowest <= DEADLINE_MS + SLACK_MS, f"a local answer took {slowest:.0f} ms"
        assert all(_answer(r)["local"] for r in local)
        assert {_answer(r)["bundle_digest"] for r in local} == {fetched.bundle_digest}
        assert [_same(_answer(r)) for r in local] == [_same(a) for a in served]
        print(
            f"\nfailover {language}: {len(descriptors)} answers from the bundle equal to the "
            f"server's; slowest {slowest:.1f} ms (deadline {DEADLINE_MS} ms)"
        )

        # A runtime started now, from the bundle file it shipped with, answers at once.
        cold = Driver(argv, tmp_path / f"{language}-cold.log")
        try:
            started = cold.ask(
                **{
                    **opened,
                    "bundle_file": str(files["good"]),
                    "signatures_file": str(files["good"]) + ".sig.json",
                }
            )
            assert started == {"ok": True, "bundle_digest": fetched.bundle_digest}
            first = cold.ask(op="classify", descriptor=descriptors[0])
            assert _answer(first)["local"] is True
            assert _same(_answer(first)) == _same(served[0])
            assert first["elapsed_ms"] <= DEADLINE_MS + SLACK_MS
        finally:
            cold.close()
        # A start file that does not verify is refused when the client is made.
        refusing = Driver(argv, tmp_path / f"{language}-refused.log")
        try:
            refused = refusing.ask(
                **{
                    **opened,
                    "bundle_file": str(files["tampered"]),
                    "signatures_file": str(files["tampered"]) + ".sig.json",
                }
            )
            assert refused.get("error", "").startswith("bad_signature"), refused
        finally:
            refusing.close()

        # 3. Refused bundles leave the one in use in use.
        for name, code in (
            ("tampered", "bad_signature"),
            ("unsigned", "unsigned"),
            ("unknown", "unknown_key"),
        ):
            sig = files[name].with_name(files[name].name + ".sig.json")
            reply = driver.ask(
                op="load_bundle",
                bundle_file=str(files[name]),
                signatures_file=str(sig) if sig.exists() else None,
            )
            assert reply.get("error", "").startswith(code), (name, reply)
            assert reply["bundle_digest"] == fetched.bundle_digest
        status = driver.ask(op="status")
        assert status["bundle_digest"] == fetched.bundle_digest
        assert status["refusals"] >= 3
        assert status["last_refusal"].startswith("unknown_key")
        again = _answer(driver.ask(op="classify", descriptor=descriptors[1]))
        assert again["local"] is True
        assert _same(again) == _same(served[1])

        # 4. Back on the same address: answers come from the server again.
        server.start()
        back: dict[str, Any] = {}

        def from_server() -> bool:
            nonlocal back
            back = _answer(driver.ask(op="classify", descriptor=descriptors[2]))
            return back["local"] is False

        wait_for(from_server, timeout=45, step=0.25)
        assert _same(back) == _same(served[2])

        # 5. New rules: an answer names a new ruleset digest; the client fetches its bundle.
        manifest = server.rules / "ruleset.yaml"
        manifest.write_text(
            manifest.read_text().replace("version: 1.2.0", "version: 1.2.1-failover", 1)
        )
        server.reload()
        wait_for(lambda: server.bundle().bundle_digest != fetched.bundle_digest, timeout=30)
        renewed = server.bundle().bundle_digest

        def fetched_anew() -> bool:
            driver.ask(op="classify", descriptor=descriptors[3])
            return bool(driver.ask(op="status")["bundle_digest"] == renewed)

        wait_for(fetched_anew, timeout=30, step=0.25)
    finally:
        driver.close()

    # The bundle's answers while the server was away were reported once it was back (the
    # client's close flushed the last of them): the decision log saw those failures too.
    def fallbacks() -> list[dict[str, Any]]:
        return [
            line
            for line in _lines(server.decisions)
            if line.get("local") and line["bundle_digest"] == fetched.bundle_digest
        ]

    wait_for(lambda: len(fallbacks()) >= len(descriptors) + 1, timeout=20)
    assert [line["answer"]["class"] for line in fallbacks()[: len(descriptors)]] == [
        a["class"] for a in served
    ]

    # 6. Local-first: decisions made in process reach the decision log, in batches.
    reporter = Driver(argv, tmp_path / f"{language}-local-first.log")
    try:
        assert reporter.ask(**{**opened, "mode": "local_first"}).get("ok") is True
        assert reporter.ask(op="refresh").get("ok") is True
        mine = descriptors[:25]
        answers = [_answer(reporter.ask(op="classify", descriptor=d)) for d in mine]
        assert all(a["local"] for a in answers)
        flushed = reporter.ask(op="flush")
        assert flushed.get("ok") is True, flushed
        status = reporter.ask(op="status")
        assert (status["pending"], status["reported"], status["dropped"]) == (0, len(mine), 0)
    finally:
        reporter.close()

    def reported() -> list[dict[str, Any]]:
        return [
            line
            for line in _lines(server.decisions)
            if line.get("local") and line["bundle_digest"] == renewed
        ]

    wait_for(lambda: len(reported()) >= len(mine), timeout=20)
    assert [line["answer"]["class"] for line in reported()] == [a["class"] for a in answers]


def _lines(path: Path) -> list[dict[str, Any]]:
    return written_json_lines(path)


def test_the_harness_reads_a_line_within_its_bound(tmp_path: Path) -> None:
    """A driver that never answers fails the harness in REPLY_S, not never."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(30)"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        started = time.monotonic()
        assert _read_line(proc, 0.5) == ""
        assert time.monotonic() - started < 5
    finally:
        proc.kill()
        proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()
