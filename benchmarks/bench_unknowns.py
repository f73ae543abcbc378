"""How fast `classifier unknowns` clusters a large decision log, and how much memory it needs.

Run: `.venv/bin/python -m benchmarks.bench_unknowns [LINES]` (default 1,000,000). Writes
a decision log of LINES lines the way the server writes them (`decision_line`, answers from
the engine under the bundled rules): the real corpus's Unknown families with their messages
varied (tests/unknowns/traffic.py), a long tail of rare failures (one type each), and the
corpus's classified descriptors, over a week. A pool of distinct lines is built through the
real path, then repeated with fresh timestamps to reach LINES (real traffic repeats itself;
every Unknown line is still read, parsed and masked). Then runs the real command, in a
process of its own, over the whole log and over its Unknowns alone (what
`--decision-log-unknown-only` writes), and prints lines per second and the peak resident
memory of that process. Numbers, not pass or fail: the aim is under a minute and under
500 MB for 1,000,000 lines.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from classifier import descriptor_from_data, load_ruleset
from classifier.engine.evaluate import classify
from classifier.server.observers.decisions import decision_line
from tests.unknowns.traffic import Traffic

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules"
POOL = 40_000
TAIL = 1_000
"""Rare failures: a type of their own each, seen a few times in the week."""


def build(n: int, folder: Path) -> tuple[Path, Path, int]:
    """The mixed log and its Unknown-only part, and how many Unknown lines they hold."""
    ruleset = load_ruleset(RULES)
    traffic = Traffic(seed=2026)
    rng = random.Random(11)
    pool: list[str] = []
    for g in traffic.mixed(POOL // 2, POOL // 2):
        d = descriptor_from_data(g.descriptor)
        pool.append(decision_line("T", d, classify(ruleset, d)))
    for i in range(TAIL):
        d = descriptor_from_data(
            {"type": f"com.vendor{i % 37}.sdk.Rare{i}Exception", "language": "java",
             "message": f"rare failure {i} at step {rng.randint(1, 99)}"}
        )  # fmt: skip
        pool.append(decision_line("T", d, classify(ruleset, d)))
    start = dt.datetime(2026, 11, 23, tzinfo=dt.UTC).timestamp()
    week = 7 * 86_400
    mixed, unknown_only = folder / "decisions.jsonl", folder / "unknown.jsonl"
    unknowns = 0
    with (
        mixed.open("w", encoding="utf-8") as all_f,
        unknown_only.open("w", encoding="utf-8") as u_f,
    ):
        for i in range(n):
            at = dt.datetime.fromtimestamp(start + week * i / n, dt.UTC)
            ts = at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
            line = pool[rng.randrange(len(pool))].replace('"ts":"T"', f'"ts":"{ts}"', 1) + "\n"
            all_f.write(line)
            if '"unknown_reason"' in line:
                u_f.write(line)
                unknowns += 1
    return mixed, unknown_only, unknowns


_CHILD = (
    "import resource, sys\n"
    "from classifier.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "sys.stdout.flush()\n"
    "u = resource.getrusage(resource.RUSAGE_SELF)\n"
    "print('peak_kib', u.ru_maxrss, 'cpu', u.ru_utime + u.ru_stime, file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def run(label: str, log: Path, lines: int) -> None:
    """The real command in a process of its own, timed, with that process's peak memory."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, "unknowns", "--rules", str(RULES), "--format", "json",
         str(log)],
        capture_output=True, text=True, check=False, cwd=ROOT,
    )  # fmt: skip
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{label}: exit {done.returncode}: {done.stderr[-2000:]}")
    peak, _, cpu = done.stderr.rsplit("peak_kib", 1)[1].split()[:3]
    peak_kib, cpu_s = int(peak), float(cpu)
    load = os.getloadavg()[0]
    clusters = done.stdout.count('"id": "u')
    print(
        f"{label}: {lines:,} lines in {seconds:.1f}s = {lines / seconds:,.0f} lines/s "
        f"({cpu_s:.1f}s of CPU = {lines / cpu_s:,.0f} lines per CPU second; load average "
        f"{load:.1f} on {os.cpu_count()} cores), {clusters:,} clusters, peak memory "
        f"{peak_kib / 1024:,.0f} MB "
        f"({log.stat().st_size / 1e6:,.0f} MB of JSON Lines; start-up, near misses and "
        "coverage included)"
    )


def main(n: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-unknowns-") as tmp:
        t = time.perf_counter()
        mixed, unknown_only, unknowns = build(n, Path(tmp))
        print(
            f"wrote {n:,} decision-log lines ({unknowns:,} Unknown) "
            f"in {time.perf_counter() - t:.0f}s"
        )
        run("classifier unknowns, whole log", mixed, n)
        run("classifier unknowns, Unknown-only log", unknown_only, unknowns)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
