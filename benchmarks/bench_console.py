"""What the operator console costs the gRPC path (issue 16), measured in one run.

    python -m benchmarks.bench_console [--rules N] [--rounds R]

One `classifier serve` (a synthetic ruleset of N rules, default 9,000, and --metrics-addr)
is put under unary load from its own process (benchmarks/load.py: 32 calls in flight for
3 s), with its live sample of Unknowns filled first (3,000 Unknowns of 300 failures, so
each page groups them again). Each round measures the load three times, in turn (each
round in another order): with no console traffic; while one client loads a console page
every second (an operator refreshing); and while one client fetches pages back to back,
as fast as it can (the console's page budget answers most of those 429 at once). The
pages cycle through the overview with the Unknown groups, a page of rules sorted by hits,
and a rule's page.
Reported: the medians of calls per second and p50/p99 latency of each, their ratios to
no console, and how many pages were made and refused and how long one took. Then, in
process, the cost of counting an answer for the console (Activity, on the gRPC path)
beside the cost of classifying it.

Numbers, not pass or fail; the machine is shared, so only ratios measured side by side
mean much.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import threading
import time
import timeit
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import grpc

from benchmarks import load
from benchmarks.attacks import PROBE, channel, serve
from benchmarks.load import median, write_payloads
from benchmarks.synth import descriptors, synthetic_rules, write_ruleset
from classifier import descriptor_from_data, load_ruleset
from classifier.engine.evaluate import classify
from classifier.server.observers.activity import Activity
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from errorclass_client.proto.errorclass.v1 import classifier_pb2_grpc as pb_grpc

ROOT = Path(__file__).resolve().parent.parent
METHOD = "/errorclass.v1.ErrorClassifier/Classify"


def _load(target: str, folder: Path, payloads: Path) -> dict[str, Any]:
    spec = {
        "target": target,
        "method": METHOD,
        "mode": "unary",
        "payload_file": str(payloads),
        "concurrency": 32,
        "seconds": 3.0,
        "warmup": 0.5,
    }
    return load.run_in_process(spec, folder / "unary.json")


class Browsing:
    """One client fetching console pages back to back until stopped."""

    def __init__(self, admin: str, rule_id: str, every: float) -> None:
        self.every = every
        self.urls = [
            f"http://{admin}/console",
            f"http://{admin}/console?sort=hits&page=3",
            f"http://{admin}/console/rule?id={rule_id}",
        ]
        self.took: list[float] = []
        self.sizes: list[int] = []
        self.refused = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Browsing:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        i = 0
        while not self._stop.is_set():
            t0 = time.perf_counter()
            try:
                with urllib.request.urlopen(self.urls[i % len(self.urls)], timeout=30) as reply:
                    self.sizes.append(len(reply.read()))
                self.took.append(time.perf_counter() - t0)
                i += 1
            except urllib.error.HTTPError as err:
                err.read()
                self.refused += 1
            self._stop.wait(max(0.0, self.every - (time.perf_counter() - t0)))


def _fill_sample(address: str, n_rules: int) -> None:
    """3,000 Unknowns of 300 failures (a vendor no rule knows, messages varied)."""
    rng = random.Random(5)
    unknown = descriptors(n_rules, 300, known=False)
    with channel(address) as ch:
        stub = pb_grpc.ErrorClassifierStub(ch)
        for i in range(3000):
            data = dict(unknown[i % len(unknown)])
            data["message"] = f"{data.get('message', '')} attempt {rng.randrange(10_000)}"
            d = pb.ExceptionDescriptor(
                type=data["type"],
                supertypes=data.get("supertypes", []),
                message=data["message"],
            )
            stub.Classify(pb.ClassifyRequest(descriptor=d), timeout=10)


def _hot_path(rules: Path, n_rules: int) -> tuple[float, float]:
    """Microseconds per answer: counting it for the console, and classifying it."""
    ruleset = load_ruleset(rules)
    ds = [descriptor_from_data(x) for x in descriptors(n_rules, 200, known=True)]
    answers = [classify(ruleset, d) for d in ds]
    activity = Activity()
    pairs = list(zip(ds, answers, strict=True))

    def count() -> None:
        for d, a in pairs:
            activity.classified(d, a)

    def answer() -> None:
        for d in ds:
            classify(ruleset, d)

    per = len(pairs)
    counted = min(timeit.repeat(count, number=50, repeat=5)) / (50 * per)
    classified = min(timeit.repeat(answer, number=5, repeat=5)) / (5 * per)
    return counted * 1e6, classified * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rules", type=int, default=9000, help="rules in the synthetic set")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    phases = {"quiet": None, "every 1 s": 1.0, "back to back": 0.0}
    figures: dict[str, dict[str, list[float]]] = {name: {} for name in phases}
    pages: dict[str, list[float]] = {name: [] for name in phases}
    refused: dict[str, int] = dict.fromkeys(phases, 0)
    sizes: list[int] = []
    with tempfile.TemporaryDirectory(prefix="bench-console-") as tmp:
        folder = Path(tmp)
        rules = write_ruleset(folder / "rules", synthetic_rules(args.rules))
        payloads = folder / "payloads.bin"
        write_payloads(payloads, [PROBE.SerializeToString()])
        served = serve(ROOT, folder / "serve.log", metrics=True, rules=str(rules))
        try:
            assert served.metrics is not None
            _fill_sample(served.address, args.rules)
            rule_id = load_ruleset(rules).rules[args.rules // 2].id
            order = list(phases)
            for r in range(args.rounds):  # each round in another order: no phase always first
                for phase in order[r % 3 :] + order[: r % 3]:
                    every = phases[phase]
                    if every is None:
                        result = _load(served.address, folder, payloads)
                    else:
                        with Browsing(served.metrics, rule_id, every) as browsing:
                            result = _load(served.address, folder, payloads)
                        pages[phase] += browsing.took
                        refused[phase] += browsing.refused
                        sizes += browsing.sizes
                    f = figures[phase]
                    for key in ("calls_per_s", "p50_ms", "p99_ms"):
                        f.setdefault(key, []).append(result[key])
        except grpc.RpcError as exc:
            print(f"bench_console: {exc}", file=sys.stderr)
            return 1
        finally:
            served.kill()
        counted, classified = _hot_path(rules, args.rules)
    print(f"bench_console: {args.rules:,} rules, unary load 32 in flight, {args.rounds} rounds")
    for key, label in (
        ("calls_per_s", "calls/s"),
        ("p50_ms", "p50 ms"),
        ("p99_ms", "p99 ms"),
    ):
        quiet = median(figures["quiet"][key])
        cells = [f"no console {quiet:9.2f}"]
        for phase in list(phases)[1:]:
            busy = median(figures[phase][key])
            cells.append(f"pages {phase} {busy:9.2f} (ratio {busy / quiet:.2f})")
        print(f"  {label:8} " + "   ".join(cells))
    seconds = 3.5 * args.rounds
    for phase in list(phases)[1:]:
        took = pages[phase]
        middle = f"median {median(took) * 1e3:.0f} ms" if took else "none made"
        print(
            f"  pages {phase}: {len(took) / seconds:.1f}/s made ({middle}), "
            f"{refused[phase] / seconds:.1f}/s refused by the page budget"
        )
    if sizes:
        print(f"  largest page {max(sizes) // 1024} KiB")
    print(
        f"  per answer in process: counting it for the console {counted:.2f} us, "
        f"classifying it {classified:.2f} us ({counted / classified:.1%})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
