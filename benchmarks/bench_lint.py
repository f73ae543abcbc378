"""How long `lint` takes on a large synthetic ruleset (a benchmark, not a test).

    make bench
    .venv/bin/python -m benchmarks.bench_lint [--rules 5000] [--profile library|random] [--seed 1]

`library` (the default) is shaped like a large rule library: typed rules over
a few thousand exception types (some narrowed by status, code, origin,
message or cause) whose class follows the type or the status, untyped
protocol rules whose class follows the status, and a few dozen deliberate
conflicts and shadows. `random` gives every rule a random class, so
thousands of pairs conflict: the worst case for the witness search and the
engine confirmations.
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
import zlib
from pathlib import Path

from classifier import load_ruleset
from classifier.lint.checks import lint_report
from classifier.taxonomy import ErrorClass

ROOT = Path(__file__).resolve().parent.parent

CLASSES = [c.name for c in ErrorClass if c is not ErrorClass.Unknown]
ORIGINS = ["provider", "tool", "guard", "runtime", "interceptor", "reconciler", "user"]
GRPC = ["UNAVAILABLE", "DEADLINE_EXCEEDED", "RESOURCE_EXHAUSTED", "INTERNAL", "CANCELLED"]


STATUS_CLASS = {
    408: "Timeout",
    429: "RateLimited",
    500: "ProviderError",
    502: "ProviderError",
    503: "ProviderError",
    "4xx": "ProviderError",
}
GRPC_CLASS = {
    "UNAVAILABLE": "ProviderError",
    "DEADLINE_EXCEEDED": "Timeout",
    "RESOURCE_EXHAUSTED": "RateLimited",
    "INTERNAL": "ProviderError",
    "CANCELLED": "Canceled",
}


def write_ruleset(root: Path, count: int, seed: int, profile: str = "library") -> None:
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "rules" / "actions.yaml", root / "actions.yaml")
    (root / "ruleset.yaml").write_text("name: synthetic\nversion: 1.0.0\n")
    types = [
        f"com.vendor{v}.pkg{p}.Error{e}" for v in range(20) for p in range(10) for e in range(15)
    ]
    per_file = 250
    for start in range(0, count, per_file):
        lines = ["rules:"]
        for i in range(start, min(start + per_file, count)):
            lines += _rule(rng, i, types, profile)
        (root / f"file{start // per_file:03}.yaml").write_text("\n".join(lines) + "\n")


def _rule(rng: random.Random, i: int, types: list[str], profile: str) -> list[str]:
    when: list[str] = []
    kind = rng.random()
    error_class = rng.choice(CLASSES)
    if kind < (0.9 if profile == "library" else 0.8):
        first = rng.randrange(len(types))
        package = first - first % 15
        names = [types[first]]
        if rng.random() < 0.25:
            names.append(types[package + rng.randrange(15)])
        when.append(f"type: [{', '.join(dict.fromkeys(names))}]")
        if profile == "library":
            error_class = CLASSES[zlib.crc32(types[package].encode()) % len(CLASSES)]
        extra = rng.random()
        if extra < 0.25:
            status = rng.choice([400, 401, 403, 404, 408, 429, "5xx"])
            when.append(f"http_status: {status}")
        elif extra < 0.4:
            when.append(f"code: c{rng.randrange(50)}")
        elif extra < 0.5:
            when.append(f"origin: {rng.choice(ORIGINS)}")
        elif extra < 0.6:
            when.append(f"message: '(?i)failure {rng.randrange(100)}( happened)?'")
        elif extra < 0.65:
            when.append(f"cause: {{type: {rng.choice(types)}}}")
    else:
        when.append(f"origin: {rng.choice(ORIGINS)}")
        if profile == "library" or rng.random() < 0.5:
            statuses: list[int | str] = [408, 429, 500, 502, 503]
            status = rng.choice(statuses if profile == "library" else [*statuses, "4xx"])
            when.append(f"http_status: {status}")
            known = STATUS_CLASS[status]
        else:
            code = rng.choice(GRPC)
            when.append(f"grpc_status: {code}")
            known = GRPC_CLASS[code]
        if profile == "library":
            error_class = known
        if rng.random() < 0.3:
            when.append(f"provider: p{rng.randrange(30)}")
    if profile == "library" and i % 200 == 199:
        error_class = rng.choice(CLASSES)  # a deliberate mistake for the linter to find
    out = [
        f"  - id: r{i}",
        f"    when: {{{', '.join(when)}}}",
        f"    class: {error_class}",
    ]
    if rng.random() < 0.05:
        out.append(f"    priority: {rng.choice([1, 5])}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", type=int, default=5000)
    parser.add_argument("--profile", choices=("library", "random"), default="library")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "synthetic"
        write_ruleset(root, args.rules, args.seed, args.profile)
        started = time.perf_counter()
        ruleset = load_ruleset(root)
        loaded = time.perf_counter()
        report = lint_report(ruleset)
        linted = time.perf_counter()
    by_code: dict[str, int] = {}
    for d in report.warnings:
        by_code[d.code] = by_code.get(d.code, 0) + 1
    print(f"rules: {len(ruleset.rules)}")
    print(f"load:  {loaded - started:.2f} s")
    print(f"lint:  {linted - loaded:.2f} s")
    print("warnings: " + ", ".join(f"{code} {n}" for code, n in sorted(by_code.items())))


if __name__ == "__main__":
    main()
