"""A client that survives the service: its bundle (trusted keys, refusals), refresh
(GetBundle), the fallback marked local, local-first with ReportDecisions, and the wait an
answer advises. Against one real `classifier serve` of the bundled library (signing its
bundle with the spec's TEST key a, writing a decision log), started once for the module."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import outage_harness
import pytest

from errorclass_client import Client, ServiceError, Unclassified
from errorclass_client.answer import Answer
from errorclass_client.bundle import BundleError
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb

SPEC = Path(__file__).parents[2] / "spec"
KEYS = SPEC / "keys"
KEY_A = KEYS / "TEST-ONLY-a.pub"
KEY_B = KEYS / "TEST-ONLY-b.pub"
RATE_LIMITED: dict[str, Any] = {
    "type": "openai.RateLimitError",
    "supertypes": ["openai.APIStatusError", "openai.APIError", "Exception"],
    "http_status": 429,
    "origin": "provider",
    "provider": "openai",
    "attributes": {"http.response.header.retry-after-ms": "1500"},
}


@dataclass
class Served:
    address: str
    decision_log: Path
    bundle: Path
    """The served bundle, as GetBundle handed it out, with its signatures beside it."""
    digest: str


def _wait_for(check: Callable[[], bool], what: str, within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline, f"not within {within} s: {what}"
        time.sleep(0.02)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("served")
    address = outage_harness.stopped_address()
    log = tmp / "decisions.jsonl"
    server = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "classifier"),
            *("serve", "--addr", address, "--decision-log", str(log)),
            *("--bundle-key", str(KEYS / "TEST-ONLY-a.key")),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "GRPC_ENABLE_FORK_SUPPORT": "false"},
    )
    try:
        with Client(address, timeout=2, breaker=False) as client:
            deadline = time.monotonic() + 60
            while True:
                try:
                    client.get_ruleset()
                    break
                except Unclassified:
                    pass
                except Exception:
                    pass
                assert server.poll() is None, server.communicate()[1]
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.1)
            got = client._methods.get_bundle(pb.GetBundleRequest(), timeout=5)
        bundle = tmp / "served.bundle.json"
        bundle.write_bytes(got.bundle)
        Path(f"{bundle}.sig.json").write_bytes(got.signatures)
        yield Served(address, log, bundle, got.bundle_digest)
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=30)


def _same_but_local(local: Answer, remote: Answer) -> None:
    assert local.local
    assert not remote.local
    assert replace(local, local=False, bundle_digest="") == remote


def test_the_services_answer_carries_the_wait_and_the_bundles_equals_it(served: Served) -> None:
    with Client(served.address, timeout=5) as client:
        remote = client.classify(RATE_LIMITED)
    assert remote.retry_after == dt.timedelta(seconds=1.5)
    assert remote.retry_after_source == "http.response.header.retry-after-ms"
    capped = {**RATE_LIMITED, "attributes": {"http.response.header.retry-after": "600"}}
    with Client(served.address, timeout=5) as client:
        cut = client.classify(capped)
    assert (cut.retry_after, cut.retry_after_source) == (
        dt.timedelta(seconds=60),
        "http.response.header.retry-after (capped)",
    )
    with Client(
        outage_harness.stopped_address(), bundle=served.bundle, trusted_keys=[KEY_A]
    ) as down:
        _same_but_local(down.classify(RATE_LIMITED), remote)
        _same_but_local(down.classify(capped), cut)


def test_the_fallback_answers_from_the_bundle_marked_local_within_the_deadline(
    served: Served,
) -> None:
    """Every field as the service answers it, but `local` and `bundle_digest`; a service
    that cannot answer costs the deadline at most; without a bundle, Unclassified as before."""
    vectors = json.loads((SPEC / "vectors" / "bundle.library.json").read_text("utf-8"))
    library = [
        v["input"]["descriptor"]
        for v in vectors["vectors"]
        if v["input"]["bundle"] == "library" and "pad" not in v["input"]
    ]
    descriptors = [*library[:: len(library) // 60], RATE_LIMITED]
    with Client(served.address, timeout=5) as client:
        remote = [client.classify(d) for d in descriptors]
    stopped = outage_harness.stopped_address()
    with Client(stopped, timeout=0.25, bundle=served.bundle, trusted_keys=[KEY_A]) as down:
        assert down.bundle_digest == served.digest
        for d, want in zip(descriptors, remote, strict=True):
            started = time.monotonic()
            got = down.classify(d)
            assert time.monotonic() - started < 0.25 + 0.1
            _same_but_local(got, want)
            assert got.bundle_digest == served.digest
        assert down.counters["local"] == len(descriptors)
        assert down.counters["short_circuited"] >= len(descriptors) - 3, "the breaker opened"
    with Client(stopped, timeout=0.25) as plain, pytest.raises(Unclassified):
        plain.classify(RATE_LIMITED)


def test_the_bundle_is_fetched_at_start_in_the_background_and_refreshed(served: Served) -> None:
    with Client(served.address, timeout=5, fetch_bundle=True, trusted_keys=[KEY_A]) as client:
        first = client.classify(RATE_LIMITED)  # answered by the service, the fetch aside
        assert not first.local
        _wait_for(lambda: client.bundle_digest == served.digest, "the start fetch")
        assert client.refresh_bundle() is False, "GetBundle(if_none_match) says unchanged"
        assert client.get_ruleset().bundle_digest == served.digest


def test_an_answer_naming_another_ruleset_fetches_the_served_bundle(served: Served) -> None:
    with Client(
        served.address,
        timeout=5,
        bundle=SPEC / "bundles" / "kinds.json",
        allow_unsigned=True,
    ) as client:
        _wait_for(lambda: client.bundle_digest == served.digest, "the start fetch")
        client.load_bundle(SPEC / "bundles" / "kinds.json")  # an old bundle back in use
        assert client.bundle_digest != served.digest
        client.classify(RATE_LIMITED)  # the service's answer names its ruleset
        _wait_for(lambda: client.bundle_digest == served.digest, "the fetch the answer asked")
    with Client(
        served.address,
        timeout=5,
        mode="local_first",
        bundle=SPEC / "bundles" / "kinds.json",
        allow_unsigned=True,
        report_interval=30,
    ) as local:
        _wait_for(lambda: local.bundle_digest == served.digest, "the start fetch")
        local.load_bundle(SPEC / "bundles" / "kinds.json")
        assert local.classify({"type": "k.Plain"}).local
        assert local.flush_decisions() == 1  # the report's answer names the serving bundle
        _wait_for(lambda: local.bundle_digest == served.digest, "the fetch the report asked")


def test_a_refused_bundle_is_recorded_and_the_bundle_in_use_stays(
    served: Served, tmp_path: Path
) -> None:
    """Trusting key b only: the served bundle (signed by a) is refused as unknown_key, at
    the start fetch and at a refresh, and the start file (signed by b) stays in use."""
    own = tmp_path / "kinds.bundle.json"
    shutil.copy(SPEC / "bundles" / "kinds.json", own)
    classifier = Path(sys.executable).parent / "classifier"
    subprocess.run(
        [str(classifier), "bundle", "sign", "--key", str(KEYS / "TEST-ONLY-b.key"), str(own)],
        check=True,
        capture_output=True,
    )
    with Client(served.address, timeout=5, bundle=own, trusted_keys=[KEY_B]) as client:
        started_with = client.bundle_digest
        _wait_for(lambda: client.local_status().refusals >= 1, "the start fetch refused")
        with pytest.raises(BundleError) as refused:
            client.refresh_bundle()
        assert refused.value.code == "unknown_key"
        status = client.local_status()
        assert status.bundle_digest == started_with != served.digest
        assert status.refusals == 2
        assert status.last_refusal.startswith("unknown_key: ")
        assert client.classify(RATE_LIMITED).ruleset_digest != client.bundles.current.digest  # type: ignore[union-attr]
        time.sleep(0.2)
        assert client.local_status().refusals == 2, "a refused ruleset is not fetched again"


@pytest.mark.parametrize(
    ("signatures", "code"),
    [
        (None, "unsigned"),
        (b'{"format": "something"}', "malformed_signatures"),
        ("tampered", "bad_signature"),
        ("key_b", "unknown_key"),
    ],
)
def test_a_refused_start_file_is_an_error_at_construction(
    served: Served, tmp_path: Path, signatures: bytes | str | None, code: str
) -> None:
    bundle = tmp_path / "start.bundle.json"
    data = served.bundle.read_bytes()
    sig = Path(f"{served.bundle}.sig.json").read_bytes()
    if signatures == "tampered":
        data = data.replace(b'"format_version": 1', b'"format_version":  1', 1)
        assert data != served.bundle.read_bytes()
    bundle.write_bytes(data)
    if isinstance(signatures, bytes):
        sig = signatures
    if signatures is not None:
        Path(f"{bundle}.sig.json").write_bytes(sig)
    keys = [KEY_B] if signatures == "key_b" else [KEY_A]
    with pytest.raises(BundleError) as refused:
        Client(served.address, bundle=bundle, trusted_keys=keys, fetch_bundle=False)
    assert refused.value.code == code
    assert str(refused.value).startswith(f"{code}: ")


def test_an_unreadable_bundle_is_invalid_and_unsigned_needs_saying_so(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json")
    address = outage_harness.stopped_address()
    with pytest.raises(BundleError) as refused:
        Client(address, bundle=garbage, allow_unsigned=True, fetch_bundle=False)
    assert refused.value.code == "invalid_bundle"
    with pytest.raises(ValueError, match="allow_unsigned"):
        Client(address, bundle=SPEC / "bundles" / "kinds.json")


def test_local_first_classifies_in_process_and_reports_in_batches(served: Served) -> None:
    """No Classify call; a batch goes when `report_batch` are pending, the rest on flush,
    and the service's decision log shows each, marked local."""
    before = _local_lines(served)
    with Client(
        served.address,
        timeout=5,
        mode="local_first",
        bundle=served.bundle,
        trusted_keys=[KEY_A],
        report_batch=4,
        report_interval=30,
    ) as client:
        answers = [client.classify({**RATE_LIMITED, "message": f"call {i}"}) for i in range(6)]
        assert all(a.local and a.bundle_digest == served.digest for a in answers)
        assert client.counters["server"] == 0
        _wait_for(lambda: client.local_status().reported == 4, "the batch of four")
        assert client.local_status().pending == 2
        assert client.flush_decisions() == 2
    _wait_for(lambda: len(_local_lines(served)) - len(before) == 6, "six local log lines")
    lines = _local_lines(served)[len(before) :]
    assert [line["descriptor"]["message"] for line in lines] == [f"call {i}" for i in range(6)]
    assert all(line["bundle_digest"] == served.digest and line["bundle_serving"] for line in lines)
    assert lines[0]["answer"]["retry_after"]["seconds"] == 1.5


def test_close_flushes_and_a_full_queue_drops_the_oldest(served: Served) -> None:
    before = len(_local_lines(served))
    with Client(
        served.address,
        timeout=5,
        mode="local_first",
        bundle=served.bundle,
        trusted_keys=[KEY_A],
        report_interval=30,
    ) as client:
        client.classify({**RATE_LIMITED, "message": "flushed on close"})
    _wait_for(lambda: len(_local_lines(served)) == before + 1, "the line flushed on close")
    with Client(
        outage_harness.stopped_address(),
        timeout=0.2,
        mode="local_first",
        bundle=served.bundle,
        trusted_keys=[KEY_A],
        report_queue=3,
        report_interval=30,
        fetch_bundle=False,
    ) as down:
        for i in range(5):
            down.classify({**RATE_LIMITED, "message": f"kept {i}"})
        assert (down.local_status().pending, down.local_status().dropped) == (3, 2)
        with pytest.raises(ServiceError):
            down.flush_decisions()
        assert down.local_status().pending == 3, "a failed report keeps its decisions"


def test_the_bundles_answers_in_an_outage_are_queued_for_the_service(served: Served) -> None:
    """Remote mode reports what the bundle answered while the service could not (the
    failover test sees them reach the decision log once it is back); the service's own
    answers are not reported again."""
    with Client(
        outage_harness.stopped_address(),
        timeout=0.2,
        bundle=served.bundle,
        trusted_keys=[KEY_A],
        fetch_bundle=False,
        report_interval=30,
    ) as down:
        answers = [down.classify({**RATE_LIMITED, "message": f"outage {i}"}) for i in range(3)]
        assert all(a.local for a in answers)
        assert down.local_status().pending == 3
    with Client(
        served.address, timeout=5, bundle=served.bundle, trusted_keys=[KEY_A], fetch_bundle=False
    ) as up:
        assert not up.classify(RATE_LIMITED).local
        assert up.local_status().pending == 0


def test_local_first_without_a_bundle_calls_the_service(served: Served) -> None:
    with Client(
        served.address, timeout=5, mode="local_first", trusted_keys=[KEY_A], fetch_bundle=False
    ) as client:
        answer = client.classify(RATE_LIMITED)
    assert not answer.local
    assert client.counters["server"] == 1


def _local_lines(served: Served) -> list[dict[str, Any]]:
    if not served.decision_log.exists():
        return []
    lines = [json.loads(x) for x in served.decision_log.read_text().splitlines() if x.strip()]
    return [line for line in lines if line.get("local")]


DRIVER = Path(__file__).parent / "failover_driver.py"


def test_the_failover_driver_speaks_the_protocol(served: Served, tmp_path: Path) -> None:
    """The driver the shared failover harness runs: one JSON line in, one out, and nothing
    else on stdout; a refused load keeps the bundle in use; EOF or close ends it."""
    unsigned = tmp_path / "unsigned.json"
    shutil.copy(SPEC / "bundles" / "kinds.json", unsigned)
    requests: list[dict[str, Any]] = [
        {
            "op": "open",
            "addr": served.address,
            "mode": "local_first",
            "deadline_ms": 2000,
            "bundle_file": str(served.bundle),
            "signatures_file": None,
            "trusted_keys": [str(KEY_A)],
            "allow_unsigned": False,
            "fetch_bundle": True,
            "report_batch": 100,
            "report_interval_ms": 60000,
        },
        {"op": "classify", "descriptor": RATE_LIMITED},
        {"op": "load_bundle", "bundle_file": str(unsigned), "signatures_file": None},
        {"op": "refresh"},
        {"op": "status"},
        {"op": "flush"},
        {"op": "status"},
        {"op": "close"},
    ]
    run = subprocess.run(
        [sys.executable, str(DRIVER)],
        input="".join(json.dumps(r) + "\n" for r in requests),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    replies = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(replies) == len(requests), run.stderr
    opened, classified, load, refresh, status, flush, after, closed = replies
    assert opened == {"ok": True, "bundle_digest": served.digest}
    answer = classified["answer"]
    assert (answer["class"], answer["local"], answer["bundle_digest"]) == (
        "RateLimited",
        True,
        served.digest,
    )
    assert (answer["retry_after_ms"], answer["retry_after_source"]) == (
        1500,
        "http.response.header.retry-after-ms",
    )
    assert load["error"].startswith("unsigned: ")
    assert load["bundle_digest"] == served.digest
    assert refresh == {"ok": True, "bundle_digest": served.digest, "changed": False}
    assert (status["pending"], status["refusals"]) == (1, 1)
    assert status["last_refusal"].startswith("unsigned: ")
    assert flush == {"ok": True, "reported": 1}
    assert (after["pending"], after["reported"], after["dropped"]) == (0, 1, 0)
    assert closed == {"ok": True}


def test_a_failed_fetch_waits_before_the_next() -> None:
    """Against a service answering UNAVAILABLE: the start fetch, then one more after the
    backoff (2 s), never a loop; a classify meanwhile is not held up by the fetches."""
    with (
        outage_harness.unavailable_server() as (address, seen),
        Client(address, timeout=0.5, attempts=1, fetch_bundle=True, allow_unsigned=True) as client,
    ):
        _wait_for(lambda: seen.attempts >= 1, "the start fetch")
        time.sleep(1.0)
        assert seen.attempts == 1, "no second fetch before the backoff"
        _wait_for(lambda: seen.attempts >= 2, "the fetch after the backoff", within=6)
        with pytest.raises(Unclassified):
            client.classify(RATE_LIMITED)
        assert client.bundle_digest == ""
    assert seen.attempts <= 4
