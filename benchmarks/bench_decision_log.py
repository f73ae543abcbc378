"""Whether the decision log keeps up with the server (issue 35): lines written and dropped
per second beside answers per second, under the server's own unary load.

    make bench
    .venv/bin/python -m benchmarks.bench_decision_log [--rounds N] [--seconds S]

`classifier serve` (5,000 synthetic rules, default --threads) is driven by the load
generator in its own process (benchmarks/load.py: unary Classify, 32 calls in flight)
with unique descriptors (each message carries a request id of its own, a third of
them Unknown), once without a decision log and once with one, alternated for
`--rounds`. The figures come from the server's own counters on its metrics port
(`errorclass_classifications_total`, `errorclass_decision_log_lines_total`,
`..._dropped_total`) read before and after the load; `kept` is lines written over
answers given once the writer has drained. Nothing here is pass/fail: the target
(at least 95 % kept at the full unary rate) is printed beside the figure, and
docs/performance.md says what to do when a machine cannot keep it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from benchmarks import synth
from benchmarks.attacks import Served, serve
from benchmarks.load import run_in_process, write_payloads
from classifier.source.descriptor_file import descriptor_from_data
from errorclass_client.wire import request as wire_request

ROOT = Path(__file__).resolve().parent.parent
METHOD = "/errorclass.v1.ErrorClassifier/Classify"
RULES = 5000
PAYLOADS = 40_000
TARGET = 0.95
COUNTERS = {
    "answers": "errorclass_classifications_total",
    "lines": "errorclass_decision_log_lines_total",
    "dropped": "errorclass_decision_log_dropped_total",
}


def counters(served: Served) -> dict[str, float]:
    """The server's answer and decision-log counters, summed over their labels."""
    with urllib.request.urlopen(f"http://{served.metrics}/metrics", timeout=10) as response:
        text = response.read().decode()
    out = dict.fromkeys(COUNTERS, 0.0)
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            for key, name in COUNTERS.items():
                if sample.name == name:
                    out[key] += sample.value
    return out


def drained(served: Served, answers: float, seconds: float = 60.0) -> dict[str, float]:
    """The counters once every answer is either written or dropped (or `seconds` passed)."""
    until = time.monotonic() + seconds
    now = counters(served)
    while now["lines"] + now["dropped"] < answers and time.monotonic() < until:
        time.sleep(0.2)
        now = counters(served)
    return now


def _cpu(pid: int) -> float:
    """CPU seconds the process has used (its writer thread included): a cost per answer that
    a shared machine's scheduling moves less than it moves a rate."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_run(folder: Path, rules: Path, payloads: Path, seconds: float, log: bool) -> dict[str, Any]:
    """One server, one load: answers/s, and with the log its lines and drops per second."""
    args = ["--decision-log", str(folder / "decisions.jsonl")] if log else []
    served = serve(ROOT, folder / "serve.log", *args, metrics=True, rules=str(rules))
    try:
        before = counters(served)
        cpu = _cpu(served.proc.pid)
        started = time.monotonic()
        spec = {
            "target": served.address,
            "method": METHOD,
            "mode": "unary",
            "payload_file": str(payloads),
            "concurrency": 32,
            "seconds": seconds,
            "warmup": 0.5,
        }
        result = run_in_process(spec, folder / "spec.json", timeout=600.0)
        after = counters(served)
        took = time.monotonic() - started
        final = drained(served, after["answers"]) if log else after
        cpu = _cpu(served.proc.pid) - cpu
    finally:
        served.stop()
        served.kill()
        (folder / "decisions.jsonl").unlink(missing_ok=True)
    answers = after["answers"] - before["answers"]
    return {
        "calls_per_s": result["calls_per_s"],
        "answers_per_s": answers / took,
        "lines_per_s": (after["lines"] - before["lines"]) / took,
        "dropped_per_s": (after["dropped"] - before["dropped"]) / took,
        "kept": (final["lines"] - before["lines"]) / answers if log and answers else None,
        "cpu_us_per_answer": cpu / max(1.0, answers) * 1e6,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args(argv)
    runs: dict[bool, list[dict[str, Any]]] = {False: [], True: []}
    with tempfile.TemporaryDirectory(prefix="bench-decision-log-") as tmp:
        folder = Path(tmp)
        rules = synth.write_ruleset(folder / "rules", synth.synthetic_rules(RULES))
        known = synth.descriptors(RULES, PAYLOADS * 2 // 3, known=True)
        unknown = synth.descriptors(RULES, PAYLOADS // 3, known=False, seed=11)
        mixed = [x for pair in zip(known[::2], known[1::2], unknown, strict=False) for x in pair]
        requests = [wire_request(descriptor_from_data(x), False) for x in mixed]
        write_payloads(folder / "unary.bin", [r.SerializeToString() for r in requests])
        for n in range(args.rounds):
            for log in (False, True):
                r = one_run(folder, rules, folder / "unary.bin", args.seconds, log)
                runs[log].append(r)
                kept = "" if r["kept"] is None else f", kept {r['kept']:.1%}"
                print(
                    f"  round {n + 1}, decision log {'on ' if log else 'off'}: "
                    f"answers {r['answers_per_s']:,.0f}/s, "
                    f"lines written {r['lines_per_s']:,.0f}/s, "
                    f"dropped {r['dropped_per_s']:,.0f}/s{kept}; "
                    f"server CPU {r['cpu_us_per_answer']:,.0f} µs an answer",
                    flush=True,
                )
    off = statistics.median(r["answers_per_s"] for r in runs[False])
    on = statistics.median(r["answers_per_s"] for r in runs[True])
    lines = statistics.median(r["lines_per_s"] for r in runs[True])
    dropped = statistics.median(r["dropped_per_s"] for r in runs[True])
    kept = statistics.median(r["kept"] for r in runs[True])
    cpu_off = statistics.median(r["cpu_us_per_answer"] for r in runs[False])
    cpu_on = statistics.median(r["cpu_us_per_answer"] for r in runs[True])
    print(
        f"decision log, unary Classify (32 in flight, {RULES:,} rules, unique descriptors), "
        f"medians of {args.rounds} alternated rounds:\n"
        f"  answers/s without the log {off:,.0f}, with it {on:,.0f} ({on / off:.2f}x)\n"
        f"  server CPU an answer without the log {cpu_off:,.0f} µs, with it {cpu_on:,.0f} µs "
        f"(a line costs {cpu_on - cpu_off:,.0f} µs)\n"
        f"  lines written/s {lines:,.0f}, dropped/s {dropped:,.0f}; "
        f"kept {kept:.1%} of decisions (target ≥ {TARGET:.0%}: "
        f"{'met' if kept >= TARGET else 'SHORT'})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
