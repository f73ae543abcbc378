"""The Python bundle evaluator in process on the bundled library, beside the gRPC call.

p50 and p99 of one evaluation (normalising the descriptor and classifying it) over the
descriptors of clients/spec/vectors/bundle.library.json whose bundle is the library (its
cases, the public corpus, the conformance suite's SDK types), each timed alone with
time.perf_counter_ns (whose own cost, about 0.1 us, is in the figures), round after round;
then, in the same run, the Classify call of this client for the same descriptors against a
real server on loopback: the one named by ERRORCLASS_BENCH_ADDR, else a `classifier serve`
of the bundled library this script starts (the repository venv's) and stops. Figures, not
a pass/fail test: on a loaded machine the tail is the scheduler's. Run by `make bench`:

    .venv/bin/python clients/python/bench/bundle.py [--seconds N]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CLIENT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(CLIENT))

from errorclass_client import Client  # noqa: E402
from errorclass_client.bundle import Bundle  # noqa: E402
from errorclass_client.descriptor import descriptor_from_mapping, validate  # noqa: E402

SPEC = Path(os.environ.get("ERRORCLASS_SPEC_DIR") or CLIENT.parent / "spec")


def expanded(given: dict[str, Any]) -> dict[str, Any]:
    """The descriptor with @PAD@ standing for pad.text repeated pad.count times."""
    d: dict[str, Any] = json.loads(json.dumps(given["descriptor"]))
    pad = given.get("pad")
    if pad is not None:
        text = pad["text"] * pad["count"]
        for subject in (d, *d.get("causes", ())):
            if "message" in subject:
                subject["message"] = subject["message"].replace("@PAD@", text)
    return d


def percentile(sorted_ns: list[int], p: float) -> float:
    return sorted_ns[min(len(sorted_ns) - 1, int(p / 100 * len(sorted_ns)))] / 1000


def timed(call: Callable[[Any], object], items: list[Any], seconds: float) -> tuple[list[int], int]:
    """Each item timed alone, round after round, for about `seconds` (at least one round);
    the samples in ns, sorted, and the rounds."""
    samples: list[int] = []
    clock = time.perf_counter_ns
    until = clock() + int(seconds * 1e9)
    rounds = 0
    gc.disable()  # a collection lands on whichever sample triggers it; measured apart below
    try:
        while rounds == 0 or (clock() < until and rounds < 1000):
            for item in items:
                t0 = clock()
                call(item)
                samples.append(clock() - t0)
            rounds += 1
            gc.collect()
    finally:
        gc.enable()
    samples.sort()
    return samples, rounds


@contextmanager
def server() -> Iterator[str]:
    """ERRORCLASS_BENCH_ADDR, or a `classifier serve` of the bundled library on a free port."""
    given = os.environ.get("ERRORCLASS_BENCH_ADDR")
    if given:
        yield given
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{s.getsockname()[1]}"
    classifier = Path(sys.executable).parent / "classifier"
    proc = subprocess.Popen(
        [str(classifier), "serve", "--addr", address],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "GRPC_ENABLE_FORK_SUPPORT": "false"},
    )
    try:
        deadline = time.monotonic() + 60
        with Client(address, timeout=2) as probe:
            while True:
                try:
                    probe.get_ruleset()
                    break
                except Exception:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise SystemExit(f"bench: no classifier serve on {address}") from None
                    time.sleep(0.2)
        yield address
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="in-process timing budget")
    parser.add_argument("--grpc-rounds", type=int, default=2, help="rounds of the gRPC calls")
    args = parser.parse_args()
    bundle = Bundle.load(SPEC / "bundles" / "library.json")
    vectors = json.loads((SPEC / "vectors" / "bundle.library.json").read_text("utf-8"))["vectors"]
    descriptors = [expanded(v["input"]) for v in vectors if v["input"]["bundle"] == "library"]
    for _ in range(3):  # warm: the patterns' DFAs, the interpreter's caches
        for d in descriptors:
            bundle.classify(d)
    local, rounds = timed(bundle.classify, descriptors, args.seconds)
    valid = [validate(descriptor_from_mapping(d)) for d in descriptors]
    with server() as address, Client(address, timeout=5, breaker=False) as client:
        for warm in valid[:200]:
            client.classify(warm)
        remote = timed_rounds(client.classify, valid, args.grpc_rounds)
    print(
        f"bench python: in-process p50 {percentile(local, 50):.1f} us "
        f"p99 {percentile(local, 99):.1f} us; grpc p50 {percentile(remote, 50):.1f} us "
        f"p99 {percentile(remote, 99):.1f} us "
        f"({len(descriptors)} descriptors, {rounds} rounds)"
    )
    print(
        f"  in-process p90 {percentile(local, 90):.1f} us, max {local[-1] / 1000:.1f} us; "
        f"grpc {args.grpc_rounds} rounds against {address}; Python "
        f"{sys.version.split()[0]}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}"
    )


def timed_rounds(call: Callable[[Any], object], items: list[Any], rounds: int) -> list[int]:
    """Each item timed alone, `rounds` times over; the samples in ns, sorted."""
    samples: list[int] = []
    clock = time.perf_counter_ns
    for _ in range(rounds):
        for item in items:
            t0 = clock()
            call(item)
            samples.append(clock() - t0)
    samples.sort()
    return samples


if __name__ == "__main__":
    main()
