"""Issue 7's targets, measured side by side in one run, printed as one table.

    make bench
    .venv/bin/python -m benchmarks.bench_performance [--quick] [--json FILE]

Every figure is a median, or a ratio of two figures measured in this same
run on this same machine: the classifier against the unindexed oracle, CEL
and `rule-engine` evaluating the same rules (answers compared before any
timing), and the real `classifier serve` against a gRPC echo service that
does nothing, served with the same grpcio settings. The load generator runs
in its own process (benchmarks/load.py). Nothing here is a pass/fail test:
`short` rows are explained in docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import grpc

from benchmarks import alternatives, synth
from benchmarks.load import run_in_process, write_payloads
from classifier import Descriptor, Ruleset, classify, classify_unindexed, load_ruleset
from classifier.defaults import DEFAULT_THREADS
from classifier.regress.cases import find_case_files, read_case_file
from classifier.source.descriptor_file import descriptor_from_data
from errorclass_client.proto.errorclass.v1 import classifier_pb2 as pb
from errorclass_client.wire import request as wire_request

ROOT = Path(__file__).resolve().parent.parent
SIZES = (50, 500, 5000)
PY = sys.executable
CLASSIFIER = [PY, "-m", "classifier"]
SERVICE = "/errorclass.v1.ErrorClassifier/"
WHAT = {"match": "match", "no match": "match nothing"}


@dataclass
class Row:
    """One line of the table: a target, what was measured, against what, and whether it holds."""

    target: str
    measured: str
    against: str
    met: bool | None  # None: reported, no target


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)

    def add(self, target: str, measured: str, against: str, met: bool | None) -> None:
        self.rows.append(Row(target, measured, against, met))
        status = "-" if met is None else "met" if met else "SHORT"
        print(f"  {status:5s} {target}: {measured} ({against})", flush=True)


# ---------------------------------------------------------------- timing helpers


def per_call(fn: Callable[[Any], object], items: Sequence[Any], rounds: int) -> float:
    """Median over rounds of the mean seconds per call across items."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for item in items:
            fn(item)
        times.append((time.perf_counter() - start) / len(items))
    return statistics.median(times)


def us(seconds: float) -> str:
    return f"{seconds * 1e6:,.2f} µs" if seconds < 1e-4 else f"{seconds * 1e3:,.2f} ms"


# ---------------------------------------------------------------- in process


@dataclass
class Pools:
    match: list[Descriptor]
    nomatch: list[Descriptor]


def pools(ruleset: Ruleset, n_rules: int, count: int) -> Pools:
    known = [descriptor_from_data(x) for x in synth.descriptors(n_rules, count, known=True)]
    unknown = [descriptor_from_data(x) for x in synth.descriptors(n_rules, count, known=False)]
    matched = [d for d in known if classify(ruleset, d).rule_id]
    for d in unknown:
        assert not classify(ruleset, d).rule_id, "an unknown vendor's descriptor matched"
    return Pools(matched, unknown)


def answer(ruleset: Ruleset, d: Descriptor) -> alternatives.Answer:
    return alternatives.answer_of(classify(ruleset, d))


def same_answers(
    name: str,
    ruleset: Ruleset,
    other: Callable[[Descriptor], alternatives.Answer],
    ds: Sequence[Descriptor],
) -> None:
    for d in ds:
        want, got = answer(ruleset, d), other(d)
        if want != got:
            raise SystemExit(f"{name} answers {got} where the engine answers {want} for {d}")


def engine_section(report: Report, loaded: dict[int, Ruleset], quick: bool) -> None:
    print("engine, in process", flush=True)
    rounds = 7 if quick else 21
    cost: dict[tuple[int, str], float] = {}
    for n, ruleset in loaded.items():
        p = pools(ruleset, n, 200)
        for kind, ds in (("match", p.match), ("no match", p.nomatch)):
            cost[n, kind] = per_call(partial(classify, ruleset), ds, rounds)
        report.figures[f"engine_{n}"] = {k: cost[n, k] for k in ("match", "no match")}
        print(f"    {n:>5} rules: match {us(cost[n, 'match'])}, no match {us(cost[n, 'no match'])}")
    for kind in ("match", "no match"):
        report.add(
            f"engine, 5,000 rules, descriptors that {WHAT[kind]}",
            us(cost[5000, kind]),
            "target ≤ 5 µs median",
            cost[5000, kind] <= 5e-6,
        )
    for kind in ("match", "no match"):
        ratio = cost[5000, kind] / cost[50, kind]
        report.add(
            f"flat: 5,000 vs 50 rules ({kind})",
            f"{ratio:.2f}x",
            f"{us(cost[5000, kind])} vs {us(cost[50, kind])}; target ≤ 1.5x",
            ratio <= 1.5,
        )
    alternatives_section(report, loaded, quick)
    bundled_section(report, rounds)


def alternatives_section(report: Report, loaded: dict[int, Ruleset], quick: bool) -> None:
    print("against what a user would build (identical answers checked first)", flush=True)
    sizes = (500,) if quick else SIZES
    for n in sizes:
        ruleset = loaded[n]
        p = pools(ruleset, n, 100)
        mixed = p.match[:40] + p.nomatch[:20]
        engine = per_call(partial(classify, ruleset), mixed, 21)
        scan_ds = mixed if n < 5000 else mixed[:20]
        same_answers("the unindexed scan", ruleset, partial(_oracle, ruleset), scan_ds)
        scan = per_call(partial(classify_unindexed, ruleset), scan_ds, 3)
        cel = alternatives.cel_classifier(ruleset)
        same_answers("CEL", ruleset, cel, mixed)
        cel_cost = per_call(cel, mixed, 3)
        rule_engine = alternatives.rule_engine_classifier(ruleset)
        re_ds = mixed[:: max(1, len(mixed) // {50: 30, 500: 12, 5000: 3}[n])]
        same_answers("rule-engine", ruleset, rule_engine, re_ds)
        re_cost = per_call(rule_engine, re_ds, 1)
        report.figures[f"alternatives_{n}"] = {
            "engine": engine,
            "scan": scan,
            "cel": cel_cost,
            "rule_engine": re_cost,
        }
        print(
            f"    {n:>5} rules: engine {us(engine)}, unindexed scan {us(scan)}, "
            f"CEL {us(cel_cost)}, rule-engine {us(re_cost)}"
        )
        if n == 500:
            for name, other, want in (
                ("the unindexed scan (the engine's oracle)", scan, 20),
                ("the same rules in CEL", cel_cost, 100),
                ("the same rules in rule-engine", re_cost, 1000),
            ):
                report.add(
                    f"500 rules: faster than {name}",
                    f"{other / engine:,.0f}x",
                    f"{us(engine)} vs {us(other)}; target ≥ {want:,}x",
                    other / engine >= want,
                )


def _oracle(ruleset: Ruleset, d: Descriptor) -> alternatives.Answer:
    return alternatives.answer_of(classify_unindexed(ruleset, d))


def bundled_section(report: Report, rounds: int) -> None:
    ruleset = load_ruleset(ROOT / "rules")
    files = [read_case_file(path) for path in find_case_files([ROOT / "rules"])]
    for f in files:
        if f.diagnostics or f.bad_cases:
            raise SystemExit(f"{f.shown}: invalid case file; run `classifier test rules`")
    ds = [case.descriptor for f in files for case in f.cases]
    cost = per_call(lambda d: classify(ruleset, d), ds, rounds)
    report.figures["bundled"] = {"rules": len(ruleset.rules), "descriptors": len(ds), "cost": cost}
    report.add(
        f"bundled ruleset ({len(ruleset.rules)} rules), its {len(ds)} case descriptors",
        us(cost),
        "median per classification",
        None,
    )


def startup_section(report: Report, path: Path) -> None:
    print("start-up", flush=True)
    script = (
        "import time, sys; t = time.perf_counter(); from classifier import load_ruleset; "
        f"r = load_ruleset({str(path)!r}); print(time.perf_counter() - t)"
    )
    times = [
        float(subprocess.run([PY, "-c", script], capture_output=True, text=True, check=True).stdout)
        for _ in range(3)
    ]
    seconds = statistics.median(times)
    report.figures["startup_seconds"] = seconds
    report.add(
        "load and compile 5,000 rules (a fresh process, imports included)",
        f"{seconds:.2f} s",
        "target < 2 s",
        seconds < 2,
    )


# ---------------------------------------------------------------- over gRPC


@dataclass
class Running:
    process: subprocess.Popen[str]
    port: int

    def cpu_seconds(self) -> float:
        return sum(_cpu(pid) for pid in _tree(self.process.pid))

    def rss_mb(self) -> float:
        return sum(_rss_kb(pid) for pid in _tree(self.process.pid)) / 1024


def _tree(pid: int) -> list[int]:
    out = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return out
    for child in children:
        out += _tree(int(child))
    return out


def _cpu(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_kb(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    match = re.search(r"VmRSS:\s+(\d+)", status)
    return int(match.group(1)) if match else 0


@contextmanager
def echo_server(threads: int | None) -> Iterator[Running]:
    args = ["--aio"] if threads is None else ["--threads", str(threads)]
    process = subprocess.Popen(
        [PY, "-m", "benchmarks.echo", *args], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        yield Running(process, int(process.stdout.readline()))
    finally:
        process.terminate()
        process.wait(10)


@contextmanager
def classifier_server(rules: Path, threads: int, workers: int = 1) -> Iterator[Running]:
    # Processes sharing a port need it fixed in advance (each would pick its own port 0).
    address = f"127.0.0.1:{_free_port()}" if workers > 1 else "127.0.0.1:0"
    command = [*CLASSIFIER, "serve", "--rules", str(rules), "--addr", address]
    command += ["--threads", str(threads), "--no-watch"]
    if workers > 1:
        command += ["--workers", str(workers)]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        port = 0
        while not port:
            line = process.stderr.readline()
            if not line:
                raise SystemExit(f"classifier serve exited: {process.wait()}")
            found = re.search(r'"address": "[^"]*:(\d+)"', line)
            port = int(found.group(1)) if found else 0
        _wait_ready(port)
        yield Running(process, port)
    finally:
        process.terminate()
        process.wait(20)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_ready(port: int) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        grpc.channel_ready_future(channel).result(timeout=30)


class Load:
    """Payload files and the load generator, run in a process of its own."""

    def __init__(self, folder: Path, descriptors: Sequence[Descriptor]) -> None:
        self.folder = folder
        requests = [wire_request(d, False) for d in descriptors]
        write_payloads(folder / "unary.bin", [r.SerializeToString() for r in requests])
        batches = [
            pb.ClassifyBatchRequest(requests=requests[i : i + 100]).SerializeToString()
            for i in range(0, len(requests) - 99, 100)
        ]
        write_payloads(folder / "batch.bin", batches)

    def run(
        self, running: Running, method: str, mode: str, payload: str, **spec: Any
    ) -> dict[str, Any]:
        spec = {
            "target": f"127.0.0.1:{running.port}",
            "method": method,
            "mode": mode,
            "payload_file": str(self.folder / payload),
            **spec,
        }
        before = running.cpu_seconds()
        result = run_in_process(spec, self.folder / "spec.json", timeout=600.0)
        result["server_cpu_s"] = running.cpu_seconds() - before
        return result


def server_section(
    report: Report, rules: Path, ruleset: Ruleset, folder: Path, quick: bool
) -> None:
    """`classifier serve --rules rules` against echo; `ruleset` is `rules`, already loaded."""
    print("over gRPC (load generator in its own process)", flush=True)
    p = pools(ruleset, 5000, 600)
    load = Load(folder, (p.match + p.nomatch)[:600])
    seconds = 2.0 if quick else 3.0
    unary = {"concurrency": 32, "seconds": seconds, "warmup": 0.5}

    def echo_unary(threads: int | None) -> dict[str, Any]:
        with echo_server(threads) as s:
            return load.run(s, "/bench.Echo/Echo", "unary", "unary.bin", **unary)

    def classifier_unary(threads: int) -> dict[str, Any]:
        with classifier_server(rules, threads) as s:
            return load.run(s, SERVICE + "Classify", "unary", "unary.bin", **unary)

    configs: list[int | None] = [*sorted({2, 4, 8, 32, DEFAULT_THREADS}), None]
    echo: dict[str, list[float]] = {}
    ours: dict[str, list[float]] = {}
    for threads in configs:
        name = "aio" if threads is None else f"sync {threads}"
        echo.setdefault(name, []).append(echo_unary(threads)["calls_per_s"])
        if threads is not None:
            ours.setdefault(name, []).append(classifier_unary(threads)["calls_per_s"])
    default = f"sync {DEFAULT_THREADS}"
    for _ in range(1 if quick else 2):  # the pair the target compares, measured again, interleaved
        echo[default].append(echo_unary(DEFAULT_THREADS)["calls_per_s"])
        ours[default].append(classifier_unary(DEFAULT_THREADS)["calls_per_s"])
    echo_m = {k: statistics.median(v) for k, v in echo.items()}
    ours_m = {k: statistics.median(v) for k, v in ours.items()}
    report.figures["unary_calls_per_s"] = {"echo": echo_m, "classifier": ours_m}
    for name in echo_m:
        if name in ours_m:
            measured = f"classifier {ours_m[name]:,.0f}/s"
            against = f"echo {echo_m[name]:,.0f}/s; ratio {ours_m[name] / echo_m[name]:.2f}"
        else:
            measured, against = "(echo only)", f"echo {echo_m[name]:,.0f}/s"
        report.add(f"server model {name}: unary calls/s, 32 in flight", measured, against, None)
    best_echo = max(echo_m, key=lambda k: echo_m[k])
    best_ours = max(ours_m, key=lambda k: ours_m[k])
    ratio = ours_m[default] / echo_m[default]
    report.add(
        f"unary Classify, 5,000 rules, 32 in flight, vs echo, same server ({default} threads)",
        f"{ratio:.2f}x",
        f"{ours_m[default]:,.0f} vs {echo_m[default]:,.0f} calls/s; target ≥ 0.85x",
        ratio >= 0.85,
    )
    ratio = ours_m[default] / echo_m[best_echo]
    report.add(
        "unary Classify vs the best echo configuration",
        f"{ratio:.2f}x",
        f"{ours_m[default]:,.0f} vs echo {best_echo} {echo_m[best_echo]:,.0f} calls/s; "
        f"best classifier config: {best_ours}; target ≥ 0.8x",
        ratio >= 0.8,
    )
    latency_rows(report, load, rules)
    batch_rows(report, load, rules, ours_m[default], seconds)
    workers_rows(report, load, rules, unary)


def latency_rows(report: Report, load: Load, rules: Path) -> None:
    spec = {"calls": 3000}
    echo_p: list[dict[str, Any]] = []
    ours_p: list[dict[str, Any]] = []
    for _ in range(2):
        with echo_server(DEFAULT_THREADS) as s:
            echo_p.append(load.run(s, "/bench.Echo/Echo", "latency", "unary.bin", **spec))
        with classifier_server(rules, DEFAULT_THREADS) as s:
            ours_p.append(load.run(s, SERVICE + "Classify", "latency", "unary.bin", **spec))
    for q, limit in (("p50", 1.1), ("p99", 1.25)):
        e = statistics.median(r[f"{q}_ms"] for r in echo_p)
        o = statistics.median(r[f"{q}_ms"] for r in ours_p)
        report.figures[f"latency_{q}_ms"] = {"echo": e, "classifier": o}
        report.add(
            f"latency {q}, one caller, one call at a time",
            f"{o / e:.2f}x",
            f"{o:.3f} vs echo {e:.3f} ms; target ≤ {limit}x",
            o / e <= limit,
        )


def batch_rows(report: Report, load: Load, rules: Path, unary_calls: float, seconds: float) -> None:
    timing = {"seconds": seconds, "warmup": 0.5}
    with echo_server(DEFAULT_THREADS) as s:
        echo = load.run(
            s, "/bench.Echo/EchoStream", "stream", "batch.bin", per_message=100,
            concurrency=2, window=4, **timing,
        )  # fmt: skip
    with classifier_server(rules, DEFAULT_THREADS) as s:
        batch = load.run(
            s, SERVICE + "ClassifyBatch", "unary", "batch.bin", per_message=100,
            concurrency=4, **timing,
        )  # fmt: skip
        stream = load.run(
            s, SERVICE + "ClassifyStream", "stream", "unary.bin", concurrency=4, window=64,
            **timing,
        )  # fmt: skip
        rss = s.rss_mb()
    report.figures["streamed"] = {
        "echo_stream_per_s": echo["items_per_s"],
        "batch_per_s": batch["items_per_s"],
        "stream_per_s": stream["items_per_s"],
        "batch_server_cpu_us_per_descriptor": batch["server_cpu_s"]
        / max(1, batch["calls"] * 100)
        * 1e6,
    }
    for name, r in (
        ("ClassifyBatch (100 per call, 4 in flight)", batch),
        ("ClassifyStream (4 streams, 64 in flight each)", stream),
    ):
        ratio = r["items_per_s"] / echo["items_per_s"]
        report.add(
            f"{name} vs the echo stream (batches of 100)",
            f"{ratio:.2f}x",
            f"{r['items_per_s']:,.0f} vs {echo['items_per_s']:,.0f} descriptors/s; target ≥ 0.4x",
            ratio >= 0.4,
        )
        ratio = r["items_per_s"] / unary_calls
        report.add(
            f"{name} vs unary Classify",
            f"{ratio:.1f}x",
            f"{r['items_per_s']:,.0f} descriptors/s vs {unary_calls:,.0f} calls/s; target ≥ 25x",
            ratio >= 25,
        )
    report.figures["rss_mb"] = rss
    report.add(
        "resident memory serving 5,000 rules (after load)",
        f"{rss:.0f} MB",
        "target < 150 MB",
        rss < 150,
    )


def workers_rows(report: Report, load: Load, rules: Path, unary: dict[str, Any]) -> None:
    if (
        "--workers"
        not in subprocess.run(
            [*CLASSIFIER, "serve", "--help"], capture_output=True, text=True
        ).stdout
    ):
        report.add("serve --workers 2 vs 1", "not available", "", False)
        return
    got = {}
    for workers in (1, 2):
        with classifier_server(rules, DEFAULT_THREADS, workers) as s:
            got[workers] = load.run(s, SERVICE + "Classify", "unary", "unary.bin", **unary)
            got[workers]["rss_mb"] = s.rss_mb()
    ratio = got[2]["calls_per_s"] / got[1]["calls_per_s"]
    report.figures["workers"] = got
    report.add(
        "serve --workers 2 vs 1 (unary, 32 in flight; the load generator shares the 2 cores)",
        f"{ratio:.2f}x",
        f"{got[2]['calls_per_s']:,.0f} vs {got[1]['calls_per_s']:,.0f} calls/s, "
        f"server CPU {got[2]['server_cpu_s']:.1f} vs {got[1]['server_cpu_s']:.1f} s",
        None,
    )


# ---------------------------------------------------------------- the report


def machine() -> dict[str, Any]:
    import google.protobuf

    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    return {
        "cores": os.cpu_count(),
        "cpu": cpu,
        "load_average": os.getloadavg(),
        "python": platform.python_version(),
        "grpcio": grpc.__version__,
        "protobuf": google.protobuf.__version__,
    }


def print_table(report: Report, before: dict[str, Any], after: dict[str, Any]) -> None:
    load = f"{before['load_average'][0]:.2f} at start, {after['load_average'][0]:.2f} at end"
    print()
    print(
        f"machine: {before['cores']} cores ({before['cpu']}), load average {load}; "
        f"Python {before['python']}, grpcio {before['grpcio']}, protobuf {before['protobuf']}"
    )
    print()
    print("| target | measured | against | met |")
    print("|---|---|---|---|")
    for row in report.rows:
        status = "—" if row.met is None else "met" if row.met else "**short**"
        print(f"| {row.target} | {row.measured} | {row.against} | {status} |")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    parser.add_argument("--json", type=Path, help="also write every figure here")
    args = parser.parse_args(argv)
    before = machine()
    report = Report()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rulesets = {
            n: synth.write_ruleset(folder / f"rules{n}", synth.synthetic_rules(n)) for n in SIZES
        }
        startup_section(report, rulesets[5000])
        loaded = {n: load_ruleset(path) for n, path in rulesets.items()}
        engine_section(report, loaded, args.quick)
        server_section(report, rulesets[5000], loaded[5000], folder, args.quick)
    after = machine()
    print_table(report, before, after)
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "machine": {"before": before, "after": after},
                    "rows": [r.__dict__ for r in report.rows],
                    "figures": report.figures,
                },
                indent=2,
                default=str,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
