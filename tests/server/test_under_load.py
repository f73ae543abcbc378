"""Proof under load, on real sockets: many concurrent clients get only correct answers,
also while the rules change (and break) under them, never an answer that mixes rulesets.

Bounded: each test runs for about two seconds of calls. The figures are printed
(`pytest -s`) for the issue note.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from classifier import load_ruleset
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from errorclass_client.proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc
from tests.conftest import StartApp
from tests.support import (
    ConfigMapVolume,
    ruleset_files,
    wait_for,
    write_folder,
)

CLIENTS = 12
SECONDS = 2.0
MAX_ROUNDS = 5000

CASES: list[tuple[pb.ExceptionDescriptor, str, str]] = [
    (
        pb.ExceptionDescriptor(
            type="System.Threading.Tasks.TaskCanceledException",
            supertypes=["System.OperationCanceledException", "System.Exception"],
            causes=[pb.Cause(type="System.TimeoutException")],
        ),
        "Timeout",
        "dotnet.timeout",
    ),
    (
        pb.ExceptionDescriptor(
            type="System.Threading.Tasks.TaskCanceledException",
            supertypes=["System.OperationCanceledException", "System.Exception"],
        ),
        "Canceled",
        "dotnet.cancel",
    ),
    (
        pb.ExceptionDescriptor(type="x.E", http_status=429, origin=pb.ORIGIN_PROVIDER),
        "RateLimited",
        "provider.429",
    ),
    (
        pb.ExceptionDescriptor(type="x.E", http_status=529, origin=pb.ORIGIN_PROVIDER),
        "ProviderError",
        "provider.5xx",
    ),
    (
        pb.ExceptionDescriptor(
            type="x.ToolFailure", origin=pb.ORIGIN_TOOL, message="search: Timed out after 30 ms"
        ),
        "ToolTimeout",
        "tool.timed-out",
    ),
    (pb.ExceptionDescriptor(type="com.example.Weird"), "Unknown", ""),
]


@dataclass
class Tally:
    """What the clients saw, shared between their threads."""

    calls: int = 0
    answers: int = 0
    failures: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    digests: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, calls: int, answers: int, digests: Counter[str]) -> None:
        with self.lock:
            self.calls += calls
            self.answers += answers
            self.digests.update(digests)

    def fail(self, what: str) -> None:
        with self.lock:
            self.failures.append(what)

    def mismatch(self, what: str) -> None:
        with self.lock:
            self.wrong.append(what)


Check = Callable[[int, pb.ClassifyResponse], str | None]
"""(case index, answer) -> what is wrong with the answer, or None."""


def hammer(
    address: str,
    descriptors: list[pb.ExceptionDescriptor],
    check: Check,
    tally: Tally,
    stop: threading.Event,
    seed: int,
) -> None:
    """One client: Classify, ClassifyBatch and ClassifyStream in turn until told to stop."""
    rng = random.Random(seed)
    with grpc.insecure_channel(address) as channel:
        stub = pb_grpc.ErrorClassifierStub(channel)
        rounds = 0
        while not stop.is_set() and rounds < MAX_ROUNDS:
            rounds += 1
            picks = [rng.randrange(len(descriptors)) for _ in range(rng.randint(1, 8))]
            requests = [pb.ClassifyRequest(descriptor=descriptors[i]) for i in picks]
            kind = rounds % 3
            try:
                if kind == 0:
                    answers = [stub.Classify(requests[0], timeout=10)]
                    picks = picks[:1]
                elif kind == 1:
                    batch = stub.ClassifyBatch(
                        pb.ClassifyBatchRequest(requests=requests), timeout=10
                    )
                    answers = list(batch.responses)
                    if len({a.ruleset_digest for a in answers}) != 1:
                        tally.mismatch(f"one batch answered by two rulesets: {picks}")
                else:
                    answers = list(stub.ClassifyStream(iter(requests), timeout=10))
            except grpc.RpcError as err:
                tally.fail(f"{err.code()}: {err.details()}")
                continue
            if len(answers) != len(picks):
                tally.mismatch(f"{len(answers)} answers for {len(picks)} requests")
            for i, answer in zip(picks, answers, strict=False):
                if problem := check(i, answer):
                    tally.mismatch(problem)
            tally.add(1, len(answers), Counter(a.ruleset_digest for a in answers))


def run_clients(
    address: str,
    descriptors: list[pb.ExceptionDescriptor],
    check: Check,
    *,
    during: Callable[[], None] | None = None,
) -> Tally:
    """CLIENTS threads hammer the server for SECONDS (or for as long as `during` runs)."""
    tally = Tally()
    stop = threading.Event()
    threads = [
        threading.Thread(target=hammer, args=(address, descriptors, check, tally, stop, seed))
        for seed in range(CLIENTS)
    ]
    for t in threads:
        t.start()
    try:
        if during is None:
            time.sleep(SECONDS)
        else:
            during()
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=30)
    return tally


def test_many_concurrent_clients_get_every_answer_right(
    serving_rules: Path, start_app: StartApp
) -> None:
    """Load: concurrent clients on all three classify RPCs; zero failures, zero wrong answers."""
    ruleset = load_ruleset(serving_rules)
    running = start_app(serving_rules)

    def check(i: int, answer: pb.ClassifyResponse) -> str | None:
        _, cls, rule = CASES[i]
        got = (answer.class_name, answer.rule_id, answer.ruleset_digest)
        return None if got == (cls, rule, ruleset.digest) else f"case {i}: {got}"

    started = time.monotonic()
    tally = run_clients(running.app.address, [c[0] for c in CASES], check)
    elapsed = time.monotonic() - started
    print(
        f"\nload: {CLIENTS} clients, {tally.calls} calls, {tally.answers} answers in "
        f"{elapsed:.1f}s ({tally.answers / elapsed:.0f} answers/s), "
        f"{len(tally.failures)} failed, {len(tally.wrong)} wrong"
    )
    assert tally.failures == []
    assert tally.wrong == []
    assert tally.calls >= CLIENTS * 10
    assert running.metric("errorclass_rpcs_in_flight", rpc="ClassifyStream") == 0
    counted = sum(
        running.metric("errorclass_rpcs_total", rpc=rpc, code="OK")
        for rpc in ("Classify", "ClassifyBatch", "ClassifyStream")
    )
    assert counted == tally.calls


def test_rules_changing_under_load_never_fail_a_call_or_mix_rulesets(
    tmp_path: Path, start_app: StartApp
) -> None:
    """Reload under load: good and broken ConfigMap updates while clients call; every answer
    is exactly what the ruleset named by its digest says, and no call fails."""
    good = {
        "A": ruleset_files("1.0.0", "Timeout"),
        "B": ruleset_files("2.0.0", "ToolError"),
    }
    broken = {
        "bad-regex": ruleset_files(
            "3.0.0",
            "Canceled",
            extra="  - id: bad\n    when: {message: '(x'}\n    class: Timeout\n",
        ),
        "bad-yaml": {**good["B"], "checks/probe.yaml": "rules: [\n"},
    }
    expected: dict[str, list[tuple[str, str]]] = {}
    for name, files in good.items():
        ruleset = load_ruleset(write_folder(tmp_path / f"plain-{name}", files))
        probe_class = "Timeout" if name == "A" else "ToolError"
        expected[ruleset.digest] = [
            (probe_class, "probe"),
            ("RateLimited", "probe.429"),
            ("Unknown", ""),
        ]
    volume = ConfigMapVolume(tmp_path / "mounted")
    volume.publish(good["A"])
    running = start_app(volume.root, watch_debounce_ms=300)
    stub = running.stub

    def check(i: int, answer: pb.ClassifyResponse) -> str | None:
        want = expected.get(answer.ruleset_digest)
        if want is None:
            return f"an answer from an unexpected ruleset {answer.ruleset_digest}"
        got = (answer.class_name, answer.rule_id)
        return None if got == want[i] else f"case {i}: {got} under {answer.ruleset_version}"

    steps = ["B", "bad-regex", "A", "bad-yaml", "B", "A", "bad-regex", "B", "A", "B", "bad-yaml"]

    def change_rules() -> None:
        for step in steps:
            before = stub.GetRuleset(pb.GetRulesetRequest())
            at = before.last_reload.at
            volume.publish(good.get(step) or broken[step])

            def attempted(at: str = at) -> bool:
                return bool(stub.GetRuleset(pb.GetRulesetRequest()).last_reload.at != at)

            wait_for(attempted)
            after = stub.GetRuleset(pb.GetRulesetRequest())
            if step in good:
                assert after.last_reload.result in (
                    pb.RELOAD_RESULT_RELOADED,
                    pb.RELOAD_RESULT_UNCHANGED,
                )
                assert after.version == good[step]["ruleset.yaml"].split("version: ")[1].strip()
            else:
                assert after.last_reload.result == pb.RELOAD_RESULT_FAILED
                assert after.digest == before.digest
                assert "checks/probe.yaml:" in after.last_reload.error
            time.sleep(0.1)

    probes = [
        pb.ExceptionDescriptor(type="test.Probe"),
        pb.ExceptionDescriptor(type="x.Limited", http_status=429),
        pb.ExceptionDescriptor(type="com.example.Weird"),
    ]
    started = time.monotonic()
    tally = run_clients(running.app.address, probes, check, during=change_rules)
    elapsed = time.monotonic() - started
    reloaded = running.metric("errorclass_reloads_total", role="active", result="reloaded")
    failed = running.metric("errorclass_reloads_total", role="active", result="failed")
    print(
        f"\nreload under load: {CLIENTS} clients, {tally.calls} calls, {tally.answers} answers "
        f"in {elapsed:.1f}s, {int(reloaded)} reloads, {int(failed)} refused broken reloads, "
        f"{len(tally.failures)} failed calls, {len(tally.wrong)} wrong or mixed answers; "
        f"answers per ruleset: {sorted(tally.digests.values())}"
    )
    assert tally.failures == []
    assert tally.wrong == []
    assert reloaded >= steps.count("A") + steps.count("B") - 1
    assert failed == steps.count("bad-regex") + steps.count("bad-yaml")
    assert set(tally.digests) == set(expected)
