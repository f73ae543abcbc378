"""What the lanes cost (issue 14): unary throughput and latency of `classifier serve`
from this checkout against another (the code before them), alternated in one run.

    python -m benchmarks.bench_lanes --baseline ../main

Both servers serve the bundled rules with default flags; the load generator
(benchmarks/load.py) runs in its own process: unary, 32 calls in flight; latency,
one call at a time. Rounds alternate the two servers, and the medians are reported
with their ratio (this checkout / the baseline): the machine is shared, so only
ratios measured side by side mean much.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks import load
from benchmarks.attacks import PROBE, serve
from benchmarks.load import median, write_payloads

ROOT = Path(__file__).resolve().parent.parent
METHOD = "/errorclass.v1.ErrorClassifier/Classify"


def _load(target: str, folder: Path, mode: str, **spec: Any) -> dict[str, Any]:
    payloads = folder / "payloads.bin"
    if not payloads.exists():
        write_payloads(payloads, [PROBE.SerializeToString()])
    data = {"target": target, "method": METHOD, "mode": mode, "payload_file": str(payloads)}
    return load.run_in_process({**data, **spec}, folder / f"{mode}.json")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--baseline", type=Path, help="the checkout to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    if args.baseline is None:  # `make bench` runs every benchmark without arguments
        print("bench_lanes: give --baseline DIR (a checkout to compare with); nothing measured")
        return 0
    sources = {"this": ROOT, "baseline": args.baseline.resolve()}
    figures: dict[str, dict[str, list[float]]] = {name: {} for name in sources}
    with tempfile.TemporaryDirectory(prefix="bench-lanes-") as tmp:
        folder = Path(tmp)
        for _ in range(args.rounds):
            for name, source in sources.items():
                served = serve(source, folder / f"{name}.log")
                try:
                    unary = _load(
                        served.address, folder, "unary", concurrency=32, seconds=3.0, warmup=0.5
                    )
                    latency = _load(served.address, folder, "latency", calls=1500)
                finally:
                    served.kill()
                f = figures[name]
                f.setdefault("calls_per_s", []).append(unary["calls_per_s"])
                f.setdefault("p50_ms", []).append(latency["p50_ms"])
                f.setdefault("p99_ms", []).append(latency["p99_ms"])
    for key, label in (
        ("calls_per_s", "unary calls/s, 32 in flight"),
        ("p50_ms", "latency p50 ms, one call at a time"),
        ("p99_ms", "latency p99 ms, one call at a time"),
    ):
        this, base = median(figures["this"][key]), median(figures["baseline"][key])
        print(f"{label}: this {this:.2f}, baseline {base:.2f}, ratio {this / base:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
